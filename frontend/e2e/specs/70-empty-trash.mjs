// New-user pass (NU2):
//   - a daemon on its own data dir (serve --data-dir) shows, in the empty
//     Overview, Live feed and Memories, setup commands that carry its
//     --data-dir (a plain `memtray setup claude-code` connected the agent
//     to the default data dir, where this daemon is not);
//   - a memory deleted in the window goes to the trash, restorable from
//     Steward → Trash (it was deleted for good).
// Screenshots: empty-overview.png, empty-memories.png, deleted-in-trash.png.

export async function run({ startDaemon, newPage, login, shot, assert, ok, step, onFailure }) {
  step('empty views: the setup commands carry the daemon\'s data dir');
  const d = await startDaemon('nu2-empty');
  const setup = await d.api('GET', '/api/setup');
  const flags = (setup.cli_flags ?? []).join(' ');
  assert(flags.includes('--data-dir'), `GET /api/setup cli_flags: ${JSON.stringify(setup.cli_flags)}`);
  const p = await newPage(d.base, { width: 1024, height: 700 });
  onFailure.push(() => shot(p, 'failure-nu2-empty'));
  await login(p, d);
  for (const view of ['overview', 'feed', 'memories']) {
    await p.goto(`${d.base}/#/${view}`);
    const cmd = p.getByTestId('empty-setup');
    await cmd.waitFor();
    await p.waitForFunction((want) => document.querySelector('[data-testid=empty-setup]')?.textContent?.includes(want),
      `memtray setup claude-code ${flags}`, { timeout: 10_000 });
    if (view !== 'feed') await shot(p, `empty-${view}`);
  }
  ok(`Overview, Live feed and Memories: memtray setup claude-code ${flags}`);

  step('a memory deleted in the window goes to the trash and comes back');
  const m = await d.api('POST', '/api/memories', { text: 'The release branch is cut every second Tuesday at noon UTC.', project: 'nu2', kind: 'fact' });
  await p.goto(`${d.base}/#/memories?id=${m.id}`);
  const del = p.locator('[data-testid=memory-detail] [data-action=delete]');
  await del.waitFor();
  await del.click();
  const toast = p.getByText('Memory moved to the trash');
  await toast.waitFor();
  // The delete runs when its undo window closes.
  let trash = [];
  for (let i = 0; i < 100 && !trash.some((t) => t.memory.id === m.id); i++) {
    await p.waitForTimeout(100);
    trash = (await d.api('GET', '/api/trash')) ?? [];
  }
  const t = trash.find((x) => x.memory.id === m.id);
  assert(t && t.reason === 'deleted', `the deleted memory is not in the trash: ${JSON.stringify(trash)}`);
  await p.goto(`${d.base}/#/steward`);
  const row = p.locator(`[data-testid=trash-row][data-id="${m.id}"]`);
  await row.waitFor();
  await shot(p, 'deleted-in-trash');
  await row.getByRole('button', { name: 'Restore' }).click();
  await row.waitFor({ state: 'detached' });
  const back = await d.api('GET', `/api/memories/${m.id}`);
  assert(back.text === m.text, `restored: ${JSON.stringify(back)}`);
  ok('deleted in the window: in Steward → Trash (reason "deleted"), Restore brings it back');
}
