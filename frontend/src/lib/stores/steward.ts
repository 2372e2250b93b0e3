// The steward: a dry-run plan, applying the actions of it a person ticked,
// undoing the last run, and the trash (with what a merged-away memory went
// into, by its text).
import { get, writable } from 'svelte/store';
import { api } from '../api/client';
import type { Action, Plan, StewardEvent, StewardResult, StewardRun, TrashedMemory } from '../api/models';

/** actionKey names one action of a plan: its operation and its memory (ApplyRequest.actions). */
export function actionKey(a: Pick<Action, 'op' | 'id'>): string {
  return `${a.op}:${a.id}`;
}

/** mergedInto is the id a trashed memory was merged into ("merged into <id>", the steward's trash reason), or null. */
export function mergedInto(reason: string): string | null {
  const m = /^merged into\s+(\S+)$/.exec(reason.trim());
  return m ? m[1] : null;
}

/** The trash entries that cannot be read: left out of GET /api/trash, counted by the store (Info.trash_unreadable) and named by their ids (Info.trash_unreadable_ids). */
export interface UnreadableTrash {
  count: number;
  ids: string[];
}

/** The most survivors mergedTexts looks up at once. */
const MAX_LOOKUPS = 100;
import { events as defaultEvents, type EventStream } from './events';
import { reportError, toast, undoable } from './toasts';

export function createSteward(opts: { stream?: EventStream } = {}) {
  const stream = opts.stream ?? defaultEvents;
  const plan = writable<Plan | null>(null);
  // The ticked actions of the plan, by actionKey: all of them at first.
  const selected = writable<Set<string>>(new Set());
  // For trashed memories merged into another: the survivor's text, by its id
  // (null: the survivor is gone too).
  const intoText = writable<Record<string, string | null>>({});
  const planning = writable(false);
  const applying = writable(false);
  const lastResult = writable<StewardResult | null>(null);
  const trash = writable<TrashedMemory[]>([]);
  const unreadable = writable<UnreadableTrash>({ count: 0, ids: [] });
  // The applied runs that can still be undone, newest first.
  const runs = writable<StewardRun[]>([]);
  const lastEvent = writable<StewardEvent | null>(null);

  async function makePlan(full = false) {
    planning.set(true);
    try {
      const p = await api.stewardPlan(full ? { full_merge: true } : {});
      plan.set(p);
      selected.set(new Set((p.actions ?? []).map(actionKey)));
    } catch (e) {
      reportError(e, 'Planning');
    } finally {
      planning.set(false);
    }
  }

  /** toggle ticks or unticks one action. */
  function toggle(a: Pick<Action, 'op' | 'id'>) {
    selected.update((s) => {
      const n = new Set(s);
      const k = actionKey(a);
      if (n.has(k)) n.delete(k);
      else n.add(k);
      return n;
    });
  }

  /** toggleOp ticks every action of op, or unticks them all when all are ticked. */
  function toggleOp(op: string) {
    const keys = (get(plan)?.actions ?? []).filter((a) => a.op === op).map(actionKey);
    selected.update((s) => {
      const n = new Set(s);
      const all = keys.every((k) => n.has(k));
      for (const k of keys) {
        if (all) n.delete(k);
        else n.add(k);
      }
      return n;
    });
  }

  // undo reverts the run runId, or the last applied run without one.
  async function undo(runId?: string) {
    try {
      const r = await api.stewardUndo(runId ? { run_id: runId } : {});
      lastResult.set(null);
      toast('success', `Undone: ${Object.entries(r.counts ?? {}).map(([k, v]) => `${v} ${k}`).join(', ') || 'nothing changed'}`);
      await Promise.all([loadTrash(), loadRuns()]);
      plan.set(null);
    } catch (e) {
      reportError(e, 'Undo');
    }
  }

  async function loadRuns() {
    try {
      runs.set((await api.stewardRuns()) ?? []);
    } catch (e) {
      reportError(e, 'Loading the steward runs');
    }
  }

  async function apply() {
    const p = get(plan);
    if (!p) return;
    const sel = get(selected);
    const actions = (p.actions ?? []).filter((a) => sel.has(actionKey(a))).map((a) => ({ op: a.op, id: a.id }));
    if (actions.length === 0) {
      toast('info', 'Tick at least one action to apply');
      return;
    }
    const ops = [...new Set(actions.map((a) => a.op))];
    applying.set(true);
    try {
      const r = await api.stewardApply({ plan_id: p.id, ops, actions });
      lastResult.set(r);
      const n = r.applied?.length ?? 0;
      undoable(`Applied ${n} action${n === 1 ? '' : 's'}${r.skipped?.length ? `, ${r.skipped.length} skipped` : ''}`, () => undo(r.run_id), 10000);
      plan.set(null);
      await Promise.all([loadTrash(), loadRuns()]);
    } catch (e) {
      reportError(e, 'Apply');
    } finally {
      applying.set(false);
    }
  }

  async function loadTrash() {
    try {
      const t = (await api.trash()) ?? [];
      trash.set(t);
      await Promise.all([mergedTexts(t), loadUnreadable()]);
    } catch (e) {
      reportError(e, 'Loading the trash');
    }
  }

  // loadUnreadable counts the trash entries the list leaves out because
  // they cannot be read (GET /api/stats: the store's count and their ids,
  // as data; the warnings saying so are for a person to read); 0 when the
  // stats cannot be had.
  async function loadUnreadable() {
    try {
      const st = (await api.stats()).store;
      const count = st?.trash_unreadable ?? 0;
      unreadable.set({ count, ids: count ? [...(st?.trash_unreadable_ids ?? [])] : [] });
    } catch {
      unreadable.set({ count: 0, ids: [] });
    }
  }

  // mergedTexts looks up the text of each memory a trashed one was merged
  // into (the trash reason names it by id only): in the trash itself, else
  // from the store. A survivor that is gone is null.
  async function mergedTexts(t: TrashedMemory[]) {
    const known = get(intoText);
    const inTrash = new Map(t.map((x) => [x.memory.id, x.memory.text]));
    const out: Record<string, string | null> = {};
    const ask: string[] = [];
    for (const x of t) {
      const id = mergedInto(x.reason);
      if (!id || id in out) continue;
      if (inTrash.has(id)) out[id] = inTrash.get(id) ?? null;
      else if (id in known) out[id] = known[id];
      else if (ask.length < MAX_LOOKUPS) ask.push(id);
    }
    await Promise.all(ask.map(async (id) => {
      try {
        out[id] = (await api.getMemory(id)).text;
      } catch {
        out[id] = null;
      }
    }));
    intoText.set(out);
  }

  async function restore(ids: string[]) {
    try {
      await api.restore(ids);
      toast('success', `Restored ${ids.length} memor${ids.length === 1 ? 'y' : 'ies'}`);
      await loadTrash();
    } catch (e) {
      reportError(e, 'Restore');
    }
  }

  /** Deletes memories from the trash for good (no restore, no undo). */
  async function purge(ids: string[]) {
    try {
      const r = await api.purgeTrash(ids);
      toast('success', `Deleted ${r.purged} memor${r.purged === 1 ? 'y' : 'ies'} for good`);
      await loadTrash();
    } catch (e) {
      reportError(e, 'Delete for good');
    }
  }

  const unsubs = [
    stream.on<StewardEvent>('steward', (e) => {
      lastEvent.set(e.data);
      if (e.data.op === 'applied' || e.data.op === 'undone') {
        void loadTrash();
        void loadRuns();
      }
    }),
  ];

  return {
    plan, selected, planning, applying, lastResult, trash, unreadable, intoText, runs, lastEvent,
    makePlan, toggle, toggleOp, apply, undo, loadTrash, loadRuns, restore, purge, destroy: () => unsubs.forEach((u) => u()),
  };
}

export const steward = createSteward();
