import { afterEach, describe, expect, it, vi } from 'vitest';
import { flushSync, mount, unmount } from 'svelte';
import { get } from 'svelte/store';
import Overview from './Overview.svelte';
import Feed from './Feed.svelte';
import Memories from './Memories.svelte';
import { createEventStream } from '../stores/events';
import { createFeed } from '../stores/feed';
import { agents } from '../stores/agents';
import { toasts } from '../stores/toasts';
import { fakeFetch } from '../../test/fakes';
import { list } from '../../test/agentFixtures';

// Bug: the empty Overview, Feed and Memories told a daemon on another data
// dir (serve --data-dir) to run a plain `memtray setup claude-code`, which
// connects the agent to the default data dir, where this daemon is not.
describe('empty views: the setup commands carry the daemon\'s data dir', () => {
  const mounted: ReturnType<typeof mount>[] = [];
  afterEach(() => {
    mounted.splice(0).forEach((c) => unmount(c));
    document.body.innerHTML = '';
    toasts.set([]);
    agents.list.set(null);
    vi.unstubAllGlobals();
  });
  const flags = ['--data-dir', "'/srv/my data'"];
  const routes = {
    'GET /api/setup': { ...list, cli_flags: flags },
    'GET /api/overview': { at: '2026-01-01T00:00:00Z', memories: 0, snoozed: 0, superseded: 0, pinned: 0, by_kind: [], by_project: [],
      other_projects: 0, other_memories: 0, store_bytes: 0, created_per_day: [], growth: { days: [], series: [] },
      recall: { per_session: 0 }, filter: [], warnings: [], embedder: { model: 'builtin-wordvec-v1', degraded: false, reason: '' },
      judge: { enabled: false } },
    'GET /api/stats': { store: { count: 0 } },
    'GET /api/memories': { memories: [], total: 0 },
    'GET /api/decisions': [],
  };
  // A view and its props (the Feed takes a feed): any, as mount is generic over them.
  function show(C: any, props: Record<string, unknown> = {}) {
    vi.stubGlobal('ResizeObserver', class { observe() {} unobserve() {} disconnect() {} }); // jsdom has none
    const target = document.createElement('div');
    document.body.append(target);
    mounted.push(mount(C, { target, props }));
    return target;
  }
  const setupText = async (t: HTMLElement, want: string) => {
    await vi.waitFor(() => {
      flushSync();
      expect(t.querySelector('[data-testid=empty-setup]')?.textContent).toContain(want);
    });
  };

  it('Overview', async () => {
    fakeFetch(routes);
    const t = show(Overview);
    await setupText(t, "memtray setup claude-code --data-dir '/srv/my data' --print");
    expect(t.querySelector('[data-testid=empty-setup]')?.textContent?.trim().endsWith("memtray setup claude-code --data-dir '/srv/my data'")).toBe(true);
    // The counts by kind and by project are headings over nothing unless they say why.
    expect(t.querySelector('[data-testid=by-kind]')?.textContent?.trim()).toBe('No memories yet.');
    expect(t.querySelector('[data-testid=by-project]')?.textContent?.trim()).toBe('No memories yet.');
  });

  it('Live feed', async () => {
    fakeFetch(routes);
    const feed = createFeed({ stream: createEventStream() });
    await feed.load();
    const t = show(Feed, { feed });
    await setupText(t, "memtray setup claude-code --data-dir '/srv/my data'");
  });

  it('Memories', async () => {
    fakeFetch(routes);
    const t = show(Memories);
    await setupText(t, "memtray setup claude-code --data-dir '/srv/my data'");
    expect(t.querySelector('[data-testid=empty-setup]')?.textContent).toContain("memtray add --data-dir '/srv/my data' \"we deploy");
    // A new user's history is the quickest way to a first memory: say how to import it.
    expect(t.querySelector('[data-testid=empty-ingest]')?.textContent).toContain("memtray ingest --data-dir '/srv/my data' ~/.claude/projects/*/*.jsonl");
  });

  it('the default data dir: no flags, and no error when the list cannot load', async () => {
    fakeFetch({ ...routes, 'GET /api/setup': { status: 500, body: { error: 'boom' } } });
    const t = show(Overview);
    await vi.waitFor(() => {
      flushSync();
      expect(t.querySelector('[data-testid=empty-setup]')?.textContent).toContain('memtray setup claude-code --print');
    });
    await new Promise((r) => setTimeout(r, 0));
    expect(get(toasts).map((x) => x.text).filter((x) => /agents|setup/i.test(x))).toEqual([]);
  });
});
