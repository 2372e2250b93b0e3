import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { flushSync, mount, tick, unmount } from 'svelte';
import EmbedderPanel from './EmbedderPanel.svelte';
import { embedder } from '../stores/embedder';
import { events } from '../stores/events';
import { toasts } from '../stores/toasts';
import { fakeFetch } from '../../test/fakes';
import type { EmbedderInfo, Job } from '../api/models';

const info: EmbedderInfo = {
  model: 'builtin-wordvec-v1', provider: 'store', reason: 'the model this store was built with', dim: 557, degraded: false,
  store_model: 'builtin-wordvec-v1', store_dim: 557, memories: 400, builtin: 'builtin-wordvec-v1',
  configured_provider: 'auto', configured_model: 'nomic-embed-text',
  ollama: { host: 'http://127.0.0.1:11434', reachable: true, version: '0.13.0', has_configured: true,
    models: [
      { name: 'nomic-embed-text:latest', size: 274302450, family: 'nomic-bert', parameter_size: '137M', embedding: true },
      { name: 'llama3.2:latest', size: 2019393189, family: 'llama', parameter_size: '3.2B', embedding: false },
    ] },
  openai: { url: 'http://127.0.0.1:8080/v1', model: '', checked: false, reachable: false, models: [], dim: 0 },
  thresholds: [],
};
const t0 = '2025-06-01T12:00:00Z';
const text = (el: Element | null) => (el?.textContent ?? '').replace(/\s+/g, ' ');

describe('EmbedderPanel', () => {
  const mounted: ReturnType<typeof mount>[] = [];
  beforeEach(() => {
    toasts.set([]);
    embedder.info.set(null);
    embedder.pull.set(null);
    embedder.reembed.set(null);
  });
  afterEach(() => {
    mounted.splice(0).forEach((c) => unmount(c));
    document.body.innerHTML = '';
    vi.unstubAllGlobals();
  });
  function render() {
    const target = document.createElement('div');
    document.body.append(target);
    mounted.push(mount(EmbedderPanel, { target }));
    return target;
  }
  async function settle() {
    for (let i = 0; i < 5; i++) {
      await tick();
      await new Promise((r) => setTimeout(r, 0));
    }
    flushSync();
  }
  const send = async (j: Job) => {
    events.dispatch({ id: '1', type: 'job', data: j });
    await settle();
  };

  it('shows the model and Ollama, switches with a progress bar that follows the job, and cancels', async () => {
    const running: Job = { id: 'r1', kind: 'reembed', state: 'running', target: 'ollama:nomic-embed-text', done: 0, total: 0, unit: 'memories', started_at: t0 };
    const { calls } = fakeFetch({
      'GET /api/embedder': info, 'GET /api/jobs': [],
      'POST /api/embedder/reembed': running, 'POST /api/jobs/r1/cancel': running,
    });
    const target = render();
    await settle();
    expect(target.querySelector('[data-testid=embedder-model]')!.textContent).toContain('builtin-wordvec-v1');
    expect(text(target.querySelector('[data-testid=ollama-status]'))).toContain('Ollama 0.13.0 answers at http://127.0.0.1:11434; nomic-embed-text is installed.');
    const select = target.querySelector('select') as HTMLSelectElement;
    expect([...select.options].map((o) => [o.value, o.disabled])).toEqual([['builtin', true], ['ollama:nomic-embed-text', false]]);
    expect(select.value).toBe('ollama:nomic-embed-text');

    (target.querySelector('form:last-of-type button[type=submit]') as HTMLButtonElement).click();
    await settle();
    expect(calls.at(-1)).toMatchObject({ url: '/api/embedder/reembed', body: { provider: 'ollama', model: 'nomic-embed-text' } });
    const job = () => target.querySelector('[data-testid=reembed-job]')!;
    expect(job().querySelector('progress')!.hasAttribute('value')).toBe(false); // total not known yet: indeterminate

    await send({ ...running, status: 'embedding', done: 128, total: 400 });
    const bar = job().querySelector('progress') as HTMLProgressElement;
    expect([bar.max, bar.value]).toEqual([400, 128]);
    expect(job().textContent).toContain('32%');
    expect(job().textContent).toContain('embedding · 128 / 400 memories');
    expect((target.querySelector('form:last-of-type button[type=submit]') as HTMLButtonElement).disabled).toBe(true);

    (job().querySelector('button') as HTMLButtonElement).click();
    await settle();
    expect(calls.at(-1)).toMatchObject({ method: 'POST', url: '/api/jobs/r1/cancel' });
    await send({ ...running, state: 'canceled', error: 'cancelled', status: 'embedding', done: 192, total: 400, finished_at: t0 });
    expect(job().querySelector('progress')).toBeNull();
    expect(target.querySelector('[data-testid=reembed-job-end]')!.textContent).toBe('Cancelled: the store keeps its model.');
  });

  it('pulls the configured model with a byte progress bar', async () => {
    const running: Job = { id: 'p1', kind: 'pull', state: 'running', target: 'nomic-embed-text', done: 0, total: 0, unit: 'bytes', started_at: t0 };
    const { calls } = fakeFetch({
      'GET /api/embedder': { ...info, ollama: { ...info.ollama, has_configured: false, models: [info.ollama.models[1]] } },
      'GET /api/jobs': [], 'POST /api/embedder/pull': running,
    });
    const target = render();
    await settle();
    expect(text(target.querySelector('[data-testid=ollama-status]'))).toContain('nomic-embed-text is not installed');
    expect(target.textContent).toContain('Pull an Ollama embedding model, or name an OpenAI-compatible server\'s model, to have another model to switch to.');
    (target.querySelector('form button[type=submit]') as HTMLButtonElement).click();
    await settle();
    expect(calls.at(-1)).toMatchObject({ url: '/api/embedder/pull', body: {} });
    await send({ ...running, status: 'pulling 970aa74c0a90', done: 137145328, total: 274290656 });
    const job = target.querySelector('[data-testid=pull-job]')!;
    expect((job.querySelector('progress') as HTMLProgressElement).value).toBe(137145328);
    expect(job.textContent).toContain('pulling 970aa74c0a90 · 137.1 MB / 274.3 MB');
    await send({ ...running, state: 'failed', error: 'ollama at http://127.0.0.1:11434 could not pull "nomic-embed-text": connection reset', finished_at: t0 });
    expect(target.querySelector('[data-testid=pull-job-end]')!.textContent).toContain('Failed: ollama at');
  });

  const rawError = 'ollama list models at http://127.0.0.1:11434: unavailable: is Ollama running? start it with `ollama serve` or set embedder.provider to builtin';
  for (const [storeModel, want, error] of [
    ['builtin-wordvec-v1', 'Ollama (optional) is not running', false], // nothing depends on it: no error (issue 21 item 9)
    ['ollama:nomic-embed-text', 'Ollama does not answer', true],
  ] as [string, string, boolean][]) {
    it(`says how to start Ollama when it does not answer (store ${storeModel})`, async () => {
      fakeFetch({
        'GET /api/embedder': { ...info, store_model: storeModel, ollama: { host: 'http://127.0.0.1:11434', reachable: false, error: rawError, models: [], has_configured: false } },
        'GET /api/jobs': [],
      });
      const target = render();
      await settle();
      const status = target.querySelector('[data-testid=ollama-status]')!;
      expect(status.textContent).toContain(want);
      expect(status.textContent).toContain('ollama serve');
      expect(!!status.querySelector('.bad')).toBe(error);
      // The client's raw error (which advises switching to the built-in
      // embedder) only where Ollama is needed: beside "optional, the
      // built-in one works" it contradicts the line above it.
      expect(target.textContent!.includes(rawError)).toBe(error);
      expect((target.querySelector('form button[type=submit]') as HTMLButtonElement).disabled).toBe(true);
    });
  }

  it('tests an OpenAI-compatible server and switches to its model with the form\'s fields', async () => {
    const running: Job = { id: 'r2', kind: 'reembed', state: 'running', target: 'openai:voyage-4-nano', done: 0, total: 0, unit: 'memories', started_at: t0 };
    const tested: EmbedderInfo = { ...info, openai: { url: 'http://127.0.0.1:8081/v1', model: 'voyage-4-nano', key_env: 'MY_KEY', checked: true, reachable: true, models: ['voyage-4-nano'], dim: 1024 } };
    const { calls } = fakeFetch({
      'GET /api/embedder': ({ url }: { url: string }) => ({ body: url.includes('?') ? tested : info }), 'GET /api/jobs': [],
      'POST /api/embedder/reembed': running,
    });
    const target = render();
    await settle();
    expect(target.querySelector('[data-testid=openai-status]')).toBeNull(); // nothing configured, nothing asked
    const input = (label: string, v: string) => {
      const el = target.querySelector(`input[aria-label="${label}"]`) as HTMLInputElement;
      el.value = v;
      el.dispatchEvent(new Event('input'));
    };
    input('OpenAI-compatible URL', 'http://127.0.0.1:8081/v1');
    input('OpenAI-compatible model', 'voyage-4-nano');
    input('Environment variable holding the API key', 'MY_KEY');
    await settle();
    (target.querySelector('[data-testid=openai-form] button[type=submit]') as HTMLButtonElement).click();
    await settle();
    expect(calls.at(-1)!.url).toBe('/api/embedder?openai_url=http%3A%2F%2F127.0.0.1%3A8081%2Fv1&openai_key_env=MY_KEY&openai_model=voyage-4-nano');
    expect(text(target.querySelector('[data-testid=openai-status]'))).toContain('voyage-4-nano embeds at http://127.0.0.1:8081/v1: 1024 dimensions.');

    const select = target.querySelector('form:last-of-type select') as HTMLSelectElement;
    expect([...select.options].map((o) => o.value)).toContain('openai:voyage-4-nano');
    select.value = 'openai:voyage-4-nano';
    select.dispatchEvent(new Event('change'));
    await settle();
    (target.querySelector('form:last-of-type button[type=submit]') as HTMLButtonElement).click();
    await settle();
    expect(calls.at(-1)).toMatchObject({ url: '/api/embedder/reembed',
      body: { provider: 'openai', model: 'voyage-4-nano', openai_url: 'http://127.0.0.1:8081/v1', openai_key_env: 'MY_KEY' } });

    // Shortened vectors are another model for the store: "#<dimensions>".
    await send({ ...running, state: 'canceled', error: 'cancelled', finished_at: t0 });
    input('Dimensions', '256');
    await settle();
    expect([...select.options].map((o) => o.value)).toContain('openai:voyage-4-nano#256');
    select.value = 'openai:voyage-4-nano#256';
    select.dispatchEvent(new Event('change'));
    await settle();
    (target.querySelector('form:last-of-type button[type=submit]') as HTMLButtonElement).click();
    await settle();
    expect(calls.at(-1)).toMatchObject({ url: '/api/embedder/reembed', body: { provider: 'openai', model: 'voyage-4-nano', dimensions: 256 } });
  });

  it('shows why an OpenAI-compatible server does not embed', async () => {
    fakeFetch({
      'GET /api/embedder': { ...info, openai: { url: 'http://127.0.0.1:8080/v1', model: 'nope', checked: true, reachable: true, models: ['voyage-4-nano'],
        dim: 0, error: 'openai server at http://127.0.0.1:8080/v1: embedding model not served: "nope"' } },
      'GET /api/jobs': [],
    });
    const target = render();
    await settle();
    expect(text(target.querySelector('[data-testid=openai-status]'))).toContain('The server answers, but openai server at http://127.0.0.1:8080/v1: embedding model not served');
    expect((target.querySelector('input[aria-label="OpenAI-compatible model"]') as HTMLInputElement).value).toBe('nope');
  });

  it('lists the similarity thresholds with their source', async () => {
    fakeFetch({
      'GET /api/embedder': { ...info, thresholds: [
        { name: 'ingest.duplicate_similarity', value: 0.92, source: 'calibrated', calibrated: 0.92 },
        { name: 'search.vector_floor', value: 0.25, source: 'config', calibrated: 0.3 },
        { name: 'steward.merge_similarity', value: 0.88, source: 'default' },
      ] },
      'GET /api/jobs': [],
    });
    const target = render();
    await settle();
    const rows = [...target.querySelectorAll('[data-testid=embedder-thresholds] tr')]
      .map((tr) => [...tr.querySelectorAll('td')].map((td) => text(td).trim()).join(' | '));
    expect(rows).toEqual([
      'ingest.duplicate_similarity | 0.920 | calibrated for this model',
      'search.vector_floor | 0.250 | config file (calibrated: 0.300)',
      'steward.merge_similarity | 0.880 | default (the model could not be calibrated)',
    ]);
  });
});
