// The live feed: the newest decisions of the write pipeline, bounded in
// memory, filled by GET /api/decisions and then by "decision" events.
import { derived, get, writable, type Readable } from 'svelte/store';
import { api } from '../api/client';
import type { DecisionEntry, MemoryEvent } from '../api/models';
import { events as defaultEvents, type EventStream } from './events';
import { deferred, reportError, toast, undoable } from './toasts';

export interface FeedFilters {
  verdict: string;
  stage: string;
  session: string;
  /** A project's decisions only ("" all). */
  project?: string;
  /** Words every shown decision contains somewhere (texts, reason, ids), ignoring case. */
  text?: string;
}

/** The items (newest first) that wrote, updated or reinforced memory id, oldest first. */
export function decisionsFor(items: FeedItem[], id: string): FeedItem[] {
  return items.filter((i) => i.memory_ids?.includes(id) || i.candidates?.some((c) => c.memory_id === id)).reverse();
}

/** Whether an item passes the filters. */
export function matchesFilters(i: FeedItem, f: FeedFilters): boolean {
  if (f.verdict && i.verdict !== f.verdict) return false;
  if (f.stage && i.stage !== f.stage) return false;
  if (f.session && i.session_id !== f.session) return false;
  if (f.project && (i.project ?? '') !== f.project) return false;
  const words = (f.text ?? '').toLowerCase().split(/\s+/).filter(Boolean);
  if (words.length === 0) return true;
  const hay = [i.user, i.assistant, i.preview, i.reason, i.project, i.source, i.session_id, i.id, i.stage, i.verdict,
    ...(i.memory_ids ?? []), ...(i.candidates ?? []).map((c) => c.text)].filter(Boolean).join('\n').toLowerCase();
  return words.every((w) => hay.includes(w));
}

export interface FeedItem extends DecisionEntry {
  /** Set locally while an undoable action on the item is pending or done. */
  mark?: 'kept' | 'noise-pending' | 'noise';
}

export interface FeedOptions {
  /** At most this many items are kept (oldest dropped). */
  max?: number;
  /** Incoming events are applied in batches at most this often (ms). */
  flushMs?: number;
  stream?: EventStream;
}

export function createFeed(opts: FeedOptions = {}) {
  const max = opts.max ?? 2000;
  const flushMs = opts.flushMs ?? 100;
  const stream = opts.stream ?? defaultEvents;
  const items = writable<FeedItem[]>([]);
  const filters = writable<FeedFilters>({ verdict: '', stage: '', session: '', project: '', text: '' });
  // While held (the user reads: hovers, scrolled down, selected a row),
  // new decisions wait in pending instead of moving the rows; a decision
  // already shown is still updated in place.
  let holding = false;
  let pendingById = new Map<string, FeedItem>();
  // The memories last deleted, restored or edited (n counts the events):
  // a view showing their texts loads them again.
  const memoryChanged = writable<{ ids: string[]; n: number }>({ ids: [], n: 0 });
  const pending = writable(0);
  const loading = writable(false);
  const loaded = writable(false);
  const selected = writable<string | null>(null);
  let queue: FeedItem[] = [];
  let timer: ReturnType<typeof setTimeout> | null = null;

  /** Puts entries (newest first) in front, replacing ones with the same id; new ones wait while held. */
  function merge(incoming: FeedItem[]) {
    if (incoming.length === 0) return;
    if (holding) {
      const shown = new Set(get(items).map((c) => c.id));
      const fresh = incoming.filter((e) => !shown.has(e.id));
      if (fresh.length > 0) {
        for (const e of [...fresh].reverse()) { pendingById.delete(e.id); pendingById.set(e.id, e); }
        while (pendingById.size > max) pendingById.delete(pendingById.keys().next().value as string);
        pending.set(pendingById.size);
        incoming = incoming.filter((e) => shown.has(e.id));
        if (incoming.length === 0) return;
      }
    }
    mergeNow(incoming);
  }

  function mergeNow(incoming: FeedItem[]) {
    if (pendingById.size > 0 && incoming.some((e) => pendingById.delete(e.id))) pending.set(pendingById.size);
    items.update((cur) => {
      const byId = new Map<string, FeedItem>();
      for (const e of incoming) if (!byId.has(e.id)) byId.set(e.id, e);
      const rest = cur.filter((c) => {
        const n = byId.get(c.id);
        if (n && c.mark) n.mark = c.mark;
        return !n;
      });
      const next = [...byId.values(), ...rest];
      next.sort((a, b) => (a.at < b.at ? 1 : a.at > b.at ? -1 : 0));
      return next.length > max ? next.slice(0, max) : next;
    });
  }

  function flush() {
    timer = null;
    const batch = queue.reverse(); // newest first
    queue = [];
    merge(batch);
  }

  function push(e: FeedItem) {
    queue.push(e);
    if (queue.length > max) queue = queue.slice(queue.length - max);
    if (!timer) timer = setTimeout(flush, flushMs);
  }

  async function load() {
    loading.set(true);
    try {
      const ds = (await api.decisions(Math.min(max, 10000))) ?? [];
      items.set([]);
      pendingById = new Map();
      pending.set(0);
      mergeNow(ds);
      loaded.set(true);
    } catch (e) {
      reportError(e, 'Loading the live feed');
    } finally {
      loading.set(false);
    }
  }

  const unsubs = [
    stream.on<DecisionEntry>('decision', (e) => push(e.data)),
    stream.on('reset', () => void load()),
    stream.on<MemoryEvent>('memory', (e) => {
      if (['deleted', 'restored', 'updated'].includes(e.data.op)) memoryChanged.update((c) => ({ ids: e.data.ids ?? [], n: c.n + 1 }));
      const ids = new Set(e.data.ids ?? []);
      const wrote = (c: FeedItem) => c.memory_ids?.some((id) => ids.has(id));
      // A memory deleted elsewhere: the items that wrote it can no longer be marked noise.
      if (e.data.op === 'deleted') {
        items.update((cur) => cur.map((c) => (wrote(c) && !c.mark ? { ...c, mark: 'noise' as const } : c)));
      }
      // A memory restored from the trash (marked as noise or deleted, then
      // restored): the items that wrote it show it stored again.
      if (e.data.op === 'restored') {
        items.update((cur) => cur.map((c) => (wrote(c) && c.mark === 'noise' ? { ...c, mark: undefined } : c)));
      }
    }),
  ];

  const visible: Readable<FeedItem[]> = derived([items, filters], ([$items, f]) => $items.filter((i) => matchesFilters(i, f)));
  const projects = derived(items, ($i) => [...new Set($i.map((i) => i.project ?? '').filter(Boolean))].sort());

  /** Holds new decisions back (on) or lets them in, with the held ones (off). */
  function hold(on: boolean) {
    if (holding === on) return;
    holding = on;
    if (!on) showNew();
  }
  /** Shows the held decisions now (the "N new" pill). */
  function showNew() {
    const held = [...pendingById.values()].reverse(); // newest first
    pendingById = new Map();
    pending.set(0);
    if (held.length) mergeNow(held);
  }
  /** The logged decisions that wrote, updated or reinforced memory id, oldest first. */
  function forMemory(id: string): FeedItem[] {
    return decisionsFor(get(items), id);
  }
  const stages = derived(items, ($i) => [...new Set($i.map((i) => i.stage).filter(Boolean))].sort());
  const sessions = derived(items, ($i) => [...new Set($i.map((i) => i.session_id ?? '').filter(Boolean))].sort());

  function setMark(id: string, mark: FeedItem['mark']) {
    items.update((cur) => cur.map((c) => (c.id === id ? { ...c, mark } : c)));
  }

  /** Stores a rejected exchange ("keep"); undo marks what it stored as noise again. */
  async function keep(item: FeedItem) {
    try {
      const d = await api.keep(item.id);
      if (d.verdict === 'rejected') {
        mergeNow([{ ...item, ...d, mark: undefined }]); // the user's own action shows now, held or not
        toast('error', `Keep stored nothing: ${d.stage}: ${d.reason}`);
        return d;
      }
      setMark(item.id, 'kept');
      mergeNow([{ ...item, ...d, mark: undefined }]); // the user's own action shows now, held or not
      undoable('Kept: stored and taken out of the noise model', async () => {
        for (const id of d.memory_ids ?? []) await api.markNoise(id);
        setMark(item.id, undefined);
        toast('info', 'Undone: marked as noise again');
      });
      return d;
    } catch (e) {
      reportError(e, 'Keep');
      return null;
    }
  }

  /** Marks what a stored exchange wrote as noise, once the undo window closes. */
  function noise(item: FeedItem) {
    const ids = item.memory_ids ?? [];
    if (ids.length === 0) {
      toast('error', 'This decision wrote no memory to mark as noise');
      return;
    }
    const before = item.mark;
    setMark(item.id, 'noise-pending');
    deferred(
      `Marked as noise: ${ids.length === 1 ? 'the memory goes' : `${ids.length} memories go`} to the trash (Steward → Trash restores ${ids.length === 1 ? 'it' : 'them'}) and ${ids.length === 1 ? 'is' : 'are'} learned as noise`,
      async (leaving) => {
        for (const id of ids) await api.markNoise(id, leaving);
        setMark(item.id, 'noise');
      },
      () => setMark(item.id, before),
    );
  }

  return {
    items: { subscribe: items.subscribe } as Readable<FeedItem[]>,
    visible, filters, stages, sessions, projects, loading, loaded, selected,
    /** The memories last deleted, restored or edited (n counts the events). */
    memoryChanged: { subscribe: memoryChanged.subscribe } as Readable<{ ids: string[]; n: number }>,
    /** How many new decisions are held back. */
    pending: { subscribe: pending.subscribe } as Readable<number>,
    load, keep, noise, hold, showNew, forMemory,
    /** Applies queued events now (tests). */
    flush: () => { if (timer) clearTimeout(timer); flush(); },
    destroy: () => unsubs.forEach((u) => u()),
    get: () => get(items),
  };
}

export type Feed = ReturnType<typeof createFeed>;
export const feed = createFeed();
