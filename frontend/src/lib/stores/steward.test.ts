import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { get } from 'svelte/store';
import { createEventStream } from './events';
import { createSteward } from './steward';
import { toasts } from './toasts';
import { fakeFetch } from '../../test/fakes';
import type { StewardRun } from '../api/models';

describe('steward store: runs and undo', () => {
  beforeEach(() => toasts.set([]));
  afterEach(() => vi.unstubAllGlobals());

  it('lists the undoable runs and undoes one by id, or the last one', async () => {
    let runs: StewardRun[] = [
      { run_id: 'r2', at: '2026-06-01T12:00:00Z', ops: ['decay_stale'], counts: { decay_stale: 3 }, memories: 3, scheduled: true },
      { run_id: 'r1', at: '2026-06-01T11:00:00Z', ops: ['merge'], counts: { merge: 1 }, memories: 2 },
    ];
    const { calls } = fakeFetch({
      'GET /api/steward/runs': () => ({ body: runs }),
      'GET /api/trash': [],
      'POST /api/steward/undo': ({ body }: { body: unknown }) => {
        const id = (body as { run_id?: string }).run_id ?? runs[0].run_id;
        runs = runs.filter((r) => r.run_id !== id);
        return { body: { run_id: id, at: '2026-06-01T12:05:00Z', counts: { reverted: 2 } } };
      },
    });
    const s = createSteward({ stream: createEventStream() });
    await s.loadRuns();
    expect(get(s.runs).map((r) => r.run_id)).toEqual(['r2', 'r1']);

    await s.undo('r1');
    expect(calls.find((c) => c.method === 'POST')).toMatchObject({ url: '/api/steward/undo', body: { run_id: 'r1' } });
    expect(get(s.runs).map((r) => r.run_id)).toEqual(['r2']);
    expect(get(toasts).at(-1)?.text).toMatch(/Undone: 2 reverted/);

    await s.undo();
    expect(calls.filter((c) => c.method === 'POST').at(-1)?.body).toEqual({});
    expect(get(s.runs)).toEqual([]);
  });

  it('reports a run that can no longer be undone', async () => {
    fakeFetch({
      'GET /api/steward/runs': [],
      'POST /api/steward/undo': () => ({ status: 404, body: { error: 'not found: no undoable steward run "x"', code: 'not_found' } }),
    });
    const s = createSteward({ stream: createEventStream() });
    await s.undo('x');
    expect(get(toasts).some((t) => t.kind === 'error' && /no undoable steward run/.test(t.text))).toBe(true);
  });
});
