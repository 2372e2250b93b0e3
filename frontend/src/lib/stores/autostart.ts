// Starting memtray at login (GET/PUT /api/autostart): an XDG autostart
// entry on Linux, a LaunchAgent on macOS.
import { writable } from 'svelte/store';
import { api } from '../api/client';
import type { AutostartState } from '../api/models';
import { reportError, toast } from './toasts';

export function createAutostart() {
  const state = writable<AutostartState | null>(null);
  const busy = writable(false);

  async function load() {
    try {
      state.set(await api.autostart());
    } catch (e) {
      reportError(e, 'Reading autostart');
    }
  }

  async function set(enabled: boolean) {
    busy.set(true);
    try {
      const st = await api.setAutostart(enabled);
      state.set(st);
      toast('success', st.enabled ? 'memtray starts in the tray at login' : 'memtray no longer starts at login');
    } catch (e) {
      reportError(e, enabled ? 'Turning autostart on' : 'Turning autostart off');
      await load();
    } finally {
      busy.set(false);
    }
  }

  return { state, busy, load, set };
}

export const autostart = createAutostart();
