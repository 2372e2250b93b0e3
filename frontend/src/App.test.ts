import { afterEach, describe, expect, it, vi } from 'vitest';
import { flushSync, mount, unmount } from 'svelte';
import App from './App.svelte';
import { setViewKeys } from './lib/util/keys';
import { fakeFetch, FakeEventSource } from './test/fakes';

// App's global keys, with the real views over a fetch that answers nothing.
describe('App keys', () => {
  let app: ReturnType<typeof mount> | undefined;
  afterEach(() => {
    if (app) unmount(app);
    app = undefined;
    document.body.innerHTML = '';
    location.hash = '';
    vi.unstubAllGlobals();
  });

  function start() {
    fakeFetch({});
    vi.stubGlobal('EventSource', FakeEventSource);
    vi.stubGlobal('ResizeObserver', class { observe() {} unobserve() {} disconnect() {} }); // jsdom has none
    location.hash = '#/feed';
    const target = document.createElement('div');
    document.body.append(target);
    app = mount(App, { target });
    flushSync();
  }
  const press = (key: string, on: EventTarget = window) => {
    on.dispatchEvent(new KeyboardEvent('keydown', { key, bubbles: true }));
    flushSync();
  };

  // Bug 12: `g o`, `g m`... were declared and did nothing.
  it('g then a letter goes to the view', () => {
    start();
    for (const [letter, view] of [['o', 'overview'], ['m', 'memories'], ['n', 'noise'], ['t', 'steward'], ['s', 'settings'], ['f', 'feed']]) {
      press('g');
      press(letter);
      expect(location.hash).toBe(`#/${view}`);
    }
    press('g');
    press('j'); // not a view: the g is dropped
    press('o');
    expect(location.hash).toBe('#/feed');
  });

  // Bug 6: Esc did not close the keys dialog (it never took focus) and
  // closed the detail pane behind it instead.
  it('Esc closes the keys dialog and nothing behind it', () => {
    start();
    const close = vi.fn();
    const remove = vi.fn();
    setViewKeys({ close, remove });
    press('?');
    const dialog = document.querySelector('[role=dialog]');
    expect(dialog).not.toBeNull();
    expect(document.activeElement).toBe(dialog);
    press('x'); // the view behind the dialog gets no keys
    expect(remove).not.toHaveBeenCalled();
    press('Escape', document.activeElement!);
    expect(document.querySelector('[role=dialog]')).toBeNull();
    expect(close).not.toHaveBeenCalled();

    press('?'); // focus elsewhere: the window still closes it first
    (document.activeElement as HTMLElement).blur();
    press('Escape');
    expect(document.querySelector('[role=dialog]')).toBeNull();
    expect(close).not.toHaveBeenCalled();
  });
});
