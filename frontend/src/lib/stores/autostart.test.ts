import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { get } from 'svelte/store';
import { createAutostart } from './autostart';
import { toasts } from './toasts';
import { fakeFetch } from '../../test/fakes';

describe('autostart store', () => {
  beforeEach(() => toasts.set([]));
  afterEach(() => vi.unstubAllGlobals());

  it('reads and switches starting at login', async () => {
    let enabled = false;
    const path = '/home/u/.config/autostart/memtray.desktop';
    const { calls } = fakeFetch({
      'GET /api/autostart': () => ({ body: { supported: true, enabled, path } }),
      'PUT /api/autostart': ({ body }: { body: unknown }) => {
        enabled = (body as { enabled: boolean }).enabled;
        return { body: { supported: true, enabled, path, command: enabled ? ['/usr/bin/memtray', 'app', '--hidden'] : undefined } };
      },
    });
    const a = createAutostart();
    await a.load();
    expect(get(a.state)).toEqual({ supported: true, enabled: false, path });
    await a.set(true);
    expect(calls.at(-1)).toMatchObject({ method: 'PUT', url: '/api/autostart', body: { enabled: true } });
    expect(get(a.state)?.enabled).toBe(true);
    expect(get(a.busy)).toBe(false);
    expect(get(toasts).at(-1)?.text).toMatch(/at login/);
  });

  it('reports a refusal and reloads the real state', async () => {
    fakeFetch({
      'GET /api/autostart': { supported: true, enabled: false, foreign: true, path: '/x' },
      'PUT /api/autostart': () => ({ status: 409, body: { error: 'an autostart entry memtray did not write is in the way: /x', code: 'autostart_not_ours' } }),
    });
    const a = createAutostart();
    await a.set(true);
    expect(get(a.state)).toMatchObject({ foreign: true, enabled: false });
    expect(get(toasts).some((t) => t.kind === 'error' && /not write/.test(t.text))).toBe(true);
  });
});
