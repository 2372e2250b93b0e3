import { afterEach, describe, expect, it, vi } from 'vitest';
import { flushSync, mount, tick, unmount } from 'svelte';
import Recall from './Recall.svelte';
import { createEventStream } from '../stores/events';
import { createRecall } from '../stores/recall';
import { handleKey } from '../util/keys';
import { toasts } from '../stores/toasts';
import { fakeFetch } from '../../test/fakes';
import type { RecallEntry, RecallLogStats } from '../api/models';

const press = (key: string) => handleKey(new KeyboardEvent('keydown', { key }), () => {});

const log: RecallEntry[] = [
  { seq: 2, at: '2026-05-06T07:09:00Z', session_id: 's2', event: 'user-prompt', prompt: 'how do I bake bread', given: [],
    withheld: [{ id: 'm9', score: 0.3, reason: 'no_evidence', preview: 'bread is not in here' }], skipped: 'the store holds nothing this prompt is about' },
  { seq: 1, at: '2026-05-06T07:08:00Z', session_id: 's1', event: 'user-prompt', project: 'shop', agent: 'codex', prompt: 'why is postgres pinned',
    given: [{ id: 'm1', score: 0.9, kind: 'decision', preview: 'postgres is pinned to 15 for the extension' }],
    withheld: [{ id: 'm2', score: 0.2, reason: 'relative_floor', preview: 'redis runs on 7' }],
    feedback: [{ id: 'm1', at: '2026-05-06T07:10:00Z', op: 'rated', score: 1 }] },
];
const stats: RecallLogStats = {
  days: [{ date: '2026-05-05', recalls: 0, gave: 0, empty: 0, memories: 0 }, { date: '2026-05-06', recalls: 2, gave: 1, empty: 1, memories: 1 }],
  recalls: 2, gave: 1, empty: 1, top: [{ id: 'm1', kind: 'decision', preview: 'postgres is pinned to 15', given: 1, helped: 1, misled: 0, hit_rate: 1 }],
  dropped: 0, failed: 0,
};

describe('Recall view', () => {
  const mounted: ReturnType<typeof mount>[] = [];
  afterEach(() => {
    mounted.splice(0).forEach((c) => unmount(c));
    document.body.innerHTML = '';
    toasts.set([]);
    vi.unstubAllGlobals();
  });

  it('shows each recall by session; j and Enter open what was given, withheld and why, and what the agent said', async () => {
    fakeFetch({ 'GET /api/recall/log': log, 'GET /api/recall/stats': stats });
    const recall = createRecall({ stream: createEventStream() });
    const target = document.createElement('div');
    document.body.append(target);
    mounted.push(mount(Recall, { target, props: { recall } }));
    await vi.waitFor(() => expect(target.querySelectorAll('[data-testid="recall-entry"]')).toHaveLength(2));
    expect([...target.querySelectorAll('[data-testid="recall-session-group"]')].map((g) => g.getAttribute('data-session'))).toEqual(['s2', 's1']);
    expect(target.querySelector('[data-testid="recall-today"]')?.textContent).toBe('2');
    expect([...target.querySelectorAll('[data-testid="recall-agent"]')].map((a) => a.textContent)).toEqual(['codex']);
    expect(target.querySelectorAll('[data-testid="recall-chart-date"]').length).toBeGreaterThan(0);
    expect(target.querySelector('[data-testid="recall-top"]')?.textContent).toContain('100%');

    press('j');
    press('j');
    press('Enter');
    flushSync();
    await tick();
    const detail = target.querySelector('[data-testid="recall-detail"]')!;
    expect(detail.querySelector('[data-testid="recall-given"]')?.getAttribute('data-id')).toBe('m1');
    expect(detail.textContent).toContain('helped');
    const w = detail.querySelector('[data-testid="recall-withheld"]')!;
    expect(w.getAttribute('data-reason')).toBe('relative_floor');
    expect(w.textContent).toContain('far below the best match');

    press('k');
    flushSync();
    await tick();
    const empty = target.querySelector('[data-testid="recall-detail"]')!;
    expect(empty.querySelector('[data-testid="recall-skipped"]')?.textContent).toContain('holds nothing this prompt is about');
    expect(empty.textContent).toContain('the store holds nothing this prompt is about');

    press('Escape');
    flushSync();
    expect(target.querySelector('[data-testid="recall-detail"]')).toBeNull();
  });

  it('Clear asks first, then deletes the log; a deleted memory shows its id, not a link', async () => {
    const gone: RecallEntry[] = [{ ...log[1], given: [{ id: 'm1', score: 0.9, kind: 'decision', preview: '(deleted)' }] }];
    const f = fakeFetch({ 'GET /api/recall/log': gone, 'GET /api/recall/stats': stats, 'DELETE /api/recall/log': { cleared: 1 } });
    const recall = createRecall({ stream: createEventStream() });
    const target = document.createElement('div');
    document.body.append(target);
    mounted.push(mount(Recall, { target, props: { recall } }));
    await vi.waitFor(() => expect(target.querySelectorAll('[data-testid="recall-entry"]')).toHaveLength(1));
    target.querySelector<HTMLButtonElement>('.entry-row')!.click();
    flushSync();
    const given = target.querySelector('[data-testid="recall-given"]')!;
    expect(given.querySelector('a')).toBeNull();
    expect(given.textContent).toContain('m1');

    target.querySelector<HTMLButtonElement>('[data-testid="recall-clear"]')!.click();
    flushSync();
    expect(f.calls.some((c) => c.method === 'DELETE')).toBe(false); // only asked
    expect(target.querySelector('[data-testid="recall-clear-confirm"]')?.textContent).toContain('Delete every logged recall');
    target.querySelector<HTMLButtonElement>('[data-testid="recall-clear-yes"]')!.click();
    await vi.waitFor(() => expect(target.querySelectorAll('[data-testid="recall-entry"]')).toHaveLength(0));
    expect(f.calls.filter((c) => c.method === 'DELETE' && c.url === '/api/recall/log')).toHaveLength(1);
    await vi.waitFor(() => expect(target.querySelector('[data-testid="recall-clear-confirm"]')).toBeNull());
  });
});
