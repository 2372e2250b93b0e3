// Connecting agents from the window (memtray setup): which agents are
// installed and connected, the exact change to their config files before
// anything is written, then connect or disconnect. The apply sends the
// preview's file hashes back, so the daemon carries out exactly the change
// shown (or refuses when the files changed since: the store previews
// again). AgentSetup.svelte shows it, in Settings and in the first-run guide.
import { derived, get, writable } from 'svelte/store';
import { api, ApiError } from '../api/client';
import type { SetupClient, SetupFileHash, SetupList, SetupOptions, SetupPreview, SetupResult } from '../api/models';
import { reportError, toast } from './toasts';

/** What a connect includes, where the agent supports it. */
export interface AgentChoices {
  /** Route the agent's API traffic through memtray's proxy. */
  proxy: boolean;
  /** Install the recall hooks. */
  hooks: boolean;
}

const defaultChoices: AgentChoices = { proxy: true, hooks: true };

function hashes(p: SetupPreview): SetupFileHash[] {
  return p.files.map((f) => ({ path: f.path, sha256: f.sha256, after_sha256: f.after_sha256 }));
}

function plural(n: number, one: string, many = `${one}s`) {
  return `${n} ${n === 1 ? one : many}`;
}

export function createAgents() {
  const list = writable<SetupList | null>(null);
  const loading = writable(false);
  const choices = writable<Record<string, AgentChoices>>({});
  /** The preview shown per agent (a connect's or a disconnect's). */
  const previews = writable<Record<string, SetupPreview>>({});
  /** Agents with a request under way. */
  const busy = writable<Record<string, boolean>>({});
  const clients = derived(list, (l) => l?.clients ?? []);
  /** What a terminal's `memtray setup` needs to reach this daemon's data dir
   * and config (" --data-dir DIR", shell-quoted; "" for the defaults). */
  const cliFlags = derived(list, (l) => (l?.cli_flags ?? []).map((f) => ' ' + f).join(''));

  function label(name: string) {
    return get(clients).find((c) => c.name === name)?.label ?? name;
  }

  function choicesOf(name: string): AgentChoices {
    return get(choices)[name] ?? defaultChoices;
  }

  function options(name: string): SetupOptions {
    const c = choicesOf(name);
    const o: SetupOptions = {};
    if (!c.proxy) o.no_proxy = true;
    if (!c.hooks) o.no_hooks = true;
    return o;
  }

  function setPreview(name: string, p: SetupPreview | null) {
    previews.update((all) => {
      const next = { ...all };
      if (p) next[name] = p;
      else delete next[name];
      return next;
    });
  }

  function setStatus(status: SetupClient) {
    list.update((l) => (l ? { ...l, clients: l.clients.map((c) => (c.name === status.name ? status : c)) } : l));
  }

  async function withBusy<T>(name: string, fn: () => Promise<T>): Promise<T> {
    busy.update((b) => ({ ...b, [name]: true }));
    try {
      return await fn();
    } finally {
      busy.update((b) => {
        const next = { ...b };
        delete next[name];
        return next;
      });
    }
  }

  async function load() {
    loading.set(true);
    try {
      list.set(await api.setupList());
    } catch (e) {
      reportError(e, 'Loading the agents');
    } finally {
      loading.set(false);
    }
  }

  /** Loads the list once, for the commands an empty view shows: quietly (a
   * failure leaves them without flags, as for the default data dir). */
  let asking = false;
  function loadOnce() {
    if (get(list) || get(loading) || asking) return;
    asking = true;
    api.setupList().then((l) => { if (!get(list)) list.set(l); }, () => {}).finally(() => { asking = false; });
  }

  /** Changes what a connect includes; the shown preview no longer applies. */
  function setChoice(name: string, key: keyof AgentChoices, value: boolean) {
    choices.update((all) => ({ ...all, [name]: { ...choicesOf(name), [key]: value } }));
    if (get(previews)[name] && !get(previews)[name].undo) setPreview(name, null);
  }

  /** Shows the exact change a connect would make; writes nothing. */
  async function preview(name: string): Promise<SetupPreview | null> {
    return withBusy(name, async () => {
      try {
        const p = await api.setupPreview(name, options(name));
        setPreview(name, p);
        return p;
      } catch (e) {
        reportError(e, `Preview for ${label(name)}`);
        return null;
      }
    });
  }

  /** Shows the exact change a disconnect would make; writes nothing. */
  async function previewDisconnect(name: string): Promise<SetupPreview | null> {
    return withBusy(name, async () => {
      try {
        const p = await api.setupUndoPreview(name);
        setPreview(name, p);
        return p;
      } catch (e) {
        reportError(e, `Preview for ${label(name)}`);
        return null;
      }
    });
  }

  function cancel(name: string) {
    setPreview(name, null);
  }

  /** The daemon refused the apply: the files changed since the preview. */
  function isStale(e: unknown) {
    return e instanceof ApiError && e.code === 'stale_preview';
  }

  // A stale preview is shown again, fresh, for the user to check.
  async function refresh(name: string, undo: boolean) {
    toast('info', `${label(name)}'s config changed since the preview: check the new one.`);
    if (undo) await previewDisconnect(name);
    else await preview(name);
  }

  /** Carries out the shown connect preview, exactly. */
  async function connect(name: string): Promise<SetupResult | null> {
    const p = get(previews)[name];
    if (!p || p.undo) return null;
    let stale = false;
    const result = await withBusy(name, async () => {
      try {
        return await api.setupApply(name, { ...p.options, files: hashes(p) });
      } catch (e) {
        if (isStale(e)) stale = true;
        else reportError(e, `Connecting ${label(name)}`);
        return null;
      }
    });
    if (stale) await refresh(name, false);
    if (!result) return null;
    setStatus(result.status);
    setPreview(name, null);
    const n = result.changed.length;
    toast('success', n === 0 ? `${label(name)} was already connected.`
      : `${label(name)} connected (${plural(n, 'file')} changed, backups kept). Restart it to pick the change up.`, { timeout: 8000 });
    return result;
  }

  /** Carries out the shown disconnect preview, exactly. */
  async function disconnect(name: string): Promise<SetupResult | null> {
    const p = get(previews)[name];
    if (!p || !p.undo) return null;
    let stale = false;
    const result = await withBusy(name, async () => {
      try {
        return await api.setupUndo(name, { files: hashes(p) });
      } catch (e) {
        if (isStale(e)) stale = true;
        else reportError(e, `Disconnecting ${label(name)}`);
        return null;
      }
    });
    if (stale) await refresh(name, true);
    if (!result) return null;
    setStatus(result.status);
    setPreview(name, null);
    const n = result.changed.length;
    let text = n === 0 ? `${label(name)} disconnected: memtray's entries were already gone.`
      : `${label(name)} disconnected (${plural(n, 'file')} changed). Restart it to pick the change up.`;
    if (result.backups.length > 0) text += ` Kept: ${result.backups.join(', ')}.`;
    toast('success', text, { timeout: 8000 });
    return result;
  }

  return { list, clients, cliFlags, loadOnce, loading, choices, previews, busy, choicesOf, load, setChoice, preview, previewDisconnect, cancel, connect, disconnect };
}

export type Agents = ReturnType<typeof createAgents>;

export const agents = createAgents();
