import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { get } from 'svelte/store';
import { createEventStream } from './events';
import { createFeed, decisionsFor, matchesFilters } from './feed';
import { toasts, runAction, flushDeferred } from './toasts';
import { fakeFetch } from '../../test/fakes';
import type { DecisionEntry } from '../api/models';

const dec = (id: string, verdict: DecisionEntry['verdict'], at: string, extra: Partial<DecisionEntry> = {}): DecisionEntry =>
  ({ id, verdict, stage: verdict === 'rejected' ? 'content' : 'store', reason: 'r', at, session_id: 's1', ...extra });

describe('feed store', () => {
  beforeEach(() => toasts.set([]));
  afterEach(() => vi.unstubAllGlobals());

  it('loads the log, then applies decision events newest first, bounded', async () => {
    fakeFetch({ 'GET /api/decisions': [dec('a', 'stored', '2026-01-01T00:00:01Z'), dec('b', 'rejected', '2026-01-01T00:00:00Z')] });
    const stream = createEventStream();
    const feed = createFeed({ max: 3, stream });
    await feed.load();
    expect(get(feed.items).map((i) => i.id)).toEqual(['a', 'b']);
    stream.dispatch({ id: '1', type: 'decision', data: dec('c', 'merged', '2026-01-01T00:00:02Z') });
    stream.dispatch({ id: '2', type: 'decision', data: dec('d', 'stored', '2026-01-01T00:00:03Z', { session_id: 's2' }) });
    feed.flush();
    expect(get(feed.items).map((i) => i.id)).toEqual(['d', 'c', 'a']); // b dropped: at most 3
    feed.filters.set({ verdict: '', stage: '', session: 's2' });
    expect(get(feed.visible).map((i) => i.id)).toEqual(['d']);
    feed.filters.set({ verdict: 'merged', stage: '', session: '' });
    expect(get(feed.visible).map((i) => i.id)).toEqual(['c']);
    expect(get(feed.sessions)).toEqual(['s1', 's2']);
  });

  it('batches a burst of events into one update and keeps memory bounded', async () => {
    vi.useFakeTimers();
    fakeFetch({ 'GET /api/decisions': [] });
    const stream = createEventStream();
    const feed = createFeed({ max: 100, stream, flushMs: 100 });
    await feed.load();
    let updates = 0;
    const unsub = feed.items.subscribe(() => updates++);
    for (let i = 0; i < 1000; i++) {
      stream.dispatch({ id: String(i), type: 'decision', data: dec(`x${i}`, 'stored', new Date(1e12 + i * 1000).toISOString()) });
    }
    vi.advanceTimersByTime(100);
    expect(updates).toBe(2); // the subscription's first call, then one batch
    expect(get(feed.items)).toHaveLength(100);
    expect(get(feed.items)[0].id).toBe('x999');
    unsub();
    vi.useRealTimers();
  });

  it('keeps a rejected item, and undo marks what it stored as noise', async () => {
    const { calls } = fakeFetch({
      'GET /api/decisions': [dec('r1', 'rejected', '2026-01-01T00:00:00Z')],
      'POST /api/decisions/r1/keep': dec('k1', 'stored', '2026-01-01T00:00:05Z', { memory_ids: ['m9'] }),
      'POST /api/memories/m9/noise': () => ({ status: 204 }),
    });
    const feed = createFeed({ stream: createEventStream() });
    await feed.load();
    await feed.keep(get(feed.items)[0]);
    feed.flush();
    expect(get(feed.items).find((i) => i.id === 'r1')?.mark).toBe('kept');
    expect(get(feed.items).find((i) => i.id === 'k1')?.verdict).toBe('stored');
    const t = get(toasts).find((x) => x.action?.label === 'Undo')!;
    await runAction(t.id);
    expect(calls.map((c) => `${c.method} ${c.url}`)).toContain('POST /api/memories/m9/noise');
    expect(get(feed.items).find((i) => i.id === 'r1')?.mark).toBeUndefined();
  });

  it('marks noise only when the undo window closes, and not at all when undone', async () => {
    const { calls } = fakeFetch({
      'GET /api/decisions': [dec('s1', 'stored', '2026-01-01T00:00:00Z', { memory_ids: ['m1'] })],
      'POST /api/memories/m1/noise': () => ({ status: 204 }),
    });
    const feed = createFeed({ stream: createEventStream() });
    await feed.load();
    feed.noise(get(feed.items)[0]);
    expect(get(feed.items)[0].mark).toBe('noise-pending');
    const t = get(toasts).find((x) => x.action?.label === 'Undo')!;
    expect(t.text).toBe('Marked as noise: the memory goes to the trash (Steward → Trash restores it) and is learned as noise');
    await runAction(t.id); // undo: nothing is sent
    expect(calls.some((c) => c.url.includes('/noise'))).toBe(false);
    expect(get(feed.items)[0].mark).toBeUndefined();
    feed.noise(get(feed.items)[0]);
    flushDeferred(); // the page goes away: it is sent now
    await vi.waitFor(() => expect(calls.some((c) => c.url === '/api/memories/m1/noise')).toBe(true));
  });

  it('holds new decisions while held ("N new"), updates shown ones in place, and lets them in on showNew or release', async () => {
    fakeFetch({ 'GET /api/decisions': [dec('a', 'stored', '2026-01-01T00:00:01Z')] });
    const stream = createEventStream();
    const feed = createFeed({ stream });
    await feed.load();
    feed.hold(true);
    stream.dispatch({ id: '1', type: 'decision', data: dec('b', 'stored', '2026-01-01T00:00:02Z') });
    stream.dispatch({ id: '2', type: 'decision', data: dec('a', 'merged', '2026-01-01T00:00:01Z') });
    stream.dispatch({ id: '3', type: 'decision', data: dec('c', 'rejected', '2026-01-01T00:00:03Z') });
    feed.flush();
    expect(get(feed.items).map((i) => `${i.id}:${i.verdict}`)).toEqual(['a:merged']);
    expect(get(feed.pending)).toBe(2);
    feed.showNew();
    expect(get(feed.items).map((i) => i.id)).toEqual(['c', 'b', 'a']);
    expect(get(feed.pending)).toBe(0);
    stream.dispatch({ id: '4', type: 'decision', data: dec('d', 'stored', '2026-01-01T00:00:04Z') });
    feed.flush();
    expect(get(feed.pending)).toBe(1);
    feed.hold(false);
    expect(get(feed.items).map((i) => i.id)).toEqual(['d', 'c', 'b', 'a']);
    expect(get(feed.pending)).toBe(0);
  });

  it('shows a memory marked as noise, or deleted, as stored again once it is restored from the trash', async () => {
    fakeFetch({
      'GET /api/decisions': [
        dec('a', 'stored', '2026-01-01T00:00:01Z', { memory_ids: ['m1'] }),
        dec('b', 'stored', '2026-01-01T00:00:02Z', { memory_ids: ['m2'] }),
        dec('c', 'stored', '2026-01-01T00:00:03Z', { memory_ids: ['m3'] }),
      ],
      'POST /api/memories/m1/noise': null,
    });
    const stream = createEventStream();
    const feed = createFeed({ stream });
    await feed.load();
    const mark = () => Object.fromEntries(get(feed.items).map((i) => [i.id, i.mark ?? 'stored']));
    feed.noise(get(feed.items).find((i) => i.id === 'a')!);
    flushDeferred();
    await vi.waitFor(() => expect(mark().a).toBe('noise'));
    stream.dispatch({ id: '1', type: 'memory', data: { op: 'deleted', ids: ['m1', 'm2'] } });
    expect(mark()).toEqual({ a: 'noise', b: 'noise', c: 'stored' });
    stream.dispatch({ id: '2', type: 'memory', data: { op: 'restored', ids: ['m1', 'm2', 'm3'] } });
    expect(mark()).toEqual({ a: 'stored', b: 'stored', c: 'stored' });
  });

  it('filters by project and by words anywhere in the decision', () => {
    const it1 = { ...dec('a', 'stored', '2026-01-01T00:00:01Z'), project: 'shop', user: 'Why is Postgres pinned?', memory_ids: ['m1'] };
    const it2 = { ...dec('b', 'rejected', '2026-01-01T00:00:02Z'), project: 'infra', preview: 'ok thanks' };
    const f = { verdict: '', stage: '', session: '' };
    expect([it1, it2].filter((i) => matchesFilters(i, { ...f, project: 'shop' })).map((i) => i.id)).toEqual(['a']);
    expect([it1, it2].filter((i) => matchesFilters(i, { ...f, text: 'postgres PINNED' })).map((i) => i.id)).toEqual(['a']);
    expect([it1, it2].filter((i) => matchesFilters(i, { ...f, text: 'postgres thanks' }))).toEqual([]);
    expect([it1, it2].filter((i) => matchesFilters(i, { ...f, text: 'm1' })).map((i) => i.id)).toEqual(['a']);
    expect([it1, it2].filter((i) => matchesFilters(i, { ...f, text: '  ' })).length).toBe(2);
  });

  it('finds the decisions of a memory, oldest first, by its ids or its statements', () => {
    const items = [
      dec('c', 'merged', '2026-01-01T00:00:03Z', { memory_ids: ['m1'] }),
      dec('b', 'stored', '2026-01-01T00:00:02Z', { candidates: [{ text: 't', origin: 'user', class: 'fact', kept: true, memory_id: 'm1' }] }),
      dec('a', 'stored', '2026-01-01T00:00:01Z', { memory_ids: ['m2'] }),
    ];
    expect(decisionsFor(items, 'm1').map((i) => i.id)).toEqual(['b', 'c']);
    expect(decisionsFor(items, 'm3')).toEqual([]);
  });
});
