// A real PostgreSQL server for the e2e specs that need a team database, as
// the Go tests' backend/team/pgtest starts one: initdb in a temporary
// directory, listening only on a unix socket there (no TCP), trust
// authentication on that socket, and, when the run is root, as an
// unprivileged user ($MEMTRAY_PG_USER, else nobody), since initdb and
// postgres refuse root. The binaries are found in $MEMTRAY_PG_BIN,
// /usr/lib/postgresql/*/bin (Debian's postgresql package, which
// build/deps.sh test installs) or $PATH.
import { execFileSync, spawn } from 'node:child_process';
import { chmodSync, chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';

/** The directory holding initdb and postgres, or ''. */
function findBin() {
  const has = (d) => existsSync(path.join(d, 'initdb')) && existsSync(path.join(d, 'postgres'));
  if (process.env.MEMTRAY_PG_BIN && has(process.env.MEMTRAY_PG_BIN)) return process.env.MEMTRAY_PG_BIN;
  const root = '/usr/lib/postgresql';
  if (existsSync(root)) {
    const vs = readdirSync(root).filter((v) => /^\d+$/.test(v)).sort((a, b) => Number(b) - Number(a));
    for (const v of vs) if (has(path.join(root, v, 'bin'))) return path.join(root, v, 'bin');
  }
  for (const d of (process.env.PATH ?? '').split(':')) if (d && has(d)) return d;
  return '';
}

/** The uid and gid of the unprivileged user the server runs as under root. */
function unprivileged() {
  const name = process.env.MEMTRAY_PG_USER || 'nobody';
  const id = (flag) => Number(execFileSync('id', [flag, name], { encoding: 'utf8' }).trim());
  return { uid: id('-u'), gid: id('-g') };
}

/**
 * Starts a server; returns `{ dir, port, url(role, db), sql(text, { role, db }) }`:
 * url is a libpq connection string for memtray (the socket's directory is
 * the host: no TLS needed), sql runs statements through psql (as the
 * superuser postgres by default) and returns their output. Teardown (a
 * fast shutdown, the log saved as artifacts/postgres.log, the directory
 * removed) is pushed onto cleanups.
 */
export async function startPostgres({ artifacts, cleanups }) {
  const bin = findBin();
  if (!bin) throw new Error('PostgreSQL binaries (initdb, postgres) not found in $MEMTRAY_PG_BIN, /usr/lib/postgresql/*/bin or $PATH: install Debian\'s postgresql package (build/deps.sh test)');
  // A unix socket's path is limited to about 107 bytes: keep it short.
  const dir = mkdtempSync('/tmp/mtpg-e2e-');
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  const cred = process.getuid?.() === 0 ? unprivileged() : {};
  if (cred.uid !== undefined) chownSync(dir, cred.uid, cred.gid);
  chmodSync(dir, 0o700);
  const env = { ...process.env, LC_ALL: 'C', TZ: 'UTC' };
  const data = path.join(dir, 'data');
  execFileSync(path.join(bin, 'initdb'), ['-D', data, '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--locale=C', '--no-sync', '--no-instructions'],
    { cwd: dir, env, ...cred, stdio: ['ignore', 'pipe', 'pipe'] });
  const port = 20000 + Math.floor(Math.random() * 20000);
  const logPath = path.join(dir, 'postgres.log');
  writeFileSync(logPath, '');
  if (cred.uid !== undefined) chownSync(logPath, cred.uid, cred.gid);
  const child = spawn(path.join(bin, 'postgres'), ['-D', data, '-k', dir, '-p', String(port), '-c', 'listen_addresses=',
    '-c', 'fsync=off', '-c', 'full_page_writes=off', '-c', 'unix_socket_permissions=0777', '-c', `log_directory=${dir}`],
  { cwd: dir, env, ...cred, stdio: ['ignore', 'ignore', 'pipe'] });
  const log = [];
  child.stderr.on('data', (d) => log.push(String(d)));
  cleanups.push(async () => {
    if (child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGINT'); // a fast shutdown
      await Promise.race([exited, new Promise((r) => setTimeout(r, 5000))]);
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    }
    writeFileSync(path.join(artifacts, 'postgres.log'), log.join('') + (existsSync(logPath) ? readFileSync(logPath, 'utf8') : ''));
  });
  const psql = path.join(bin, 'psql');
  const sql = (text, { role = 'postgres', db = 'postgres' } = {}) =>
    execFileSync(psql, ['-h', dir, '-p', String(port), '-U', role, '-d', db, '-v', 'ON_ERROR_STOP=1', '-qAt', '-c', text],
      { env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim();
  for (let i = 0; ; i++) {
    if (child.exitCode !== null) throw new Error(`postgres exited ${child.exitCode} at start:\n${log.join('')}`);
    try {
      sql('SELECT 1');
      break;
    } catch {
      if (i > 150) throw new Error(`postgres did not accept connections in 15 s:\n${log.join('')}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  return { dir, port, url: (role, db) => `host=${dir} port=${port} user=${role} dbname=${db}`, sql };
}
