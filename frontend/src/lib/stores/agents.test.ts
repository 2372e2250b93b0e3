import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { get } from 'svelte/store';
import { createAgents } from './agents';
import { toasts } from './toasts';
import { fakeFetch } from '../../test/fakes';
import { claude, cursor, list, connectPreview, undoPreview } from '../../test/agentFixtures';

describe('agents store', () => {
  beforeEach(() => toasts.set([]));
  afterEach(() => vi.unstubAllGlobals());

  it('lists the agents', async () => {
    fakeFetch({ 'GET /api/setup': list });
    const a = createAgents();
    await a.load();
    expect(get(a.clients).map((c) => c.name)).toEqual(['claude-code', 'cursor']);
    expect(get(toasts)).toHaveLength(0);
  });

  it('previews with the chosen options, and a changed choice drops the preview', async () => {
    const { calls } = fakeFetch({ 'GET /api/setup': list, 'POST /api/setup/claude-code/preview': connectPreview() });
    const a = createAgents();
    await a.load();
    await a.preview('claude-code');
    expect(calls.at(-1)).toMatchObject({ method: 'POST', url: '/api/setup/claude-code/preview', body: {} });
    expect(get(a.previews)['claude-code'].changes).toBe(2);
    a.setChoice('claude-code', 'proxy', false);
    expect(get(a.previews)['claude-code']).toBeUndefined();
    expect(a.choicesOf('claude-code')).toEqual({ proxy: false, hooks: true });
    await a.preview('claude-code');
    expect(calls.at(-1)!.body).toEqual({ no_proxy: true });
    expect(get(a.busy)).toEqual({});
  });

  it('connects with exactly the preview: its options and file hashes; the status follows', async () => {
    const pv = connectPreview({ no_hooks: true });
    const { calls } = fakeFetch({
      'GET /api/setup': list,
      'POST /api/setup/claude-code/preview': pv,
      'POST /api/setup/claude-code/apply': { client: 'claude-code', changed: ['/home/me/.claude.json', '/home/me/.claude/settings.json'], backups: ['/home/me/.claude/settings.json.memtray-backup'], message: 'changed 2 file(s).', status: { ...claude, configured: true } },
    });
    const a = createAgents();
    await a.load();
    expect(await a.connect('claude-code')).toBeNull(); // nothing previewed: nothing sent
    expect(calls.some((c) => c.url.endsWith('/apply'))).toBe(false);
    a.setChoice('claude-code', 'hooks', false);
    await a.preview('claude-code');
    a.choices.set({}); // the apply takes the preview's options, not the boxes'
    const r = await a.connect('claude-code');
    expect(calls.at(-1)).toMatchObject({
      method: 'POST', url: '/api/setup/claude-code/apply',
      body: { no_hooks: true, files: pv.files.map((f) => ({ path: f.path, sha256: f.sha256, after_sha256: f.after_sha256 })) },
    });
    expect(r?.changed).toHaveLength(2);
    expect(get(a.clients)[0].configured).toBe(true);
    expect(get(a.previews)).toEqual({});
    expect(get(toasts).at(-1)).toMatchObject({ kind: 'success' });
    expect(get(toasts).at(-1)!.text).toContain('Claude Code connected (2 files changed, backups kept). Restart it');
  });

  it('a stale preview is refused by the daemon: the store shows the new one, no error', async () => {
    let n = 0;
    fakeFetch({
      'GET /api/setup': list,
      'POST /api/setup/claude-code/preview': () => ({ body: connectPreview({}, ++n) }),
      'POST /api/setup/claude-code/apply': () => ({ status: 409, body: { error: 'the config files changed since the preview: /home/me/.claude/settings.json changed: preview again', code: 'stale_preview' } }),
    });
    const a = createAgents();
    await a.load();
    await a.preview('claude-code');
    expect(await a.connect('claude-code')).toBeNull();
    expect(n).toBe(2);
    expect(get(a.previews)['claude-code'].files[1].sha256).toBe('b'.repeat(63) + '2');
    expect(get(toasts).map((t) => t.kind)).toEqual(['info']);
    expect(get(toasts)[0].text).toContain("Claude Code's config changed since the preview");
    expect(get(a.clients)[0].configured).toBe(false);
  });

  it('disconnects: previews the undo, applies it with its hashes, names the kept backups', async () => {
    const { calls } = fakeFetch({
      'GET /api/setup': { ...list, clients: [{ ...claude, configured: true }, cursor] },
      'POST /api/setup/claude-code/undo/preview': undoPreview,
      'POST /api/setup/claude-code/undo': { client: 'claude-code', changed: ['/home/me/.claude.json'], backups: ['/home/me/.claude/settings.json.memtray-backup'], message: 'undone: 1 file(s) changed.', status: claude },
    });
    const a = createAgents();
    await a.load();
    expect(await a.disconnect('claude-code')).toBeNull(); // no undo preview yet
    await a.previewDisconnect('claude-code');
    expect(await a.connect('claude-code')).toBeNull(); // an undo preview is not a connect
    await a.disconnect('claude-code');
    expect(calls.at(-1)).toMatchObject({ url: '/api/setup/claude-code/undo', body: { files: undoPreview.files.map((f) => ({ path: f.path, sha256: f.sha256, after_sha256: f.after_sha256 })) } });
    expect(get(a.clients)[0].configured).toBe(false);
    expect(get(toasts).at(-1)!.text).toBe('Claude Code disconnected (1 file changed). Restart it to pick the change up. Kept: /home/me/.claude/settings.json.memtray-backup.');
  });

  it('reports a config setup will not touch', async () => {
    fakeFetch({
      'GET /api/setup': list,
      'POST /api/setup/claude-code/preview': () => ({ status: 409, body: { error: '/home/me/.claude/settings.json:4:5: malformed JSON: invalid character (the file was not changed)', code: 'setup_conflict' } }),
    });
    const a = createAgents();
    await a.load();
    expect(await a.preview('claude-code')).toBeNull();
    expect(get(toasts).at(-1)).toMatchObject({ kind: 'error', text: 'Preview for Claude Code: /home/me/.claude/settings.json:4:5: malformed JSON: invalid character (the file was not changed)' });
  });
});
