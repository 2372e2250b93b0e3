// Shared by the e2e runs (run.mjs, perf.mjs): a free loopback port and a
// `memtray serve` daemon in a fresh, isolated home.
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';

export async function freePort() {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
    s.on('error', reject);
  });
}

/**
 * Starts `bin serve` in a fresh, isolated home; returns its address, token,
 * an authenticated JSON `api(method, path, body)` and `restart({ signal })`
 * (stop, then start on the same home and port). Teardown (stop, then
 * write the log to artifacts/daemon-<name>.log, remove the home) is pushed
 * onto `cleanups`. With `config`, the home's config file
 * ($XDG_CONFIG_HOME/memtray/config.json) holds it; `env` adds variables to
 * the daemon's environment (a team database's connection string).
 */
export async function startDaemon({ bin, name, upstream, artifacts, cleanups, config, env: extraEnv }) {
  const root = mkdtempSync(path.join(os.tmpdir(), `memtray-e2e-${name}-`));
  cleanups.push(() => rmSync(root, { recursive: true, force: true }));
  const data = path.join(root, 'data');
  const port = await freePort();
  const env = {
    ...process.env,
    HOME: root,
    XDG_CONFIG_HOME: path.join(root, 'config'),
    XDG_DATA_HOME: path.join(root, 'share'),
    XDG_CACHE_HOME: path.join(root, 'cache'),
    XDG_STATE_HOME: path.join(root, 'state'),
    OLLAMA_HOST: 'http://127.0.0.1:1',
    ...extraEnv,
  };
  if (config) {
    mkdirSync(path.join(env.XDG_CONFIG_HOME, 'memtray'), { recursive: true });
    writeFileSync(path.join(env.XDG_CONFIG_HOME, 'memtray', 'config.json'), JSON.stringify(config, null, 2), { mode: 0o600 });
  }
  const args = ['serve', '--data-dir', data, '--listen', `127.0.0.1:${port}`];
  if (upstream) args.push('--anthropic-upstream', upstream);
  const log = [];
  let child;
  const launch = () => {
    child = spawn(bin, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout.on('data', (d) => log.push(String(d)));
    child.stderr.on('data', (d) => log.push(String(d)));
  };
  const stop = async (signal) => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((r) => child.once('exit', r));
    child.kill(signal);
    const t = await Promise.race([exited.then(() => 'exited'), new Promise((r) => setTimeout(() => r('late'), 5000))]);
    if (t === 'late') {
      child.kill('SIGKILL'); // the store's lock goes with the process
      await exited;
    }
  };
  launch();
  cleanups.push(async () => {
    await stop('SIGTERM');
    writeFileSync(path.join(artifacts, `daemon-${name}.log`), log.join(''));
  });
  const base = `http://127.0.0.1:${port}`;
  const healthy = async () => {
    for (let i = 0; ; i++) {
      if (child.exitCode !== null) throw new Error(`memtray serve (${name}) exited ${child.exitCode}:\n${log.join('')}`);
      try {
        const r = await fetch(`${base}/api/health`);
        if (r.ok) return;
      } catch {
        /* not yet */
      }
      if (i > 150) throw new Error(`memtray serve (${name}) did not answer in 15 s:\n${log.join('')}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  };
  await healthy();
  let token = '';
  for (const p of [path.join(data, 'token'), path.join(root, 'token')]) if (existsSync(p)) token = readFileSync(p, 'utf8').trim();
  if (!token) throw new Error(`no token file in ${data}`);
  const api = async (method, p, body) => {
    const r = await fetch(base + p, {
      method,
      headers: { Authorization: `Bearer ${token}`, ...(body ? { 'Content-Type': 'application/json' } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    });
    const text = await r.text();
    if (!r.ok) throw new Error(`${method} ${p}: ${r.status} ${text}`);
    return text ? JSON.parse(text) : null;
  };
  /**
   * Stops the daemon (SIGTERM, or signal: 'SIGKILL' for a crash) and
   * starts it again on the same home, data dir and port; whileDown, if
   * given, runs in between (e.g. to look at a page while nothing answers).
   */
  const restart = async ({ signal = 'SIGTERM', whileDown } = {}) => {
    await stop(signal);
    if (whileDown) await whileDown();
    launch();
    await healthy();
  };
  return { base, token, api, root, restart };
}
