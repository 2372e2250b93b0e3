import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { get } from 'svelte/store';
import { createEventStream, probeDaemon, type Connection } from './events';
import { FakeEventSource, fakeFetch } from '../../test/fakes';

describe('event stream', () => {
  beforeEach(() => {
    FakeEventSource.instances = [];
    vi.useFakeTimers();
  });
  afterEach(() => vi.useRealTimers());

  it('fans each event out to the subscribers of its type and of *', () => {
    const s = createEventStream({ EventSourceImpl: FakeEventSource as unknown as typeof EventSource });
    const decisions: unknown[] = [];
    const all: string[] = [];
    s.on('decision', (e) => decisions.push(e.data));
    s.on('*', (e) => all.push(e.type));
    s.start();
    const es = FakeEventSource.instances[0];
    es.open();
    expect(get(s.status)).toBe('open');
    es.emit('decision', { id: 'd1', verdict: 'stored' }, '101');
    es.emit('memory', { op: 'deleted', ids: ['m1'] }, '102');
    es.emit('ping', { at: 'now' });
    expect(decisions).toEqual([{ id: 'd1', verdict: 'stored' }]);
    expect(all).toEqual(['decision', 'memory', 'ping']);
    expect(s.lastId()).toBe('102'); // pings carry no id and do not move it
  });

  it('a failing handler does not stop the others', () => {
    const s = createEventStream({ EventSourceImpl: FakeEventSource as unknown as typeof EventSource });
    const got: string[] = [];
    vi.spyOn(console, 'error').mockImplementation(() => {});
    s.on('stats', () => { throw new Error('boom'); });
    s.on('stats', () => got.push('second'));
    s.start();
    FakeEventSource.instances[0].emit('stats', {}, '1');
    expect(got).toEqual(['second']);
  });

  it('reconnects with backoff after the browser gives up, resuming from the last id', async () => {
    const s = createEventStream({ EventSourceImpl: FakeEventSource as unknown as typeof EventSource, minDelay: 100, maxDelay: 1000, probe: async () => 'ok' });
    s.start();
    const first = FakeEventSource.instances[0];
    expect(first.url).toBe('/api/events');
    first.open();
    first.emit('decision', {}, '41');
    first.fail();
    expect(get(s.status)).toBe('retrying');
    await vi.advanceTimersByTimeAsync(99);
    expect(FakeEventSource.instances).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(FakeEventSource.instances).toHaveLength(2);
    expect(FakeEventSource.instances[1].url).toBe('/api/events?last_event_id=41');
    // The second failure waits twice as long.
    FakeEventSource.instances[1].fail();
    await vi.advanceTimersByTimeAsync(199);
    expect(FakeEventSource.instances).toHaveLength(2);
    await vi.advanceTimersByTimeAsync(1);
    expect(FakeEventSource.instances).toHaveLength(3);
    s.stop();
    expect(get(s.status)).toBe('idle');
  });

  it('says the daemon is down, looks again, and reconnects by itself when it is back', async () => {
    let answer: Connection = 'down';
    const probe = vi.fn(async () => answer);
    const s = createEventStream({ EventSourceImpl: FakeEventSource as unknown as typeof EventSource, minDelay: 100, maxDelay: 30000, downDelay: 500, probe });
    s.start();
    FakeEventSource.instances[0].open();
    expect(get(s.connection)).toBe('ok');
    FakeEventSource.instances[0].fail();
    await vi.advanceTimersByTimeAsync(100);
    expect(get(s.connection)).toBe('down');
    expect(FakeEventSource.instances).toHaveLength(1); // no stream while it is down
    await vi.advanceTimersByTimeAsync(5 * 500);
    expect(probe.mock.calls.length).toBeGreaterThanOrEqual(5); // it keeps looking, at most downDelay apart
    expect(FakeEventSource.instances).toHaveLength(1);
    const resets: string[] = [];
    s.on('reset', (e) => resets.push(e.type));
    answer = 'ok';
    await vi.advanceTimersByTimeAsync(500);
    expect(FakeEventSource.instances).toHaveLength(2);
    FakeEventSource.instances[1].open();
    expect(get(s.connection)).toBe('ok');
    // What the stores asked for while it was down failed: they reload.
    expect(resets).toEqual(['reset']);
    expect(get(s.status)).toBe('open');
    s.stop();
  });

  it('while the browser reconnects itself, a failed probe still says down', async () => {
    const s = createEventStream({ EventSourceImpl: FakeEventSource as unknown as typeof EventSource, probe: async () => 'down' });
    s.start();
    const es = FakeEventSource.instances[0];
    es.open();
    es.readyState = 0; // CONNECTING: the browser retries
    es.onerror?.();
    await vi.advanceTimersByTimeAsync(0);
    expect(get(s.connection)).toBe('down');
    es.open();
    expect(get(s.connection)).toBe('ok');
    s.stop();
  });

  it('a refused session is expired, not down', async () => {
    const s = createEventStream({ EventSourceImpl: FakeEventSource as unknown as typeof EventSource, minDelay: 100, probe: async () => 'expired' });
    s.start();
    FakeEventSource.instances[0].fail();
    await vi.advanceTimersByTimeAsync(100);
    expect(get(s.connection)).toBe('expired');
    s.stop();
  });

  it('probeDaemon tells down, expired and ok apart', async () => {
    vi.useRealTimers();
    vi.stubGlobal('fetch', async () => { throw new TypeError('Failed to fetch'); });
    expect(await probeDaemon()).toBe('down');
    fakeFetch({ 'GET /api/health': { service: 'memtray' }, 'GET /api/capture': () => ({ status: 401, body: { error: 'missing or wrong token' } }) });
    expect(await probeDaemon()).toBe('expired');
    fakeFetch({ 'GET /api/health': { service: 'memtray' }, 'GET /api/capture': { enabled: true } });
    expect(await probeDaemon()).toBe('ok');
    vi.unstubAllGlobals();
  });
});
