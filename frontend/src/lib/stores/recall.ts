// Recall: the recall log (GET /api/recall/log: what each recall gave an
// agent, what it withheld and why, what the agent said of it) and its
// statistics (GET /api/recall/stats: recalls per day, the memories given
// most with their hit rate), for the Recall view and the Overview's link.
import { get, writable } from 'svelte/store';
import { api } from '../api/client';
import type { MemoryEvent, RecallEntry, RecallLogStats, RecallMemory } from '../api/models';
import { events as defaultEvents, type EventStream } from './events';
import { reportError } from './toasts';

/** Why a candidate was withheld, in words (search.Withheld* reasons). */
export const REASONS: Record<string, string> = {
  no_evidence: 'the store holds nothing this prompt is about',
  absolute_floor: 'too little in common with the prompt (under the absolute floor)',
  relative_floor: 'scored far below the best match (under the relative floor)',
  already_given: 'already given to this session',
  over_k: 'ranked below the memories given (more than k)',
  max_chars: 'did not fit in the context block (max_chars)',
};

/** reasonText says why a memory was withheld, in words. */
export function reasonText(code?: string): string {
  if (!code) return 'not given';
  return REASONS[code] ?? code.replace(/_/g, ' ');
}

/** The preview the log keeps of a memory deleted since (store.DeletedPreview). */
export const DELETED = '(deleted)';

/** What made the agent ask (search.Event*), in words. */
export function eventText(event: string): string {
  switch (event) {
    case 'user-prompt': return 'prompt';
    case 'session-start': return 'session start';
    case 'search': return 'search';
    default: return event;
  }
}

/** What the agent or the user said of one memory a recall gave. */
export interface Verdict {
  /** 'helped' (rated +1, reinforced, or used by the turn that followed), 'misled' (rated -1) or '' (nothing said). */
  verdict: 'helped' | 'misled' | '';
  /** The feedback in words, e.g. "reinforced, rated +1", "used in the turn" (implicit: the turn wrote what the memory names). */
  words: string;
}

/** verdictFor reads an entry's feedback on memory id; the last rating counts. */
export function verdictFor(e: RecallEntry, id: string): Verdict {
  const fb = (e.feedback ?? []).filter((f) => f.id === id);
  if (fb.length === 0) return { verdict: '', words: '' };
  const last = fb[fb.length - 1];
  const words = fb.map((f) => (f.op === 'reinforced' ? 'reinforced' : f.op === 'used' ? 'used in the turn' : `rated ${f.score > 0 ? '+1' : '−1'}`)).join(', ');
  return { verdict: last.score > 0 ? 'helped' : 'misled', words };
}

/** One session's recalls, newest first. */
export interface SessionGroup {
  session: string;
  project: string;
  /** The agent that asked (claude-code, codex), when a recall said. */
  agent: string;
  /** The newest recall's time. */
  last: string;
  entries: RecallEntry[];
}

/** groupBySession groups a newest-first log by session, the session with the newest recall first. */
export function groupBySession(log: RecallEntry[]): SessionGroup[] {
  const out: SessionGroup[] = [];
  const by = new Map<string, SessionGroup>();
  for (const e of log) {
    let g = by.get(e.session_id);
    if (!g) {
      g = { session: e.session_id, project: e.project ?? '', agent: e.agent ?? '', last: e.at, entries: [] };
      by.set(e.session_id, g);
      out.push(g);
    }
    if (!g.project && e.project) g.project = e.project;
    if (!g.agent && e.agent) g.agent = e.agent;
    g.entries.push(e);
  }
  return out;
}

/**
 * A one-line summary of a recall: "3 given · 5 withheld · 1 rated · 2 used".
 * "rated" counts the memories the agent or the user rated or reinforced;
 * "used" those only the turn that followed used (feedback op 'used').
 */
export function summary(e: RecallEntry): string {
  const parts = [`${e.given?.length ?? 0} given`];
  if (e.withheld?.length) parts.push(`${e.withheld.length} withheld`);
  const fb = e.feedback ?? [];
  const rated = new Set(fb.filter((f) => f.op !== 'used').map((f) => f.id));
  const used = new Set(fb.filter((f) => f.op === 'used' && !rated.has(f.id)).map((f) => f.id));
  if (rated.size) parts.push(`${rated.size} rated`);
  if (used.size) parts.push(`${used.size} used`);
  return parts.join(' · ');
}

/** The reasons of a recall's withheld memories, counted, most first: [["over_k", 3], ...]. */
export function reasonCounts(withheld: RecallMemory[] = []): [string, number][] {
  const c = new Map<string, number>();
  for (const w of withheld) c.set(w.reason ?? '', (c.get(w.reason ?? '') ?? 0) + 1);
  return [...c.entries()].sort((a, b) => b[1] - a[1]);
}

/** How many log entries a page asks for. */
export const PAGE = 100;

export function createRecall(opts: { stream?: EventStream } = {}) {
  const stream = opts.stream ?? defaultEvents;
  const log = writable<RecallEntry[]>([]);
  const stats = writable<RecallLogStats | null>(null);
  const loaded = writable(false);
  /** Whether older entries may be left to load. */
  const more = writable(false);
  /** The session the log shows; '' for all. */
  const session = writable('');
  /** How many days the statistics cover. */
  const days = writable(14);
  let seq = 0;

  async function loadStats() {
    try {
      stats.set(await api.recallStats(get(days)));
    } catch (e) {
      reportError(e, 'Loading the recall statistics');
    }
  }

  async function loadLog() {
    const my = ++seq;
    try {
      const got = (await api.recallLog({ session: get(session) || undefined, limit: PAGE })) ?? [];
      if (my !== seq) return;
      log.set(got);
      more.set(got.length === PAGE);
    } catch (e) {
      reportError(e, 'Loading the recall log');
    }
  }

  async function load() {
    await Promise.all([loadLog(), loadStats()]);
    loaded.set(true);
  }

  /** Loads the page of entries older than those shown. */
  async function loadMore() {
    const cur = get(log);
    if (cur.length === 0) return;
    const my = ++seq;
    try {
      const got = (await api.recallLog({ session: get(session) || undefined, limit: PAGE, before: cur[cur.length - 1].seq })) ?? [];
      if (my !== seq) return;
      log.set([...cur, ...got]);
      more.set(got.length === PAGE);
    } catch (e) {
      reportError(e, 'Loading older recalls');
    }
  }

  /**
   * Fetches the newest page again and merges it in: new recalls on top,
   * the shown ones updated (their feedback), older pages kept.
   */
  async function refresh() {
    const my = ++seq;
    try {
      const [got, st] = await Promise.all([api.recallLog({ session: get(session) || undefined, limit: PAGE }), api.recallStats(get(days))]);
      if (my !== seq) return;
      const page = got ?? [];
      // An empty newest page: the log was cleared (elsewhere), nothing older is left.
      const oldest = page.length ? page[page.length - 1].seq : -Infinity;
      log.set(page.length ? [...page, ...get(log).filter((e) => e.seq < oldest)] : []);
      if (get(log).length === page.length) more.set(page.length === PAGE);
      stats.set(st);
    } catch {
      // A refresh in the background stays quiet; the next one may succeed.
    }
  }

  /**
   * Deletes every logged recall (DELETE /api/recall/log) and shows the
   * empty log; returns how many went, or null when it failed (reported).
   */
  async function clear(): Promise<number | null> {
    const my = ++seq;
    try {
      const { cleared } = await api.clearRecallLog();
      if (my === seq) {
        log.set([]);
        more.set(false);
      }
      await loadStats();
      return cleared;
    } catch (e) {
      reportError(e, 'Clearing the recall log');
      return null;
    }
  }

  function setSession(id: string) {
    session.set(id);
    void loadLog();
  }

  function setDays(n: number) {
    days.set(n);
    void loadStats();
  }

  // A rating or a reinforcement lands on a logged recall: refresh, at most
  // every 2 s.
  let t: ReturnType<typeof setTimeout> | null = null;
  const unsubs = [
    stream.on<MemoryEvent>('memory', (e) => {
      if ((e.data.op !== 'rated' && e.data.op !== 'reinforced') || !get(loaded) || t) return;
      t = setTimeout(() => { t = null; void refresh(); }, 2000);
    }),
    stream.on('reset', () => { if (get(loaded)) void load(); }),
  ];

  return {
    log, stats, loaded, more, session, days, load, loadLog, loadStats, loadMore, refresh, clear, setSession, setDays,
    destroy: () => { unsubs.forEach((u) => u()); if (t) clearTimeout(t); },
  };
}

export type Recall = ReturnType<typeof createRecall>;

export const recall = createRecall();
