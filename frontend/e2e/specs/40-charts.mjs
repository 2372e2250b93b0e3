// Issue 21, item 6 (charts with axes, dates and legends; the noise
// projection replaced by each rejected turn's nearest noise prototypes) and
// bug 8 (a daemon restart emptied the feed, today's counts and the charts).
//
// The charts are checked on d1 (the core flow's proxied exchanges): the
// Overview's store growth and noise per hour, the Noise view's histogram
// with the threshold marked, and the prototypes of a rejected turn. Bug 8
// runs on a daemon of its own, killed and started again on the same home
// and port (daemon.mjs' restart).

const MONTH_DAY = /^(Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) \d{1,2}$/;
const HOUR = /^\d\d:00$/;

/** The tick texts, axis titles and legend items of the chart testid in page. */
async function chartParts(page, testid) {
  const chart = page.getByTestId(testid);
  await chart.waitFor();
  const texts = (sel) => chart.locator(sel).allTextContents();
  return {
    chart,
    xTicks: await texts('.x-tick'),
    yTicks: await texts('.y-axis .tick'),
    titles: await texts('.axis-title'),
    legend: (await texts('[data-testid=chart-legend] .item')).map((t) => t.trim()),
  };
}

/** Sums the per-hour buckets of an overview. */
const hourTotal = (ov) => ov.filter.reduce((a, b) => a + b.total, 0);

export async function run(ctx) {
  const { d1, fx, upstream, newPage, login, shot, assert, ok, step, postTurn, startDaemon } = ctx;

  // ---- item 6: the Overview's charts, 1440x900 light ----
  step('charts: the Overview draws store growth and noise per hour with axes, dates and legends');
  const page = await newPage(d1.base, { width: 1440, height: 900 });
  await login(page, d1);
  await page.goto(`${d1.base}/#/overview`);
  const growth = await chartParts(page, 'chart-growth');
  assert(growth.xTicks.length > 0 && growth.xTicks.every((t) => MONTH_DAY.test(t)), `growth x ticks are not dates: ${growth.xTicks}`);
  assert(growth.yTicks[0] === '0' && growth.yTicks.length >= 2, `growth y ticks: ${growth.yTicks}`);
  assert(growth.titles.join('|') === 'memories|day (UTC)', `growth axis titles: ${growth.titles}`);
  const ov = await d1.api('GET', '/api/overview');
  const projects = ov.growth.series.map((s) => (s.other ? 'other projects' : s.project || '(no project)'));
  assert(projects.length > 0 && growth.legend.join('|') === projects.join('|'), `growth legend ${growth.legend}, want ${projects}`);
  const last = ov.growth.series.reduce((a, s) => a + s.counts[s.counts.length - 1], 0);
  assert(last === ov.memories, `the growth lines end at ${last} memories, the store holds ${ov.memories}`);
  const hours = await chartParts(page, 'chart-hours');
  // Local midnights are dates, noons hours: 48 hours span at least one of each.
  assert(hours.xTicks.length >= 3 && hours.xTicks.every((t) => MONTH_DAY.test(t) || HOUR.test(t)) && hours.xTicks.filter((t) => MONTH_DAY.test(t)).length >= 1,
    `hour x ticks are not dates and hours: ${hours.xTicks}`);
  assert(hours.titles.join('|') === 'decisions|hour (local time)', `hour axis titles: ${hours.titles}`);
  assert(hours.legend.includes('stored') && hours.legend.includes('rejected'), `hour legend: ${hours.legend}`);
  assert((await hours.chart.locator('rect').count()) > 0, 'the noise-per-hour chart draws no bar');
  // Today's counts come with the first "stats" event.
  await page.locator('.card').filter({ hasText: 'today stored / rejected' }).locator('.n').filter({ hasNotText: /^0 \/ 0$/ }).waitFor({ timeout: 15_000 });
  await shot(page, 'overview-charts');
  const narrow = await newPage(d1.base, { width: 1024, height: 700, colorScheme: 'dark' });
  await login(narrow, d1);
  await narrow.goto(`${d1.base}/#/overview`);
  await narrow.getByTestId('chart-hours').waitFor();
  await narrow.locator('.card').filter({ hasText: 'today stored / rejected' }).locator('.n').filter({ hasNotText: /^0 \/ 0$/ }).waitFor({ timeout: 15_000 });
  const overflow = await narrow.locator('[data-testid=growth-chart], [data-testid=noise-hour-chart]').evaluateAll((els) => els.filter((e) => e.scrollWidth > e.clientWidth + 1).length);
  assert(overflow === 0, `${overflow} chart cards overflow at 1024 px`);
  await shot(narrow, 'overview-charts-1024-dark');
  ok(`the Overview charts have dated axes, titles and legends (${projects.length} projects, ${hourTotal(ov)} decisions in 48 h)`);

  // ---- item 6: the Noise view, 1024x700 dark ----
  step('charts: the histogram has a labelled 0-1 axis with the threshold marked; a rejected turn lists its nearest noise prototypes');
  const dark = await newPage(d1.base, { width: 1024, height: 700, colorScheme: 'dark' });
  await login(dark, d1);
  await dark.goto(`${d1.base}/#/noise`);
  const hist = await chartParts(dark, 'chart-histogram');
  assert(hist.xTicks.join(' ') === '0 0.2 0.4 0.6 0.8 1', `histogram x ticks: ${hist.xTicks}`);
  assert(hist.titles.some((t) => t.startsWith('content score')) && hist.titles.includes('exchanges'), `histogram axis titles: ${hist.titles}`);
  const threshold = (await d1.api('GET', '/api/noise')).scorer.threshold;
  const marker = hist.chart.getByTestId('chart-marker');
  const [mx, x0, x1] = await Promise.all([
    marker.getAttribute('x1'),
    hist.chart.locator('.x-axis line').nth(1).getAttribute('x1'),
    hist.chart.locator('.x-axis line').last().getAttribute('x1'),
  ]).then((v) => v.map(Number));
  assert(Math.abs(mx - (x0 + threshold * (x1 - x0))) < 0.5, `the threshold mark is at ${mx}, want ${x0 + threshold * (x1 - x0)} (threshold ${threshold})`);
  assert(hist.legend.includes(`threshold ${threshold.toFixed(2)}`), `the legend does not name the threshold: ${hist.legend}`);
  await hist.chart.scrollIntoViewIfNeeded();
  await shot(dark, 'noise-histogram');
  const turn = dark.getByTestId('rejected-turn').first();
  await turn.waitFor({ timeout: 20_000 });
  const matches = await turn.getByTestId('prototype-match').allTextContents();
  assert(matches.length > 0 && matches.every((t) => /^-?[01]\.\d\d\D+\S/.test(t)), `a rejected turn's prototypes: ${matches}`);
  assert((await dark.getByTestId('projection-plot').count()) === 0, 'the 2-D projection is still drawn');
  await dark.getByTestId('nearest-prototypes').scrollIntoViewIfNeeded();
  await shot(dark, 'noise-prototypes');
  ok(`the histogram marks the threshold ${threshold.toFixed(2)} on a 0-1 axis; a rejected turn lists ${matches.length} noise prototypes`);

  // ---- bug 8: the feed and its counts survive a restart ----
  step('bug 8: a daemon killed and started again keeps its feed, today\'s counts and the hourly chart');
  const d = await startDaemon('restart', upstream);
  const messages = [];
  for (const t of fx.turns) {
    messages.push({ role: 'user', content: [{ type: 'text', text: t.prompt }] });
    const answer = await postTurn(d.base, `${fx.session}-restart`, fx.system, messages);
    messages.push({ role: 'assistant', content: [{ type: 'text', text: answer }] });
  }
  let before = [];
  for (let i = 0; i < 200 && before.length < fx.turns.length; i++) {
    before = await d.api('GET', '/api/decisions');
    if (before.length < fx.turns.length) await new Promise((r) => setTimeout(r, 100));
  }
  assert(before.length === fx.turns.length, `${before.length} decisions before the restart, want ${fx.turns.length}`);
  const ovBefore = await d.api('GET', '/api/overview');
  await d.restart({ signal: 'SIGKILL' });
  const after = await d.api('GET', '/api/decisions');
  assert(after.map((e) => e.id).join() === before.map((e) => e.id).join(), `decisions after the restart: ${after.map((e) => e.id)} want ${before.map((e) => e.id)}`);
  const ovAfter = await d.api('GET', '/api/overview');
  assert(hourTotal(ovAfter) === hourTotal(ovBefore) && hourTotal(ovAfter) === fx.turns.length,
    `the hourly chart counts ${hourTotal(ovAfter)} decisions after the restart, ${hourTotal(ovBefore)} before`);
  const p = await newPage(d.base, { width: 1440, height: 900 });
  await login(p, d);
  await p.goto(`${d.base}/#/feed`);
  for (const t of fx.turns) await p.getByTestId('feed-item').filter({ hasText: new RegExp(t.marker, 'i') }).first().waitFor({ timeout: 10_000 });
  await p.goto(`${d.base}/#/overview`);
  const stored = before.filter((e) => e.verdict === 'stored').length, rejected = before.filter((e) => e.verdict === 'rejected').length;
  const today = p.locator('.card').filter({ hasText: 'today stored / rejected' }).locator('.n');
  await p.waitForFunction(([want]) => [...document.querySelectorAll('.card')].some((c) => c.textContent?.includes('today stored / rejected') && c.querySelector('.n')?.textContent?.trim() === want),
    [`${stored} / ${rejected}`], { timeout: 15_000 }).catch(async () => assert(false, `today's counts after the restart: ${await today.textContent()}, want ${stored} / ${rejected}`));
  await p.getByTestId('chart-hours').waitFor();
  await shot(p, 'restart-overview');
  ok(`after a kill and a start: ${after.length} decisions in the feed, today ${stored} stored / ${rejected} rejected, ${hourTotal(ovAfter)} in the hourly chart`);
}
