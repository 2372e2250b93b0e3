import { afterEach, describe, expect, it } from 'vitest';
import { flushSync, mount, unmount } from 'svelte';
import ProjectionPlot from './ProjectionPlot.svelte';
import type { NoiseProjection } from '../api/models';

describe('ProjectionPlot', () => {
  const mounted: ReturnType<typeof mount>[] = [];
  afterEach(() => {
    mounted.splice(0).forEach((c) => unmount(c));
    document.body.innerHTML = '';
  });

  it('draws a point per vector coloured by kind, a legend with counts, and the hovered label', () => {
    const projection: NoiseProjection = {
      points: [
        { x: 0, y: 1, kind: 'quality', label: 'a decision and why' },
        { x: 1, y: 0, kind: 'noise', label: 'thanks, done' },
        { x: 1, y: 1, kind: 'learned', label: 'ok' },
        { x: -1, y: 0, kind: 'stored', label: 'deploys need DEPLOY_ENV', score: 0.71 },
        { x: -1, y: -1, kind: 'rejected', label: 'looks good', score: 0.12 },
        { x: -2, y: -1, kind: 'rejected', label: 'all set' },
      ],
      explained: [0.42, 0.17],
    };
    const target = document.createElement('div');
    document.body.append(target);
    mounted.push(mount(ProjectionPlot, { target, props: { projection } }));
    const plot = target.querySelector('[data-testid=projection-plot]')!;
    const circles = plot.querySelectorAll('circle[data-kind]');
    expect(circles).toHaveLength(6);
    expect(plot.querySelectorAll('circle.k-rejected')).toHaveLength(2);
    expect(plot.textContent).toContain('PC1 42%');
    expect(plot.textContent).toContain('PC2 17%');
    const legend = target.querySelector('.legend')!.textContent!.replace(/\s+/g, ' ');
    expect(legend).toContain('rejected exchange 2');
    expect(legend).toContain('quality prototype 1');
    const stored = plot.querySelector('circle.k-stored')!;
    expect(stored.querySelector('title')!.textContent).toContain('deploys need DEPLOY_ENV');
    stored.dispatchEvent(new MouseEvent('mouseenter'));
    flushSync();
    expect(target.querySelector('[data-testid=projection-hover]')!.textContent).toBe('kept exchange · score 0.71: deploys need DEPLOY_ENV');
    stored.dispatchEvent(new MouseEvent('mouseleave'));
    flushSync();
    expect(target.querySelector('[data-testid=projection-hover]')!.textContent).toContain('Hover a point');
  });
});
