// Memories: one server-side page of the table (sorted and filtered by the
// daemon), the selected memory's detail and history, the search box's hits
// with their score breakdowns, and the one-click actions with undo.
import { derived, get, writable, type Readable } from 'svelte/store';
import { api } from '../api/client';
import type { Hit, ListFacets, ListRequest, ListedMemory, Memory, MemoryEvent, MemoryHistory, MemoryPatch } from '../api/models';
import { events as defaultEvents, type EventStream } from './events';
import { deferred, fieldErrors, reportError, toast, undoable } from './toasts';

export interface PageState {
  offset: number;
  limit: number;
  sort: string;
  order: 'asc' | 'desc';
  project: string;
  /** With project: its worktrees' labels too (ListFacets.worktrees). */
  worktrees: boolean;
  kind: string;
  type: string;
  /** A source or a source family ("ingest"). */
  source: string;
  /** personal, team or default (the stored scope; default: the team configuration decides). */
  scope: string;
  q: string;
  snoozed: string;
  /** The old versions newer ones superseded too (marked, linked to their successor); off: only the current versions, what recall reads. */
  superseded: boolean;
}

export const defaultPage: PageState = {
  offset: 0, limit: 50, sort: 'created', order: 'desc', project: '', worktrees: false, kind: '', type: '', source: '', scope: '', q: '', snoozed: '', superseded: false,
};

/** The filters a PageState has set (not paging, sorting or q). */
export const filterKeys = ['project', 'kind', 'type', 'source', 'scope', 'snoozed'] as const;

/** A project of the filter menu: a repository with the projects that look like its worktrees, or a project alone. */
export interface ProjectGroup {
  name: string;
  count: number;
  /** The worktree labels grouped under it, with their counts. */
  worktrees: { name: string; count: number }[];
}

/** The projects of the facets, worktrees under their repository, by name. */
export function projectGroups(f: ListFacets | null): ProjectGroup[] {
  if (!f) return [];
  const grouped = new Set(Object.values(f.worktrees ?? {}).flat());
  return Object.entries(f.projects)
    .filter(([name]) => name !== '' && !grouped.has(name))
    .map(([name, count]) => ({ name, count, worktrees: (f.worktrees?.[name] ?? []).map((w) => ({ name: w, count: f.projects[w] ?? 0 })) }))
    .sort((a, b) => a.name.localeCompare(b.name));
}

export function createMemories(opts: { stream?: EventStream; reloadMs?: number } = {}) {
  const stream = opts.stream ?? defaultEvents;
  const reloadMs = opts.reloadMs ?? 400;
  const page = writable<PageState>({ ...defaultPage });
  const rows = writable<ListedMemory[]>([]);
  const total = writable(0);
  const loading = writable(false);
  const loaded = writable(false);
  const selectedId = writable<string | null>(null);
  const detail = writable<Memory | null>(null);
  /** The selected memory's history; 'unavailable' when it could not be loaded. */
  const history = writable<MemoryHistory | 'unavailable' | null>(null);
  const checked = writable<Set<string>>(new Set());
  const query = writable('');
  const hits = writable<Hit[] | null>(null);
  const searching = writable(false);
  /** Ids hidden while their deferred delete waits out its undo. */
  const hidden = writable<Set<string>>(new Set());
  /** The whole store's counts per filter value (for the filter menus). */
  const facets = writable<ListFacets | null>(null);
  let seq = 0;
  let reloadTimer: ReturnType<typeof setTimeout> | null = null;

  /** Loads the page; withFacets (the first load and after changes) also the filter menus' counts. */
  async function load(withFacets = get(facets) === null) {
    const p = get(page);
    const my = ++seq;
    loading.set(true);
    try {
      const params: ListRequest = { limit: p.limit, offset: p.offset, sort: p.sort, order: p.order, project: p.project, kind: p.kind, q: p.q,
        snoozed: p.snoozed, superseded: p.superseded ? 'include' : 'exclude', type: p.type, source: p.source, scope: p.scope, worktrees: p.project !== '' && p.worktrees ? true : undefined,
        facets: withFacets ? true : undefined };
      const res = await api.listMemories(params);
      if (my !== seq) return; // a newer request answers instead
      rows.set(res.memories ?? []);
      total.set(res.total);
      if (res.facets) facets.set(res.facets);
      loaded.set(true);
    } catch (e) {
      if (my === seq) reportError(e, 'Loading memories');
    } finally {
      if (my === seq) loading.set(false);
    }
  }

  function reloadSoon() {
    if (reloadTimer) return;
    reloadTimer = setTimeout(() => {
      reloadTimer = null;
      // The counts come from the store's in-memory columns (about one more
      // page's cost at 100k memories): fresh with every reload.
      void load(true);
    }, reloadMs);
  }

  function setPage(p: Partial<PageState>) {
    const cur = get(page);
    page.update((cur) => {
      const next = { ...cur, ...p };
      if (p.offset === undefined && Object.keys(p).length > 0) next.offset = 0;
      return next;
    });
    // The facets count what the list can show: with or without the old versions.
    return load(p.superseded !== undefined && p.superseded !== cur.superseded ? true : undefined);
  }

  /** Sorts by a column; the same column again flips the order. */
  function sortBy(col: string) {
    const p = get(page);
    return setPage({ sort: col, order: p.sort === col && p.order === 'desc' ? 'asc' : 'desc' });
  }

  const pages = derived([page, total], ([p, t]) => ({ current: Math.floor(p.offset / p.limit) + 1, count: Math.max(1, Math.ceil(t / p.limit)) }));

  function next() {
    const p = get(page);
    if (p.offset + p.limit < get(total)) return setPage({ offset: p.offset + p.limit });
  }
  function prev() {
    const p = get(page);
    if (p.offset > 0) return setPage({ offset: Math.max(0, p.offset - p.limit) });
  }

  async function select(id: string | null) {
    selectedId.set(id);
    history.set(null);
    if (!id) {
      detail.set(null);
      return;
    }
    const row = get(rows).find((r) => r.id === id) ?? get(hits)?.find((h) => h.memory.id === id)?.memory ?? null;
    detail.set(row);
    try {
      const m = await api.getMemory(id);
      if (get(selectedId) === id) detail.set(m);
    } catch (e) {
      reportError(e, 'Loading the memory');
    }
    try {
      const h = await api.history(id);
      if (get(selectedId) === id) history.set(h);
    } catch (e) {
      if (get(selectedId) === id) history.set('unavailable');
      reportError(e, 'Loading the history');
    }
  }

  /** Puts a changed memory into the page, the hits and the detail. */
  function patchLocal(m: Memory) {
    rows.update((rs) => rs.map((r) => (r.id === m.id ? { ...r, ...m } : r)));
    hits.update((hs) => hs?.map((h) => (h.memory.id === m.id ? { ...h, memory: { ...h.memory, ...m } } : h)) ?? null);
    if (get(selectedId) === m.id) detail.set({ ...(get(detail) ?? {}), ...m });
  }

  async function search(q?: string) {
    if (q !== undefined) query.set(q);
    const text = get(query).trim();
    if (!text) {
      hits.set(null);
      return;
    }
    searching.set(true);
    try {
      const res = await api.search({ query: text, k: 20 });
      hits.set(res.hits ?? []);
    } catch (e) {
      reportError(e, 'Search');
    } finally {
      searching.set(false);
    }
  }

  async function reinforce(id: string) {
    try {
      const m = await api.reinforce(id);
      patchLocal(m);
      toast('success', `Reinforced (×${m.reinforced_count})`);
      if (get(hits)) void search();
      return m;
    } catch (e) {
      reportError(e, 'Reinforce');
      return null;
    }
  }

  async function snooze(id: string, days: number) {
    try {
      const m = await api.snooze(id, days);
      patchLocal({ ...m });
      if (days > 0) {
        undoable(`Snoozed for ${days} day${days === 1 ? '' : 's'}: out of recall until then`, async () => {
          patchLocal(await api.snooze(id, 0));
          reloadSoon();
        });
      } else toast('success', 'Woken: back in recall');
      reloadSoon();
      return m;
    } catch (e) {
      reportError(e, 'Snooze');
      return null;
    }
  }

  async function pin(id: string, pinned: boolean) {
    try {
      const m = await api.pin(id, pinned);
      patchLocal(m);
      undoable(pinned ? 'Pinned: the steward will never prune, decay or merge it' : 'Unpinned', async () => patchLocal(await api.pin(id, !pinned)));
      return m;
    } catch (e) {
      reportError(e, pinned ? 'Pin' : 'Unpin');
      return null;
    }
  }

  /** Edits a memory; returns field errors for the form, or null when saved. */
  async function edit(id: string, patch: MemoryPatch): Promise<Record<string, string> | null> {
    try {
      const res = await api.patchMemory(id, patch);
      const m = res.memory;
      if (res.previous) {
        toast('success', 'Saved as a new version (the old one stays in its history)');
        void select(m.id);
      } else {
        patchLocal(m);
        toast('success', 'Saved');
      }
      reloadSoon();
      return null;
    } catch (e) {
      return fieldErrors(e) ?? {};
    }
  }

  /** Deletes memories once the undo toast closes; until then they are hidden. */
  function remove(ids: string[]) {
    if (ids.length === 0) return;
    hidden.update((h) => new Set([...h, ...ids]));
    if (ids.includes(get(selectedId) ?? '')) void select(null);
    checked.update((c) => new Set([...c].filter((x) => !ids.includes(x))));
    deferred(
      ids.length === 1 ? 'Memory moved to the trash (Steward → Trash restores it)' : `${ids.length} memories moved to the trash (Steward → Trash restores them)`,
      async (leaving) => {
        for (const id of ids) {
          await api.deleteMemory(id, leaving).catch((e) => {
            if ((e as { status?: number }).status !== 404) throw e;
          });
        }
        hidden.update((h) => new Set([...h].filter((x) => !ids.includes(x))));
        reloadSoon();
      },
      () => hidden.update((h) => new Set([...h].filter((x) => !ids.includes(x)))),
    );
  }

  async function bulkSnooze(days: number) {
    const ids = [...get(checked)];
    for (const id of ids) await api.snooze(id, days).then(patchLocal).catch((e) => reportError(e, 'Snooze'));
    toast('success', `${ids.length} snoozed for ${days} d`);
    reloadSoon();
  }
  async function bulkReinforce() {
    const ids = [...get(checked)];
    for (const id of ids) await api.reinforce(id).then(patchLocal).catch((e) => reportError(e, 'Reinforce'));
    toast('success', `${ids.length} reinforced`);
  }

  function toggleCheck(id: string) {
    checked.update((c) => {
      const n = new Set(c);
      if (n.has(id)) n.delete(id);
      else n.add(id);
      return n;
    });
  }
  function checkAll(on: boolean) {
    checked.set(on ? new Set(get(rows).map((r) => r.id)) : new Set());
  }

  const visibleRows = derived([rows, hidden], ([rs, h]) => rs.filter((r) => !h.has(r.id)));
  const visibleHits = derived([hits, hidden], ([hs, h]) => hs?.filter((x) => !h.has(x.memory.id)) ?? null);

  const unsubs = [
    stream.on<MemoryEvent>('memory', (e) => {
      const ev = e.data;
      if (ev.memory) patchLocal(ev.memory);
      if (ev.op === 'deleted' || ev.op === 'trashed') {
        const gone = new Set(ev.ids ?? []);
        if (gone.has(get(selectedId) ?? '')) { selectedId.set(null); detail.set(null); }
      }
      if (ev.op === 'added' || ev.op === 'deleted' || ev.op === 'trashed' || ev.op === 'restored' || ev.op === 'updated') reloadSoon();
    }),
    stream.on('reset', () => reloadSoon()),
    stream.on('steward', () => reloadSoon()),
  ];

  return {
    page: { subscribe: page.subscribe } as Readable<PageState>,
    rows: visibleRows, total, loading, loaded, pages, selectedId, detail, history, checked, query,
    facets: { subscribe: facets.subscribe } as Readable<ListFacets | null>,
    hits: visibleHits, searching,
    load, setPage, sortBy, next, prev, select, search, reinforce, snooze, pin, edit, remove,
    bulkSnooze, bulkReinforce, toggleCheck, checkAll,
    destroy: () => unsubs.forEach((u) => u()),
  };
}

export type Memories = ReturnType<typeof createMemories>;
export const memories = createMemories();
