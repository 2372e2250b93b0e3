// The one error funnel: every failure of an API call ends here, as a toast
// (or, for a form, as field errors the form shows), and every undoable
// action offers its undo here.
import { writable, get } from 'svelte/store';
import { ApiError } from '../api/client';
import { events } from './events';

export type ToastKind = 'info' | 'success' | 'error';

export interface ToastAction {
  label: string;
  run: () => void | Promise<void>;
}

export interface Toast {
  id: number;
  kind: ToastKind;
  text: string;
  action?: ToastAction;
  /** Milliseconds before it closes by itself; 0 keeps it. */
  timeout: number;
}

/** Whether the API accepts our credentials: false shows the login help. */
export const authorized = writable<boolean | null>(null);

export const toasts = writable<Toast[]>([]);
const MAX_TOASTS = 5;
let nextId = 1;
const timers = new Map<number, ReturnType<typeof setTimeout>>();
const onClose = new Map<number, () => void>();

export function toast(kind: ToastKind, text: string, opts: { action?: ToastAction; timeout?: number; onExpire?: () => void } = {}): number {
  const id = nextId++;
  const timeout = opts.timeout ?? (kind === 'error' ? 8000 : 4000);
  toasts.update((ts) => {
    const next = [...ts, { id, kind, text, action: opts.action, timeout }];
    // The oldest go first; an undo that is pushed out still expires normally.
    while (next.length > MAX_TOASTS) {
      const old = next.shift()!;
      expire(old.id);
    }
    return next;
  });
  if (opts.onExpire) onClose.set(id, opts.onExpire);
  if (timeout > 0) timers.set(id, setTimeout(() => dismiss(id, true), timeout));
  return id;
}

function expire(id: number) {
  clearTimeout(timers.get(id));
  timers.delete(id);
  const f = onClose.get(id);
  onClose.delete(id);
  f?.();
}

/** Closes a toast; expired says it ran out (its onExpire runs). */
export function dismiss(id: number, expired = true) {
  if (expired) expire(id);
  else {
    clearTimeout(timers.get(id));
    timers.delete(id);
    onClose.delete(id);
  }
  toasts.update((ts) => ts.filter((t) => t.id !== id));
}

/** Runs a toast's action, then closes it without running its onExpire. */
export async function runAction(id: number) {
  const t = get(toasts).find((x) => x.id === id);
  dismiss(id, false);
  if (t?.action) {
    try {
      await t.action.run();
    } catch (e) {
      reportError(e, t.action.label);
    }
  }
}

/** A message a person can act on, for any error. */
export function describe(err: unknown): string {
  if (err instanceof ApiError) {
    if (err.offline) return 'The memtray daemon does not answer. Is it running? Start the memtray app or `memtray serve`.';
    if (err.unauthorized) return 'Not logged in: open the login link `memtray serve` prints at start (or paste the token `memtray token` prints).';
    return err.message;
  }
  if (err instanceof Error) return err.message;
  return String(err);
}

/** Reports a failed action as an error toast; what names the action. */
export function reportError(err: unknown, what?: string) {
  if (err instanceof DOMException && err.name === 'AbortError') return;
  if (err instanceof ApiError && err.unauthorized) {
    // One state, not a toast per call: the app shows how to log in.
    authorized.set(false);
    return;
  }
  if (err instanceof ApiError && err.offline) {
    // One state, not a toast per call: the connection banner says it.
    if (get(events.connection) === 'down') return;
    void events.check();
  }
  toast('error', what ? `${what}: ${describe(err)}` : describe(err));
}

/**
 * Field errors for a form: the API's per-field errors when it gives them,
 * else the whole message under "" (shown at the top of the form). Returns
 * null for failures that are no fault of the input (they go to a toast).
 */
export function fieldErrors(err: unknown): Record<string, string> | null {
  if (!(err instanceof ApiError) || (err.status !== 400 && err.status !== 422)) {
    reportError(err);
    return null;
  }
  if (Object.keys(err.fields).length > 0) return { ...err.fields };
  return { '': err.message.replace(/^invalid(?: input)?:\s*/, '') };
}

/**
 * Offers an undo: the action already happened (or is deferred: see
 * deferred); undo reverses it. Returns the toast id.
 */
export function undoable(text: string, undo: () => void | Promise<void>, timeout = 6000): number {
  return toast('success', text, { action: { label: 'Undo', run: undo }, timeout });
}

// Deferred actions: destructive operations wait out their undo toast and
// run when it expires, or at once when the page goes away.
const pending = new Map<number, () => void>();

/**
 * Runs commit when the undo window closes unless the user undoes; cancel
 * puts the UI back. Returns the toast id.
 */
export function deferred(text: string, commit: (leaving: boolean) => Promise<void>, cancel: () => void, timeout = 6000): number {
  let done = false;
  const run = (leaving: boolean) => {
    if (done) return;
    done = true;
    pending.delete(id);
    commit(leaving).catch((e) => {
      cancel();
      reportError(e);
    });
  };
  const id = toast('success', text, {
    timeout,
    action: { label: 'Undo', run: () => { done = true; pending.delete(id); cancel(); } },
    onExpire: () => run(false),
  });
  pending.set(id, () => run(true));
  return id;
}

/** Runs every deferred action now (page hide, tests). */
export function flushDeferred() {
  for (const f of [...pending.values()]) f();
}

if (typeof window !== 'undefined') {
  window.addEventListener('pagehide', flushDeferred);
}

// An open event stream proves the session: a login in another tab (or a
// daemon back on the same token) takes the login form away again.
events.status.subscribe((s) => {
  if (s === 'open') authorized.set(true);
});
