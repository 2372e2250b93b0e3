import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { get } from 'svelte/store';
import { createEventStream } from './events';
import { createMemories, projectGroups } from './memories';
import { toasts, runAction } from './toasts';
import { fakeFetch } from '../../test/fakes';

const mem = (id: string) => ({ id, text: `text ${id}`, kind: 'fact', type: 'project', importance: 0.5, access_count: 0, reinforced_count: 0,
  feedback_sum: 0, feedback_n: 0, created_at: '2026-01-01T00:00:00Z', updated_at: '2026-01-01T00:00:00Z', content_hash: 'h', stickiness: 0, age_days: 1, snoozed: false });

describe('memories store', () => {
  beforeEach(() => toasts.set([]));
  afterEach(() => vi.unstubAllGlobals());

  it('pages and sorts on the server', async () => {
    const { calls } = fakeFetch({
      'GET /api/memories': ({ url }: { url: string }) => {
        const q = new URL(url, 'http://x').searchParams;
        const off = Number(q.get('offset'));
        return { body: { memories: [mem(`m${off}`), mem(`m${off + 1}`)], total: 5 } };
      },
    });
    const s = createMemories({ stream: createEventStream() });
    await s.setPage({ limit: 2 });
    expect(get(s.rows).map((r) => r.id)).toEqual(['m0', 'm1']);
    expect(get(s.pages)).toEqual({ current: 1, count: 3 });
    await s.next();
    await s.next();
    expect(get(s.page).offset).toBe(4);
    expect(await s.next()).toBeUndefined(); // past the end: no request
    await s.sortBy('importance');
    const last = new URL(calls.at(-1)!.url, 'http://x').searchParams;
    expect(last.get('sort')).toBe('importance');
    expect(last.get('order')).toBe('desc');
    expect(last.get('offset')).toBe('0'); // a new sort starts at the first page
    await s.sortBy('importance');
    expect(new URL(calls.at(-1)!.url, 'http://x').searchParams.get('order')).toBe('asc');
  });

  it('answers only the newest of overlapping page requests', async () => {
    let resolveFirst!: (r: Response) => void;
    let n = 0;
    vi.stubGlobal('fetch', vi.fn((url: string) => {
      n++;
      if (n === 1) return new Promise<Response>((r) => (resolveFirst = r));
      return Promise.resolve(new Response(JSON.stringify({ memories: [mem('new')], total: 1 }), { headers: { 'Content-Type': 'application/json' } }));
    }));
    const s = createMemories({ stream: createEventStream() });
    const a = s.load();
    await s.load();
    resolveFirst(new Response(JSON.stringify({ memories: [mem('old')], total: 1 }), { headers: { 'Content-Type': 'application/json' } }));
    await a;
    expect(get(s.rows).map((r) => r.id)).toEqual(['new']);
  });

  it('deletes after the undo window, hiding the row meanwhile; undo brings it back', async () => {
    vi.useFakeTimers();
    const { calls } = fakeFetch({
      'GET /api/memories': { memories: [mem('a'), mem('b')], total: 2 },
      'DELETE /api/memories/a': () => ({ status: 204 }),
      'DELETE /api/memories/b': () => ({ status: 204 }),
    });
    const s = createMemories({ stream: createEventStream() });
    await s.load();
    s.remove(['a']);
    expect(get(s.rows).map((r) => r.id)).toEqual(['b']);
    await runAction(get(toasts)[0].id);
    expect(get(s.rows).map((r) => r.id)).toEqual(['a', 'b']);
    s.remove(['b']);
    expect(calls.some((c) => c.method === 'DELETE')).toBe(false);
    await vi.advanceTimersByTimeAsync(6000);
    expect(calls.filter((c) => c.method === 'DELETE').map((c) => c.url)).toEqual(['/api/memories/b']);
    vi.useRealTimers();
  });

  it('applies memory events to the page', async () => {
    fakeFetch({ 'GET /api/memories': { memories: [mem('a')], total: 1 } });
    const stream = createEventStream();
    const s = createMemories({ stream });
    await s.load();
    stream.dispatch({ id: '1', type: 'memory', data: { op: 'reinforced', ids: ['a'], memory: { ...mem('a'), reinforced_count: 3 } } });
    expect(get(s.rows)[0].reinforced_count).toBe(3);
  });

  it('asks the facets again with every reload after a change (the store counts them from memory)', async () => {
    vi.useFakeTimers();
    const facets = { projects: { shop: 1 }, kinds: { fact: 1 }, types: { project: 1 }, sources: { mcp: 1 }, scopes: { default: 1 } };
    const { calls } = fakeFetch({ 'GET /api/memories': { memories: [mem('a')], total: 1, facets } });
    const stream = createEventStream();
    const s = createMemories({ stream, reloadMs: 10 });
    await s.load();
    for (const id of ['b', 'c']) {
      stream.dispatch({ id, type: 'memory', data: { op: 'added', ids: [id], memory: mem(id) } });
      await vi.advanceTimersByTimeAsync(20);
    }
    expect(calls.map((c) => new URL(c.url, 'http://x').searchParams.get('facets'))).toEqual(['true', 'true', 'true']);
    vi.useRealTimers();
  });

  it('sends the filters to the server, asks the facets on the first load, and groups worktrees under their repository', async () => {
    const facets = { projects: { shop: 3, 'shop-ui': 2, infra: 1, '': 1 }, kinds: { fact: 4 }, types: { project: 4 }, sources: { mcp: 4 }, scopes: { default: 4 }, worktrees: { shop: ['shop-ui'] } };
    const { calls } = fakeFetch({ 'GET /api/memories': { memories: [mem('a')], total: 1, facets } });
    const s = createMemories({ stream: createEventStream() });
    await s.load();
    const q = (i: number) => new URL(calls[i].url, 'http://x').searchParams;
    expect(q(0).get('facets')).toBe('true');
    expect(get(s.facets)).toEqual(facets);
    await s.setPage({ project: 'shop', worktrees: true, type: 'feedback', source: 'ingest', scope: 'team' });
    expect(q(1).get('facets')).toBeNull();
    expect([q(1).get('project'), q(1).get('worktrees'), q(1).get('type'), q(1).get('source'), q(1).get('scope')]).toEqual(['shop', 'true', 'feedback', 'ingest', 'team']);
    await s.setPage({ project: '' });
    expect(q(2).get('worktrees')).toBeNull(); // without a project it means nothing
    expect(projectGroups(facets)).toEqual([
      { name: 'infra', count: 1, worktrees: [] },
      { name: 'shop', count: 3, worktrees: [{ name: 'shop-ui', count: 2 }] },
    ]);
  });
});
