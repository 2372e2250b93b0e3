#!/usr/bin/env node
// End-to-end test of the UI against real memtray daemons, in Debian's
// Chromium driven by playwright-core. It builds nothing: first run
//   go build -o bin/memtray ./app          (in the repository root)
//   cd frontend && npm ci && npm run build (then rebuild bin/memtray, which embeds dist/)
// then `npm run e2e` (or `node e2e/run.mjs`). MEMTRAY_BIN and CHROMIUM
// override the binary and the browser. Screenshots go to e2e/artifacts/.
//
// The run: a fake Anthropic upstream replays recorded streams
// (e2e/fixtures) → exchanges posted through memtray's proxy (/v1/messages)
// appear in the live feed with the right verdicts → "keep" a rejected one →
// it is stored and searchable → reinforce a memory → a factor of its score
// changes → snooze it → it leaves recall (POST /api/recall) → export → import
// into a fresh daemon → the same memories.
//
// Then each module in e2e/specs/ (in name order) runs against the same
// daemons: it exports `async function run(ctx)` and gets the harness in ctx
// (see specContext below). One area of the window a file, so the suite
// grows without every change editing this script. MEMTRAY_E2E_ONLY=<regexp>
// runs only the specs whose file name matches (after the core flow).
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { startDaemon as startDaemonIn } from './daemon.mjs';
import { startPostgres as startPostgresIn } from './pg.mjs';
import { hoverContrast } from './contrast.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const frontend = path.resolve(here, '..');
const repo = path.resolve(frontend, '..');
const bin = process.env.MEMTRAY_BIN ?? path.join(repo, 'bin', 'memtray');
const browserPath = process.env.CHROMIUM ?? '/usr/bin/chromium';
const artifacts = path.join(here, 'artifacts');
const fixtures = path.join(here, 'fixtures');
const started = Date.now();
const deadline = setTimeout(() => fail('took longer than 420 s'), 420_000);
deadline.unref();

const cleanups = [];
/** On failure: a screenshot of each open page and the decision log, for the artefacts. */
const onFailure = [];
let passed = 0;
/** The step running now: each problem a page reports is tagged with it. */
let current = '';
function step(name) {
  current = name;
  console.log(`[${((Date.now() - started) / 1000).toFixed(1)}s] ${name}`);
}
function ok(name) {
  passed++;
  console.log(`  ok  ${name}`);
}
async function fail(msg) {
  console.error(`FAIL: ${msg}`);
  await cleanup();
  process.exit(1);
}
async function cleanup() {
  while (cleanups.length) {
    try {
      await cleanups.pop()();
    } catch {
      /* best effort */
    }
  }
}
function assert(cond, msg) {
  if (!cond) throw new Error(msg);
}

/** The fake Anthropic upstream: answers each /v1/messages with the fixture of its last user prompt. */
async function startUpstream(turns) {
  const byPrompt = new Map(turns.map((t) => [t.prompt, readFileSync(path.join(fixtures, t.sse), 'utf8')]));
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', async () => {
      const j = JSON.parse(body || '{}');
      const last = [...(j.messages ?? [])].reverse().find((m) => m.role === 'user');
      const texts = (Array.isArray(last?.content) ? last.content : [{ type: 'text', text: last?.content ?? '' }])
        .filter((c) => c.type === 'text').map((c) => c.text);
      const sse = texts.map((t) => byPrompt.get(t)).find(Boolean);
      if (!sse) {
        res.writeHead(400, { 'Content-Type': 'application/json' });
        res.end(JSON.stringify({ type: 'error', error: { type: 'invalid_request_error', message: 'no fixture' } }));
        return;
      }
      res.writeHead(200, { 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-cache', 'request-id': 'req_e2e' });
      for (const ev of sse.split(/(?<=\n\n)/)) {
        res.write(ev);
        await new Promise((r) => setTimeout(r, 2));
      }
      res.end();
    });
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  cleanups.push(() => new Promise((r) => server.close(r)));
  return `http://127.0.0.1:${server.address().port}`;
}

/**
 * Starts `memtray serve` in a fresh, isolated home; returns its address and
 * token. opts: `config` (the home's config file) and `env` (more variables).
 */
function startDaemon(name, upstream, opts = {}) {
  return startDaemonIn({ bin, name, upstream, artifacts, cleanups, ...opts });
}

/** Posts one turn of the session through the proxy, as Claude Code would. */
async function postTurn(base, session, system, messages) {
  const r = await fetch(`${base}/v1/messages?beta=true`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', 'x-api-key': 'sk-ant-e2e', 'anthropic-version': '2023-06-01' },
    body: JSON.stringify({
      model: 'claude-sonnet-4-5-20250929', max_tokens: 1024, stream: true, system,
      metadata: { user_id: `user_0123abcd_account_00000000-0000-0000-0000-000000000000_session_${session}` },
      messages,
    }),
  });
  const text = await r.text();
  assert(r.ok && text.includes('message_stop'), `proxy answered ${r.status}: ${text.slice(0, 200)}`);
  // The answer's text, reassembled as the agent would.
  return [...text.matchAll(/"text_delta","text":"((?:[^"\\]|\\.)*)"/g)].map((m) => JSON.parse(`"${m[1]}"`)).join('');
}

async function main() {
  assert(existsSync(bin), `${bin} is missing: run \`go build -o bin/memtray ./app\` in ${repo}`);
  assert(existsSync(path.join(frontend, 'dist', 'index.html')), 'frontend/dist is not built: run `npm run build`, then rebuild bin/memtray');
  assert(existsSync(browserPath), `${browserPath} is missing: apt-get install chromium`);
  rmSync(artifacts, { recursive: true, force: true });
  mkdirSync(artifacts, { recursive: true });
  const fx = JSON.parse(readFileSync(path.join(fixtures, 'exchanges.json'), 'utf8'));

  step('start the fake upstream and the daemon');
  const upstream = await startUpstream(fx.turns);
  const d1 = await startDaemon('first', upstream);

  const browser = await chromium.launch({ executablePath: browserPath, args: ['--no-sandbox', '--disable-gpu'] });
  cleanups.push(() => browser.close());
  const problems = [];
  /** A new page on base: 1024x700 light unless opts say otherwise ({ width, height, colorScheme }). */
  async function newPage(base, opts = {}) {
    const ctx = await browser.newContext({
      viewport: { width: opts.width ?? 1024, height: opts.height ?? 700 }, colorScheme: opts.colorScheme ?? 'light',
      acceptDownloads: true, baseURL: base,
    });
    const page = await ctx.newPage();
    page.on('console', (m) => {
      const t = m.text();
      const where = `(in "${current}", on ${page.url()})`;
      if (m.type() === 'error' && !/Failed to load resource.*(404|409)/.test(t)) problems.push(`console: ${t} ${where}`);
      if (/Content Security Policy/i.test(t)) problems.push(`CSP: ${t} ${where}`);
    });
    page.on('pageerror', (e) => problems.push(`page error: ${e.message} (in "${current}", on ${page.url()})`));
    return page;
  }
  const shot = (page, name) => page.screenshot({ path: path.join(artifacts, `${name}.png`) });

  step('log in with the token');
  const page = await newPage(d1.base);
  onFailure.push(() => shot(page, 'failure'));
  onFailure.push(async () => writeFileSync(path.join(artifacts, 'decisions.json'), JSON.stringify(await d1.api('GET', '/api/decisions'), null, 1)));
  await page.goto(`/login?token=${encodeURIComponent(d1.token)}`);
  await page.waitForURL(`${d1.base}/`);

  step('the first-run guide opens once: data dir, embedder, agents, capture');
  await page.waitForURL(`${d1.base}/#/welcome`);
  const guide = page.getByTestId('welcome');
  await page.getByTestId('welcome-data-dir').waitFor();
  assert((await page.getByTestId('welcome-data-dir').textContent()) === path.join(d1.root, 'data'), 'the guide names another data dir');
  await shot(page, '00-welcome-1-data');
  for (const [scheme, c] of Object.entries(await hoverContrast(page, page.getByTestId('welcome-next')))) {
    assert(c.ratio >= 4.5, `a hovered primary button in ${scheme} is ${c.fg} on ${c.bg} (contrast ${c.ratio.toFixed(2)}, want 4.5)`);
  }
  ok('a hovered primary button stays readable, light and dark');
  await page.getByTestId('welcome-next').click();
  await page.getByTestId('ollama-status').waitFor();
  assert((await guide.getAttribute('data-step')) === 'Embedder', 'step 2 is not the embedder');
  await shot(page, '00-welcome-2-embedder');
  await page.getByTestId('welcome-next').click();
  await page.getByTestId('agent-setup').waitFor();
  await shot(page, '00-welcome-3-agents');
  await page.getByTestId('welcome-next').click();
  await page.getByTestId('welcome-capture').waitFor();
  assert(await page.getByTestId('welcome-capture').isChecked(), 'capture is not on in the guide');
  await shot(page, '00-welcome-4-capture');
  await page.getByTestId('welcome-finish').click();
  await page.waitForURL(`${d1.base}/#/feed`);
  assert((await d1.api('GET', '/api/welcome')).done === true, 'finishing the guide did not record it');
  await page.goto('/');
  await page.getByTestId('stream-status').waitFor();
  await page.waitForTimeout(500);
  assert(!page.url().includes('welcome'), 'the guide opened a second time');
  ok('first-run guide: 4 steps, finished, not shown again');
  await page.goto('/#/overview');
  await page.getByTestId('count-memories').waitFor();
  await page.getByText('live', { exact: true }).waitFor({ timeout: 10_000 });
  ok('logged in; the event stream is live');
  await shot(page, '01-overview-empty');

  step('post exchanges through the proxy');
  await page.goto('/#/feed');
  await page.mouse.move(0, 0); // off the list: the feed holds new rows while the pointer is on it (issue 21 item 2)
  const messages = [];
  for (const t of fx.turns) {
    messages.push({ role: 'user', content: [{ type: 'text', text: '<system-reminder>Today is a day.</system-reminder>' }, { type: 'text', text: t.prompt }] });
    const answer = await postTurn(d1.base, fx.session, fx.system, messages);
    messages.push({ role: 'assistant', content: [{ type: 'text', text: answer }] });
  }
  for (const t of fx.turns) {
    const item = page.getByTestId('feed-item').filter({ hasText: new RegExp(t.marker, 'i') }).first();
    await item.waitFor({ timeout: 20_000 });
    const verdict = await item.getAttribute('data-verdict');
    assert(verdict === t.verdict, `"${t.prompt}" shows verdict ${verdict} in the feed, want ${t.verdict}`);
  }
  ok(`the live feed shows ${fx.turns.length} exchanges with the right verdicts`);
  await shot(page, '02-feed');

  step('keep a rejected exchange');
  const rejected = fx.turns.find((t) => t.keep);
  const rejItem = page.getByTestId('feed-item').filter({ hasText: new RegExp(rejected.marker, 'i') }).first();
  await rejItem.click();
  await page.getByTestId('feed-drawer').waitFor();
  // A turn's decision lists each statement the distiller found, kept or
  // dropped with its reason.
  const cands = page.getByTestId('feed-candidates');
  await cands.waitFor();
  assert((await cands.locator('li').count()) > 0, 'the drawer lists no statements of the turn');
  await shot(page, '03-feed-drawer');
  await rejItem.locator('[data-action=keep]').click();
  await page.getByTestId('toast').filter({ hasText: 'Kept' }).waitFor();
  await page.getByTestId('feed-item').filter({ hasText: new RegExp(rejected.marker, 'i') }).and(page.locator('[data-verdict=stored]')).first().waitFor({ timeout: 10_000 });
  ok('kept: the feed shows it stored');

  step('search for it');
  await page.goto('/#/memories');
  await page.getByTestId('memories-table').waitFor();
  await page.getByTestId('search').fill(rejected.search);
  await page.getByTestId('search').press('Enter');
  const keptHit = page.getByTestId('hit').filter({ hasText: /run the build/i }).first();
  await keptHit.waitFor({ timeout: 10_000 });
  ok('the kept exchange is stored and searchable');

  step('reinforce a memory: a factor of its score changes');
  await page.getByTestId('search').fill('TLE element sets cache TTL');
  await page.getByTestId('search').press('Enter');
  const tleHit = page.getByTestId('hit').filter({ hasText: /TLE/ }).first();
  await tleHit.waitFor();
  const memId = await tleHit.getAttribute('data-id');
  await tleHit.click();
  const detail = page.getByTestId('memory-detail');
  await detail.getByTestId('score-bars').waitFor();
  const factors = async () => Object.fromEntries(await detail.locator('[data-factor]').evaluateAll((els) => els.map((e) => [e.getAttribute('data-factor'), Number(e.getAttribute('data-value'))])));
  const before = await factors();
  await shot(page, '04-memories-search');
  await detail.locator('[data-action=reinforce]').click();
  await page.getByTestId('reinforced-count').filter({ hasText: '1' }).waitFor();
  let after = before;
  for (let i = 0; i < 50; i++) {
    after = await factors();
    if (after.recency !== before.recency || after.anti_sticky !== before.anti_sticky) break;
    await page.waitForTimeout(100);
  }
  assert(after.recency > before.recency || after.anti_sticky > before.anti_sticky,
    `reinforce changed no factor: before ${JSON.stringify(before)} after ${JSON.stringify(after)}`);
  ok(`reinforced: recency ${before.recency} → ${after.recency}, anti-sticky ${before.anti_sticky} → ${after.anti_sticky}`);

  step('snooze it: it leaves recall');
  const recallIds = async (sess) => ((await d1.api('POST', '/api/recall', { session_id: sess, prompt: 'How long may ORBIT_TLE_CACHE_TTL be for the TLE element sets cache?', project: 'orbit' })).hits ?? []).map((h) => h.memory.id);
  assert((await recallIds('e2e-recall-before')).includes(memId), 'the memory is not recalled before the snooze');
  await detail.locator('[data-action=snooze-7]').click();
  await page.getByTestId('toast').filter({ hasText: 'Snoozed' }).waitFor();
  await detail.locator('[data-action=wake]').waitFor();
  assert(!(await recallIds('e2e-recall-after')).includes(memId), 'the snoozed memory is still recalled');
  ok('snoozed: out of recall');
  await shot(page, '05-memory-snoozed');
  await page.getByTestId('search').fill('');
  await page.getByTestId('search').press('Enter');
  await page.getByTestId('memories-table').waitFor();
  await shot(page, '06-memories-table');

  step('the other views');
  await page.goto('/#/noise');
  await page.getByText('Rejection buffer').waitFor();
  await shot(page, '07-noise');
  await page.goto('/#/steward');
  await page.getByRole('button', { name: /Plan now/ }).click();
  await page.getByText(/actions/).first().waitFor();
  // The applied runs come from the daemon's GET /api/steward/runs: none yet.
  await page.getByTestId('runs').getByText('Applied runs (0)').waitFor();
  assert(await page.getByRole('button', { name: 'Undo last run' }).isDisabled(), 'Undo last run is enabled with no run to undo');
  await shot(page, '08-steward');
  await page.goto('/#/settings');
  await page.getByTestId('capture-toggle').waitFor();
  await shot(page, '09-settings');

  step('connect Claude Code from Settings, then disconnect it');
  const claudeSettings = path.join(d1.root, '.claude', 'settings.json');
  const original = '{\n  "model": "opus"\n}\n';
  mkdirSync(path.dirname(claudeSettings), { recursive: true });
  writeFileSync(claudeSettings, original);
  await page.reload();
  const agent = page.getByTestId('agent-claude-code');
  const state = (text) => agent.getByTestId('agent-state').filter({ hasText: new RegExp(`^${text}$`) }).waitFor();
  await state('found, not connected');
  await agent.getByTestId('agent-preview').click();
  await agent.getByTestId('agent-diff').waitFor();
  const added = await agent.locator('.dl.add').allTextContents();
  assert(added.some((l) => l.includes(`"ANTHROPIC_BASE_URL": "${d1.base}"`)), `the preview lacks the proxy URL: ${added.join('\n')}`);
  await shot(page, '09b-agent-preview');
  await agent.getByTestId('agent-confirm').click();
  await state('connected');
  const written = JSON.parse(readFileSync(claudeSettings, 'utf8'));
  assert(written.env?.ANTHROPIC_BASE_URL === d1.base && written.hooks?.UserPromptSubmit?.length === 1, `settings.json after connect: ${JSON.stringify(written)}`);
  assert(existsSync(path.join(d1.root, '.claude.json')), 'no ~/.claude.json (the MCP server) after connect');
  ok('connected Claude Code from the window: the previewed change is in its files');
  await agent.getByTestId('agent-disconnect').click();
  await agent.getByTestId('agent-diff').waitFor();
  await agent.getByTestId('agent-confirm').click();
  await state('found, not connected');
  assert(readFileSync(claudeSettings, 'utf8') === original, 'disconnect did not restore settings.json byte for byte');
  assert(!existsSync(path.join(d1.root, '.claude.json')), 'disconnect left ~/.claude.json');
  ok('disconnected: settings.json restored byte for byte, ~/.claude.json gone');
  await page.goto('/#/overview');
  await page.getByTestId('count-memories').waitFor();
  await shot(page, '10-overview');

  step('export, then import into a fresh daemon');
  await page.goto('/#/settings');
  const [download] = await Promise.all([page.waitForEvent('download'), page.getByTestId('export-link').click()]);
  const exportPath = path.join(artifacts, 'export.jsonl');
  await download.saveAs(exportPath);
  await page.getByTestId('export-file').click();
  await page.getByTestId('export-done').waitFor({ timeout: 20_000 });
  const exportedFile = (await page.getByTestId('export-done').locator('code').textContent()) ?? '';
  assert(exportedFile.startsWith(d1.root) && /memtray-export-\d{8}-\d{6}\.jsonl$/.test(exportedFile) && existsSync(exportedFile), `export to a file: ${exportedFile}`);
  assert(readFileSync(exportedFile, 'utf8').split('\n').length === readFileSync(exportPath, 'utf8').split('\n').length, 'the exported file and the download differ in length');
  ok(`exported to a file by the daemon: ${path.basename(exportedFile)}`);
  const d2 = await startDaemon('second', null);
  const page2 = await newPage(d2.base);
  await page2.goto(`/login?token=${encodeURIComponent(d2.token)}`);
  await page2.waitForURL(`${d2.base}/`);
  await page2.goto('/#/settings');
  await page2.getByTestId('import-file').setInputFiles(exportPath);
  await page2.getByTestId('import-report').waitFor({ timeout: 20_000 });
  const texts = async (d) => ((await d.api('GET', '/api/memories?limit=1000')).memories ?? []).map((m) => m.text).sort();
  const [a, b] = [await texts(d1), await texts(d2)];
  assert(a.length > 0 && JSON.stringify(a) === JSON.stringify(b), `imported memories differ: ${a.length} vs ${b.length}`);
  await page2.goto('/#/memories');
  await page2.getByTestId('memories-table').waitFor();
  await shot(page2, '11-imported');
  ok(`exported and imported: the same ${a.length} memories`);

  step('the steward: apply a prune, see the run, undo it');
  // A memory of the export, made old and unimportant, imported into the
  // second daemon under a new id: the steward plans to prune it.
  const lines = readFileSync(exportPath, 'utf8').trim().split('\n');
  const stale = JSON.parse(lines[1]);
  const longAgo = new Date(Date.now() - 200 * 86400_000).toISOString();
  Object.assign(stale, { id: 'e2e-stale-memory', importance: 0.02, created_at: longAgo, updated_at: longAgo,
    text: `${stale.text} (an old note nobody read)` });
  // Written by another model: the import embeds it with the store's.
  delete stale.content_hash;
  Object.assign(stale, { embedding: [1, 0, 0], embedding_model: 'e2e-other-model' });
  const header = { ...JSON.parse(lines[0]), embedding_model: 'e2e-other-model', dim: 3, count: 1 };
  const imp = await fetch(`${d2.base}/api/import`, { method: 'POST', headers: { Authorization: `Bearer ${d2.token}`, 'Content-Type': 'application/x-ndjson' },
    body: `${JSON.stringify(header)}\n${JSON.stringify(stale)}\n{"end":true,"count":1}\n` });
  assert(imp.ok, `import of the stale memory: ${imp.status} ${await imp.text()}`);
  await page2.goto('/#/steward');
  await page2.getByRole('button', { name: /Plan now/ }).click();
  await page2.getByRole('button', { name: 'Apply selected' }).and(page2.locator(':enabled')).waitFor();
  await page2.getByRole('button', { name: 'Apply selected' }).click();
  const runs = page2.getByTestId('runs');
  await runs.getByText('Applied runs (1)').waitFor();
  await runs.getByText(/prune 1/).waitFor();
  await runs.getByRole('cell', { name: 'you', exact: true }).waitFor();
  assert((await d2.api('GET', '/api/trash')).some((t) => t.memory.id === 'e2e-stale-memory'), 'the pruned memory is not in the trash');
  await shot(page2, '12-steward-run');
  await runs.getByRole('button', { name: 'Undo' }).click();
  await runs.getByText('Applied runs (0)').waitFor();
  const back = await d2.api('GET', '/api/memories/e2e-stale-memory');
  assert(back?.id === 'e2e-stale-memory' && back.importance === 0.02, `the undone prune did not bring the memory back: ${JSON.stringify(back)}`);
  ok('applied a prune from the window, listed the run, undid it: the memory is back');

  /** Logs page into daemon d with its token (the first-run guide is marked done first). */
  async function login(p, d) {
    await d.api('POST', '/api/welcome/done').catch(() => {});
    await p.goto(`${d.base}/login?token=${encodeURIComponent(d.token)}`);
    await p.waitForURL(`${d.base}/`);
  }
  const specContext = {
    d1, d2, fx, upstream, page, page2, bin, repo, artifacts, fixtures, problems, onFailure,
    newPage, login, shot, assert, ok, step, postTurn,
    startDaemon: (name, up = null, opts = {}) => startDaemon(name, up, opts),
    startPostgres: () => startPostgresIn({ artifacts, cleanups }),
  };
  const only = process.env.MEMTRAY_E2E_ONLY ? new RegExp(process.env.MEMTRAY_E2E_ONLY) : null;
  const specDir = path.join(here, 'specs');
  const specs = existsSync(specDir) ? readdirSync(specDir).filter((f) => f.endsWith('.mjs') && (!only || only.test(f))).sort() : [];
  for (const f of specs) {
    step(`spec ${f}`);
    const mod = await import(path.join(specDir, f));
    await mod.run(specContext);
  }

  assert(problems.length === 0, `the page reported problems:\n${problems.join('\n')}`);
  ok('no console errors, no CSP violations');
}

main()
  .then(async () => {
    await cleanup();
    console.log(`e2e: ${passed} passed, 0 failed in ${((Date.now() - started) / 1000).toFixed(1)} s; screenshots in ${path.relative(process.cwd(), artifacts) || artifacts}`);
    process.exit(0);
  })
  .catch(async (e) => {
    console.error(e?.stack ?? e);
    for (const f of onFailure) await f().catch(() => {});
    console.log(`e2e: ${passed} passed, 1 failed`);
    await cleanup();
    process.exit(1);
  });
