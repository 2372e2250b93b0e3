import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { get } from 'svelte/store';
import { createEventStream } from './events';
import { createNoise } from './noise';
import { toasts } from './toasts';
import { fakeFetch } from '../../test/fakes';
import type { NoiseProjection } from '../api/models';

const proj: NoiseProjection = {
  points: [
    { x: -1, y: 0, kind: 'quality', label: 'a decision and its reason' },
    { x: 1, y: 0, kind: 'noise', label: 'thanks!' },
    { x: 0, y: 0.5, kind: 'rejected', label: 'ok done', score: 0.2 },
  ],
  explained: [0.6, 0.3],
  rejected: [{ decision_id: 'd1', preview: 'ok done', at: '2026-11-27T07:00:00Z', stage: 'content', score: 0.2,
    noise: [{ kind: 'noise', label: 'thanks!', similarity: 0.81 }], quality: { kind: 'quality', label: 'a decision and its reason', similarity: 0.12 } }],
};

describe('noise store: projection', () => {
  beforeEach(() => toasts.set([]));
  afterEach(() => vi.unstubAllGlobals());

  it('loads the projection with the scorer, and refreshes it on demand', async () => {
    let n = 0;
    const { calls } = fakeFetch({
      'GET /api/noise': { scorer: { threshold: 0.35 } },
      'GET /api/decisions': [],
      'GET /api/noise/projection': () => { n++; return { body: proj }; },
    });
    const noise = createNoise({ stream: createEventStream() });
    await noise.load();
    await vi.waitFor(() => expect(get(noise.projection)).toEqual(proj));
    expect(get(noise.projectionAvailable)).toBe(true);
    expect(get(noise.projectionLoading)).toBe(false);
    await noise.loadProjection();
    expect(n).toBe(2);
    expect(calls.filter((c) => c.url === '/api/noise/projection')).toHaveLength(2);
    noise.destroy();
  });

  it('does not ask for a projection without a scorer', async () => {
    const { calls } = fakeFetch({ 'GET /api/noise': { scorer: null }, 'GET /api/decisions': [] });
    const noise = createNoise({ stream: createEventStream() });
    await noise.load();
    expect(calls.some((c) => c.url === '/api/noise/projection')).toBe(false);
    noise.destroy();
  });

  it('marks the projection unavailable when the scorer is off, without a toast', async () => {
    fakeFetch({ 'GET /api/noise/projection': () => ({ status: 503, body: { error: 'the content scorer is off', code: 'unavailable' } }) });
    const noise = createNoise({ stream: createEventStream() });
    await noise.loadProjection();
    expect(get(noise.projectionAvailable)).toBe(false);
    expect(get(toasts)).toHaveLength(0);
    noise.destroy();
  });

  it('reports other errors', async () => {
    fakeFetch({ 'GET /api/noise/projection': () => ({ status: 500, body: { error: 'noise projection: embed 3 exchanges: boom', code: 'internal' } }) });
    const noise = createNoise({ stream: createEventStream() });
    await noise.loadProjection();
    expect(get(noise.projectionAvailable)).toBe(null);
    expect(get(toasts).length).toBeGreaterThan(0);
    noise.destroy();
  });
});
