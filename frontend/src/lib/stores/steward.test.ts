import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { get } from 'svelte/store';
import { createEventStream } from './events';
import { createSteward, mergedInto } from './steward';
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

describe('steward store: ticked actions and the trash', () => {
  beforeEach(() => toasts.set([]));
  afterEach(() => vi.unstubAllGlobals());

  const snap = { importance: 0.5, access_count: 0, reinforced_count: 0, feedback_sum: 0, feedback_n: 0, hits: 0, updated_at: '2026-06-01T00:00:00Z' };
  const plan = {
    id: 'p1', created_at: '2026-06-01T12:00:00Z', scope: 'store', ops: ['merge', 'prune'], counts: { merge: 1, prune: 2 },
    scanned: 9, duration_ns: 1, events: 0, max_hits: 0, scored: false, merge_queried: 9,
    actions: [
      { op: 'merge', id: 'a', kind: 'fact', type: 'project', preview: 'a', before: snap, after: snap, merged_ids: ['b'], reason: 'x' },
      { op: 'prune', id: 'c', kind: 'fact', type: 'project', preview: 'c', before: snap, after: { ...snap, trashed: true }, reason: 'y' },
      { op: 'prune', id: 'd', kind: 'fact', type: 'project', preview: 'd', before: snap, after: { ...snap, trashed: true }, reason: 'z' },
    ],
  };

  it('ticks every action of a plan, applies only the ticked ones', async () => {
    const { calls } = fakeFetch({
      'POST /api/steward/plan': plan,
      'POST /api/steward/apply': { run_id: 'r1', at: '2026-06-01T12:01:00Z', counts: { prune: 1 }, applied: [plan.actions[1]] },
      'GET /api/trash': [],
      'GET /api/steward/runs': [],
    });
    const s = createSteward({ stream: createEventStream() });
    await s.makePlan();
    expect([...get(s.selected)]).toEqual(['merge:a', 'prune:c', 'prune:d']);
    s.toggle({ op: 'merge', id: 'a' });
    s.toggle({ op: 'prune', id: 'd' });
    await s.apply();
    expect(calls.find((c) => c.url === '/api/steward/apply')?.body).toEqual({ plan_id: 'p1', ops: ['prune'], actions: [{ op: 'prune', id: 'c' }] });
  });

  it('toggles an operation\'s rows together', async () => {
    fakeFetch({ 'POST /api/steward/plan': plan });
    const s = createSteward({ stream: createEventStream() });
    await s.makePlan();
    s.toggle({ op: 'prune', id: 'c' });
    s.toggleOp('prune'); // some ticked: tick all
    expect(get(s.selected).has('prune:c')).toBe(true);
    s.toggleOp('prune'); // all ticked: untick all
    expect([...get(s.selected)]).toEqual(['merge:a']);
  });

  it('says nothing is ticked instead of applying', async () => {
    const { calls } = fakeFetch({ 'POST /api/steward/plan': plan });
    const s = createSteward({ stream: createEventStream() });
    await s.makePlan();
    for (const a of plan.actions) s.toggle(a);
    await s.apply();
    expect(calls.some((c) => c.url === '/api/steward/apply')).toBe(false);
    expect(get(toasts).at(-1)?.text).toMatch(/Tick at least one/);
  });

  it('names what a merged memory went into by its text', async () => {
    const mem = (id: string, text: string) => ({ id, text, kind: 'fact', type: 'project', created_at: '2026-06-01T00:00:00Z' });
    const { calls } = fakeFetch({
      'GET /api/trash': [
        { memory: mem('b', 'old wording'), trashed_at: '2026-06-01T12:00:00Z', reason: 'merged into a' },
        { memory: mem('e', 'chain'), trashed_at: '2026-06-01T12:00:00Z', reason: 'merged into f' },
        { memory: mem('f', 'merged again later'), trashed_at: '2026-06-01T12:00:00Z', reason: 'prune: importance 0.01' },
        { memory: mem('g', 'orphan'), trashed_at: '2026-06-01T12:00:00Z', reason: 'merged into gone' },
      ],
      'GET /api/memories/a': mem('a', 'the crisp text that survived'),
      'GET /api/memories/gone': () => ({ status: 404, body: { error: 'not found', code: 'not_found' } }),
    });
    const s = createSteward({ stream: createEventStream() });
    await s.loadTrash();
    expect(get(s.intoText)).toEqual({ a: 'the crisp text that survived', f: 'merged again later', gone: null });
    expect(calls.filter((c) => c.url.startsWith('/api/memories/')).map((c) => c.url).sort()).toEqual(['/api/memories/a', '/api/memories/gone']);
    expect(get(toasts)).toEqual([]);
  });

  it('deletes a memory from the trash for good and lists the trash again', async () => {
    const mem = (id: string, text: string) => ({ id, text, kind: 'fact', type: 'project', created_at: '2026-06-01T00:00:00Z' });
    let trash = [{ memory: mem('b', 'gone for good'), trashed_at: '2026-06-01T12:00:00Z', reason: 'deleted' }];
    const { calls } = fakeFetch({
      'GET /api/trash': () => ({ body: trash }),
      'POST /api/trash/purge': () => { trash = []; return { body: { purged: 1 } }; },
    });
    const s = createSteward({ stream: createEventStream() });
    await s.loadTrash();
    expect(get(s.trash).map((t) => t.memory.id)).toEqual(['b']);
    await s.purge(['b']);
    expect(calls.find((c) => c.url === '/api/trash/purge')?.body).toEqual({ ids: ['b'] });
    expect(get(s.trash)).toEqual([]);
    expect(get(toasts).at(-1)?.text).toBe('Deleted 1 memory for good');
  });

  it.each([
    ['merged into abc123', 'abc123'], ['merged into  abc123 ', 'abc123'], ['prune: importance 0.01', null], ['merged into', null],
  ])('mergedInto(%j) = %j', (reason, want) => expect(mergedInto(reason)).toBe(want));
});
