// The steward: a dry-run plan, applying the selected operations of it,
// undoing the last run, and the trash.
import { get, writable } from 'svelte/store';
import { api } from '../api/client';
import type { Plan, StewardEvent, StewardResult, StewardRun, TrashedMemory } from '../api/models';
import { events as defaultEvents, type EventStream } from './events';
import { reportError, toast, undoable } from './toasts';

export function createSteward(opts: { stream?: EventStream } = {}) {
  const stream = opts.stream ?? defaultEvents;
  const plan = writable<Plan | null>(null);
  const selectedOps = writable<Set<string>>(new Set());
  const planning = writable(false);
  const applying = writable(false);
  const lastResult = writable<StewardResult | null>(null);
  const trash = writable<TrashedMemory[]>([]);
  // The applied runs that can still be undone, newest first.
  const runs = writable<StewardRun[]>([]);
  const lastEvent = writable<StewardEvent | null>(null);

  async function makePlan(full = false) {
    planning.set(true);
    try {
      const p = await api.stewardPlan(full ? { full_merge: true } : {});
      plan.set(p);
      selectedOps.set(new Set(Object.entries(p.counts ?? {}).filter(([, n]) => n > 0).map(([op]) => op)));
    } catch (e) {
      reportError(e, 'Planning');
    } finally {
      planning.set(false);
    }
  }

  function toggleOp(op: string) {
    selectedOps.update((s) => {
      const n = new Set(s);
      if (n.has(op)) n.delete(op);
      else n.add(op);
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
    const ops = [...get(selectedOps)];
    if (ops.length === 0) {
      toast('info', 'Select at least one operation to apply');
      return;
    }
    applying.set(true);
    try {
      const r = await api.stewardApply({ plan_id: p.id, ops });
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
      trash.set((await api.trash()) ?? []);
    } catch (e) {
      reportError(e, 'Loading the trash');
    }
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

  const unsubs = [
    stream.on<StewardEvent>('steward', (e) => {
      lastEvent.set(e.data);
      if (e.data.op === 'applied' || e.data.op === 'undone') {
        void loadTrash();
        void loadRuns();
      }
    }),
  ];

  return { plan, selectedOps, planning, applying, lastResult, trash, runs, lastEvent, makePlan, toggleOp, apply, undo, loadTrash, loadRuns, restore, destroy: () => unsubs.forEach((u) => u()) };
}

export const steward = createSteward();
