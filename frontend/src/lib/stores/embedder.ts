// The embedder: which model runs and why, what Ollama offers, pulling an
// Ollama model and switching the store to another model. Pulls and switches
// are daemon jobs: they run in the background, their progress arrives as
// "job" events on the one event stream, and GET /api/jobs gives a page that
// loads while one runs its current state.
import { get, writable, type Writable } from 'svelte/store';
import { api } from '../api/client';
import type { EmbedderInfo, EmbedderQuery, Job, ReembedRequest } from '../api/models';
import { events as defaultEvents, type EventStream } from './events';
import { fieldErrors, reportError, toast } from './toasts';
import { staleJob } from './jobs';

/** The job kinds this store follows (httpapi.JobPull, JobReembed). */
export type EmbedderJobKind = 'pull' | 'reembed';

// The job helpers are shared with the other stores that follow jobs.
export { formatBytes, jobCounts, jobPercent } from './jobs';
const stale = staleJob;

export function createEmbedder(opts: { stream?: EventStream } = {}) {
  const stream = opts.stream ?? defaultEvents;
  const info = writable<EmbedderInfo | null>(null);
  const loading = writable(false);
  /** The newest pull and re-embedding jobs, running or finished. */
  const pull = writable<Job | null>(null);
  const reembed = writable<Job | null>(null);
  const jobs: Record<EmbedderJobKind, Writable<Job | null>> = { pull, reembed };

  async function loadInfo() {
    try {
      info.set(await api.embedder());
    } catch (e) {
      reportError(e, 'Loading the embedder');
    }
  }

  /** Loads the embedder's state and the newest jobs (a running one shows its progress at once). */
  async function load() {
    loading.set(true);
    try {
      await loadInfo();
      try {
        for (const j of (await api.jobs()) ?? []) track(j, false);
      } catch (e) {
        reportError(e, 'Loading the jobs');
      }
    } finally {
      loading.set(false);
    }
  }

  /**
   * Takes a job's new state. States of one job only move forward: a late
   * answer never replaces what an event already said. A job that ends
   * while this page follows it (announce) says how it ended and reloads
   * the embedder's state.
   */
  function track(j: Job, announce: boolean) {
    const s = jobs[j.kind as EmbedderJobKind];
    if (!s) return;
    if (stale(get(s), j)) return;
    s.set(j);
    if (j.state === 'running' || !announce) return;
    const what = j.kind === 'pull' ? `Pull of ${j.target}` : `Switch to ${j.target}`;
    if (j.state === 'done') toast('success', j.result || `${what}: done`);
    else if (j.state === 'canceled') toast('info', `${what} cancelled${j.kind === 'reembed' ? ': the store keeps its model' : ''}`);
    else toast('error', `${what} failed: ${j.error ?? 'unknown error'}`);
    void loadInfo();
  }

  /** Starts pulling an Ollama model (the configured one without a name); field errors for the form, or null. */
  async function startPull(model = ''): Promise<Record<string, string> | null> {
    try {
      track(await api.pullModel(model.trim() ? { model: model.trim() } : {}), true);
      return null;
    } catch (e) {
      return fieldErrors(e) ?? {};
    }
  }

  /**
   * Asks an OpenAI-compatible server (the form's fields) for its models and
   * embeds a probe text with its model; the answer lands in info.openai.
   * Field errors for the form, or null.
   */
  async function testOpenAI(q: EmbedderQuery): Promise<Record<string, string> | null> {
    loading.set(true);
    try {
      info.set(await api.embedder(q));
      return null;
    } catch (e) {
      return fieldErrors(e) ?? {};
    } finally {
      loading.set(false);
    }
  }

  /** The OpenAI-compatible server of a switch (provider openai). */
  type OpenAIServer = { openai_url?: string; openai_key_env?: string; dimensions?: number };

  /** Starts switching the store to another model; field errors for the form, or null. */
  async function startReembed(provider: 'builtin' | 'ollama' | 'openai', model = '', server: OpenAIServer = {}): Promise<Record<string, string> | null> {
    const req: ReembedRequest = { provider };
    if (provider !== 'builtin' && model) req.model = model;
    if (provider === 'openai') {
      if (server.openai_url) req.openai_url = server.openai_url;
      if (server.openai_key_env) req.openai_key_env = server.openai_key_env;
      if (server.dimensions) req.dimensions = server.dimensions;
    }
    try {
      track(await api.reembed(req), true);
      return null;
    } catch (e) {
      return fieldErrors(e) ?? {};
    }
  }

  /** Asks the running job of kind to stop; its end arrives as an event. */
  async function cancel(kind: EmbedderJobKind) {
    const j = get(jobs[kind]);
    if (!j || j.state !== 'running') return;
    try {
      await api.cancelJob(j.id);
    } catch (e) {
      reportError(e, 'Cancel');
    }
  }

  const unsubs = [
    stream.on<Job>('job', (e) => track(e.data, true)),
    stream.on('reset', () => void load()),
  ];

  return {
    info, loading, pull, reembed, load, loadInfo, startPull, startReembed, testOpenAI, cancel,
    destroy: () => unsubs.forEach((u) => u()),
  };
}

export const embedder = createEmbedder();
