// Tests of build/check-lock.mjs: node --test build/
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { checkLock } from './check-lock.mjs';

const pkg = { devDependencies: { vite: '6.4.6' } };
const lock = (extra = {}) => ({
  lockfileVersion: 3,
  packages: {
    '': { devDependencies: { vite: '6.4.6' } },
    'node_modules/vite': { version: '6.4.6', dependencies: { rollup: '^4' } },
    'node_modules/rollup': { version: '4.1.0', optionalDependencies: { '@rollup/rollup-linux-x64-gnu': '4.1.0', '@rollup/rollup-android-arm-eabi': '4.1.0' } },
    'node_modules/@rollup/rollup-linux-x64-gnu': { version: '4.1.0', optional: true },
    'node_modules/@rollup/rollup-android-arm-eabi': { version: '4.1.0', optional: true },
    ...extra,
  },
});

const cases = [
  { name: 'in sync', pkg, lock: lock(), want: [] },
  {
    name: 'an optional platform package missing (what npm 11 refuses)',
    pkg,
    lock: lock({ 'node_modules/@rollup/rollup-android-arm-eabi': undefined }),
    want: [/missing @rollup\/rollup-android-arm-eabi/],
  },
  {
    name: 'nested copy resolves before the root one',
    pkg,
    lock: lock({
      'node_modules/vite/node_modules/rollup': { version: '3.0.0', optionalDependencies: { fsevents: '2' } },
      'node_modules/vite/node_modules/fsevents': { version: '2.3.3', optional: true },
    }),
    want: [],
  },
  {
    name: 'a dependency of a package missing',
    pkg,
    lock: lock({ 'node_modules/rollup': undefined, 'node_modules/@rollup/rollup-linux-x64-gnu': undefined }),
    want: [/missing rollup/],
  },
  { name: 'version differs from package.json', pkg: { devDependencies: { vite: '6.4.7' } }, lock: lock(), want: [/6\.4\.7 in package\.json but 6\.4\.6/] },
  { name: 'package.json adds a dependency', pkg: { devDependencies: { vite: '6.4.6', svelte: '5.0.0' } }, lock: lock(), want: [/svelte .* is not in the lock/] },
  { name: 'package.json drops a dependency', pkg: { devDependencies: {} }, lock: lock(), want: [/vite is in the lock's devDependencies but not in package\.json/] },
  { name: 'pinned version not what is locked', pkg, lock: lock({ 'node_modules/vite': { version: '6.4.5' } }), want: [/pinned to 6\.4\.6 but the lock installs 6\.4\.5/] },
  { name: 'not a v2/v3 lock', pkg, lock: { lockfileVersion: 1, dependencies: {} }, want: [/no "packages" map/] },
];

for (const c of cases) {
  test(c.name, () => {
    const got = checkLock(c.pkg, JSON.parse(JSON.stringify(c.lock)));
    assert.equal(got.length, c.want.length, `problems: ${JSON.stringify(got)}`);
    c.want.forEach((re, i) => assert.match(got[i], re));
  });
}

test("the repository's own lock is in sync", () => {
  const dir = new URL('../frontend/', import.meta.url);
  const got = checkLock(
    JSON.parse(readFileSync(new URL('package.json', dir), 'utf8')),
    JSON.parse(readFileSync(new URL('package-lock.json', dir), 'utf8')),
  );
  assert.deepEqual(got, []);
});
