// The one event stream: an EventSource on /api/events that fans each event
// out to the stores that subscribed to its type. The browser resumes a
// dropped stream itself (sending Last-Event-ID); when the stream fails for
// good (daemon restarted, HTTP error) we open a new one after a backoff,
// passing the last id we saw, and the daemon either replays what we missed
// or sends "reset", on which every store reloads.
//
// Every failure also asks why (connection): the daemon is down (its
// /api/health does not answer), or it answers but refuses our session
// cookie (expired), so the app can say which and what to do. While the
// daemon is down we look again every few seconds and reconnect as soon as
// it answers; a daemon restarted on the same token accepts our cookie.
import { writable, type Readable } from 'svelte/store';
import { api, ApiError, eventsURL } from '../api/client';

/** The event types the daemon publishes (package events / httpapi). */
export const EVENT_TYPES = ['decision', 'memory', 'capture', 'steward', 'stats', 'job', 'ping', 'reset'] as const;

export type StreamStatus = 'idle' | 'connecting' | 'open' | 'retrying';

/**
 * Why the stream is (not) open: ok (or not known to be otherwise), down
 * (the daemon does not answer), expired (it answers but refuses our
 * session: log in again).
 */
export type Connection = 'ok' | 'down' | 'expired';

/**
 * Asks the daemon why the stream failed: /api/health answers without
 * credentials, /api/capture (cheap) needs the session.
 */
export async function probeDaemon(): Promise<Connection> {
  try {
    await api.health();
  } catch {
    return 'down';
  }
  try {
    await api.capture();
  } catch (e) {
    if (e instanceof ApiError && e.unauthorized) return 'expired';
    if (e instanceof ApiError && e.offline) return 'down';
  }
  return 'ok';
}

export interface StreamEvent<T = unknown> {
  id: string;
  type: string;
  data: T;
}

type Handler = (e: StreamEvent) => void;

export interface EventStreamOptions {
  url?: string;
  /** For tests: an EventSource constructor. */
  EventSourceImpl?: typeof EventSource;
  /** Backoff of manual reconnects: first delay and cap (ms). */
  minDelay?: number;
  maxDelay?: number;
  /** How often to look again while the daemon is down (ms); default 2000. */
  downDelay?: number;
  /** Tells why the stream failed; default probeDaemon. */
  probe?: () => Promise<Connection>;
}

export interface EventStream {
  status: Readable<StreamStatus>;
  /** Whether the daemon answers and accepts our session. */
  connection: Readable<Connection>;
  /** Asks the daemon now (e.g. after a failed API call); resolves to the answer. */
  check(): Promise<Connection>;
  /** Events received since start (a diagnostics counter). */
  received: Readable<number>;
  /** Subscribes to a type ('*' for all); returns the unsubscribe. */
  on<T = unknown>(type: string, fn: (e: StreamEvent<T>) => void): () => void;
  start(): void;
  stop(): void;
  /** The id of the last event received ('' before any). */
  lastId(): string;
  /** Delivers an event as if it came from the stream (tests, local echoes). */
  dispatch(e: StreamEvent): void;
}

export function createEventStream(opts: EventStreamOptions = {}): EventStream {
  const url = opts.url ?? eventsURL;
  const minDelay = opts.minDelay ?? 1000;
  const maxDelay = opts.maxDelay ?? 30000;
  const downDelay = opts.downDelay ?? 2000;
  const probe = opts.probe ?? probeDaemon;
  const status = writable<StreamStatus>('idle');
  const connection = writable<Connection>('ok');
  let checking: Promise<Connection> | null = null;
  let lost = false; // the daemon was found down or refusing us since the stream last opened
  const received = writable(0);
  const handlers = new Map<string, Set<Handler>>();
  let es: EventSource | null = null;
  let last = '';
  let delay = minDelay;
  let timer: ReturnType<typeof setTimeout> | null = null;
  let running = false;

  function dispatch(e: StreamEvent) {
    received.update((n) => n + 1);
    for (const key of [e.type, '*']) {
      for (const fn of handlers.get(key) ?? []) {
        try {
          fn(e);
        } catch (err) {
          console.error('memtray: event handler failed', e.type, err);
        }
      }
    }
  }

  function onMessage(type: string, m: MessageEvent) {
    if (m.lastEventId) last = m.lastEventId;
    let data: unknown = m.data;
    try {
      data = JSON.parse(m.data as string);
    } catch {
      /* a plain-text payload stays a string */
    }
    // The daemon may wrap the payload as package events' Event {id, type, at, data}.
    if (data && typeof data === 'object' && 'type' in data && 'data' in data) {
      const w = data as { id?: number | string; type: string; data: unknown };
      if (w.id !== undefined && !m.lastEventId) last = String(w.id);
      dispatch({ id: String(w.id ?? m.lastEventId), type: w.type || type, data: w.data });
      return;
    }
    dispatch({ id: m.lastEventId, type, data });
  }

  function open() {
    if (!running) return;
    const Impl = opts.EventSourceImpl ?? globalThis.EventSource;
    if (!Impl) return;
    status.set('connecting');
    const u = last ? `${url}${url.includes('?') ? '&' : '?'}last_event_id=${encodeURIComponent(last)}` : url;
    const src = new Impl(u, { withCredentials: true });
    es = src;
    src.onopen = () => {
      delay = minDelay;
      status.set('open');
      connection.set('ok');
      // Back after the daemon was down or refused us: what the stores
      // asked for meanwhile failed, so every store reloads (as on the
      // daemon's own "reset", which a stream with no last id never gets).
      if (lost) {
        lost = false;
        dispatch({ id: '', type: 'reset', data: null });
      }
    };
    src.onmessage = (m) => onMessage('message', m);
    for (const t of EVENT_TYPES) src.addEventListener(t, (m) => onMessage(t, m as MessageEvent));
    src.onerror = () => {
      if (es !== src) return;
      status.set('retrying');
      if (src.readyState === 2 /* CLOSED */) {
        // The browser gave up (an HTTP error such as 401): retry ourselves,
        // with backoff, asking first why it failed.
        src.close();
        es = null;
        schedule(delay);
        delay = Math.min(delay * 2, maxDelay);
      } else {
        // The browser reconnects with Last-Event-ID; meanwhile say why.
        void check();
      }
    };
  }

  function schedule(ms: number) {
    if (timer) clearTimeout(timer);
    timer = setTimeout(() => void retry(), ms);
  }

  async function retry() {
    timer = null;
    if (!running || es) return;
    const c = await check();
    if (!running || es || timer) return;
    if (c === 'ok') open();
    else schedule(c === 'down' ? Math.min(delay, downDelay) : maxDelay);
  }

  function check(): Promise<Connection> {
    checking ??= probe()
      .catch((): Connection => 'down')
      .then((c) => {
        checking = null;
        if (c !== 'ok') lost = true;
        // An open stream is proof enough (a probe may race a reconnect).
        if (!(es && es.readyState === 1)) connection.set(c);
        return c;
      });
    return checking;
  }

  return {
    status,
    connection,
    check,
    received,
    on(type, fn) {
      let set = handlers.get(type);
      if (!set) handlers.set(type, (set = new Set()));
      set.add(fn as Handler);
      return () => set!.delete(fn as Handler);
    },
    start() {
      if (running) return;
      running = true;
      open();
    },
    stop() {
      running = false;
      if (timer) clearTimeout(timer);
      timer = null;
      es?.close();
      es = null;
      status.set('idle');
    },
    lastId: () => last,
    dispatch,
  };
}

/** The app's stream; App.svelte starts it. */
export const events = createEventStream();
