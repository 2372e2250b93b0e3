// Settings: the capture switch and exclusions (/api/capture) and the
// runtime-changeable config fields (/api/config).
import { writable } from 'svelte/store';
import { api } from '../api/client';
import type { Build, CaptureState, CaptureUpdate, ConfigUpdate, ConfigView } from '../api/models';
import { events as defaultEvents, type EventStream } from './events';
import { fieldErrors, reportError, toast } from './toasts';

export function createSettings(opts: { stream?: EventStream } = {}) {
  const stream = opts.stream ?? defaultEvents;
  const capture = writable<CaptureState | null>(null);
  const config = writable<ConfigView | null>(null);
  const lastUpdate = writable<ConfigUpdate | null>(null);
  /** The daemon's binary (version, commit, build date) for the About section. */
  const about = writable<Build | null>(null);

  async function load() {
    try {
      capture.set(await api.capture());
    } catch (e) {
      reportError(e, 'Loading capture');
    }
    try {
      config.set(await api.config());
    } catch (e) {
      reportError(e, 'Loading the config');
    }
    try {
      about.set((await api.health()).build ?? null);
    } catch (e) {
      reportError(e, 'Loading the version');
    }
  }

  async function setCapture(u: CaptureUpdate): Promise<Record<string, string> | null> {
    try {
      const c = await api.setCapture(u);
      capture.set(c);
      if (u.enabled !== undefined) toast('success', c.enabled ? 'Capture on' : 'Capture paused: the proxy forwards but keeps nothing');
      if (u.pause_for !== undefined && c.paused_until)
        toast('success', `Capture paused until ${new Date(c.paused_until).toLocaleTimeString([], { hour: '2-digit', minute: '2-digit' })}; it resumes by itself`);
      return null;
    } catch (e) {
      return fieldErrors(e) ?? {};
    }
  }

  /** Saves config fields (a nested partial config); field errors for the form, or null. */
  async function saveConfig(patch: Record<string, unknown>): Promise<Record<string, string> | null> {
    try {
      const up = await api.setConfig(patch);
      config.set(up);
      lastUpdate.set(up);
      const parts = [];
      if (up.applied?.length) parts.push(`in effect now: ${up.applied.join(', ')}`);
      if (up.needs_restart?.length) parts.push(`after a restart: ${up.needs_restart.join(', ')}`);
      toast('success', up.changed?.length ? `Saved (${parts.join('; ')})` : 'Nothing changed');
      return null;
    } catch (e) {
      return fieldErrors(e) ?? {};
    }
  }

  const unsubs = [stream.on<CaptureState>('capture', (e) => capture.set(e.data)), stream.on('reset', () => void load())];
  return { about, capture, config, lastUpdate, load, setCapture, saveConfig, destroy: () => unsubs.forEach((u) => u()) };
}

export const settings = createSettings();

/** The window's colours: the system's, or always light or dark. */
export type Theme = 'system' | 'light' | 'dark';

/** Where the chosen theme is kept (this browser only). */
export const THEME_KEY = 'memtray.theme';

/**
 * The theme toggle: persisted in localStorage and applied as
 * <html data-theme="light|dark"> (none for system), which app.css's
 * variables follow.
 */
export function createTheme(opts: { storage?: Storage | null; root?: HTMLElement | null } = {}) {
  const storage = opts.storage !== undefined ? opts.storage : typeof localStorage !== 'undefined' ? localStorage : null;
  const root = opts.root !== undefined ? opts.root : typeof document !== 'undefined' ? document.documentElement : null;
  let saved: string | null = null;
  try {
    saved = storage?.getItem(THEME_KEY) ?? null;
  } catch {
    /* storage blocked: the system theme */
  }
  const initial: Theme = saved === 'light' || saved === 'dark' ? saved : 'system';
  const { subscribe, set } = writable<Theme>(initial);
  function apply(t: Theme) {
    if (!root) return;
    if (t === 'system') delete root.dataset.theme;
    else root.dataset.theme = t;
  }
  apply(initial);
  return {
    subscribe,
    set(t: Theme) {
      if (t !== 'light' && t !== 'dark') t = 'system';
      set(t);
      apply(t);
      try {
        if (t === 'system') storage?.removeItem(THEME_KEY);
        else storage?.setItem(THEME_KEY, t);
      } catch {
        /* not persisted: it holds for this page */
      }
    },
  };
}

/** The app's theme (applied as soon as this module loads). */
export const theme = createTheme();
