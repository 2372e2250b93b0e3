import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { get } from 'svelte/store';
import { api, ApiError } from '../api/client';
import { authorized, fieldErrors, reportError, toasts } from './toasts';
import { createSettings } from './settings';
import { createEventStream } from './events';
import { fakeFetch } from '../../test/fakes';

describe('error funnel', () => {
  beforeEach(() => {
    toasts.set([]);
    authorized.set(null);
  });
  afterEach(() => vi.unstubAllGlobals());

  it('turns API errors into ApiError with status, code and fields', async () => {
    fakeFetch({ 'GET /api/memories/x': () => ({ status: 404, body: { error: 'memory not found', code: 'not_found' } }) });
    const e = await api.getMemory('x').catch((err) => err);
    expect(e).toBeInstanceOf(ApiError);
    expect([e.status, e.code, e.message]).toEqual([404, 'not_found', 'memory not found']);
  });

  it('failures become one toast each; 401 shows the login instead', () => {
    reportError(new ApiError('GET', '/api/stats', 500, { error: 'disk full', code: 'internal' }), 'Loading stats');
    expect(get(toasts).map((t) => [t.kind, t.text])).toEqual([['error', 'Loading stats: disk full']]);
    reportError(new ApiError('GET', '/api/stats', 401, { error: 'missing token' }));
    expect(get(toasts)).toHaveLength(1);
    expect(get(authorized)).toBe(false);
    reportError(new ApiError('GET', '/api/stats', 0, {}));
    expect(get(toasts)[1].text).toMatch(/does not answer/);
  });

  it('invalid input becomes field errors, not a toast', async () => {
    fakeFetch({ 'PUT /api/config': () => ({ status: 400, body: { error: 'invalid config change', code: 'invalid', fields: { 'ingest.content_threshold': 'must be within 0..1' } } }) });
    const s = createSettings({ stream: createEventStream() });
    const errs = await s.saveConfig({ ingest: { content_threshold: 7 } });
    expect(errs).toEqual({ 'ingest.content_threshold': 'must be within 0..1' });
    expect(get(toasts)).toHaveLength(0);
    const whole = fieldErrors(new ApiError('PATCH', '/api/memories/a', 400, { error: 'invalid input: text is empty', code: 'invalid' }));
    expect(whole).toEqual({ '': 'text is empty' });
  });

  it('sends JSON with the same-origin cookie', async () => {
    const { fetch } = fakeFetch({ 'POST /api/memories/a/snooze': { id: 'a' } });
    await api.snooze('a', 7);
    const [url, init] = fetch.mock.calls[0] as [string, RequestInit];
    expect(url).toBe('/api/memories/a/snooze');
    expect(init.credentials).toBe('same-origin');
    expect(init.body).toBe('{"days":7}');
    expect((init.headers as Record<string, string>)['Content-Type']).toBe('application/json');
  });
});
