// The first-run guide (GET /api/welcome, POST /api/welcome/done): shown
// once per data dir, on the first start, until finished or skipped.
import { writable } from 'svelte/store';
import { api } from '../api/client';
import type { WelcomeState } from '../api/models';
import { reportError } from './toasts';

export function createWelcome() {
  const state = writable<WelcomeState | null>(null);

  /** Loads the guide's state; null when it could not be loaded (the error is reported). */
  async function load(): Promise<WelcomeState | null> {
    try {
      const st = await api.welcome();
      state.set(st);
      return st;
    } catch (e) {
      reportError(e, 'Loading the first-run guide');
      return null;
    }
  }

  /** Records that the guide is done (finished or skipped). */
  async function finish(): Promise<boolean> {
    try {
      state.set(await api.finishWelcome());
      return true;
    } catch (e) {
      reportError(e, 'Finishing the first-run guide');
      return false;
    }
  }

  return { state, load, finish };
}

export const welcome = createWelcome();
