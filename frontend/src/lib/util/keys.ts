// Keyboard: App.svelte turns global keys into actions; the visible view
// registers what j/k/r/s/x and / mean for it.
export interface ViewKeys {
  down?: () => void; // j
  up?: () => void; // k
  search?: () => void; // /
  reinforce?: () => void; // r
  snooze?: () => void; // s
  remove?: () => void; // x
  open?: () => void; // Enter
  close?: () => void; // Escape
}

let current: ViewKeys = {};

export function setViewKeys(k: ViewKeys): () => void {
  current = k;
  return () => {
    if (current === k) current = {};
  };
}

/** Whether the event comes from a field where typing must not trigger keys. */
function typing(e: KeyboardEvent): boolean {
  const t = e.target as HTMLElement | null;
  if (!t) return false;
  const tag = t.tagName;
  return tag === 'INPUT' || tag === 'TEXTAREA' || tag === 'SELECT' || t.isContentEditable;
}

/** Whether the last key was a `g` waiting for the view letter. */
let pendingGo = false;

/**
 * Handles a keydown; returns true when it was ours. help toggles the help;
 * go, when given, is called with the letter after a `g` (`g o`, `g m`...)
 * and says whether it named a view. Any other key cancels a pending `g`.
 */
export function handleKey(e: KeyboardEvent, help: () => void, go?: (letter: string) => boolean): boolean {
  const wasGo = pendingGo;
  pendingGo = false;
  if (e.ctrlKey || e.metaKey || e.altKey) return false;
  if (e.key === 'Escape') {
    if (typing(e)) (e.target as HTMLElement).blur();
    current.close?.();
    return true;
  }
  if (typing(e)) return false;
  if (go) {
    if (wasGo && go(e.key)) {
      e.preventDefault();
      return true;
    }
    if (e.key === 'g' && !wasGo) {
      pendingGo = true;
      e.preventDefault();
      return true;
    }
  }
  const map: Record<string, (() => void) | undefined> = {
    j: current.down, k: current.up, ArrowDown: current.down, ArrowUp: current.up,
    '/': current.search, r: current.reinforce, s: current.snooze, x: current.remove, Enter: current.open,
    '?': help,
  };
  const f = map[e.key];
  if (!f) return false;
  e.preventDefault();
  f();
  return true;
}

export function fmtTime(s?: string): string {
  if (!s || s.startsWith('0001-')) return '—';
  const d = new Date(s);
  const now = Date.now();
  const diff = (now - d.getTime()) / 1000;
  if (diff < 60) return `${Math.max(0, Math.round(diff))}s ago`;
  if (diff < 3600) return `${Math.round(diff / 60)}m ago`;
  if (diff < 86400) return `${Math.round(diff / 3600)}h ago`;
  return d.toLocaleDateString();
}

export function fmtClock(s?: string): string {
  if (!s) return '';
  return new Date(s).toLocaleTimeString([], { hour: '2-digit', minute: '2-digit', second: '2-digit' });
}

export function fmtNum(n: number | undefined | null, digits = 2): string {
  if (n === undefined || n === null || Number.isNaN(n)) return '—';
  return Number.isInteger(n) ? String(n) : n.toFixed(digits);
}

export function fmtBytes(n: number): string {
  const u = ['B', 'KiB', 'MiB', 'GiB'];
  let i = 0;
  while (n >= 1024 && i < u.length - 1) { n /= 1024; i++; }
  return `${n.toFixed(i ? 1 : 0)} ${u[i]}`;
}
