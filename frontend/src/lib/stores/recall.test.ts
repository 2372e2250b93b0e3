import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { get } from 'svelte/store';
import { createEventStream } from './events';
import { createRecall, eventText, groupBySession, PAGE, reasonCounts, reasonText, summary, verdictFor } from './recall';
import { toasts } from './toasts';
import { fakeFetch } from '../../test/fakes';
import type { RecallEntry, RecallLogStats } from '../api/models';

const entry = (seq: number, session: string, extra: Partial<RecallEntry> = {}): RecallEntry => ({
  seq, at: `2026-05-06T07:0${seq % 10}:00Z`, session_id: session, event: 'user-prompt', prompt: `prompt ${seq}`,
  given: [{ id: 'm1', score: 0.8, kind: 'decision', preview: 'postgres is pinned to 15' }],
  withheld: [{ id: 'm2', score: 0.2, reason: 'relative_floor' }, { id: 'm3', score: 0.1, reason: 'relative_floor' }, { id: 'm4', score: 0.5, reason: 'over_k' }],
  ...extra,
});

const stats: RecallLogStats = {
  days: [{ date: '2026-05-05', recalls: 1, gave: 0, empty: 1, memories: 0 }, { date: '2026-05-06', recalls: 3, gave: 2, empty: 1, memories: 4 }],
  recalls: 4, gave: 2, empty: 2,
  top: [{ id: 'm1', given: 2, helped: 1, misled: 0, hit_rate: 0.5 }], dropped: 0, failed: 0,
};

describe('recall helpers', () => {
  it('says why in words, and what asked', () => {
    expect(reasonText('relative_floor')).toContain('far below the best match');
    expect(reasonText('already_given')).toBe('already given to this session');
    expect(reasonText('some_new_reason')).toBe('some new reason');
    expect(reasonText(undefined)).toBe('not given');
    expect(eventText('user-prompt')).toBe('prompt');
    expect(eventText('session-start')).toBe('session start');
  });

  it('reads the feedback: the last rating counts', () => {
    const e = entry(1, 's', { feedback: [
      { id: 'm1', at: '', op: 'rated', score: -1 },
      { id: 'm1', at: '', op: 'reinforced', score: 1 },
      { id: 'mX', at: '', op: 'rated', score: -1 },
    ] });
    expect(verdictFor(e, 'm1')).toEqual({ verdict: 'helped', words: 'rated −1, reinforced' });
    expect(verdictFor(e, 'mX').verdict).toBe('misled');
    expect(verdictFor(e, 'none')).toEqual({ verdict: '', words: '' });
    const u = entry(3, 's', { feedback: [{ id: 'm1', at: '', op: 'used', score: 1 }] });
    expect(verdictFor(u, 'm1')).toEqual({ verdict: 'helped', words: 'used in the turn' });
    expect(summary(e)).toBe('1 given · 3 withheld · 2 rated');
    expect(summary(u)).toBe('1 given · 3 withheld · 1 used');
    const both = entry(4, 's', { feedback: [
      { id: 'm1', at: '', op: 'used', score: 1 },
      { id: 'm1', at: '', op: 'reinforced', score: 1 },
      { id: 'm2', at: '', op: 'used', score: 1 },
    ] });
    expect(summary(both)).toBe('1 given · 3 withheld · 1 rated · 1 used');
    expect(summary(entry(2, 's', { given: [], withheld: [] }))).toBe('0 given');
  });

  it('groups by session, newest session first, and counts reasons', () => {
    const g = groupBySession([entry(5, 'b'), entry(4, 'a', { project: 'shop' }), entry(3, 'b', { agent: 'codex' }), entry(2, 'a')]);
    expect(g.map((x) => [x.session, x.project, x.agent, x.entries.map((e) => e.seq)])).toEqual([['b', '', 'codex', [5, 3]], ['a', 'shop', '', [4, 2]]]);
    expect(reasonCounts(entry(1, 's').withheld)).toEqual([['relative_floor', 2], ['over_k', 1]]);
  });
});

describe('recall store', () => {
  beforeEach(() => toasts.set([]));
  afterEach(() => { vi.unstubAllGlobals(); vi.useRealTimers(); });

  it('loads the log and the statistics, filters by session and pages back', async () => {
    const page = Array.from({ length: PAGE }, (_, i) => entry(500 - i, 's1'));
    const { calls } = fakeFetch({
      'GET /api/recall/log': ({ url }: { url: string }) => {
        const q = new URLSearchParams(url.split('?')[1]);
        if (q.get('before')) return { body: [entry(1, 's1')] };
        if (q.get('session')) return { body: [entry(9, q.get('session')!)] };
        return { body: page };
      },
      'GET /api/recall/stats': stats,
    });
    const r = createRecall({ stream: createEventStream() });
    await r.load();
    expect(get(r.loaded)).toBe(true);
    expect(get(r.log)).toHaveLength(PAGE);
    expect(get(r.more)).toBe(true);
    expect(get(r.stats)?.days.at(-1)?.recalls).toBe(3);
    expect(calls.find((c) => c.url.startsWith('/api/recall/stats'))?.url).toBe('/api/recall/stats?days=14');

    await r.loadMore();
    expect(calls.at(-1)?.url).toBe(`/api/recall/log?limit=${PAGE}&before=401`);
    expect(get(r.log)).toHaveLength(PAGE + 1);
    expect(get(r.more)).toBe(false);

    r.setSession('s7');
    await vi.waitFor(() => expect(get(r.log).map((e) => e.session_id)).toEqual(['s7']));
    expect(calls.at(-1)?.url).toBe(`/api/recall/log?session=s7&limit=${PAGE}`);

    r.setDays(7);
    await vi.waitFor(() => expect(calls.at(-1)?.url).toBe('/api/recall/stats?days=7'));
    r.destroy();
  });

  it('reloads after a rating or a reinforcement, not after other memory events', async () => {
    vi.useFakeTimers();
    let n = 0;
    fakeFetch({ 'GET /api/recall/log': () => { n++; return { body: [] }; }, 'GET /api/recall/stats': stats });
    const stream = createEventStream();
    const r = createRecall({ stream });
    await r.load();
    expect(n).toBe(1);
    stream.dispatch({ id: '1', type: 'memory', data: { op: 'pinned', ids: ['m1'] } });
    await vi.advanceTimersByTimeAsync(2500);
    expect(n).toBe(1);
    stream.dispatch({ id: '2', type: 'memory', data: { op: 'rated', ids: ['m1'] } });
    stream.dispatch({ id: '3', type: 'memory', data: { op: 'reinforced', ids: ['m1'] } });
    await vi.advanceTimersByTimeAsync(2500);
    expect(n).toBe(2);
    r.destroy();
  });

  it('refresh puts new recalls on top, updates the shown ones and keeps older pages', async () => {
    let newest: RecallEntry[] = [entry(3, 's'), entry(2, 's')];
    fakeFetch({
      'GET /api/recall/log': ({ url }: { url: string }) => ({ body: url.includes('before=') ? [entry(1, 's')] : newest }),
      'GET /api/recall/stats': stats,
    });
    const r = createRecall({ stream: createEventStream() });
    await r.load();
    await r.loadMore();
    expect(get(r.log).map((e) => e.seq)).toEqual([3, 2, 1]);
    newest = [entry(4, 's'), entry(3, 's', { feedback: [{ id: 'm1', at: '', op: 'rated', score: 1 }] })];
    await r.refresh();
    expect(get(r.log).map((e) => e.seq)).toEqual([4, 3, 2, 1]);
    expect(get(r.log)[1].feedback).toHaveLength(1);
    r.destroy();
  });

  it('clear empties the log; a refresh after a clear elsewhere empties it too', async () => {
    let newest: RecallEntry[] = [entry(3, 's'), entry(2, 's')];
    const f = fakeFetch({
      'GET /api/recall/log': ({ url }: { url: string }) => ({ body: url.includes('before=') ? [entry(1, 's')] : newest }),
      'GET /api/recall/stats': stats,
      'DELETE /api/recall/log': () => { newest = []; return { body: { cleared: 3 } }; },
    });
    const r = createRecall({ stream: createEventStream() });
    await r.load();
    await r.loadMore();
    expect(await r.clear()).toBe(3);
    expect(get(r.log)).toEqual([]);
    expect(get(r.more)).toBe(false);
    expect(f.calls.some((c) => c.method === 'DELETE' && c.url === '/api/recall/log')).toBe(true);

    newest = [entry(5, 's')];
    await r.load();
    await r.loadMore();
    expect(get(r.log).map((e) => e.seq)).toEqual([5, 1]);
    newest = []; // cleared by the CLI
    await r.refresh();
    expect(get(r.log)).toEqual([]);
    r.destroy();
  });

  it('reports a failure', async () => {
    fakeFetch({ 'GET /api/recall/log': () => ({ status: 500, body: { error: 'read recall log: boom', code: 'internal' } }), 'GET /api/recall/stats': stats });
    const r = createRecall({ stream: createEventStream() });
    await r.load();
    expect(get(toasts).length).toBeGreaterThan(0);
    expect(get(r.log)).toEqual([]);
    r.destroy();
  });
});
