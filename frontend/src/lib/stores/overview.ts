// Overview: GET /api/overview (GET /api/stats on a daemon without it), and
// the compact "stats" events for the header.
import { writable } from 'svelte/store';
import { api } from '../api/client';
import type { Overview, Stats, StatsEvent } from '../api/models';
import { events as defaultEvents, type EventStream } from './events';
import { reportError } from './toasts';

export function createOverview(opts: { stream?: EventStream } = {}) {
  const stream = opts.stream ?? defaultEvents;
  const overview = writable<Overview | null>(null);
  const stats = writable<Stats | null>(null);
  const live = writable<StatsEvent | null>(null);
  const loaded = writable(false);

  async function load() {
    try {
      overview.set(await api.overview());
    } catch (e) {
      reportError(e, 'Loading the overview');
    }
    try {
      stats.set(await api.stats());
    } catch (e) {
      reportError(e, 'Loading stats');
    }
    loaded.set(true);
  }

  let t: ReturnType<typeof setTimeout> | null = null;
  const unsubs = [
    stream.on<StatsEvent>('stats', (e) => {
      live.set(e.data);
      // Refresh the full overview at most every 10 s while stats move.
      if (!t) t = setTimeout(() => { t = null; api.overview().then((o) => overview.set(o)).catch(() => {}); }, 10000);
    }),
    stream.on('reset', () => void load()),
  ];
  return { overview, stats, live, loaded, load, destroy: () => unsubs.forEach((u) => u()) };
}

export const overview = createOverview();
