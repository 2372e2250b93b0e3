import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { flushSync, mount, tick, unmount } from 'svelte';
import { get } from 'svelte/store';
import TeamSettings from './TeamSettings.svelte';
import { overview } from '../stores/overview';
import { toasts } from '../stores/toasts';
import { fakeFetch } from '../../test/fakes';
import type { Stats, TeamSettings as Settings } from '../api/models';

const base: Settings = {
  conflict_retention_days: 90, changed_by: 'team_owner', changed_at: '2026-11-28T20:10:00Z', min_days: 1, max_days: 3650,
  settable: true, admin: true, schema: 7, floor: 3, known: 7, used: 7, read_at: '2026-11-28T21:00:00Z',
};
const text = (el: Element | null) => (el?.textContent ?? '').replace(/\s+/g, ' ');

describe('TeamSettings', () => {
  const mounted: ReturnType<typeof mount>[] = [];
  beforeEach(() => {
    toasts.set([]);
    overview.stats.set({ team: { enabled: true, connected: true, role: 'bob', outbox: 0, lag_seconds: 0, last_error: '', pushed: 0, pulled: 0, relinked: 0, settings: base } } as unknown as Stats);
  });
  afterEach(() => {
    mounted.splice(0).forEach((c) => unmount(c));
    document.body.innerHTML = '';
    vi.unstubAllGlobals();
  });
  function render(settings: Settings) {
    const target = document.createElement('div');
    document.body.append(target);
    mounted.push(mount(TeamSettings, { target, props: { settings } }));
    flushSync();
    return target;
  }
  async function settle() {
    for (let i = 0; i < 5; i++) {
      await tick();
      await new Promise((r) => setTimeout(r, 0));
    }
    flushSync();
  }
  const q = (el: Element, id: string) => el.querySelector(`[data-testid=${id}]`);
  async function submit(el: Element, value: string) {
    const input = q(el, 'team-retention-input') as HTMLInputElement;
    input.value = value;
    input.dispatchEvent(new Event('input', { bubbles: true }));
    flushSync();
    (q(el, 'team-retention-form') as HTMLFormElement).requestSubmit();
    await settle();
  }

  it('shows what the team database says: the retention, who set it, the schema and its floor', () => {
    const el = render(base);
    expect(text(q(el, 'team-retention'))).toBe('90 days');
    expect(text(el)).toContain('(set by team_owner, ');
    expect(text(q(el, 'team-schema'))).toBe('Team database schema 7; memtray of schema 3 or later syncs with it.');
    expect((q(el, 'team-retention-input') as HTMLInputElement).value).toBe('90');
  });

  it('lets an admin change the retention: PATCH /api/team/settings, and the team status follows', async () => {
    const { calls } = fakeFetch({ 'PATCH /api/team/settings': { ...base, conflict_retention_days: 30, changed_by: 'bob' } });
    const el = render(base);
    await submit(el, '30');
    expect(calls).toEqual([{ method: 'PATCH', url: '/api/team/settings', body: { conflict_retention_days: 30 } }]);
    expect(q(el, 'team-retention-error')).toBeNull();
    expect(text(q(el, 'team-retention-saved'))).toBe('Saved for the whole team.');
    expect(get(overview.stats)?.team?.settings).toMatchObject({ conflict_retention_days: 30, changed_by: 'bob' });
  });

  it.each([
    ['0', 'Must be a whole number of days from 1 to 3650, not 0.'],
    ['3651', 'Must be a whole number of days from 1 to 3650, not 3651.'],
    ['-3', 'Must be a whole number of days from 1 to 3650, not -3.'],
    ['2.5', 'Give a whole number of days from 1 to 3650.'],
    ['', 'Give a whole number of days from 1 to 3650.'],
    ['thirty', 'Give a whole number of days from 1 to 3650.'],
  ])('refuses %j before asking, with a clear error', async (value, says) => {
    const { calls } = fakeFetch({});
    const el = render(base);
    await submit(el, value);
    expect(calls).toEqual([]);
    expect(text(q(el, 'team-retention-error'))).toBe(says);
    expect((q(el, 'team-retention-input') as HTMLInputElement).getAttribute('aria-invalid')).toBe('true');
    expect(get(overview.stats)?.team?.settings?.conflict_retention_days).toBe(90);
  });

  it("shows the daemon's refusals in the form: a field's problem, not an admin, an old schema", async () => {
    for (const [status, body, says] of [
      [400, { error: 'invalid team settings', code: 'invalid', fields: { conflict_retention_days: 'must be a whole number of days from 1 to 3650, not 4000' } }, 'must be a whole number of days from 1 to 3650, not 4000'],
      [403, { error: "team database: set the conflict retention: only a team admin can change or list the members or change the team's settings", code: 'not_admin' }, 'only a team admin can change'],
      [409, { error: 'team database: set the conflict retention: the schema is at version 5, team settings need 6', code: 'needs_owner' }, 'team settings need 6'],
    ] as const) {
      fakeFetch({ 'PATCH /api/team/settings': () => ({ status, body }) });
      const el = render(base);
      await submit(el, '40');
      expect(text(q(el, 'team-retention-error'))).toContain(says);
      expect(q(el, 'team-retention-saved')).toBeNull();
      expect(get(toasts)).toEqual([]);
      expect(get(overview.stats)?.team?.settings?.conflict_retention_days).toBe(90);
      mounted.splice(0).forEach((c) => unmount(c));
      document.body.innerHTML = '';
    }
  });

  it('shows a member no form, and says why', () => {
    const el = render({ ...base, admin: false });
    expect(q(el, 'team-retention-form')).toBeNull();
    expect(text(q(el, 'team-settings-readonly'))).toContain('Only a team admin can change it');
    expect(text(q(el, 'team-retention'))).toBe('90 days');
  });

  it('says the retention is fixed before the owner migrates to schema 6, and which versions this memtray uses', () => {
    const el = render({ ...base, settable: false, changed_by: undefined, changed_at: undefined, schema: 5, used: 5 });
    expect(q(el, 'team-retention-form')).toBeNull();
    expect(text(q(el, 'team-settings-fixed'))).toContain('Fixed at 90 days until the team owner runs memtray team init');
    expect(text(q(el, 'team-schema'))).toBe('Team database schema 5; memtray of schema 3 or later syncs with it; this memtray knows 7 and uses 5 until the team owner runs memtray team init.');
    expect(text(el)).not.toContain('set by');
  });
});
