import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { flushSync, mount, tick, unmount } from 'svelte';
import { get } from 'svelte/store';
import Overview from './Overview.svelte';
import { createOverview, overview } from '../stores/overview';
import { createEventStream, events } from '../stores/events';
import { toasts } from '../stores/toasts';
import { fakeFetch } from '../../test/fakes';
import type { Stats, StatsEvent, TeamSettings, TeamStatus } from '../api/models';

const settings: TeamSettings = {
  conflict_retention_days: 90, changed_by: 'team_owner', changed_at: '2026-11-28T20:10:00Z', min_days: 1, max_days: 3650,
  settable: true, admin: false, schema: 8, floor: 3, known: 8, used: 8, read_at: '2026-11-28T21:00:00Z',
};
const offline: TeamStatus = { enabled: true, connected: false, outbox: 2, lag_seconds: 0, last_error: 'team database: connect: refused', pushed: 0, pulled: 0, relinked: 0 };
const online: TeamStatus = { ...offline, connected: true, role: 'bob', outbox: 0, last_error: '', settings };
const stats = { store: { count: 3 }, embedder: 'words', team: offline } as unknown as Stats;
const ev = (team?: TeamStatus): StatsEvent => ({ memories: 3, capturing: true, today: {}, embedder: 'words', embedder_degraded: false, warnings: 0, subscribers: 1, team });
const text = (el: Element | null) => (el?.textContent ?? '').replace(/\s+/g, ' ');

// The Overview's team line and settings follow the daemon: the team sync's
// state rides on every "stats" event (GET /api/stats only at the load). At
// 9937c7b they showed the status of the load until a reload.
describe('Overview team panel', () => {
  const mounted: ReturnType<typeof mount>[] = [];
  beforeEach(() => {
    toasts.set([]);
    // No /api/overview (an older daemon): the panel reads GET /api/stats.
    fakeFetch({ 'GET /api/stats': stats });
  });
  afterEach(() => {
    mounted.splice(0).forEach((c) => unmount(c));
    document.body.innerHTML = '';
    vi.unstubAllGlobals();
  });
  async function settle() {
    for (let i = 0; i < 5; i++) {
      await tick();
      await new Promise((r) => setTimeout(r, 0));
    }
    flushSync();
  }
  const q = (el: Element, id: string) => el.querySelector(`[data-testid=${id}]`);

  it('follows a connection made after the load, a setting changed elsewhere and a refusal withdrawn', async () => {
    const target = document.createElement('div');
    document.body.append(target);
    mounted.push(mount(Overview, { target }));
    await settle();
    expect(text(q(target, 'team-line'))).toContain('Team: not connected · 2 to push');
    expect(q(target, 'team-settings')).toBeNull();

    events.dispatch({ id: '', type: 'stats', data: ev(online) });
    await settle();
    expect(text(q(target, 'team-line'))).toContain('Team: connected as bob · 0 to push');
    expect(text(q(target, 'team-retention'))).toBe('90 days');

    events.dispatch({ id: '', type: 'stats', data: ev({ ...online, settings: { ...settings, conflict_retention_days: 30, changed_by: 'alice' } }) });
    await settle();
    expect(text(q(target, 'team-retention'))).toBe('30 days');
    expect(text(q(target, 'team-settings'))).toContain('(set by alice, ');

    const refusal = { id: 'm1', member: 'alice', what: 'alice also changed the text of “x”… refused theirs', at: '2026-11-28T21:05:00Z', seq: 4 };
    events.dispatch({ id: '', type: 'stats', data: ev({ ...online, told: [refusal] }) });
    await settle();
    expect(text(q(target, 'team-told'))).toBe('1 edit by teammates met yours');
    expect(q(target, 'team-resolved')).toBeNull();
    events.dispatch({ id: '', type: 'stats', data: ev({ ...online, told: [{ ...refusal, what: 'alice also changed … resolved by merge', withdrawn: true }] }) });
    await settle();
    expect(q(target, 'team-told')).toBeNull();
    expect(text(q(target, 'team-resolved'))).toBe('1 conflict with teammates resolved by merge');
    expect(q(target, 'team-resolved')?.getAttribute('title')).toBe('alice also changed … resolved by merge');
    // A refusal made moot otherwise (her next edit relinked): resolved, not by merge.
    const relinked = { ...refusal, id: 'm2', seq: 6, what: 'alice also changed … which their copy became: resolved', withdrawn: true, why: 'relinked' };
    events.dispatch({ id: '', type: 'stats', data: ev({ ...online, told: [{ ...refusal, what: 'alice also changed … resolved by merge', withdrawn: true }, relinked] }) });
    await settle();
    expect(text(q(target, 'team-resolved'))).toBe('2 conflicts with teammates resolved');

    // A stats event without the team (a daemon without team memory) leaves the status as it is.
    events.dispatch({ id: '', type: 'stats', data: ev() });
    await settle();
    expect(text(q(target, 'team-line'))).toContain('connected as bob');
  });

  it('the store takes the team status of a stats event, and nothing before the load', async () => {
    const stream = createEventStream();
    const o = createOverview({ stream });
    stream.dispatch({ id: '', type: 'stats', data: ev(online) });
    expect(get(o.stats)).toBeNull();
    await o.load();
    expect(get(o.stats)?.team?.connected).toBe(false);
    stream.dispatch({ id: '', type: 'stats', data: ev(online) });
    expect(get(o.stats)?.team).toEqual(online);
    expect(get(o.stats)?.store).toEqual(stats.store);
    o.destroy();
    expect(get(overview.stats)?.team).toBeDefined();
  });
});

// The Overview counts what the Memories list shows: the old versions an
// edit superseded are said apart, not added to the memories (at 9937c7b a
// new user saw 107 memories beside a list of 105).
describe('Overview counts', () => {
  const mounted: ReturnType<typeof mount>[] = [];
  afterEach(() => {
    mounted.splice(0).forEach((c) => unmount(c));
    document.body.innerHTML = '';
    vi.unstubAllGlobals();
  });
  async function show() {
    const target = document.createElement('div');
    document.body.append(target);
    mounted.push(mount(Overview, { target }));
    for (let i = 0; i < 5; i++) {
      await tick();
      await new Promise((r) => setTimeout(r, 0));
    }
    flushSync();
    return target;
  }
  const q = (el: Element, id: string) => el.querySelector(`[data-testid=${id}]`);
  const ov = (memories: number, superseded: number) => ({ at: '2026-01-01T00:00:00Z', memories, snoozed: 0, superseded, pinned: 0,
    by_kind: [], by_project: [], other_projects: 0, other_memories: 0, store_bytes: 0, created_per_day: [], growth: { days: [], series: [] },
    recall: { per_session: 0 }, filter: [], warnings: [], embedder: { model: 'builtin-wordvec-v1', degraded: false, reason: '' },
    judge: { enabled: false } });

  it('leaves superseded versions out of the count of a daemon without /api/overview', async () => {
    fakeFetch({ 'GET /api/stats': { store: { count: 107 }, embedder: 'words', snoozed: 0, superseded: 2 } as unknown as Stats });
    const target = await show();
    expect(text(q(target, 'count-memories'))).toBe('105');
    expect(text(q(target, 'count-superseded'))).toBe('2old versions (superseded)');
  });

  it('shows the overview\'s superseded count apart, and nothing when there are none', async () => {
    fakeFetch({ 'GET /api/overview': ov(105, 2), 'GET /api/stats': { store: { count: 107 }, superseded: 2 } });
    let target = await show();
    expect(text(q(target, 'count-memories'))).toBe('105');
    expect(text(q(target, 'count-superseded'))).toBe('2old versions (superseded)');
    mounted.splice(0).forEach((c) => unmount(c));
    fakeFetch({ 'GET /api/overview': ov(5, 0), 'GET /api/stats': { store: { count: 5 }, superseded: 0 } });
    target = await show();
    expect(q(target, 'count-superseded')).toBeNull();
  });
});
