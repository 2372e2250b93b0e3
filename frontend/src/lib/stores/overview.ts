// Overview: GET /api/overview (GET /api/stats on a daemon without it), and
// the compact "stats" events for the header, which also carry the team
// sync's state (the stats' team status follows them); the team's settings
// change here too (they live in the stats' team status).
import { get, writable } from 'svelte/store';
import { ApiError, api } from '../api/client';
import type { Overview, Stats, StatsEvent } from '../api/models';
import { events as defaultEvents, type EventStream } from './events';
import { fieldErrors, reportError } from './toasts';

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
      // The team sync's state rides on every stats event: the team line and
      // settings follow a connection made later, a pull's news and a
      // setting another admin changed, without a reload.
      const team = e.data?.team;
      if (team) stats.update((s) => (s ? { ...s, team } : s));
      // Refresh the full overview at most every 10 s while stats move.
      if (!t) t = setTimeout(() => { t = null; api.overview().then((o) => overview.set(o)).catch(() => {}); }, 10000);
    }),
    stream.on('reset', () => void load()),
  ];
  /**
   * Sets the team's conflict retention (PATCH /api/team/settings, a team
   * admin's): on success the team status shows the settings the database
   * then holds and null is returned; otherwise the problems by field ('' for
   * the whole form: not an admin, the schema too old), as the form shows them.
   */
  async function setTeamRetention(days: number): Promise<Record<string, string> | null> {
    try {
      const set = await api.setTeamSettings({ conflict_retention_days: days });
      const s = get(stats);
      if (s?.team) stats.set({ ...s, team: { ...s.team, settings: set } });
      return null;
    } catch (e) {
      if (e instanceof ApiError && (e.status === 403 || e.status === 409)) return { '': e.message };
      return fieldErrors(e) ?? {};
    }
  }
  return { overview, stats, live, loaded, load, setTeamRetention, destroy: () => unsubs.forEach((u) => u()) };
}

export const overview = createOverview();
