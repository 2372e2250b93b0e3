import { afterEach, describe, expect, it, vi } from 'vitest';
import { flushSync, mount, unmount } from 'svelte';
import { get } from 'svelte/store';
import Welcome from './Welcome.svelte';
import Settings from './Settings.svelte';
import ConnectionBanner from '../components/ConnectionBanner.svelte';
import { fakeFetch } from '../../test/fakes';
import { claude, cursor, list, connectPreview } from '../../test/agentFixtures';
import { authorized, toasts } from '../stores/toasts';
import type { AutostartState, EmbedderInfo } from '../api/models';

const info: EmbedderInfo = {
  model: 'builtin-wordvec-v1', provider: 'store', reason: 'the model this store was built with', dim: 557, degraded: false,
  store_model: 'builtin-wordvec-v1', store_dim: 557, memories: 0, builtin: 'builtin-wordvec-v1',
  configured_provider: 'auto', configured_model: 'nomic-embed-text',
  ollama: { host: 'http://127.0.0.1:11434', reachable: false, has_configured: false, error: 'connection refused', models: [] },
  openai: { url: 'http://127.0.0.1:8080/v1', model: '', checked: false, reachable: false, models: [], dim: 0 },
  thresholds: [],
};

function routes(over: { autostart?: AutostartState; detected?: boolean } = {}) {
  const clients = over.detected === false ? [{ ...claude, detected: false }, cursor] : list.clients;
  return {
    'GET /api/welcome': { done: false, data_dir: '/home/me/.local/share/memtray', listen: '127.0.0.1:7432', memories: 0 },
    'GET /api/autostart': over.autostart ?? { supported: true, enabled: false },
    'GET /api/capture': { enabled: true, exclude_projects: [], anthropic_upstream: '', openai_upstream: '', stats: {} },
    'GET /api/config': { config: { recall: { k: 5 } }, runtime: ['recall.k'] },
    'GET /api/health': { service: 'memtray', version: 'test', pid: 1 },
    'GET /api/setup': { ...list, clients },
    'POST /api/setup/claude-code/preview': connectPreview(),
    'GET /api/embedder': info,
    'GET /api/jobs': [],
  };
}

const settle = async () => {
  for (let i = 0; i < 5; i++) await new Promise((r) => setTimeout(r, 0));
  flushSync();
};

describe('first-run guide, settings and the connection banner (issue 21 items 7, 8, 9)', () => {
  const mounted: ReturnType<typeof mount>[] = [];
  afterEach(() => {
    mounted.splice(0).forEach((c) => unmount(c));
    document.body.innerHTML = '';
    toasts.set([]);
    authorized.set(null);
    vi.unstubAllGlobals();
  });
  function show(C: typeof Welcome) {
    const target = document.createElement('div');
    document.body.append(target);
    mounted.push(mount(C, { target }));
    return target;
  }
  const next = (t: HTMLElement) => { (t.querySelector('[data-testid=welcome-next]') as HTMLButtonElement).click(); flushSync(); };

  it('Ollama not running is optional, not an error', async () => {
    fakeFetch(routes());
    const t = show(Welcome);
    await settle();
    next(t);
    await settle();
    expect(t.querySelector('[data-testid=welcome-optional]')?.textContent).toMatch(/optional/);
    const status = t.querySelector('[data-testid=ollama-status]')!;
    expect(status.querySelector('.bad')).toBeNull();
    expect(status.textContent).toMatch(/Ollama \(optional\) is not running/);
    expect(get(toasts)).toHaveLength(0);
  });

  it('no agent found: says what to add to which file, by hand', async () => {
    fakeFetch(routes({ detected: false }));
    const t = show(Welcome);
    await settle();
    next(t);
    next(t);
    await settle();
    const manual = t.querySelector('[data-testid=manual-setup]')!;
    expect(manual).not.toBeNull();
    expect(manual.textContent).toContain('/home/me');
    (manual.querySelector('[data-testid=manual-show]') as HTMLButtonElement).click();
    await settle();
    const files = [...manual.querySelectorAll('[data-testid=manual-file]')].map((f) => f.textContent ?? '');
    expect(files).toHaveLength(2);
    expect(files[0]).toContain('/home/me/.claude.json');
    expect(files[0]).toContain('(a new file)');
    expect(files[1]).toContain('"env": {"ANTHROPIC_BASE_URL": "http://127.0.0.1:7432"}');
    expect(manual.textContent).toContain('memtray setup claude-code --print');
  });

  it('an agent found: no manual fallback', async () => {
    fakeFetch(routes());
    const t = show(Welcome);
    await settle();
    next(t);
    next(t);
    await settle();
    expect(t.querySelector('[data-testid=agent-claude-code]')).not.toBeNull();
    expect(t.querySelector('[data-testid=manual-setup]')).toBeNull();
  });

  for (const [name, st, want] of [
    ['the desktop app', { supported: true, enabled: false }, true],
    ['a headless serve', { supported: true, enabled: false, headless: true }, false],
    ['a headless serve with an entry to turn off', { supported: true, enabled: true, headless: true, path: '/x' }, true],
  ] as [string, AutostartState, boolean][]) {
    it(`start at login, ${name}: ${want ? 'offered' : 'not offered'}`, async () => {
      fakeFetch(routes({ autostart: st }));
      const t = show(Welcome);
      await settle();
      next(t);
      next(t);
      next(t);
      await settle();
      expect(t.querySelector('[data-testid=welcome-capture]')).not.toBeNull();
      expect(!!t.querySelector('[data-testid=welcome-autostart]')).toBe(want);
      const s = show(Settings);
      await settle();
      expect(!!s.querySelector('[data-testid=autostart-toggle]')).toBe(want);
    });
  }

  // Bug: the terminal commands shown were plain `memtray setup claude-code`;
  // for a daemon on another data dir (serve --data-dir) that writes hooks
  // and an MCP server for the default one, where this daemon is not.
  it('the terminal setup commands carry the daemon\'s data dir', async () => {
    const flags = ['--data-dir', "'/srv/my data'"];
    fakeFetch({ ...routes({ detected: false }), 'GET /api/setup': { ...list, clients: [{ ...claude, detected: false }, cursor], cli_flags: flags } });
    const s = show(Settings);
    await settle();
    expect(s.querySelector('[data-testid=setup-terminal]')?.textContent).toContain("memtray setup claude-code --data-dir '/srv/my data' --print");
    const t = show(Welcome);
    await settle();
    next(t);
    next(t);
    await settle();
    expect(t.querySelector('[data-testid=manual-setup]')?.textContent).toContain("memtray setup claude-code --data-dir '/srv/my data' --print");
  });

  it('Settings explains each field: a name, what it does, its default', async () => {
    fakeFetch(routes());
    const t = show(Settings);
    await settle();
    const field = t.querySelector('[data-key="recall.k"]')!;
    expect(field.querySelector('label')?.textContent).toContain('Memories per recall');
    expect(field.querySelector('[data-testid=field-doc]')?.textContent).toMatch(/The most memories one recall returns\.\s+Default: 5\./);
  });

  it('the banner says the daemon is down, or the session ended', async () => {
    const { events } = await import('../stores/events');
    const t = show(ConnectionBanner);
    flushSync();
    expect(t.querySelector('[data-testid=connection-banner]')).toBeNull();
    vi.stubGlobal('fetch', async () => { throw new TypeError('Failed to fetch'); });
    await events.check();
    flushSync();
    expect(t.querySelector('[data-testid=connection-banner]')?.getAttribute('data-state')).toBe('down');
    expect(t.textContent).toContain('memtray serve');
    fakeFetch({ 'GET /api/health': { service: 'memtray' }, 'GET /api/capture': () => ({ status: 401, body: { error: 'missing or wrong token' } }) });
    await events.check();
    flushSync();
    expect(t.querySelector('[data-testid=connection-banner]')?.getAttribute('data-state')).toBe('expired');
    expect(t.textContent).toContain('log in again');
    fakeFetch({ 'GET /api/health': { service: 'memtray' }, 'GET /api/capture': { enabled: true } });
    await events.check();
    flushSync();
    expect(t.querySelector('[data-testid=connection-banner]')).toBeNull();
  });
});
