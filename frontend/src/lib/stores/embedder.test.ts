import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { get } from 'svelte/store';
import { createEventStream } from './events';
import { createEmbedder, formatBytes, jobCounts, jobPercent } from './embedder';
import { toasts } from './toasts';
import { fakeFetch } from '../../test/fakes';
import type { EmbedderInfo, Job } from '../api/models';

const info: EmbedderInfo = {
  model: 'builtin-wordvec-v1', provider: 'store', reason: 'the model this store was built with', dim: 557, degraded: false,
  store_model: 'builtin-wordvec-v1', store_dim: 557, memories: 400, builtin: 'builtin-wordvec-v1',
  configured_provider: 'auto', configured_model: 'nomic-embed-text',
  ollama: { host: 'http://127.0.0.1:11434', reachable: true, version: '0.13.0', has_configured: false,
    models: [{ name: 'llama3.2:latest', size: 2019393189, family: 'llama', embedding: false }] },
  openai: { url: 'http://127.0.0.1:8080/v1', model: '', checked: false, reachable: false, models: [], dim: 0 },
  thresholds: [],
};

const t0 = '2025-06-01T12:00:00.123Z';
function job(over: Partial<Job>): Job {
  return { id: 'j1', kind: 'pull', state: 'running', target: 'nomic-embed-text', done: 0, total: 0, unit: 'bytes', started_at: t0, ...over };
}

describe('embedder store', () => {
  beforeEach(() => toasts.set([]));
  afterEach(() => vi.unstubAllGlobals());

  it('loads the embedder and picks up a job that is running', async () => {
    const running = job({ kind: 'reembed', target: 'ollama:nomic-embed-text', unit: 'memories', status: 'embedding', done: 128, total: 400 });
    fakeFetch({ 'GET /api/embedder': info, 'GET /api/jobs': [job({ id: 'old', state: 'done', result: 'ready' }), running] });
    const e = createEmbedder({ stream: createEventStream() });
    await e.load();
    expect(get(e.info)).toEqual(info);
    expect(get(e.reembed)).toEqual(running);
    expect(get(e.pull)?.state).toBe('done');
    expect(get(toasts)).toEqual([]); // jobs that ended before the page loaded are not announced
    e.destroy();
  });

  it('follows a pull from its events in order, announces its end and reloads the embedder', async () => {
    let infos = 0;
    const { calls } = fakeFetch({
      'GET /api/embedder': () => ({ body: { ...info, ollama: { ...info.ollama, has_configured: infos++ > 0 } } }),
      'GET /api/jobs': [],
      'POST /api/embedder/pull': job({}),
    });
    const stream = createEventStream();
    const e = createEmbedder({ stream });
    await e.load();
    const send = (j: Job, id: number) => stream.dispatch({ id: String(id), type: 'job', data: j });
    // An event may beat the POST's answer: the answer must not take the progress back.
    send(job({ status: 'pulling manifest' }), 1);
    expect(await e.startPull()).toBeNull();
    expect(calls.find((c) => c.method === 'POST')).toMatchObject({ url: '/api/embedder/pull', body: {} });
    expect(get(e.pull)?.status).toBe('pulling manifest');
    send(job({ status: 'pulling 970aa74c0a90', done: 25165824, total: 274290656 }), 2);
    expect(jobPercent(get(e.pull))).toBe(9);
    send(job({ status: 'pulling 970aa74c0a90', done: 1000, total: 274290656 }), 3); // late and older: ignored
    expect(get(e.pull)?.done).toBe(25165824);
    send(job({ state: 'done', status: 'success', done: 274302450, total: 274302450, result: 'nomic-embed-text is ready', finished_at: t0 }), 4);
    expect(get(e.pull)?.state).toBe('done');
    expect(get(toasts).map((t) => [t.kind, t.text])).toEqual([['success', 'nomic-embed-text is ready']]);
    await vi.waitFor(() => expect(get(e.info)?.ollama.has_configured).toBe(true));
    send(job({ state: 'running', status: 'pulling manifest' }), 5); // an ended job stays ended
    expect(get(e.pull)?.state).toBe('done');
    e.destroy();
  });

  it('starts a switch with the model, cancels it, and says the store keeps its model', async () => {
    const running = job({ id: 'r1', kind: 'reembed', target: 'ollama:mxbai-embed-large', unit: 'memories' });
    const { calls } = fakeFetch({
      'GET /api/embedder': info, 'GET /api/jobs': [],
      'POST /api/embedder/reembed': running,
      'POST /api/jobs/r1/cancel': running,
    });
    const stream = createEventStream();
    const e = createEmbedder({ stream });
    expect(await e.startReembed('ollama', 'mxbai-embed-large')).toBeNull();
    expect(calls.at(-1)).toMatchObject({ method: 'POST', url: '/api/embedder/reembed', body: { provider: 'ollama', model: 'mxbai-embed-large' } });
    await e.cancel('reembed');
    expect(calls.at(-1)).toMatchObject({ method: 'POST', url: '/api/jobs/r1/cancel' });
    stream.dispatch({ id: '9', type: 'job', data: { ...running, state: 'canceled', error: 'cancelled', finished_at: t0 } });
    expect(get(e.reembed)?.state).toBe('canceled');
    expect(get(toasts).map((t) => t.text)).toEqual(['Switch to ollama:mxbai-embed-large cancelled: the store keeps its model']);
    expect(await e.startReembed('builtin', 'ignored')).toBeNull();
    expect(calls.filter((c) => c.url === '/api/embedder/reembed').at(-1)?.body).toEqual({ provider: 'builtin' });
    e.destroy();
  });

  it('turns refusals into field errors or toasts', async () => {
    fakeFetch({
      'POST /api/embedder/pull': () => ({ status: 400, body: { error: 'invalid pull', code: 'invalid', fields: { model: 'ollama model name "a b": invalid input' } } }),
      'POST /api/embedder/reembed': () => ({ status: 409, body: { error: 'a job of this kind is already running: reembed ollama:nomic-embed-text (job j1) is running since 12:00:00; wait for it or cancel it', code: 'job_running' } }),
    });
    const e = createEmbedder({ stream: createEventStream() });
    expect(await e.startPull('a b')).toEqual({ model: 'ollama model name "a b": invalid input' });
    expect(await e.startReembed('builtin')).toEqual({});
    expect(get(toasts).map((t) => t.kind)).toEqual(['error']);
    expect(get(toasts)[0].text).toContain('already running');
    fakeFetch({ 'POST /api/embedder/reembed': () => ({ status: 503, body: { error: 'switch to ollama: ollama list models at http://127.0.0.1:11434: memory unavailable: is Ollama running?', code: 'unavailable' } }) });
    expect(await e.startReembed('ollama')).toEqual({});
    expect(get(toasts).at(-1)?.text).toContain('is Ollama running?');
    e.destroy();
  });

  it('reloads on a reset', async () => {
    let n = 0;
    fakeFetch({ 'GET /api/embedder': () => { n++; return { body: info }; }, 'GET /api/jobs': null });
    const stream = createEventStream();
    const e = createEmbedder({ stream });
    await e.load();
    expect(n).toBe(1);
    stream.dispatch({ id: '', type: 'reset', data: { reason: 'reload' } });
    await vi.waitFor(() => expect(n).toBe(2));
    expect(get(e.info)).toEqual(info);
    expect(get(toasts)).toEqual([]);
    e.destroy();
  });
});

describe('job formatting', () => {
  it('gives percents, bytes and counts', () => {
    expect(jobPercent(null)).toBeNull();
    expect(jobPercent(job({ done: 5, total: 0 }))).toBeNull();
    expect(jobPercent(job({ done: 400, total: 400 }))).toBe(100);
    expect(formatBytes(999)).toBe('999 B');
    expect(formatBytes(274290656)).toBe('274.3 MB');
    expect(formatBytes(2019393189)).toBe('2.0 GB');
    expect(jobCounts(job({ done: 137145328, total: 274290656 }))).toBe('137.1 MB / 274.3 MB');
    expect(jobCounts(job({ unit: 'memories', done: 120, total: 400 }))).toBe('120 / 400 memories');
    expect(jobCounts(job({}))).toBe('');
  });
});
