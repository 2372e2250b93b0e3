// Background jobs of the daemon (GET /api/jobs, "job" events): pulling a
// model, re-embedding, exporting to a file, importing. Each store follows
// the kinds it starts with a JobTracker: the newest job of each kind, its
// states only ever moving forward, and a word when one ends.
import { get, writable, type Readable } from 'svelte/store';
import { api } from '../api/client';
import type { Job } from '../api/models';
import type { EventStream } from './events';
import { reportError } from './toasts';

/** How far a job is, 0..100, or null when its total is not known yet. */
export function jobPercent(j: Job | null): number | null {
  if (!j || j.total <= 0) return null;
  return Math.min(100, Math.floor((j.done * 100) / j.total));
}

/** A byte count in decimal units, as Ollama writes it: "274.3 MB". */
export function formatBytes(n: number): string {
  if (n < 1000) return `${n} B`;
  const units = ['kB', 'MB', 'GB', 'TB'];
  let v = n / 1000;
  let i = 0;
  while (v >= 1000 && i < units.length - 1) {
    v /= 1000;
    i++;
  }
  return `${v.toFixed(1)} ${units[i]}`;
}

/** The progress of a job in words: "137.1 MB / 274.3 MB" or "120 / 400 memories". */
export function jobCounts(j: Job): string {
  if (j.total <= 0) return '';
  return j.unit === 'bytes' ? `${formatBytes(j.done)} / ${formatBytes(j.total)}` : `${j.done} / ${j.total} ${j.unit}`;
}

/** Whether j is older news than prev: an older job, or an earlier state of the same one. */
export function staleJob(prev: Job | null, j: Job): boolean {
  if (!prev) return false;
  if (prev.id !== j.id) return Date.parse(j.started_at) < Date.parse(prev.started_at);
  if (prev.state !== 'running') return true; // an ended job stays ended
  if (j.state !== 'running') return false;
  return j.done < prev.done || (j.done === prev.done && !j.status && !!prev.status);
}

/** Follows the newest job of each of some kinds. */
export interface JobTracker<K extends string> {
  /** The newest job of kind, running or ended. */
  job(kind: K): Readable<Job | null>;
  /** Takes a job's new state (an answer of the API, or an event when announce). */
  track(j: Job, announce: boolean): void;
  /** Loads the newest jobs of the followed kinds (a running one shows at once). */
  load(): Promise<void>;
  /** Asks the running job of kind to stop; its end arrives as an event. */
  cancel(kind: K): Promise<void>;
  destroy(): void;
}

/**
 * followJobs tracks kinds on stream. onEnd is called once for each job
 * that ends while this page follows it.
 */
export function followJobs<K extends string>(stream: EventStream, kinds: readonly K[], onEnd: (j: Job) => void): JobTracker<K> {
  const stores = Object.fromEntries(kinds.map((k) => [k, writable<Job | null>(null)])) as Record<K, ReturnType<typeof writable<Job | null>>>;
  function track(j: Job, announce: boolean) {
    const s = stores[j.kind as K];
    if (!s || staleJob(get(s), j)) return;
    s.set(j);
    if (j.state !== 'running' && announce) onEnd(j);
  }
  async function load() {
    try {
      for (const j of (await api.jobs()) ?? []) track(j, false);
    } catch (e) {
      reportError(e, 'Loading the jobs');
    }
  }
  async function cancel(kind: K) {
    const j = get(stores[kind]);
    if (!j || j.state !== 'running') return;
    try {
      await api.cancelJob(j.id);
    } catch (e) {
      reportError(e, 'Cancel');
    }
  }
  const unsubs = [stream.on<Job>('job', (e) => track(e.data, true)), stream.on('reset', () => void load())];
  return { job: (k) => stores[k], track, load, cancel, destroy: () => unsubs.forEach((u) => u()) };
}
