import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { mount, unmount } from 'svelte';
import Chart, { countTicks, niceMax, tickIndexes } from './Chart.svelte';

describe('Chart', () => {
  const mounted: ReturnType<typeof mount>[] = [];
  beforeEach(() => vi.stubGlobal('ResizeObserver', class { observe() {} unobserve() {} disconnect() {} })); // jsdom has none
  afterEach(() => {
    vi.unstubAllGlobals();
    mounted.splice(0).forEach((c) => unmount(c));
    document.body.innerHTML = '';
  });
  const render = (props: Record<string, unknown>) => {
    const target = document.createElement('div');
    document.body.append(target);
    mounted.push(mount(Chart, { target, props: props as never }));
    return target;
  };

  it('draws lines with dated x ticks, count y ticks, axis titles and a legend', () => {
    const t = render({
      type: 'lines', labels: ['Nov 1', 'Nov 2', 'Nov 3'], xLabel: 'day (UTC)', yLabel: 'memories', ariaLabel: 'growth',
      series: [{ name: 'shop', values: [1, 3, 7], color: 'red' }, { name: 'infra', values: [0, 0, 2], color: 'blue' }],
    });
    expect(t.querySelectorAll('polyline')).toHaveLength(2);
    const ticks = [...t.querySelectorAll('.x-tick')].map((e) => e.textContent);
    expect(ticks).toEqual(['Nov 1', 'Nov 2', 'Nov 3']);
    const yTicks = [...t.querySelectorAll('.y-axis .tick')].map((e) => e.textContent);
    expect(yTicks).toEqual(['0', '2', '4', '6', '8', '10']);
    expect([...t.querySelectorAll('.axis-title')].map((e) => e.textContent)).toEqual(['memories', 'day (UTC)']);
    expect(t.querySelector('[data-testid=chart-legend]')!.textContent).toContain('shop');
    expect(t.querySelector('[data-testid=chart-legend]')!.textContent).toContain('infra');
  });

  it('drops x tick labels that would overlap', () => {
    const labels = Array.from({ length: 48 }, (_, i) => `Nov ${25 + Math.floor(i / 24)} ${String(i % 24).padStart(2, '0')}:00`);
    const t = render({
      type: 'bars', labels, xTickAt: [0, 1, 2, 12, 24, 36], xLabel: 'hour', yLabel: 'n', ariaLabel: 'hours',
      series: [{ name: 'stored', values: labels.map(() => 1), color: 'green' }],
    });
    const ticks = [...t.querySelectorAll('.x-tick')].map((e) => e.textContent);
    expect(ticks).toEqual(['Nov 25 00:00', 'Nov 25 12:00', 'Nov 26 00:00', 'Nov 26 12:00']);
    expect(t.querySelector('.x-tick')!.getAttribute('text-anchor')).toBe('start');
  });

  it('stacks bars over a 0-1 axis and marks the threshold where it is', () => {
    const t = render({
      type: 'bars', xRange: { min: 0, max: 1, ticks: [0, 0.5, 1] }, xLabel: 'content score', yLabel: 'exchanges', ariaLabel: 'hist',
      marker: { at: 0.35, label: 'threshold 0.35' },
      series: [{ name: 'stored', values: [0, 1, 2, 0], color: 'green' }, { name: 'rejected', values: [3, 1, 0, 0], color: 'red' }],
    });
    expect(t.querySelectorAll('rect')).toHaveLength(4); // zero counts draw nothing
    expect([...t.querySelectorAll('.x-tick')].map((e) => e.textContent)).toEqual(['0', '0.5', '1']);
    const marker = t.querySelector('[data-testid=chart-marker]')!;
    const x0 = Number(t.querySelectorAll('.x-axis line')[1].getAttribute('x1'));
    const x1 = Number(t.querySelectorAll('.x-axis line')[3].getAttribute('x1'));
    expect(Number(marker.getAttribute('x1'))).toBeCloseTo(x0 + 0.35 * (x1 - x0));
    expect(t.querySelector('.marker-label')!.textContent).toBe('threshold 0.35');
    expect(t.querySelector('[data-testid=chart-legend]')!.textContent).toContain('threshold 0.35');
  });
});

describe('chart scales', () => {
  it.each([[0, 1], [1, 1], [3, 5], [7, 10], [11, 20], [21, 25], [26, 50], [851, 1000]])('niceMax(%d) = %d', (m, want) => {
    expect(niceMax(m)).toBe(want);
  });
  it('counts in whole steps, at most six ticks', () => {
    expect(countTicks(1)).toEqual([0, 1]);
    expect(countTicks(25)).toEqual([0, 5, 10, 15, 20, 25]);
    expect(countTicks(1000)).toEqual([0, 200, 400, 600, 800, 1000]);
  });
  it('picks evenly spaced indexes ending at the last', () => {
    expect(tickIndexes(0, 4)).toEqual([]);
    expect(tickIndexes(3, 4)).toEqual([0, 1, 2]);
    expect(tickIndexes(48, 4)).toEqual([15, 31, 47]); // steps of 16 back from the last
  });
});
