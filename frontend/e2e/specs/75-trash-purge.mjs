// The trash's "Delete for good" (issue: a memory in the trash could only
// wait trash_days to go):
//   - a deleted memory in Steward → Trash has Delete…, which asks first
//     (Keep leaves it), then deletes it from the trash for good;
//   - the trash no longer lists it and it cannot be restored.
// Screenshot: trash-purge-confirm.png.

export async function run({ startDaemon, newPage, login, shot, assert, ok, step, onFailure }) {
  step('Steward → Trash: Delete… asks, then deletes for good');
  const d = await startDaemon('trash-purge');
  const m = await d.api('POST', '/api/memories', { text: 'The staging certificates are renewed by the ops rota each quarter.', project: 'purge', kind: 'fact' });
  await d.api('DELETE', `/api/memories/${m.id}`);
  const p = await newPage(d.base, { width: 1024, height: 700 });
  onFailure.push(() => shot(p, 'failure-trash-purge'));
  await login(p, d);
  await p.goto(`${d.base}/#/steward`);
  const row = p.locator(`[data-testid=trash-row][data-id="${m.id}"]`);
  await row.waitFor();
  await row.locator('[data-action=purge]').click();
  const confirm = row.locator('[data-action=purge-confirm]');
  await confirm.waitFor();
  await shot(p, 'trash-purge-confirm');
  await row.getByRole('button', { name: 'Keep' }).click();
  await row.locator('[data-action=purge]').waitFor();
  let trash = (await d.api('GET', '/api/trash')) ?? [];
  assert(trash.some((t) => t.memory.id === m.id), `Keep deleted it: ${JSON.stringify(trash)}`);
  await row.locator('[data-action=purge]').click();
  await confirm.click();
  await row.waitFor({ state: 'detached' });
  await p.getByText('Deleted 1 memory for good').waitFor();
  trash = (await d.api('GET', '/api/trash')) ?? [];
  assert(!trash.some((t) => t.memory.id === m.id), `still in the trash: ${JSON.stringify(trash)}`);
  let restored = null;
  try {
    await d.api('POST', '/api/trash/restore', { ids: [m.id] });
    restored = 'restored';
  } catch (e) {
    restored = String(e);
  }
  assert(restored.includes(' 404 '), `the restore of a memory deleted for good: ${restored}`);
  ok('Steward → Trash: Delete… then "Delete for good?" deletes it from the trash (Keep leaves it); no restore');
}
