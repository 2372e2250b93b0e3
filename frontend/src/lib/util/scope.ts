// What a memory's scope means where the user meets it (issue 23, exp-ui3):
// the default scope explained for the memory at hand, and what a move to
// the team did, by the team sync's state. The command line says the same
// (backend/cli/team.go: scopeSaid, scopeShown, defaultScopeSaid).
import type { Memory, TeamStatus } from '../api/models';

/** How to turn team memory on (README, Team memory). */
export const TEAM_ON_HOW = 'set "team": {"share": true, "projects": [...]} in the config and the connection string (docs/team.md), run `memtray team init` and restart memtray';

/** What the three scopes are: the scope's and the scope filter's title. */
export const SCOPES_TITLE = 'team: pushed to the team database and shared with every member. personal: never leaves this machine. ' +
  "default (none set): team when team memory is on, team.projects lists the memory's project and it is not a preference (type user); else personal";

/**
 * scopeMoved is the toast of a move to scope: teamOn is whether team
 * memory is on (undefined: not known yet). With it off, a move to the team
 * is recorded in the memory and pushed once team memory is on, at its
 * first connection to the team database (exp-teamon); a move to personal
 * withdraws the team's copy then, if the team holds one (exp-team7).
 */
export function scopeMoved(scope: 'team' | 'personal', teamOn: boolean | undefined): string {
  if (scope === 'personal') {
    return teamOn === false
      ? 'Personal: it stays on this machine. Team memory is off, so if the team holds a copy, it is withdrawn once team memory is on, at its first connection to the team database'
      : 'Personal: it stays on this machine';
  }
  if (teamOn === true) return 'Shared with the team: pushed at the next sync';
  if (teamOn === false) return `Recorded for the team; team memory is off, so it is pushed once team memory is on, at its first connection to the team database. To share it, ${TEAM_ON_HOW}`;
  return 'Recorded for the team: pushed at the next sync, or once team memory is on';
}

/** teamOffNote is what the detail says beside the scope of a team memory while team memory is off, or null. */
export function teamOffNote(m: Pick<Memory, 'scope'>, team: TeamStatus | null | undefined): string | null {
  return m.scope === 'team' && team !== undefined && !team?.enabled ? 'recorded for the team; team memory is off, so it is pushed once team memory is on' : null;
}

/**
 * defaultScopeWhy says what the default scope means for m now (team or
 * personal, and why), team the team sync's state: null when team memory
 * is off, undefined when not known yet (then it says what decides).
 */
export function defaultScopeWhy(m: Pick<Memory, 'project' | 'type'>, team: TeamStatus | null | undefined): string {
  if (team === undefined) return 'team or personal, as team.projects decides';
  if (!team?.enabled) return 'personal, as team memory is off';
  if (m.type === 'user') return 'personal, as a preference (type user) is never shared by default';
  if (!m.project) return 'personal, as it has no project';
  const projects = team.projects ?? [];
  if (projects.includes('*') || projects.includes(m.project)) return `team, as team.projects lists “${m.project}”`;
  return `personal, as team.projects does not list “${m.project}”`;
}
