import { describe, expect, it } from 'vitest';
import { defaultScopeWhy, scopeMoved, teamOffNote } from './scope';
import type { TeamStatus } from '../api/models';

const on = (projects: string[]) => ({ enabled: true, connected: true, outbox: 0, lag_seconds: 0, last_error: '', pushed: 0, pulled: 0, relinked: 0, projects }) as TeamStatus;

// The default scope and a move's toast, as the command line says them
// (backend/cli/team.go, TestScopeSaid).
describe('scope', () => {
  it('says what the default scope means for a memory', () => {
    const shop = { project: 'shop', type: 'project' };
    expect(defaultScopeWhy(shop, undefined)).toBe('team or personal, as team.projects decides');
    expect(defaultScopeWhy(shop, null)).toBe('personal, as team memory is off');
    expect(defaultScopeWhy(shop, on(['shop']))).toBe('team, as team.projects lists “shop”');
    expect(defaultScopeWhy(shop, on(['*']))).toBe('team, as team.projects lists “shop”');
    expect(defaultScopeWhy({ project: 'web', type: 'project' }, on(['shop']))).toBe('personal, as team.projects does not list “web”');
    expect(defaultScopeWhy({ project: 'shop', type: 'user' }, on(['*']))).toMatch(/^personal, as a preference/);
    expect(defaultScopeWhy({ type: 'project' }, on(['*']))).toBe('personal, as it has no project');
  });

  it('says what a move did', () => {
    expect(scopeMoved('team', true)).toBe('Shared with the team: pushed at the next sync');
    expect(scopeMoved('team', false)).toMatch(/^Recorded for the team; team memory is off, so it is pushed once team memory is on, at its first connection to the team database\. To share it, set "team": \{"share": true.*restart memtray$/);
    expect(scopeMoved('team', false)).not.toContain('push --all');
    expect(scopeMoved('team', undefined)).toBe('Recorded for the team: pushed at the next sync, or once team memory is on');
    expect(scopeMoved('personal', true)).toBe('Personal: it stays on this machine');
    expect(scopeMoved('personal', undefined)).toBe('Personal: it stays on this machine');
    expect(scopeMoved('personal', false)).toMatch(/^Personal: it stays on this machine\. Team memory is off, so if the team holds a copy, it is withdrawn once team memory is on/);
    expect(teamOffNote({ scope: 'team' }, null)).toContain('pushed once team memory is on');
    expect(teamOffNote({ scope: 'team' }, on([]))).toBeNull();
    expect(teamOffNote({ scope: 'team' }, undefined)).toBeNull();
    expect(teamOffNote({ scope: '' }, null)).toBeNull(); // the default, said always (exp-teamon)
  });
});
