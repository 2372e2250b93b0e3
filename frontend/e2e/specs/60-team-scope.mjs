// Issue 23: a memory's detail shows its scope (personal, team or the
// default) and a button that moves it; the move is the API's
// POST /api/memories/{id}/scope, and the memory reads back with the new
// scope. Daemon d1 has team memory off, so the Overview shows no Team line.

export async function run(ctx) {
  const { d1, newPage, login, shot, assert, ok, step } = ctx;

  step('team-scope: the detail shows the scope and moves it');
  const m = await d1.api('POST', '/api/memories', { text: 'The billing service rounds invoice totals half-even at the last step.', project: 'billing', kind: 'fact' });
  const page = await newPage(d1.base, { width: 1440, height: 900 });
  await login(page, d1);
  await page.goto(`${d1.base}/#/memories?id=${m.id}`);
  const detail = page.locator(`[data-testid=memory-detail][data-id="${m.id}"]`);
  const scope = detail.getByTestId('memory-scope');
  await scope.waitFor();
  assert((await scope.getAttribute('data-scope')) === 'default', `a new memory's scope reads ${await scope.textContent()}`);
  await scope.getByRole('button', { name: 'Share with team' }).click();
  await detail.locator('[data-testid=memory-scope][data-scope=team]').waitFor();
  assert((await d1.api('GET', `/api/memories/${m.id}`)).scope === 'team', 'the API does not read the memory back as team');
  await shot(page, 'team-scope-shared');
  await scope.getByRole('button', { name: 'Keep personal' }).click();
  await detail.locator('[data-testid=memory-scope][data-scope=personal]').waitFor();
  assert((await d1.api('GET', `/api/memories/${m.id}`)).scope === 'personal', 'the API does not read the memory back as personal');
  ok('team-scope: default, then team, then personal, in the detail and through the API');

  step('team-scope: no Team line with team memory off');
  await page.goto(`${d1.base}/#/overview`);
  await page.locator('h2', { hasText: 'Overview' }).waitFor();
  assert((await page.getByTestId('team-line').count()) === 0, 'the Overview shows a Team line with team memory off');
  ok('team-scope: the Overview has no Team line when team memory is off');
  await page.close();
}
