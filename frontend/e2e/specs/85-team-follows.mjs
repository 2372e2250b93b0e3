// The Overview's team line and settings follow the daemon, against a real
// PostgreSQL (../pg.mjs): a page opened while its daemon's role is not a
// member of the team yet says "not connected"; once an admin adds the
// role, the same page (no reload) says "connected as …" and shows the
// team's settings; a conflict retention another admin sets in the team
// database reaches it too, held in days (extract(day …) reads them). The
// team sync's state rides on the "stats" events the page already
// receives. At 9937c7b the page showed the status of its load until a
// reload.

export async function run(ctx) {
  const { newPage, login, shot, assert, ok, step, startDaemon, startPostgres } = ctx;

  step('team-follows: a member whose role is added after its page loaded');
  const pg = await startPostgres();
  pg.sql('CREATE ROLE team_owner LOGIN; CREATE ROLE carol LOGIN;');
  pg.sql('CREATE DATABASE team OWNER team_owner;');
  const team = (role) => ({
    config: { team: { share: true, projects: ['shop'], url_env: 'MEMTRAY_TEAM_URL', pull_interval: '300ms' } },
    env: { MEMTRAY_TEAM_URL: pg.url(role, 'team') },
  });
  const owner = await startDaemon('team-follows-owner', null, team('team_owner'));
  for (let i = 0; !(await owner.api('GET', '/api/team')).settings; i++) {
    assert(i < 100, 'the owner\'s daemon did not read the settings in 10 s');
    await new Promise((r) => setTimeout(r, 100));
  }
  const carol = await startDaemon('team-follows-carol', null, team('carol'));
  const page = await newPage(carol.base, { width: 1280, height: 900 });
  await login(page, carol);
  await page.goto(`${carol.base}/#/overview`);
  const line = page.getByTestId('team-line');
  await line.waitFor();
  await page.waitForFunction(() => document.querySelector('[data-testid=team-line]')?.textContent?.includes('not a member'), null, { timeout: 15000 });
  assert((await line.textContent()).includes('Team: not connected'), `carol's team line reads ${await line.textContent()}`);
  assert((await page.getByTestId('team-settings').count()) === 0, 'a daemon that never connected shows settings');
  await shot(page, 'team-follows-not-member');

  pg.sql("SELECT memtray.set_member('carol', false)", { role: 'team_owner', db: 'team' });
  await page.waitForFunction(() => document.querySelector('[data-testid=team-line]')?.textContent?.includes('connected as carol'), null, { timeout: 15000 });
  await page.getByTestId('team-settings').waitFor({ timeout: 15000 });
  assert((await page.getByTestId('team-retention').textContent()) === '90 days', 'carol\'s panel does not show 90 days');
  await page.getByTestId('team-settings-readonly').waitFor();
  await shot(page, 'team-follows-connected');
  ok('team-follows: the page loaded "not connected" shows "connected as carol" and the settings once an admin adds her, without a reload');

  step('team-follows: a retention another admin sets reaches the open page, in days');
  await owner.api('PATCH', '/api/team/settings', { conflict_retention_days: 21 });
  assert(pg.sql('SELECT extract(day FROM conflict_retention)::int, conflict_retention FROM memtray.settings', { db: 'team' }) === '21|21 days',
    `the team database holds ${pg.sql('SELECT conflict_retention FROM memtray.settings', { db: 'team' })}, want 21 days`);
  await page.waitForFunction(() => document.querySelector('[data-testid=team-retention]')?.textContent === '21 days', null, { timeout: 15000 });
  assert((await page.getByTestId('team-settings').textContent()).includes('set by team_owner'), 'carol\'s panel does not say who set it');
  await shot(page, 'team-follows-retention');
  ok('team-follows: 21 days set on the owner\'s daemon is "21 days" in SQL and on carol\'s open page');
  await page.close();
}
