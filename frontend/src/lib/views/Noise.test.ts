import { afterEach, describe, expect, it, vi } from 'vitest';
import { mount, unmount } from 'svelte';
import Noise from './Noise.svelte';
import { noise } from '../stores/noise';
import { toasts } from '../stores/toasts';
import { fakeFetch } from '../../test/fakes';

const scorer = {
  threshold: 0.35, quality_prototypes: ['a decision and its reason'], noise_prototypes: ['thanks!'], learned: 0,
  buffer_len: 1, buffer_size: 500, recent: 0, rebuild_every: 25, until_rebuild: 24, rebuilds: 0,
  built_at: new Date(Date.now() - 12 * 60_000).toISOString(), recent_scores: [],
};

describe('Noise view', () => {
  const mounted: ReturnType<typeof mount>[] = [];
  afterEach(() => {
    mounted.splice(0).forEach((c) => unmount(c));
    document.body.innerHTML = '';
    toasts.set([]);
    noise.state.set(null);
    noise.loaded.set(false);
    vi.unstubAllGlobals();
  });

  // "Rebuilt 0 times, last 12m ago" said a rebuild had happened that had
  // not: before the first rebuild of this process, the time is when the
  // daemon built the model at start.
  for (const [rebuilds, want, not] of [
    [0, 'Built when memtray started, 12m ago; rebuilt after 24 more rejections.', 'Rebuilt 0 times'],
    [3, 'Rebuilt 3 times since memtray started, last 12m ago; next after 24 more rejections.', 'Built when'],
  ] as [number, string, string][]) {
    it(`says how often the learned prototypes were rebuilt (${rebuilds})`, async () => {
      fakeFetch({
        'GET /api/noise': { scorer: { ...scorer, rebuilds } },
        'GET /api/decisions': [],
        'GET /api/noise/projection': { points: [], rejected: [] },
      });
      const target = document.createElement('div');
      document.body.append(target);
      mounted.push(mount(Noise, { target }));
      await vi.waitFor(() => expect(target.querySelector('[data-testid="noise-rebuilds"]')).not.toBeNull());
      const line = target.querySelector('[data-testid="noise-rebuilds"]')!.textContent!.replace(/\s+/g, ' ').trim();
      expect(line).toBe(want);
      expect(target.textContent).not.toContain(not);
    });
  }
});
