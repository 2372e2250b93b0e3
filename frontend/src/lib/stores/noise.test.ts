import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { get } from 'svelte/store';
import { createEventStream } from './events';
import { createNoise, placePoints } from './noise';
import { toasts } from './toasts';
import { fakeFetch } from '../../test/fakes';
import type { NoiseProjection, ProjectionPoint } from '../api/models';

const proj: NoiseProjection = {
  points: [
    { x: -1, y: 0, kind: 'quality', label: 'a decision and its reason' },
    { x: 1, y: 0, kind: 'noise', label: 'thanks!' },
    { x: 0, y: 0.5, kind: 'rejected', label: 'ok done', score: 0.2 },
  ],
  explained: [0.6, 0.3],
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

describe('placePoints', () => {
  it('fits the points in the box with one scale, centred, y up, exchanges under prototypes', () => {
    const placed = placePoints(proj.points, 200, 100, 10);
    expect(placed.map((p) => p.kind)).toEqual(['rejected', 'quality', 'noise']);
    const byKind = Object.fromEntries(placed.map((p) => [p.kind, p]));
    // x spans 2, y spans 0.5: x limits the scale, (200 - 20) / 2 = 90.
    expect(byKind.quality.cx).toBeCloseTo(10);
    expect(byKind.noise.cx).toBeCloseTo(190);
    expect(byKind.quality.cy).toBeCloseTo(50 + 0.25 * 90);
    expect(byKind.rejected.cy).toBeCloseTo(50 - 0.25 * 90);
    for (const p of placed) {
      expect(p.cx).toBeGreaterThanOrEqual(10);
      expect(p.cx).toBeLessThanOrEqual(190);
      expect(p.cy).toBeGreaterThanOrEqual(10);
      expect(p.cy).toBeLessThanOrEqual(90);
    }
  });

  it('puts coincident points in the middle and handles none', () => {
    const same: ProjectionPoint[] = [{ x: 3, y: 3, kind: 'quality', label: 'q' }, { x: 3, y: 3, kind: 'stored', label: 's' }];
    for (const p of placePoints(same, 100, 60)) expect([p.cx, p.cy]).toEqual([50, 30]);
    expect(placePoints([], 100, 60)).toEqual([]);
  });
});
