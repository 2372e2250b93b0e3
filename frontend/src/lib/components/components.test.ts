import { afterEach, describe, expect, it, vi } from 'vitest';
import { flushSync, mount, unmount } from 'svelte';
import ScoreBars from './ScoreBars.svelte';
import TransferPanel from './TransferPanel.svelte';
import { fakeFetch } from '../../test/fakes';
import Toasts from './Toasts.svelte';
import { toast, toasts } from '../stores/toasts';

describe('components', () => {
  const mounted: ReturnType<typeof mount>[] = [];
  afterEach(() => {
    mounted.splice(0).forEach((c) => unmount(c));
    document.body.innerHTML = '';
    toasts.set([]);
  });

  // The daemon writes an export to the Downloads folder when there is one,
  // else to the home folder (a server has none): the placeholder said only
  // the first, and the file then turned up elsewhere.
  it('TransferPanel says where an export goes by default', () => {
    fakeFetch({ 'GET /api/jobs': [] });
    const target = document.createElement('div');
    document.body.append(target);
    mounted.push(mount(TransferPanel, { target }));
    flushSync();
    expect(target.querySelector('input[aria-label="Export folder"]')?.getAttribute('placeholder'))
      .toBe('folder (default: your Downloads folder, else your home folder)');
    vi.unstubAllGlobals();
  });

  it('ScoreBars says the score in a sentence and draws linear bars coloured by effect (issue 21 item 4)', () => {
    const target = document.createElement('div');
    document.body.append(target);
    mounted.push(mount(ScoreBars, { target, props: { breakdown: {
      relevance: 0.8, importance: 0.5, recency: 0.9, access: 1.2, anti_sticky: 1, kind_boost: 1.3, surface: 1,
      project_boost: 1, feedback: 1, keyword: 1, composite: 0.56,
    }, memory: { kind: 'decision', created_at: new Date().toISOString() } } }));
    const v = (k: string) => target.querySelector(`[data-factor=${k}]`)?.getAttribute('data-value');
    expect(v('importance')).toBe('0.5');
    expect(v('kind_boost')).toBe('1.3');
    expect(v('composite')).toBe('0.56');
    expect(target.querySelector('[data-factor=importance] .fill.neg')).not.toBeNull();
    expect(target.querySelector('[data-factor=kind_boost] .fill.pos')).not.toBeNull();
    expect(target.querySelector('[data-factor=surface] .fill.neutral')).not.toBeNull();
    expect(target.querySelector('[data-factor=relevance] .fill.base')).not.toBeNull();
    // Linear: a factor of 1 fills half the 0..2 track, 0.5 a quarter.
    expect((target.querySelector('[data-factor=surface] .fill') as HTMLElement).style.width).toBe('50%');
    expect((target.querySelector('[data-factor=importance] .fill') as HTMLElement).style.width).toBe('25%');
    expect(target.querySelectorAll('[data-factor]')).toHaveLength(11);
    expect(target.querySelector('[data-testid=score-sentence]')?.textContent)
      .toBe('relevant 0.8 · importance 0.5 lowers it · 0 days old x0.9 lowers it · used before x1.2 · decision x1.3');
  });

  it('ScoreBars shows what MMR took off and the score the hit ranks by (issue 21 bug 3)', () => {
    const target = document.createElement('div');
    document.body.append(target);
    mounted.push(mount(ScoreBars, { target, props: { breakdown: {
      relevance: 0.8, importance: 0.5, recency: 1, access: 1, anti_sticky: 1, kind_boost: 1, surface: 1,
      project_boost: 1, feedback: 1, keyword: 1, composite: 0.5244, diversity: 0.0744, similar_to: '0123456789abcdef',
    } } }));
    const v = (k: string) => target.querySelector(`[data-factor=${k}]`)?.textContent;
    expect(v('composite')).toBe('0.5244');
    expect(v('diversity')).toBe('−0.0744');
    expect(v('rank')).toBe('0.4500');
    // The whole id, linked (exp-ui3): at 1368516 12 characters of it, which nothing takes.
    expect(target.querySelector('[data-testid=diversity-why]')?.textContent).toContain('memory 0123456789abcdef, ranked above it');
    expect(target.querySelector('[data-testid=similar-to-link]')?.getAttribute('href')).toBe('#/memories?id=0123456789abcdef');
  });

  it('Toasts renders toasts and runs their action', async () => {
    const target = document.createElement('div');
    document.body.append(target);
    mounted.push(mount(Toasts, { target }));
    let undone = false;
    toast('success', 'Memory deleted', { action: { label: 'Undo', run: () => { undone = true; } } });
    flushSync();
    expect(target.textContent).toContain('Memory deleted');
    (Array.from(target.querySelectorAll('button')).find((b) => b.textContent === 'Undo') as HTMLButtonElement).click();
    await Promise.resolve();
    flushSync();
    expect(undone).toBe(true);
    expect(target.textContent).not.toContain('Memory deleted');
  });
});
