import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { get } from 'svelte/store';
import { createEventStream } from './events';
import { FakeEventSource } from '../../test/fakes';

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

  it('reconnects with backoff after the browser gives up, resuming from the last id', () => {
    const s = createEventStream({ EventSourceImpl: FakeEventSource as unknown as typeof EventSource, minDelay: 100, maxDelay: 1000 });
    s.start();
    const first = FakeEventSource.instances[0];
    expect(first.url).toBe('/api/events');
    first.open();
    first.emit('decision', {}, '41');
    first.fail();
    expect(get(s.status)).toBe('retrying');
    vi.advanceTimersByTime(99);
    expect(FakeEventSource.instances).toHaveLength(1);
    vi.advanceTimersByTime(1);
    expect(FakeEventSource.instances).toHaveLength(2);
    expect(FakeEventSource.instances[1].url).toBe('/api/events?last_event_id=41');
    // The second failure waits twice as long.
    FakeEventSource.instances[1].fail();
    vi.advanceTimersByTime(199);
    expect(FakeEventSource.instances).toHaveLength(2);
    vi.advanceTimersByTime(1);
    expect(FakeEventSource.instances).toHaveLength(3);
    s.stop();
    expect(get(s.status)).toBe('idle');
  });
});
