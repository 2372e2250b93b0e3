import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { get } from 'svelte/store';
import { createEventStream } from './events';
import { createTransfer } from './transfer';
import { toasts } from './toasts';
import { fakeFetch } from '../../test/fakes';
import type { Job } from '../api/models';

const job = (over: Partial<Job>): Job => ({
  id: 'j1', kind: 'import', state: 'running', target: 'upload', done: 0, total: 100, unit: 'bytes', started_at: '2026-11-22T10:00:00Z', ...over,
});

describe('transfer store', () => {
  beforeEach(() => toasts.set([]));
  afterEach(() => vi.unstubAllGlobals());

  it('imports as a job: progress from events, the report when it ends, late answers ignored', async () => {
    const { calls } = fakeFetch({ 'POST /api/import/job': () => ({ status: 202, body: job({}) }), 'GET /api/jobs': [] });
    const stream = createEventStream();
    const es = { emit: (type: string, data: unknown, id: string) => stream.dispatch({ type, data, id }) };
    const t = createTransfer({ stream });
    await t.importFile(new Blob(['{}\n']));
    expect(calls.at(-1)).toMatchObject({ method: 'POST', url: '/api/import/job' });
    expect(get(t.importJob)?.state).toBe('running');
    es.emit('job', job({ done: 60, status: 'checking' }), '1');
    expect(get(t.importJob)?.done).toBe(60);
    es.emit('job', job({ done: 100, state: 'done', result: 'imported 5 of 7 memories (2 already there)', finished_at: '2026-11-22T10:00:01Z' }), '2');
    expect(get(t.report)).toBe('imported 5 of 7 memories (2 already there)');
    expect(get(toasts).at(-1)?.text).toMatch(/imported 5 of 7/);
    es.emit('job', job({ done: 80 }), '3'); // a late event of the same job
    expect(get(t.importJob)?.state).toBe('done');
    t.destroy();
  });

  it('exports to a file, says where, and shows a field error for a bad folder', async () => {
    fakeFetch({
      'POST /api/export/file': ({ body }: { body: unknown }) =>
        (body as { dir?: string }).dir === 'rel'
          ? { status: 400, body: { error: 'invalid export: dir: must be an absolute path', code: 'invalid', fields: { dir: 'must be an absolute path' } } }
          : { body: job({ id: 'e1', kind: 'export', target: '/home/u/Downloads/memtray-export.jsonl', unit: 'memories', total: 3 }) },
    });
    const stream = createEventStream();
    const t = createTransfer({ stream });
    expect(await t.exportToFile('rel')).toEqual({ dir: 'must be an absolute path' });
    expect(await t.exportToFile()).toBeNull();
    t.destroy();
    expect(get(t.exportJob)?.target).toBe('/home/u/Downloads/memtray-export.jsonl');
  });

  it('a failed import keeps its reason until the next import starts', async () => {
    let answer: { status: number; body: unknown } = { status: 400, body: { error: 'invalid import: line 1: not an export (no memtray header)', code: 'invalid' } };
    fakeFetch({ 'POST /api/import/job': () => answer, 'GET /api/jobs': [] });
    const stream = createEventStream();
    const t = createTransfer({ stream });
    await t.importFile(new Blob(['nope\n']));
    expect(get(t.importError)).toBe('invalid import: line 1: not an export (no memtray header)');
    answer = { status: 202, body: job({ id: 'j2' }) };
    await t.importFile(new Blob(['{}\n']));
    expect(get(t.importError)).toBeNull();
    stream.dispatch({ type: 'job', id: '1', data: job({ id: 'j2', state: 'failed', error: 'line 3: embedding has 3 dimensions, want 384', finished_at: '2026-11-22T10:00:01Z' }) });
    expect(get(t.importError)).toBe('line 3: embedding has 3 dimensions, want 384');
    expect(get(t.report)).toBeNull();
    t.destroy();
  });
});
