import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { flushSync, mount, tick, unmount } from 'svelte';
import { get } from 'svelte/store';
import AgentSetup from './AgentSetup.svelte';
import { agents } from '../stores/agents';
import { toasts } from '../stores/toasts';
import { fakeFetch } from '../../test/fakes';
import { claude, connectPreview, list, undoPreview } from '../../test/agentFixtures';
import type { SetupClient, SetupOptions, SetupResult } from '../api/models';

describe('AgentSetup', () => {
  const mounted: ReturnType<typeof mount>[] = [];
  beforeEach(() => {
    toasts.set([]);
    agents.previews.set({});
    agents.choices.set({});
  });
  afterEach(() => {
    mounted.splice(0).forEach((c) => unmount(c));
    document.body.innerHTML = '';
    vi.unstubAllGlobals();
  });

  function render(props: Record<string, unknown> = {}) {
    const target = document.createElement('div');
    document.body.append(target);
    mounted.push(mount(AgentSetup, { target, props }));
    return target;
  }
  async function settle() {
    for (let i = 0; i < 5; i++) {
      await tick();
      await new Promise((r) => setTimeout(r, 0));
    }
    flushSync();
  }
  const click = async (el: Element | null) => {
    expect(el).not.toBeNull();
    (el as HTMLElement).click();
    await settle();
  };

  it('previews the exact diff, connects with it, then previews and applies the disconnect', async () => {
    let configured = false;
    const status = (): SetupClient => ({ ...claude, configured });
    const { calls } = fakeFetch({
      'GET /api/setup': () => ({ body: { ...list, clients: [status(), list.clients[1]] } }),
      'POST /api/setup/claude-code/preview': ({ body }: { body: unknown }) => ({ body: connectPreview(body as SetupOptions) }),
      'POST /api/setup/claude-code/apply': () => { configured = true; return { body: { client: 'claude-code', changed: ['a', 'b'], backups: [], message: '', status: status() } }; },
      'POST /api/setup/claude-code/undo/preview': undoPreview,
      'POST /api/setup/claude-code/undo': () => { configured = false; return { body: { client: 'claude-code', changed: ['a'], backups: [], message: '', status: status() } }; },
    });
    const changes: [SetupClient, SetupResult][] = [];
    const target = render({ onchange: (s: SetupClient, r: SetupResult) => changes.push([s, r]) });
    await settle();
    const row = () => target.querySelector('[data-testid=agent-claude-code]')!;
    expect(row().querySelector('[data-testid=agent-state]')!.textContent).toBe('found, not connected');
    expect(target.querySelector('[data-testid=agent-cursor] [data-testid=agent-state]')!.textContent).toBe('not found');
    // Cursor has neither hooks nor proxy: no boxes for them.
    expect(target.querySelector('[data-testid=agent-cursor] [data-testid=agent-proxy]')).toBeNull();
    expect(target.textContent).toContain('Agents run /usr/bin/memtray; the proxy is http://127.0.0.1:7432.');

    await click(row().querySelector('[data-testid=agent-preview]'));
    const diff = row().querySelector('[data-testid=agent-diff]')!;
    expect(diff.textContent).toContain('Connecting Claude Code changes 2 files; nothing is written until you confirm.');
    expect(diff.textContent).toContain('set env ANTHROPIC_BASE_URL=http://127.0.0.1:7432');
    const pre = diff.querySelectorAll('pre.diff')[1];
    expect([...pre.querySelectorAll('.dl.add')].map((l) => l.textContent)).toEqual(['+  "model": "opus",', '+  "env": {"ANTHROPIC_BASE_URL": "http://127.0.0.1:7432"}']);
    expect([...pre.querySelectorAll('.dl.del')].map((l) => l.textContent)).toEqual(['-  "model": "opus"']);
    expect(pre.querySelectorAll('.dl.meta')).toHaveLength(2);
    expect(pre.querySelector('.dl.hunk')!.textContent).toBe('@@ -1,3 +1,4 @@');
    expect(diff.textContent).toContain("Claude Code's API traffic goes through memtray's proxy");

    // Unticking the proxy drops the preview; the next one is made without it.
    const proxy = row().querySelector('[data-testid=agent-proxy]') as HTMLInputElement;
    proxy.checked = false;
    proxy.dispatchEvent(new Event('change', { bubbles: true }));
    await settle();
    expect(row().querySelector('[data-testid=agent-diff]')).toBeNull();
    await click(row().querySelector('[data-testid=agent-preview]'));
    expect(calls.at(-1)!.body).toEqual({ no_proxy: true });

    await click(row().querySelector('[data-testid=agent-confirm]'));
    expect(calls.at(-1)).toMatchObject({ url: '/api/setup/claude-code/apply', body: { no_proxy: true } });
    expect((calls.at(-1)!.body as { files: unknown[] }).files).toHaveLength(2);
    expect(row().querySelector('[data-testid=agent-state]')!.textContent).toBe('connected');
    expect(row().querySelector('[data-testid=agent-diff]')).toBeNull();
    expect(changes.map(([s]) => s.configured)).toEqual([true]);

    await click(row().querySelector('[data-testid=agent-disconnect]'));
    expect(row().querySelector('[data-testid=agent-diff]')!.textContent).toContain('Disconnecting Claude Code changes 1 file');
    expect(row().querySelector('[data-testid=agent-diff] .dl.meta:nth-child(2)')!.textContent).toBe('+++ /dev/null');
    expect(row().querySelector('[data-testid=agent-proxy]')!.hasAttribute('disabled')).toBe(false);
    await click(row().querySelector('[data-testid=agent-confirm]'));
    expect(calls.at(-1)).toMatchObject({ url: '/api/setup/claude-code/undo', body: { files: [{ path: '/home/me/.claude.json' }, { path: '/home/me/.claude/settings.json' }] } });
    expect(row().querySelector('[data-testid=agent-state]')!.textContent).toBe('found, not connected');
    expect(row().querySelector('[data-testid=agent-disconnect]')).toBeNull();
    expect(changes.map(([s]) => s.configured)).toEqual([true, false]);
    expect(get(toasts).filter((t) => t.kind === 'error')).toEqual([]);
  });

  it('for the first-run guide: only the agents found here; an up-to-date agent has nothing to connect', async () => {
    fakeFetch({
      'GET /api/setup': { ...list, clients: [{ ...claude, configured: true }, list.clients[1]] },
      'POST /api/setup/claude-code/preview': { ...connectPreview(), changes: 0, files: connectPreview().files.map((f) => ({ ...f, changed: false, diff: '', state: 'up to date', what: [] })) },
    });
    const target = render({ detectedOnly: true });
    await settle();
    expect(target.querySelector('[data-testid=agent-cursor]')).toBeNull();
    await click(target.querySelector('[data-testid=agent-claude-code] [data-testid=agent-preview]'));
    expect(target.querySelector('[data-testid=agent-uptodate]')!.textContent).toBe('Already connected: nothing to change.');
    expect(target.querySelector('[data-testid=agent-confirm]')).toBeNull();
    expect(target.querySelector('pre.diff')).toBeNull();
  });

  it('says which hooks Codex will not run until they are trusted, and how', async () => {
    const codex: SetupClient = { ...claude, name: 'codex', label: 'Codex', configured: true,
      need_review: ['SessionStart', 'UserPromptSubmit'], review_hint: 'answer the "Hooks need review" prompt with "Trust all and continue"' };
    fakeFetch({ 'GET /api/setup': () => ({ body: { ...list, clients: [claude, codex] } }) });
    const target = render();
    await settle();
    const note = target.querySelector('[data-testid=agent-codex] [data-testid=agent-review]');
    expect(note?.textContent).toContain('SessionStart, UserPromptSubmit hooks until you trust them');
    expect(note?.textContent).toContain('Trust all and continue');
    expect(target.querySelector('[data-testid=agent-claude-code] [data-testid=agent-review]')).toBeNull();
  });
});
