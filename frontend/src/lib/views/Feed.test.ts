import { afterEach, describe, expect, it, vi } from 'vitest';
import { flushSync, mount, unmount } from 'svelte';
import { get } from 'svelte/store';
import Feed from './Feed.svelte';
import { createEventStream } from '../stores/events';
import { createFeed } from '../stores/feed';
import { handleKey } from '../util/keys';
import { toasts } from '../stores/toasts';
import { fakeFetch } from '../../test/fakes';
import type { DecisionEntry } from '../api/models';

const dec = (id: string, at: string): DecisionEntry =>
  ({ id, verdict: 'stored', stage: 'store', reason: 'r', at, session_id: 's1', memory_ids: [`m-${id}`] });
const press = (key: string) => handleKey(new KeyboardEvent('keydown', { key }), () => {});

describe('Feed view', () => {
  const mounted: ReturnType<typeof mount>[] = [];
  afterEach(() => {
    mounted.splice(0).forEach((c) => unmount(c));
    document.body.innerHTML = '';
    toasts.set([]);
    vi.unstubAllGlobals();
    location.hash = '';
  });

  // mountFeed mounts the Feed view on a feed of its own, loaded through
  // the test's fakeFetch, with #/feed?decision=<open> set first when open
  // is given, and returns the feed, its event stream and the element the
  // view is mounted in.
  async function mountFeed(open?: string) {
    vi.stubGlobal('ResizeObserver', class { observe() {} unobserve() {} disconnect() {} }); // jsdom has none
    if (open) location.hash = `#/feed?decision=${open}`;
    const stream = createEventStream();
    const feed = createFeed({ stream });
    await feed.load();
    const target = document.createElement('div');
    document.body.append(target);
    mounted.push(mount(Feed, { target, props: { feed } }));
    flushSync();
    return { feed, stream, target };
  }

  // Bug: the selection was a row position, so a decision arriving on top
  // moved it, and x marked another decision's memory as noise.
  it('keys act on the selected decision after a new one arrives', async () => {
    fakeFetch({ 'GET /api/decisions': [dec('a', '2026-01-01T00:00:02Z'), dec('b', '2026-01-01T00:00:01Z')] });
    const { feed, stream, target } = await mountFeed();
    press('j');
    press('j');
    flushSync();
    expect(get(feed.selected)).toBe('b');

    stream.dispatch({ id: '1', type: 'decision', data: dec('c', '2026-01-01T00:00:03Z') });
    feed.flush();
    flushSync();
    // Held while a row is selected (the "N new" pill); shown on a click.
    expect(get(feed.visible).map((v) => v.id)).toEqual(['a', 'b']);
    expect(target.querySelector('[data-testid="feed-new-pill"]')?.textContent).toBe('1 new');
    (target.querySelector('[data-testid="feed-new-pill"]') as HTMLButtonElement).click();
    flushSync();
    expect(get(feed.visible).map((v) => v.id)).toEqual(['c', 'a', 'b']);
    const noise = vi.spyOn(feed, 'noise').mockImplementation(() => {});
    press('x');
    expect(noise).toHaveBeenCalledTimes(1);
    expect(noise.mock.calls[0][0].id).toBe('b');
    expect(target.querySelector('.item.sel')?.getAttribute('data-id')).toBe('b');
  });

  // Bug: the drawer said "s1 #4" for the user's second prompt: #4 was the
  // exchange, which counts the tool loop's iterations too.
  it('names a turn as the user counts it', async () => {
    fakeFetch({ 'GET /api/decisions': [{ ...dec('t', '2026-01-01T00:00:05Z'), user_turn: 2, turn: 4 }] });
    const { target } = await mountFeed();
    press('j');
    press('Enter');
    flushSync();
    expect(target.querySelector('[data-testid=feed-session]')?.textContent).toBe('s1 · turn 2');
  });

  // Bug 10: a document ingest's drawer said "(no user text: a tool-loop
  // turn)" and "session #—".
  it('a document ingest opens as a document, without a session', async () => {
    const doc: DecisionEntry = { id: 'd', verdict: 'stored', stage: 'store', reason: 'document', at: '2026-01-01T00:00:04Z',
      source: 'ingest:design.md', assistant: 'The cache TTL stays at 300 s.', memory_ids: ['m-d'] };
    fakeFetch({ 'GET /api/decisions': [doc] });
    const { target } = await mountFeed();
    press('j');
    press('Enter');
    flushSync();
    const drawer = target.querySelector('[data-testid=feed-drawer]');
    expect(drawer).not.toBeNull();
    expect(drawer?.textContent).not.toContain('tool-loop');
    expect(drawer?.textContent).toContain('The cache TTL stays at 300 s.');
    expect(drawer?.querySelector('[data-testid=feed-doc-name]')?.textContent).toBe('design.md');
    expect(drawer?.querySelector('[data-testid=feed-session]')?.textContent).toBe('—');
  });

  it('the drawer links each memory a decision wrote to Memories, and #/feed?decision= opens a decision', async () => {
    const d: DecisionEntry = { ...dec('a', '2026-01-01T00:00:02Z'), memory_ids: ['m1', 'm2'],
      candidates: [{ text: 'Postgres stays pinned at 15.4.', origin: 'final-answer', class: 'fact', kept: true, memory_id: 'm1' }] };
    fakeFetch({ 'GET /api/decisions': [d, dec('b', '2026-01-01T00:00:01Z')], 'GET /api/memories/m2': { id: 'm2', text: 'The deploy uses make release.' } });
    const { feed, target } = await mountFeed('b');
    expect(target.querySelector('[data-testid=feed-drawer] td.mono')?.textContent).toBe('b');
    location.hash = '#/feed?decision=a';
    window.dispatchEvent(new HashChangeEvent('hashchange'));
    flushSync();
    await vi.waitFor(() => expect(target.querySelectorAll('[data-testid=feed-memory-link]')[1]?.textContent).toContain('make release'));
    const links = [...target.querySelectorAll<HTMLAnchorElement>('[data-testid=feed-memory-link]')];
    expect(links.map((l) => l.getAttribute('href'))).toEqual(['#/memories?id=m1', '#/memories?id=m2']);
    expect(links[0].textContent).toContain('Postgres stays pinned');
  });

  it('the drawer marks the pieces cut out of a kept statement and leaves them out of the statement counts', async () => {
    const d: DecisionEntry = { ...dec('a', '2026-01-01T00:00:02Z'),
      candidates: [
        { text: 'It backs off up to 30 seconds because the API rate-limits bursts.', origin: 'tool-loop', class: 'finding', kept: true, memory_id: 'm1' },
        { text: 'Let me look.', origin: 'tool-loop', class: 'narration', kept: false, reason: 'narration' },
        { text: 'The retry helper lives in `tools/retry.sh`, and', origin: 'tool-loop', class: 'finding', kept: false, reason: 'revised later: mv tools/retry.sh ci/retry.sh', cut: true },
      ] };
    fakeFetch({ 'GET /api/decisions': [d], 'GET /api/memories/m1': { id: 'm1', text: 'It backs off.' } });
    const { target } = await mountFeed('a');
    const list = target.querySelector('[data-testid=feed-candidates]');
    expect(list?.previousElementSibling?.textContent).toBe('Statements (1 of 2 kept; 1 piece cut)');
    const items = [...(list?.querySelectorAll('li') ?? [])];
    expect(items.map((li) => li.querySelector('.badge')?.textContent)).toEqual(['kept', 'dropped', 'cut']);
    expect(items[2].textContent).toContain('revised later: mv tools/retry.sh');
  });

  it('the drawer says how many dropped verdicts a long turn left unlisted', async () => {
    const d: DecisionEntry = { ...dec('a', '2026-01-01T00:00:02Z'), candidates_omitted: 37,
      candidates: [
        { text: 'The cache key includes the lockfile hash.', origin: 'tool-loop', class: 'finding', kept: true, memory_id: 'm1' },
        { text: 'Let me look.', origin: 'tool-loop', class: 'narration', kept: false, reason: 'narration' },
      ] };
    fakeFetch({ 'GET /api/decisions': [d], 'GET /api/memories/m1': { id: 'm1', text: 'The cache key includes the lockfile hash.' } });
    const { target } = await mountFeed('a');
    const list = target.querySelector('[data-testid=feed-candidates]');
    expect(list?.previousElementSibling?.textContent).toBe('Statements (1 of 2 kept; 37 more dropped, not listed)');
  });

  // Bug: a memory restored from the trash still read "(deleted)" in the
  // open drawer: its text, missing when the drawer opened, was never
  // loaded again.
  it('the drawer shows a memory restored from the trash by its text again', async () => {
    let live = false;
    fakeFetch({
      'GET /api/decisions': [dec('a', '2026-01-01T00:00:02Z')],
      'GET /api/memories/m-a': () => (live ? { body: { id: 'm-a', text: 'The nightly export runs at 03:00.' } } : { status: 404, body: { error: 'memory not found', code: 'not_found' } }),
    });
    const { stream, target } = await mountFeed('a');
    const link = () => target.querySelector('[data-testid=feed-memory-link]')?.textContent ?? '';
    await vi.waitFor(() => expect(link()).toContain('(deleted) m-a'));
    live = true;
    stream.dispatch({ id: '1', type: 'memory', data: { op: 'restored', ids: ['m-a'] } });
    flushSync();
    await vi.waitFor(() => expect(link()).toContain('nightly export'));
  });

  // Bug: the session filter showed each session's first 12 characters, so
  // the sessions of one Aider history or one SpecStory project
  // ("afi-core.aider.chat.history@2025-07-15T11:38:37", "@…-16T09:02:11")
  // were options with the same label, and the wanted one could not be told.
  it('names each session in the filter so that two sessions never read the same', async () => {
    const s1 = 'afi-core.aider.chat.history@2025-07-15T11:38:37';
    const s2 = 'afi-core.aider.chat.history@2025-07-16T09:02:11';
    fakeFetch({ 'GET /api/decisions': [{ ...dec('a', '2026-01-01T00:00:02Z'), session_id: s1 }, { ...dec('b', '2026-01-01T00:00:01Z'), session_id: s2 }] });
    const { target } = await mountFeed();
    const options = [...target.querySelectorAll('select[aria-label="Session"] option')].slice(1);
    const labels = options.map((o) => o.textContent);
    expect(options.map((o) => o.getAttribute('value')).sort()).toEqual([s1, s2]);
    expect(new Set(labels).size).toBe(2);
  });
});
