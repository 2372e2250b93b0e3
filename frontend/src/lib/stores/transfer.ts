// Export and import of the whole store. In a browser an export is a plain
// download (exportURL); writing it to a file and importing run as daemon
// jobs whose progress arrives on the event stream: a webview cannot save a
// download, and a large store takes a while.
import { writable } from 'svelte/store';
import { api, ApiError } from '../api/client';
import type { Job } from '../api/models';
import { events as defaultEvents, type EventStream } from './events';
import { followJobs } from './jobs';
import { fieldErrors, reportError, toast } from './toasts';

export function createTransfer(opts: { stream?: EventStream } = {}) {
  const jobs = followJobs(opts.stream ?? defaultEvents, ['export', 'import'] as const, ended);
  /** What the last import that ended here did ("imported 5 of 7 memories (2 already there)"). */
  const report = writable<string | null>(null);
  /** Where the last export that ended here was written. */
  const exported = writable<string | null>(null);
  /** Why the last import failed (it stays on screen until the next one starts). */
  const importError = writable<string | null>(null);

  function ended(j: Job) {
    const what = j.kind === 'export' ? 'Export' : 'Import';
    if (j.state === 'done') {
      if (j.kind === 'import') report.set(j.result ?? '');
      else exported.set(j.target);
      toast('success', j.result || `${what}: done`);
    } else if (j.state === 'canceled') toast('info', `${what} cancelled: nothing changed`);
    else {
      if (j.kind === 'import') importError.set(j.error || 'unknown error');
      toast('error', `${what} failed: ${j.error ?? 'unknown error'}`);
    }
  }

  /** Writes every memory to a new file in dir (default: the download folder); field errors, or null. */
  async function exportToFile(dir = ''): Promise<Record<string, string> | null> {
    exported.set(null);
    try {
      jobs.track(await api.exportFile(dir.trim() ? { dir: dir.trim() } : {}), true);
      return null;
    } catch (e) {
      return fieldErrors(e) ?? {};
    }
  }

  /** Uploads an export and imports it as a job. */
  async function importFile(f: Blob) {
    report.set(null);
    importError.set(null);
    try {
      jobs.track(await api.importJob(f), true);
    } catch (e) {
      if (e instanceof ApiError && !e.offline && !e.unauthorized) importError.set(e.message);
      reportError(e, 'Import');
    }
  }

  return {
    exportJob: jobs.job('export'),
    importJob: jobs.job('import'),
    report,
    exported,
    importError,
    load: jobs.load,
    cancel: jobs.cancel,
    exportToFile,
    importFile,
    destroy: jobs.destroy,
  };
}

export const transfer = createTransfer();
