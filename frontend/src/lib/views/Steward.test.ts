import { afterEach, describe, expect, it, vi } from 'vitest';
import { flushSync, mount, unmount } from 'svelte';
import Steward from './Steward.svelte';
import { toasts } from '../stores/toasts';
import { fakeFetch } from '../../test/fakes';

const warning = (id: string) => `trash entry ${id} is unreadable (corrupt record): left out of the trash's list; \`memtray trash purge ${id}\` deletes it`;

// The trash view shows the entries the list leaves out because they cannot
// be read (exp-store5: Info.trash_unreadable and a warning naming each; their
// ids as data since exp-ui3, Info.trash_unreadable_ids),
// with how to delete them: at 9937c7b it said "Empty." over them.
describe('Steward trash, unreadable entries', () => {
  const mounted: ReturnType<typeof mount>[] = [];
  afterEach(() => {
    mounted.splice(0).forEach((c) => unmount(c));
    document.body.innerHTML = '';
    toasts.set([]);
    vi.unstubAllGlobals();
  });

  it('counts them, says how to purge them and purges them', async () => {
    let bad = 1;
    const { calls } = fakeFetch({
      'GET /api/trash': [],
      'GET /api/steward/runs': [],
      'GET /api/stats': () => ({ body: { store: { count: 3, trash_unreadable: bad, trash_unreadable_ids: bad ? ['01JBADTRASH'] : undefined, warnings: bad ? [warning('01JBADTRASH')] : [] } } }),
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

  // The ids are data (Info.trash_unreadable_ids, exp-ui3): at 1368516 the
  // view parsed them out of the warnings' text, so a warning worded
  // otherwise left the entries unnamed and the Delete button out.
  it('names them by the stats\' ids, whatever the warnings say', async () => {
    const { calls } = fakeFetch({
      'GET /api/trash': [],
      'GET /api/steward/runs': [],
      'GET /api/stats': { store: { count: 3, trash_unreadable: 2, trash_unreadable_ids: ['01JBADA', '01JBADB'], warnings: ['2 trash entries could not be decoded'] } },
      'POST /api/trash/purge': { purged: 2 },
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
    expect(text).toContain('2 trash entries cannot be read and are not listed (01JBADA, 01JBADB)');
    expect(text).toContain('memtray trash purge 01JBADA 01JBADB');
    target.querySelector<HTMLButtonElement>('[data-action=purge-unreadable]')?.click();
    flushSync();
    target.querySelector<HTMLButtonElement>('[data-action=purge-unreadable-confirm]')?.click();
    await vi.waitFor(() => expect(calls.find((c) => c.url === '/api/trash/purge')?.body).toEqual({ ids: ['01JBADA', '01JBADB'] }));
  });
});
