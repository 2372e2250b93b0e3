#!/usr/bin/env node
// Feed performance, end to end (issue 6: "the feed stays smooth at 50
// exchanges a second; virtualized list, no unbounded DOM growth"). Against
// a real `memtray serve` (bin/memtray, built after `npm run build`), with the
// live feed open in Debian's Chromium: POST /api/ingest 5 exchanges every
// 100 ms for 10 s (varied texts: some stored, most rejected) while the page
// counts the rendered feed rows every frame, observes long tasks
// (PerformanceObserver 'longtask') and frame gaps (requestAnimationFrame).
// Asserts the rows stay bounded and no long task exceeds 200 ms (a
// correctness bound, not a tight timing check); prints one summary line and
// saves e2e/artifacts/perf-feed.png and perf.json. MEMTRAY_BIN and CHROMIUM
// override the binary and the browser; PERF_RATE and PERF_SECONDS the load.
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { startDaemon } from './daemon.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const repo = path.resolve(here, '..', '..');
const bin = process.env.MEMTRAY_BIN ?? path.join(repo, 'bin', 'memtray');
const browserPath = process.env.CHROMIUM ?? '/usr/bin/chromium';
const artifacts = path.join(here, 'artifacts');
const rate = Number(process.env.PERF_RATE ?? 50); // exchanges per second
const seconds = Number(process.env.PERF_SECONDS ?? 10);
const tickMs = 100;
const MAX_ROWS = 100; // rendered feed rows, whatever the number of items
const MAX_LONG_TASK_MS = 200;
const started = Date.now();
const cleanups = [];
const deadline = setTimeout(() => finish(new Error('took longer than 60 s')), 60_000);
deadline.unref();

function assert(cond, msg) {
  if (!cond) throw new Error(msg);
}
async function finish(err) {
  while (cleanups.length) {
    try {
      await cleanups.pop()();
    } catch {
      /* best effort */
    }
  }
  if (err) {
    console.error(err?.stack ?? err);
    console.log('perf: FAIL');
    process.exit(1);
  }
  process.exit(0);
}

/** The n-th exchange: every 5th a distinct, substantive note (stored), the rest chatter (rejected). */
function exchange(n) {
  const session = `perf-${Math.floor(n / 50)}`;
  const turn = (n % 50) + 1;
  if (n % 5 === 0) {
    const topics = ['retry budget of the uploader', 'shard count of the index', 'TTL of the token cache', 'port of the metrics exporter', 'timeout of the health probe'];
    const topic = topics[(n / 5) % topics.length];
    return {
      session_id: session, turn, user_turns: turn, project: 'perf', source: 'api',
      user: `What is the ${topic} in service ${n}, and why?`,
      assistant: `Service ${n} sets the ${topic} to ${100 + n} because the staging cluster ${n % 7 === 0 ? 'dropped connections' : 'ran out of file descriptors'} at lower values; keep PERF_${n}_LIMIT=${100 + n} in deploy/values-${n}.yaml and do not lower it without re-running the soak test.`,
    };
  }
  const chatter = ['ok thanks', 'sure', 'looks good', 'yes please', 'continue', 'thanks!', 'hmm ok'];
  return { session_id: session, turn, user_turns: turn, project: 'perf', source: 'api', user: chatter[n % chatter.length], assistant: n % 2 ? 'Done.' : 'Okay.' };
}

// Runs in the page: counts rows every frame, records frame gaps and long tasks.
function installProbe() {
  const m = { t0: performance.now(), frames: 0, gaps: [], longTasks: [], longTaskAt: [], firstRowAt: -1, maxRows: 0, rowsSamples: 0, running: true };
  window.__perf = m;
  new PerformanceObserver((list) => {
    for (const e of list.getEntries()) {
      m.longTasks.push(Math.round(e.duration));
      m.longTaskAt.push(Math.round(e.startTime - m.t0));
    }
  }).observe({ type: 'longtask' });
  let last = performance.now();
  const frame = (t) => {
    if (!m.running) return;
    m.gaps.push(t - last);
    last = t;
    m.frames++;
    const rows = document.querySelectorAll('[data-testid=feed-item]').length;
    if (rows > m.maxRows) m.maxRows = rows;
    if (rows > 0 && m.firstRowAt < 0) m.firstRowAt = Math.round(t - m.t0);
    m.rowsSamples++;
    requestAnimationFrame(frame);
  };
  requestAnimationFrame((t) => { last = t; requestAnimationFrame(frame); });
}
function readProbe() {
  const m = window.__perf;
  m.running = false;
  const over50 = m.gaps.filter((g) => g > 50).length;
  const shown = Number((document.querySelector('.bar .grow')?.textContent ?? '').match(/\d+/)?.[0] ?? NaN);
  return {
    frames: m.frames, worstGapMs: Math.round(Math.max(0, ...m.gaps)), over50Share: m.gaps.length ? over50 / m.gaps.length : 0,
    longTasks: m.longTasks.length, longTaskAt: m.longTaskAt, firstRowAt: m.firstRowAt, longestTaskMs: Math.max(0, ...m.longTasks), maxRows: m.maxRows,
    rowsNow: document.querySelectorAll('[data-testid=feed-item]').length, shown,
  };
}

async function main() {
  assert(existsSync(bin), `${bin} is missing: run \`go build -o bin/memtray ./app\` in ${repo}`);
  assert(existsSync(browserPath), `${browserPath} is missing: apt-get install chromium`);
  mkdirSync(artifacts, { recursive: true });
  const d = await startDaemon({ bin, name: 'perf', upstream: null, artifacts, cleanups });
  const browser = await chromium.launch({ executablePath: browserPath, args: ['--no-sandbox', '--disable-gpu'] });
  cleanups.push(() => browser.close());
  const ctx = await browser.newContext({ viewport: { width: 1024, height: 700 }, baseURL: d.base });
  const page = await ctx.newPage();
  const problems = [];
  page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
  page.on('console', (m) => { if (m.type() === 'error' && !/Failed to load resource.*(404|409)/.test(m.text())) problems.push(`console: ${m.text()}`); });
  await page.goto(`/login?token=${encodeURIComponent(d.token)}`);
  await page.waitForURL(`${d.base}/`);
  await page.goto('/#/feed');
  await page.getByTestId('stream-status').filter({ hasText: /live/ }).waitFor({ timeout: 10_000 }).catch(async (e) => {
    await page.screenshot({ path: path.join(artifacts, 'perf-failure.png') });
    throw new Error(`the event stream is not live (${await page.getByTestId('stream-status').textContent().catch(() => '?')}): ${e.message}`);
  });
  await page.getByText('No exchanges yet').waitFor();
  await page.evaluate(installProbe);

  // The load: one POST of rate/10 exchanges every 100 ms, on an absolute schedule.
  const ticks = Math.round((seconds * 1000) / tickMs);
  const per = Math.round((rate * tickMs) / 1000);
  const t0 = Date.now();
  const posts = [];
  const latencies = [];
  let n = 0;
  for (let i = 0; i < ticks; i++) {
    const wait = t0 + i * tickMs - Date.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    const batch = Array.from({ length: per }, () => exchange(n++));
    const s = Date.now();
    posts.push(d.api('POST', '/api/ingest', { exchanges: batch }).then((r) => { latencies.push(Date.now() - s); return r.decisions; }));
  }
  const decisions = (await Promise.all(posts)).flat();
  const sendSeconds = (Date.now() - t0) / 1000;
  const verdicts = {};
  for (const dec of decisions) verdicts[dec.verdict] = (verdicts[dec.verdict] ?? 0) + 1;
  // Let the last events arrive and flush.
  await page.waitForFunction((want) => Number((document.querySelector('.bar .grow')?.textContent ?? '').match(/\d+/)?.[0]) >= want, Math.min(n, 1000), { timeout: 10_000 });
  const r = await page.evaluate(readProbe);
  await page.screenshot({ path: path.join(artifacts, 'perf-feed.png') });
  const result = { rate, seconds, sent: n, sendSeconds, verdicts, ingestP50Ms: latencies.sort((a, b) => a - b)[Math.floor(latencies.length / 2)], ingestMaxMs: Math.max(...latencies), ...r };
  writeFileSync(path.join(artifacts, 'perf.json'), JSON.stringify(result, null, 1));
  console.log(`perf: ${n} exchanges in ${sendSeconds.toFixed(1)} s (${Object.entries(verdicts).map(([k, v]) => `${v} ${k}`).join(', ')}); feed ${r.shown} items, max ${r.maxRows} rows in the DOM (${r.rowsNow} now); ` +
    `${r.longTasks} long tasks, longest ${r.longestTaskMs} ms; ${r.frames} frames, worst gap ${r.worstGapMs} ms, ${(r.over50Share * 100).toFixed(1)}% over 50 ms; ingest p50 ${result.ingestP50Ms} ms; ${((Date.now() - started) / 1000).toFixed(1)} s total`);
  assert(verdicts.stored > 0 && verdicts.rejected > verdicts.stored, `want some stored and most rejected, got ${JSON.stringify(verdicts)}`);
  assert(r.shown >= Math.min(n, 1000), `the feed shows ${r.shown} items, want ${Math.min(n, 1000)}`);
  assert(r.maxRows > 0 && r.maxRows < MAX_ROWS, `the feed rendered up to ${r.maxRows} rows, want fewer than ${MAX_ROWS} (virtualized)`);
  assert(r.longestTaskMs <= MAX_LONG_TASK_MS, `a long task took ${r.longestTaskMs} ms, want at most ${MAX_LONG_TASK_MS}`);
  assert(problems.length === 0, `the page reported problems:\n${problems.join('\n')}`);
}

main().then(() => finish(), finish);
