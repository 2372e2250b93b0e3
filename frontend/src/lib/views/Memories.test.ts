import { afterEach, describe, expect, it, vi } from 'vitest';
import { flushSync, mount, unmount } from 'svelte';
import { get } from 'svelte/store';
import Memories from './Memories.svelte';
import { toasts } from '../stores/toasts';
import { fakeFetch } from '../../test/fakes';
import type { DecisionEntry, Stats } from '../api/models';
import { overview } from '../stores/overview';

const mem = (id: string, extra: Record<string, unknown> = {}) => ({ id, text: `text ${id}`, kind: 'fact', type: 'project', project: 'orbit', source: 'capture',
  importance: 0.5, access_count: 0, reinforced_count: 0, feedback_sum: 0, feedback_n: 0, created_at: '2026-01-01T00:00:00Z',
  updated_at: '2026-01-01T00:00:00Z', content_hash: 'h', stickiness: 0, age_days: 1, snoozed: false, ...extra });
const facets = { projects: { orbit: 2, 'orbit-ui': 1 }, kinds: { fact: 3 }, types: { project: 3 }, sources: { capture: 2, cli: 1 },
  scopes: { default: 3 }, worktrees: { orbit: ['orbit-ui'] } };

describe('Memories view', () => {
  const mounted: ReturnType<typeof mount>[] = [];
  afterEach(() => {
    mounted.splice(0).forEach((c) => unmount(c));
    document.body.innerHTML = '';
    toasts.set([]);
    location.hash = '';
    vi.unstubAllGlobals();
  });

  it('opens #/memories?id=, links the memory to its decision (or says where it came from), groups worktrees and collapses zero columns', async () => {
    const dec: DecisionEntry = { id: 'd1', verdict: 'stored', stage: 'store', reason: 'new memory', at: '2026-01-01T00:00:00Z',
      session_id: 'sess-1', user_turn: 2, turn: 3, memory_ids: ['m1'] };
    fakeFetch({
      'GET /api/memories': { memories: [mem('m1', { access_count: 2 }), mem('m2', { source: 'cli' })], total: 2, facets },
      'GET /api/memories/m1': mem('m1'),
      'GET /api/memories/m2': mem('m2', { source: 'cli' }),
      'GET /api/memories/m1/history': { id: 'm1', versions: [], merged: [] },
      'GET /api/memories/m2/history': { id: 'm2', versions: [], merged: [] },
      'GET /api/decisions': [dec],
    });
    vi.stubGlobal('ResizeObserver', class { observe() {} unobserve() {} disconnect() {} });
    location.hash = '#/memories?id=m1';
    const target = document.createElement('div');
    document.body.append(target);
    mounted.push(mount(Memories, { target }));
    await vi.waitFor(() => {
      flushSync();
      expect(target.querySelector('[data-testid=memory-origin-link]')?.getAttribute('href')).toBe('#/feed?decision=d1');
    });
    expect(target.querySelector('[data-testid=memory-detail]')?.getAttribute('data-id')).toBe('m1');
    expect(target.querySelector('[data-testid=memory-origin]')?.textContent).toContain('session sess-1 · turn 2'); // the user's count, not the exchange's

    // Worktrees under their repository.
    const group = target.querySelector('[data-testid=filter-project] optgroup[label=orbit]');
    expect([...(group?.querySelectorAll('option') ?? [])].map((o) => o.value)).toEqual(['g:orbit', 'p:orbit', 'p:orbit-ui']);
    // access has a value, sticky and reinforced are all zero.
    const heads = [...target.querySelectorAll('[data-testid=memories-table] thead th')].map((h) => h.textContent?.trim());
    expect(heads).toContain('access');
    expect(heads).not.toContain('sticky');
    expect(target.querySelector('[data-testid=collapsed-cols]')?.textContent).toMatch(/reinf\., sticky/);

    // A memory no decision in the log made says when and by what.
    location.hash = '#/memories?id=m2';
    window.dispatchEvent(new HashChangeEvent('hashchange'));
    await vi.waitFor(() => {
      flushSync();
      expect(target.querySelector('[data-testid=memory-detail]')?.getAttribute('data-id')).toBe('m2');
    });
    expect(target.querySelector('[data-testid=memory-origin-link]')).toBeNull();
    expect(target.querySelector('[data-testid=memory-origin]')?.textContent).toContain('by cli');
  });

  it('lists the current versions; "superseded too" adds the old ones, muted, each linked to the version that replaced it', async () => {
    const old = mem('m1', { text: 'The dev server listens on port 5173.', superseded_by: 'm2' });
    const cur = mem('m2', { text: 'The dev server listens on port 5174.', supersedes: 'm1' });
    const { calls } = fakeFetch({
      'GET /api/memories': ({ url }: { url: string }) => {
        const all = new URL(url, 'http://x').searchParams.get('superseded') === 'include';
        return { body: { memories: all ? [cur, old] : [cur], total: all ? 2 : 1, facets } };
      },
      'GET /api/memories/m1': old,
      'GET /api/memories/m2': cur,
      'GET /api/memories/m1/history': { id: 'm1', versions: [old, cur], merged: [] },
      'GET /api/memories/m2/history': { id: 'm2', versions: [old, cur], merged: [] },
      'GET /api/decisions': [],
    });
    vi.stubGlobal('ResizeObserver', class { observe() {} unobserve() {} disconnect() {} });
    const target = document.createElement('div');
    document.body.append(target);
    mounted.push(mount(Memories, { target }));
    const rowIds = () => [...target.querySelectorAll('[data-testid=memory-row]')].map((r) => r.getAttribute('data-id'));
    const listed = (i: number) => new URL(calls.filter((c) => c.url.split('?')[0] === '/api/memories')[i].url, 'http://x').searchParams;
    await vi.waitFor(() => {
      flushSync();
      expect(rowIds()).toEqual(['m2']);
    });
    expect(listed(0).get('superseded')).toBe('exclude'); // asked by name: whatever the API's default
    expect(target.querySelector('[data-testid=superseded-by]')).toBeNull();

    const box = target.querySelector('[data-testid=filter-superseded]') as HTMLInputElement;
    box.checked = true;
    box.dispatchEvent(new Event('change', { bubbles: true }));
    await vi.waitFor(() => {
      flushSync();
      expect(rowIds()).toEqual(['m2', 'm1']);
    });
    expect([listed(1).get('superseded'), listed(1).get('facets')]).toEqual(['include', 'true']); // the menus count the old versions too
    const oldRow = target.querySelector('[data-testid=memory-row][data-id=m1]')!;
    const curRow = target.querySelector('[data-testid=memory-row][data-id=m2]')!;
    expect(oldRow.classList.contains('superseded')).toBe(true);
    expect(curRow.classList.contains('superseded')).toBe(false);
    expect(curRow.querySelector('[data-testid=superseded-by]')).toBeNull();
    const link = oldRow.querySelector('[data-testid=superseded-link]') as HTMLAnchorElement;
    expect(link.getAttribute('href')).toBe('#/memories?id=m2');
    expect(oldRow.querySelector('[data-testid=superseded-by]')?.textContent).toContain('superseded by “The dev server listens on port 5174.”');

    // The old version's detail says so and cannot be edited; its link jumps to the newer one.
    (oldRow as HTMLElement).click();
    await vi.waitFor(() => {
      flushSync();
      expect(target.querySelector('[data-testid=detail-superseded]')?.textContent).toContain('superseded by');
    });
    expect([...target.querySelectorAll('[data-testid=memory-detail] button')].find((b) => b.textContent === 'Edit')?.hasAttribute('disabled')).toBe(true);
    link.click();
    await vi.waitFor(() => {
      flushSync();
      expect(target.querySelector('[data-testid=memory-detail]')?.getAttribute('data-id')).toBe('m2');
    });
    expect(target.querySelector('[data-testid=detail-superseded]')).toBeNull();
  });
});

// What a scope means where the user meets it (exp-ui3): the default one
// explained for the memory at hand, and "Share with team" saying what it
// did. At 1368516 the detail showed "default" alone and the toast said
// "Shared with the team (pushed when team memory is on)" whether team
// memory was on or off, while with it off nothing pushed it until
// `memtray team push --all`; since exp-teamon it is pushed at the first
// connection once team memory is on. The button stays enabled either way (it
// records the scope; e2e 60-team-scope clicks it on a daemon without team).
describe('Memories view, scope', () => {
  const mounted: ReturnType<typeof mount>[] = [];
  afterEach(() => {
    mounted.splice(0).forEach((c) => unmount(c));
    document.body.innerHTML = '';
    toasts.set([]);
    location.hash = '';
    overview.stats.set(null);
    overview.live.set(null);
    vi.unstubAllGlobals();
  });
  const base = { store: { count: 1 }, embedder: 'words' };
  const teamOn = { enabled: true, connected: true, outbox: 0, lag_seconds: 0, last_error: '', pushed: 0, pulled: 0, relinked: 0, projects: ['orbit'] };
  async function open(stats: Stats | null, m: ReturnType<typeof mem> & { scope?: string } = mem('m1'), statsRoute?: unknown) {
    const { calls } = fakeFetch({
      'GET /api/memories': { memories: [m], total: 1, facets },
      [`GET /api/memories/${m.id}`]: m,
      [`GET /api/memories/${m.id}/history`]: { id: m.id, versions: [], merged: [] },
      [`POST /api/memories/${m.id}/scope`]: { ...m, scope: 'team' },
      'GET /api/decisions': [],
      ...(statsRoute ? { 'GET /api/stats': statsRoute } : {}),
    });
    overview.stats.set(stats);
    vi.stubGlobal('ResizeObserver', class { observe() {} unobserve() {} disconnect() {} });
    location.hash = `#/memories?id=${m.id}`;
    const target = document.createElement('div');
    document.body.append(target);
    mounted.push(mount(Memories, { target }));
    let b: HTMLButtonElement | null = null;
    await vi.waitFor(() => {
      flushSync();
      expect(target.querySelector('[data-testid=memory-detail]')?.getAttribute('data-id')).toBe(m.id);
      b = target.querySelector<HTMLButtonElement>('[data-action=scope]');
      expect(b?.textContent).toBe(m.scope === 'team' ? 'Keep personal' : 'Share with team');
    });
    return { button: b as unknown as HTMLButtonElement, target, calls };
  }
  const toastText = async () => {
    let text = '';
    await vi.waitFor(() => {
      text = get(toasts).map((t) => t.text).join(' | ');
      expect(text).not.toBe('');
    });
    return text;
  };
  const why = (target: HTMLElement) => target.querySelector('[data-testid=scope-default-why]')?.textContent;

  it('with team memory off: explains the default, keeps Share enabled, and says the move is recorded, pushed once team memory is on, and how to turn it on', async () => {
    const { button, target, calls } = await open(base as unknown as Stats);
    expect(why(target)).toBe('(personal, as team memory is off)');
    expect(target.querySelector('[data-testid=memory-scope] span')?.getAttribute('title')).toContain('default (none set): team when team memory is on');
    expect(button.disabled).toBe(false);
    expect(button.title).toContain('Team memory is off');
    button.click();
    const text = await toastText();
    expect(calls.some((c) => c.method === 'POST' && c.url === '/api/memories/m1/scope')).toBe(true);
    expect(text).toContain('Recorded for the team; team memory is off, so it is pushed once team memory is on, at its first connection to the team database');
    expect(text).toContain('"share": true');
    expect(text).toContain('memtray team init');
    expect(text).not.toContain('push --all');
    expect(text).not.toContain('Shared with the team');
  });

  it('with team memory on: the default as team.projects says, and Share pushes at the next sync', async () => {
    const { button, target } = await open({ ...base, team: teamOn } as unknown as Stats);
    expect(why(target)).toBe('(team, as team.projects lists “orbit”)');
    expect(button.title).toBe('');
    button.click();
    expect(await toastText()).toBe('Shared with the team: pushed at the next sync');
  });

  it('a team memory with team memory off says it is pushed once team memory is on', async () => {
    const { button, target } = await open(base as unknown as Stats, mem('m3', { scope: 'team' }));
    expect(button.disabled).toBe(false);
    expect(why(target)).toBeUndefined();
    expect(target.querySelector('[data-testid=scope-team-off]')?.textContent).toBe('(recorded for the team; team memory is off, so it is pushed once team memory is on)');
  });

  it('asks the daemon when the team state is not known yet', async () => {
    const { button, target } = await open(null, mem('m4'), { ...base });
    expect(why(target)).toBe('(team or personal, as team.projects decides)');
    button.click();
    expect(await toastText()).toContain('Recorded for the team; team memory is off, so it is pushed once team memory is on');
  });
});
