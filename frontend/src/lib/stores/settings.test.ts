import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { get } from 'svelte/store';
import { createEventStream } from './events';
import { createSettings, createTheme, THEME_KEY } from './settings';
import { toasts } from './toasts';
import { fakeFetch } from '../../test/fakes';
import type { Build, CaptureState } from '../api/models';

const on: CaptureState = { enabled: true, exclude_projects: [], anthropic_upstream: 'https://api.anthropic.com', openai_upstream: 'https://api.openai.com', stats: {} as never };

describe('settings store', () => {
  beforeEach(() => toasts.set([]));
  afterEach(() => vi.unstubAllGlobals());

  it('pauses capture for an hour through the daemon and says until when', async () => {
    const until = new Date(Date.now() + 3600e3).toISOString();
    const { calls } = fakeFetch({
      'GET /api/capture': on,
      'GET /api/config': { config: {}, runtime: [] },
      'POST /api/capture': ({ body }: { body: unknown }) => ({ body: { ...on, enabled: false, paused_until: (body as { pause_for?: string }).pause_for === '1h' ? until : undefined } }),
    });
    const s = createSettings({ stream: createEventStream() });
    await s.load();
    expect(await s.setCapture({ pause_for: '1h' })).toBeNull();
    expect(calls.at(-1)).toMatchObject({ method: 'POST', url: '/api/capture', body: { pause_for: '1h' } });
    expect(get(s.capture)?.paused_until).toBe(until);
    expect(get(toasts).some((t) => /paused until .*resumes by itself/.test(t.text))).toBe(true);
    s.destroy();
  });

  it('returns field errors of a rejected config change for the form', async () => {
    fakeFetch({
      'GET /api/capture': on,
      'GET /api/config': { config: { listen: '127.0.0.1:7432' }, runtime: ['listen'] },
      'PUT /api/config': () => ({ status: 400, body: { error: 'invalid config change: listen: must be a loopback address', code: 'Bad Request', fields: { listen: 'must be a loopback address' } } }),
    });
    const s = createSettings({ stream: createEventStream() });
    await s.load();
    expect(await s.saveConfig({ listen: '0.0.0.0:1' })).toEqual({ listen: 'must be a loopback address' });
    s.destroy();
  });
});

describe('settings store: about', () => {
  const build: Build = {
    version: '1.2.3', commit: 'abc123def4567890', build_date: '2025-01-02T03:04:05Z', go_version: 'go1.26.8', os: 'linux', arch: 'amd64',
  };
  beforeEach(() => toasts.set([]));
  afterEach(() => vi.unstubAllGlobals());

  it('loads the build from /api/health', async () => {
    fakeFetch({
      'GET /api/capture': on,
      'GET /api/config': { config: {}, runtime: [] },
      'GET /api/health': { service: 'memtray', version: '1.2.3', pid: 1, build },
    });
    const s = createSettings({ stream: createEventStream() });
    await s.load();
    expect(get(s.about)).toEqual(build);
    expect(get(toasts)).toEqual([]);
    s.destroy();
  });

  it('has no about for a daemon without build info', async () => {
    fakeFetch({
      'GET /api/capture': on,
      'GET /api/config': { config: {}, runtime: [] },
      'GET /api/health': { service: 'memtray', version: 'dev', pid: 1 },
    });
    const s = createSettings({ stream: createEventStream() });
    await s.load();
    expect(get(s.about)).toBeNull();
    expect(get(toasts)).toEqual([]);
    s.destroy();
  });

  it('the theme toggle persists its choice and sets <html data-theme>', () => {
    const mem = new Map<string, string>();
    const storage = { getItem: (k: string) => mem.get(k) ?? null, setItem: (k: string, v: string) => void mem.set(k, v), removeItem: (k: string) => void mem.delete(k) } as Storage;
    const root = document.createElement('html');
    const t = createTheme({ storage, root });
    expect(get(t)).toBe('system');
    expect(root.dataset.theme).toBeUndefined();
    t.set('dark');
    expect([mem.get(THEME_KEY), root.dataset.theme]).toEqual(['dark', 'dark']);
    // A new page starts with the saved choice.
    const root2 = document.createElement('html');
    expect(get(createTheme({ storage, root: root2 }))).toBe('dark');
    expect(root2.dataset.theme).toBe('dark');
    t.set('system');
    expect([mem.has(THEME_KEY), root.dataset.theme]).toEqual([false, undefined]);
    mem.set(THEME_KEY, 'purple'); // a stored value we never wrote
    expect(get(createTheme({ storage, root: document.createElement('html') }))).toBe('system');
  });

  it('reloads on a reset (e.g. back after the daemon was down, when the first load failed)', async () => {
    let up = false;
    fakeFetch({
      'GET /api/capture': () => (up ? { body: on } : { status: 503, body: { error: 'starting' } }),
      'GET /api/config': () => (up ? { body: { config: { recall: { k: 5 } }, runtime: ['recall.k'] } } : { status: 503, body: { error: 'starting' } }),
      'GET /api/health': { service: 'memtray', version: 'test', pid: 1 },
    });
    const stream = createEventStream();
    const s = createSettings({ stream });
    await s.load();
    expect(get(s.config)).toBeNull();
    up = true;
    stream.dispatch({ id: '', type: 'reset', data: null });
    await vi.waitFor(() => expect(get(s.config)?.runtime).toEqual(['recall.k']));
    s.destroy();
  });
});
