// Issue 23: the team's settings where a user sees them, against a real
// PostgreSQL (../pg.mjs) and two real daemons sharing one team database:
// the team owner's (the database's first admin) and alice's (a member).
// The Overview's team panel shows what the team database says (the
// conflict retention, who set it, the schema and its floor); the admin
// changes the retention there (PATCH /api/team/settings), a value out of
// range is refused with a clear error and changes nothing, and the
// member's daemon reads the new value at its next pull and offers no form.

export async function run(ctx) {
  const { newPage, login, shot, assert, ok, step, startDaemon, startPostgres } = ctx;

  step('team-settings: a team database on a real PostgreSQL, an admin and a member');
  const pg = await startPostgres();
  pg.sql('CREATE ROLE team_owner LOGIN; CREATE ROLE alice LOGIN;');
  pg.sql('CREATE DATABASE team OWNER team_owner;');
  const team = (role) => ({
    config: { team: { share: true, projects: ['shop'], url_env: 'MEMTRAY_TEAM_URL', pull_interval: '300ms' } },
    env: { MEMTRAY_TEAM_URL: pg.url(role, 'team') },
  });
  const owner = await startDaemon('team-owner', null, team('team_owner'));
  const settingsOf = async (d, want) => {
    for (let i = 0; ; i++) {
      const st = await d.api('GET', '/api/team');
      if (st.settings && (!want || want(st.settings))) return st.settings;
      assert(i < 100, `GET /api/team has no settings ${want ? 'as expected ' : ''}after 10 s: ${JSON.stringify(st)}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  };
  const first = await settingsOf(owner);
  assert(first.conflict_retention_days === 90 && first.admin && first.settable && first.schema >= 7 && first.floor === 3,
    `the owner's daemon reads ${JSON.stringify(first)}`);
  pg.sql("SELECT memtray.set_member('alice', false)", { role: 'team_owner', db: 'team' });
  const alice = await startDaemon('team-alice', null, team('alice'));
  const theirs = await settingsOf(alice);
  assert(!theirs.admin && theirs.conflict_retention_days === 90, `alice's daemon reads ${JSON.stringify(theirs)}`);
  ok('team-settings: both daemons read the settings from the team database (90 days, schema and floor)');

  step('team-settings: the admin changes the retention on the Overview');
  const page = await newPage(owner.base, { width: 1280, height: 900 });
  await login(page, owner);
  await page.goto(`${owner.base}/#/overview`);
  const panel = page.getByTestId('team-settings');
  await panel.waitFor();
  assert((await panel.getByTestId('team-retention').textContent()) === '90 days', 'the panel does not show 90 days');
  const schema = (await panel.getByTestId('team-schema').textContent()).replace(/\s+/g, ' ');
  assert(schema.includes(`schema ${first.schema}; memtray of schema 3 or later syncs with it`), `the panel's schema line reads ${schema}`);
  const input = panel.getByTestId('team-retention-input');
  await input.fill('0');
  await panel.getByRole('button', { name: 'Save' }).click();
  const error = panel.getByTestId('team-retention-error');
  await error.waitFor();
  assert((await error.textContent()).includes('from 1 to 3650, not 0'), `the error for 0 reads ${await error.textContent()}`);
  assert(pg.sql('SELECT extract(day FROM conflict_retention)::int FROM memtray.settings', { db: 'team' }) === '90', 'a refused value changed the team database');
  await shot(page, 'team-settings-refused');
  await input.fill('45');
  await panel.getByRole('button', { name: 'Save' }).click();
  await panel.getByTestId('team-retention-saved').waitFor();
  await page.waitForFunction(() => document.querySelector('[data-testid=team-retention]')?.textContent === '45 days');
  assert((await error.count()) === 0, 'the error stays after a good value');
  assert(pg.sql('SELECT extract(day FROM conflict_retention)::int, changed_by FROM memtray.settings', { db: 'team' }) === '45|team_owner',
    `the team database does not hold 45 days set by team_owner: ${pg.sql('SELECT extract(day FROM conflict_retention)::int, changed_by FROM memtray.settings', { db: 'team' })}`);
  await shot(page, 'team-settings-saved');
  ok('team-settings: 0 refused with a clear error and nothing changed; 45 saved in the team database');

  step('team-settings: the API validates as the command line does; a member may not change it');
  const bad = await fetch(`${owner.base}/api/team/settings`, {
    method: 'PATCH', headers: { Authorization: `Bearer ${owner.token}`, 'Content-Type': 'application/json' }, body: JSON.stringify({ conflict_retention_days: 4000 }),
  });
  const badBody = await bad.json();
  assert(bad.status === 400 && badBody.fields?.conflict_retention_days?.includes('from 1 to 3650, not 4000'), `PATCH 4000 = ${bad.status} ${JSON.stringify(badBody)}`);
  const noToken = await fetch(`${owner.base}/api/team/settings`, { method: 'PATCH', headers: { 'Content-Type': 'application/json' }, body: '{"conflict_retention_days":7}' });
  assert(noToken.status === 401, `PATCH without the token = ${noToken.status}`);
  let refused = '';
  await alice.api('PATCH', '/api/team/settings', { conflict_retention_days: 7 }).catch((e) => { refused = String(e.message); });
  assert(refused.includes('403') && refused.includes('only a team admin'), `alice's PATCH: ${refused || 'accepted'}`);
  assert(pg.sql('SELECT extract(day FROM conflict_retention)::int FROM memtray.settings', { db: 'team' }) === '45', 'a refused PATCH changed the team database');
  ok('team-settings: 4000 refused per field, no token refused, a member refused; the database still holds 45');

  step("team-settings: the member's Overview shows the new value and no form");
  await settingsOf(alice, (s) => s.conflict_retention_days === 45);
  const mpage = await newPage(alice.base, { width: 1280, height: 900 });
  await login(mpage, alice);
  await mpage.goto(`${alice.base}/#/overview`);
  const mpanel = mpage.getByTestId('team-settings');
  await mpanel.waitFor();
  assert((await mpanel.getByTestId('team-retention').textContent()) === '45 days', "alice's panel does not show 45 days");
  assert((await mpanel.getByTestId('team-retention-form').count()) === 0, "alice's panel offers a form");
  await mpanel.getByTestId('team-settings-readonly').waitFor();
  await shot(mpage, 'team-settings-member');
  ok("team-settings: the member's daemon read 45 days at a pull; its panel shows it, read-only");
  await page.close();
  await mpage.close();
}
