import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { get } from 'svelte/store';
import { createEventStream } from './events';
import { createSettings } from './settings';
import { toasts } from './toasts';
import { fakeFetch } from '../../test/fakes';
import type { CaptureState } from '../api/models';

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
