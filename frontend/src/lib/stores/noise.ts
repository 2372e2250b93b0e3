// The noise model: the content scorer's state, the recent decisions'
// content scores (for the histogram), a threshold preview and the
// projection (each recent rejected exchange's nearest prototypes).
import { get, writable } from 'svelte/store';
import { api } from '../api/client';
import type { DecisionEntry, NoiseProjection, NoiseState, ThresholdPreview } from '../api/models';
import { events as defaultEvents, type EventStream } from './events';
import { reportError } from './toasts';

/** The score key of the content gate in Decision.scores. */
export const CONTENT_SCORE = 'content_score';

export interface Histogram {
  /** Bucket lower edges, 0..1 in steps of 1/bins. */
  edges: number[];
  /** Counts per verdict per bucket. */
  byVerdict: Record<string, number[]>;
  max: number;
}

/** Buckets content scores (0..1, clamped) by final verdict. */
export function histogram(decisions: DecisionEntry[], bins = 20, key = CONTENT_SCORE): Histogram {
  const edges = Array.from({ length: bins }, (_, i) => i / bins);
  const byVerdict: Record<string, number[]> = {};
  let max = 0;
  for (const d of decisions) {
    const s = d.scores?.[key];
    if (s === undefined || Number.isNaN(s)) continue;
    const b = Math.min(bins - 1, Math.max(0, Math.floor(s * bins)));
    const arr = (byVerdict[d.verdict] ??= new Array(bins).fill(0));
    arr[b]++;
  }
  for (let i = 0; i < bins; i++) {
    let sum = 0;
    for (const v of Object.values(byVerdict)) sum += v[i];
    max = Math.max(max, sum);
  }
  return { edges, byVerdict, max };
}

export function createNoise(opts: { stream?: EventStream } = {}) {
  const stream = opts.stream ?? defaultEvents;
  const state = writable<NoiseState | null>(null);
  const decisions = writable<DecisionEntry[]>([]);
  const preview = writable<ThresholdPreview | null>(null);
  const previewPending = writable(false);
  const loaded = writable(false);
  const projection = writable<NoiseProjection | null>(null);
  const projectionLoading = writable(false);
  /** null: not asked yet; false: the daemon has no content scorer (503 unavailable). */
  const projectionAvailable = writable<boolean | null>(null);
  let previewSeq = 0;
  let projectionSeq = 0;

  async function loadProjection() {
    const my = ++projectionSeq;
    projectionLoading.set(true);
    try {
      const p = await api.noiseProjection();
      if (my === projectionSeq) {
        projection.set(p);
        projectionAvailable.set(true);
      }
    } catch (e) {
      if ((e as { status?: number }).status === 503) projectionAvailable.set(false);
      else reportError(e, 'Loading the noise projection');
    } finally {
      if (my === projectionSeq) projectionLoading.set(false);
    }
  }

  async function load() {
    try {
      const [s, ds] = await Promise.all([api.noise(), api.decisions(1000)]);
      state.set(s);
      decisions.set(ds ?? []);
      loaded.set(true);
      if (s.scorer) void loadProjection();
    } catch (e) {
      reportError(e, 'Loading the noise model');
    }
  }

  async function previewThreshold(t: number) {
    const my = ++previewSeq;
    previewPending.set(true);
    try {
      const p = await api.previewThreshold(t);
      if (my === previewSeq) {
        preview.set(p);
      }
    } catch (e) {
      reportError(e, 'Threshold preview');
    } finally {
      if (my === previewSeq) previewPending.set(false);
    }
  }

  let t: ReturnType<typeof setTimeout> | null = null;
  const unsubs = [
    stream.on<DecisionEntry>('decision', (e) => {
      decisions.update((ds) => [e.data, ...ds].slice(0, 1000));
      // The scorer's state moves with each decision; refresh it now and then.
      if (!t && get(loaded)) t = setTimeout(() => { t = null; api.noise().then((s) => state.set(s)).catch(() => {}); }, 2000);
    }),
    stream.on('reset', () => void load()),
  ];

  return {
    state, decisions, preview, previewPending, loaded, load, previewThreshold,
    projection, projectionLoading, projectionAvailable, loadProjection, destroy: () => unsubs.forEach((u) => u()),
  };
}

export const noise = createNoise();
