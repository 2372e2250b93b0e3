// Memories lists what is current (exp-winlist): a memory whose text was
// edited is listed once, as its newer version; "superseded too" adds the
// old version, muted, with "superseded by …" linking to the newer one,
// which the link opens. Screenshot: memories-superseded.png.

export async function run({ startDaemon, newPage, login, shot, assert, ok, step, onFailure }) {
  step('memories: the current versions by default; "superseded too" marks the old ones and links them to the newer');
  const d = await startDaemon('winlist');
  const old = await d.api('POST', '/api/memories', { text: 'The dev server of the docs site listens on port 5173.', project: 'docs', kind: 'config' });
  const edit = await d.api('PATCH', `/api/memories/${old.id}`, { text: 'The dev server of the docs site listens on port 5174 since the proxy moved.' });
  const cur = edit.memory;
  assert(edit.previous === old.id && cur.id !== old.id, `the text edit made no new version: ${JSON.stringify(edit)}`);
  const p = await newPage(d.base, { width: 1280, height: 800 });
  onFailure.push(() => shot(p, 'failure-memories-superseded'));
  await login(p, d);
  await p.goto(`${d.base}/#/memories`);
  const rowIds = () => p.locator('[data-testid=memory-row]').evaluateAll((rs) => rs.map((r) => r.getAttribute('data-id')));
  await p.locator(`[data-testid=memory-row][data-id="${cur.id}"]`).waitFor();
  let ids = await rowIds();
  assert(ids.length === 1 && ids[0] === cur.id, `by default the list shows ${ids}, want only ${cur.id}`);

  await p.getByTestId('filter-superseded').check();
  const oldRow = p.locator(`[data-testid=memory-row][data-id="${old.id}"]`);
  await oldRow.waitFor();
  ids = await rowIds();
  assert(ids.length === 2, `with superseded too the list shows ${ids}`);
  assert(await oldRow.evaluate((r) => r.classList.contains('superseded')), 'the old version is not marked superseded');
  const link = oldRow.getByTestId('superseded-link');
  assert((await link.getAttribute('href')) === `#/memories?id=${cur.id}`, `its link goes to ${await link.getAttribute('href')}`);
  assert(/superseded by “The dev server of the docs site listens on port 5174/.test(await oldRow.textContent()), `old row reads ${await oldRow.textContent()}`);
  await shot(p, 'memories-superseded');
  await link.click();
  await p.locator(`[data-testid=memory-detail][data-id="${cur.id}"]`).waitFor();
  await p.waitForURL(new RegExp(`#/memories\\?id=${cur.id}`));
  ok('memories: 1 row by default; with superseded too 2, the old one muted, "superseded by" the newer, whose link opens it');
  await p.close();
}
