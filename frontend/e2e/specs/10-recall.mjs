// Issue 21, item 1: the Recall view answers "is memory being used, and is
// it helping?". Recalls on d1 (the core flow's orbit memories): a prompt
// that hits, the same question again in the same session (what it was
// given is withheld as already given), and an unrelated prompt that gets
// nothing; the agent rates the memory it was given. The view shows each
// recall by session with the memories given and withheld and why in
// words, the rating, recalls per day with dates, and the most given
// memories with their hit rate; the Overview links to it. Screenshots:
// recall.png (1440x900 light) and recall-dark-1024.png (1024x700 dark).

const ASKED = 'Where do the ground station coordinates live, and in what datum are they?';
const UNRELATED = 'What is a good recipe for sourdough bread with rye flour?';

/** Whether an element's content is wider than its box (cut off or scrolling sideways). */
const overflows = (page, sel) => page.locator(sel).evaluateAll((els) => els.filter((e) => e.scrollWidth > e.clientWidth + 1).length);

export async function run(ctx) {
  const { d1, newPage, login, shot, assert, ok, step, startDaemon } = ctx;

  step('recall: recalls on d1 that hit, repeat and miss; the agent rates what it was given');
  const ask = (session_id, prompt, turn) => d1.api('POST', '/api/recall', { session_id, prompt, project: 'orbit', turn });
  const first = await ask('e2e-recall-view', ASKED, '1');
  assert(first.hits?.length > 0, `the ground-station prompt recalled nothing: ${first.skipped}`);
  const given = first.hits[0].memory.id;
  const again = await ask('e2e-recall-view', ASKED, '2'); // asked again in the next turn
  assert(!(again.hits ?? []).some((h) => h.memory.id === given), 'a memory was given twice to one session');
  assert((again.withheld ?? []).some((w) => w.id === given && w.reason === 'already_given'), `the repeat does not withhold ${given} as already given: ${JSON.stringify(again.withheld)}`);
  const miss = await ask('e2e-recall-other', UNRELATED, '1');
  assert((miss.hits ?? []).length === 0 && miss.skipped, `the unrelated prompt was given ${miss.hits?.length} memories`);
  await d1.api('POST', '/api/rate', { ids: [given], score: 1, reason: 'the datum answered the question' });
  const log = await d1.api('GET', '/api/recall/log?session=e2e-recall-view');
  assert(log.length === 2 && log[1].feedback?.some((f) => f.id === given && f.score === 1), `the rating is not on the recall that gave ${given}: ${JSON.stringify(log.map((e) => e.feedback))}`);
  const stats = await d1.api('GET', '/api/recall/stats?days=14');
  const today = stats.days[stats.days.length - 1];
  assert(today.recalls >= 3 && today.empty >= 1, `today's recalls: ${JSON.stringify(today)}`);
  const top = stats.top.find((m) => m.id === given);
  assert(top && top.helped >= 1 && top.hit_rate > 0, `the rated memory's hit rate: ${JSON.stringify(top)}`);
  ok(`logged: ${given} given then withheld as already given, the unrelated prompt got nothing (${miss.skipped}), hit rate ${top.hit_rate.toFixed(2)}`);

  // ---- the view, 1440x900 light ----
  step('recall: the Overview links to the view; it shows given and withheld with why, and the rating');
  const page = await newPage(d1.base, { width: 1440, height: 900 });
  await login(page, d1);
  await page.goto(`${d1.base}/#/overview`);
  const link = page.getByTestId('overview-recall-link');
  await link.filter({ hasText: `Recall: ${today.recalls} today` }).waitFor();
  await link.click();
  await page.waitForURL(/#\/recall$/);
  const entries = page.getByTestId('recall-entry');
  await entries.first().waitFor();
  assert((await page.getByTestId('recall-today').textContent()) === String(today.recalls), 'the today card disagrees with /api/recall/stats');

  // The repeat, opened with the keyboard: the session's newest recall.
  const group = page.locator('[data-testid=recall-session-group][data-session=e2e-recall-view]');
  const groupEntries = group.getByTestId('recall-entry');
  assert((await groupEntries.count()) === 2, 'the session does not list its two recalls');
  await page.locator('body').click({ position: { x: 5, y: 890 } }); // no field has the focus
  await page.keyboard.press('j');
  await page.keyboard.press('j');
  await page.keyboard.press('Enter');
  let detail = page.getByTestId('recall-detail');
  await detail.waitFor();
  const repeatRow = groupEntries.first().locator(`[data-testid=recall-withheld][data-id="${given}"]`);
  await repeatRow.waitFor();
  assert((await repeatRow.getAttribute('data-reason')) === 'already_given', 'the repeat does not say the memory was already given');
  assert((await repeatRow.textContent()).includes('already given to this session'), `the reason is not in words: ${await repeatRow.textContent()}`);
  const repeatSkipped = await groupEntries.first().getByTestId('recall-skipped').textContent();
  assert(repeatSkipped.includes('given earlier in this session'), `the repeat's reason: ${repeatSkipped}`);
  await page.keyboard.press('Escape');

  // The unrelated prompt: nothing given, and why.
  const other = page.locator('[data-testid=recall-session-group][data-session=e2e-recall-other]').getByTestId('recall-entry').first();
  await other.locator('.entry-row').click();
  const skipped = other.getByTestId('recall-skipped');
  await skipped.waitFor();
  assert((await skipped.textContent()).startsWith('Nothing given'), `the unrelated prompt's entry: ${await skipped.textContent()}`);

  // The first recall: the memory given, and the agent's rating.
  await groupEntries.nth(1).locator('.entry-row').click();
  const givenRow = groupEntries.nth(1).locator(`[data-testid=recall-given][data-id="${given}"]`);
  await givenRow.waitFor();
  assert((await givenRow.textContent()).includes('helped') && (await givenRow.textContent()).includes('rated +1'), `the given row does not show the rating: ${await givenRow.textContent()}`);
  const withheldFirst = await groupEntries.nth(1).getByTestId('recall-withheld').evaluateAll((els) => els.map((e) => [e.getAttribute('data-reason'), e.querySelector('.why')?.textContent ?? '']));
  assert(withheldFirst.every(([r, why]) => r && why && !why.includes('_')), `withheld reasons not in words: ${JSON.stringify(withheldFirst)}`);

  // Recalls per day: bars over dated ticks; the most given memories with their hit rate.
  const dates = await page.getByTestId('recall-chart-date').allTextContents();
  assert(dates.length >= 2 && dates.every((d) => /^[A-Z][a-z]{2} \d{1,2}$/.test(d.trim())), `the chart's dates: ${dates}`);
  assert((await page.getByTestId('recall-chart').locator('rect').count()) > 0, 'the chart draws no bar');
  const topRow = page.getByTestId('recall-top').locator('tr', { has: page.locator(`a[href="#/memories?id=${given}"]`) });
  assert((await topRow.textContent()).includes(`${Math.round(top.hit_rate * 100)}%`), `the top table's hit rate: ${await topRow.textContent()}`);
  await group.scrollIntoViewIfNeeded();
  await shot(page, 'recall');
  ok(`the view lists ${await entries.count()} recalls; given, withheld with why, the rating, ${dates.length} dated ticks`);

  // ---- 1024x700 dark ----
  step('recall: 1024x700 dark, nothing cut off');
  const dark = await newPage(d1.base, { width: 1024, height: 700, colorScheme: 'dark' });
  await login(dark, d1);
  await dark.goto(`${d1.base}/#/recall`);
  const darkGroup = dark.locator('[data-testid=recall-session-group][data-session=e2e-recall-view]');
  await darkGroup.getByTestId('recall-entry').first().locator('.entry-row').click();
  await darkGroup.getByTestId('recall-withheld').first().waitFor();
  assert((await overflows(dark, '.scroll, .panel, .entry-row, table')) === 0, 'a part of the Recall view overflows at 1024 px');
  const bg = await dark.evaluate(() => getComputedStyle(document.body).backgroundColor);
  assert(bg !== 'rgb(247, 247, 248)', `the dark page has the light background ${bg}`);
  await darkGroup.scrollIntoViewIfNeeded();
  await shot(dark, 'recall-dark-1024');
  ok('1024x700 dark: no part overflows');

  // ---- the log survives a restart ----
  step('recall: the log survives a daemon restart');
  const d = await startDaemon('recall-restart');
  await d.api('POST', '/api/memories', { text: 'The ingest worker batches embeddings 64 at a time to stay under the model server limit.', project: 'ingest', kind: 'fact' });
  await d.api('POST', '/api/recall', { session_id: 'restart-s', prompt: 'How many embeddings does the ingest worker batch at a time?', project: 'ingest' });
  const before = await d.api('GET', '/api/recall/log');
  assert(before.length === 1, `${before.length} recalls logged before the restart, want 1`);
  await d.restart();
  const after = await d.api('GET', '/api/recall/log');
  assert(JSON.stringify(after) === JSON.stringify(before), `the log after the restart: ${JSON.stringify(after)}`);
  ok(`the recall log survives a restart (${before[0].given.length} given, ${before[0].withheld?.length ?? 0} withheld)`);
}
