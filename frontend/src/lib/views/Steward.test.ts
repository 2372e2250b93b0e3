import { afterEach, describe, expect, it, vi } from 'vitest';
import { flushSync, mount, unmount } from 'svelte';
import Steward from './Steward.svelte';
import { unreadableTrashIds } from '../stores/steward';
import { toasts } from '../stores/toasts';
import { fakeFetch } from '../../test/fakes';

const warning = (id: string) => `trash entry ${id} is unreadable (corrupt record): left out of the trash's list; \`memtray trash purge ${id}\` deletes it`;

// The trash view shows the entries the list leaves out because they cannot
// be read (exp-store5: Info.trash_unreadable and a warning naming each),
// with how to delete them: at 9937c7b it said "Empty." over them.
describe('Steward trash, unreadable entries', () => {
  const mounted: ReturnType<typeof mount>[] = [];
  afterEach(() => {
    mounted.splice(0).forEach((c) => unmount(c));
    document.body.innerHTML = '';
    toasts.set([]);
    vi.unstubAllGlobals();
  });

  it('names them from the warnings, each once', () => {
    expect(unreadableTrashIds([warning('01A'), 'text index rebuilt', `${warning('01B')}; ${warning('01A')}`])).toEqual(['01A', '01B']);
    expect(unreadableTrashIds([])).toEqual([]);
  });

  it('counts them, says how to purge them and purges them', async () => {
    let bad = 1;
    const { calls } = fakeFetch({
      'GET /api/trash': [],
      'GET /api/steward/runs': [],
      'GET /api/stats': () => ({ body: { store: { count: 3, trash_unreadable: bad, warnings: bad ? [warning('01JBADTRASH')] : [] } } }),
      'POST /api/trash/purge': () => { bad = 0; return { body: { purged: 1 } }; },
    });
    const target = document.createElement('div');
    document.body.append(target);
    mounted.push(mount(Steward, { target }));
    const box = () => target.querySelector('[data-testid=trash-unreadable]');
    await vi.waitFor(() => {
      flushSync();
      expect(box()).not.toBeNull();
    });
    const text = (box()?.textContent ?? '').replace(/\s+/g, ' ');
    expect(text).toContain('1 trash entry cannot be read and is not listed (01JBADTRASH)');
    expect(text).toContain('memtray trash purge 01JBADTRASH');
    expect(target.textContent).toContain('Trash (0 + 1 unreadable)');
    expect(target.textContent).not.toContain('Empty.');

    target.querySelector<HTMLButtonElement>('[data-action=purge-unreadable]')?.click();
    flushSync();
    target.querySelector<HTMLButtonElement>('[data-action=purge-unreadable-confirm]')?.click();
    await vi.waitFor(() => {
      flushSync();
      expect(box()).toBeNull();
    });
    expect(calls.find((c) => c.url === '/api/trash/purge')?.body).toEqual({ ids: ['01JBADTRASH'] });
    expect(target.textContent).toContain('Empty.');
  });
});
