#!/usr/bin/env node
// Checks that frontend/package-lock.json agrees with frontend/package.json
// the way every npm version's `npm ci` requires, without running npm:
//
//   - the lock's root entry lists the same dependencies as package.json, and
//     each exactly pinned one is locked at that version;
//   - every package the lock names is itself in the lock with every one of
//     its optional dependencies (npm 11 refuses a lock that lacks, say,
//     @rollup/rollup-android-arm-eabi even on Linux; npm 10 accepted it, so
//     a lock written on one platform by an npm that prunes them passed here
//     and failed on a fresh machine with npm 11).
//
// Usage: node build/check-lock.mjs [DIR]   (DIR defaults to frontend/)
// Exit 0 when in sync; 1 with one line saying what is wrong and the command
// that fixes it; 2 when a file cannot be read.
import { readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const depFields = ['dependencies', 'devDependencies', 'optionalDependencies', 'peerDependencies'];

/**
 * Returns the problems found in a package.json and its lock (parsed JSON),
 * each one line; an empty list means `npm ci` accepts the pair.
 */
export function checkLock(pkg, lock) {
  const problems = [];
  if (!lock || typeof lock !== 'object' || typeof lock.packages !== 'object' || lock.packages === null) {
    return ['the lock has no "packages" map (lockfileVersion 2 or 3 is needed)'];
  }
  const packages = lock.packages;
  const root = packages[''] ?? {};
  for (const field of depFields) {
    const want = pkg[field] ?? {};
    const got = root[field] ?? {};
    for (const [name, spec] of Object.entries(want)) {
      if (got[name] === undefined) {
        problems.push(`${name} (${field} of package.json) is not in the lock`);
      } else if (got[name] !== spec) {
        problems.push(`${name} is ${spec} in package.json but ${got[name]} in the lock`);
      } else if (/^\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?$/.test(spec)) {
        const locked = packages[`node_modules/${name}`];
        if (locked && locked.version !== spec) {
          problems.push(`${name} is pinned to ${spec} but the lock installs ${locked.version}`);
        }
      }
    }
    for (const name of Object.keys(got)) {
      if (want[name] === undefined) {
        problems.push(`${name} is in the lock's ${field} but not in package.json`);
      }
    }
  }
  const missing = [];
  for (const [path, entry] of Object.entries(packages)) {
    if (entry === null || typeof entry !== 'object' || entry.link) continue;
    for (const name of Object.keys(entry.optionalDependencies ?? {})) {
      if (resolve(packages, path, name) === undefined) missing.push(name);
    }
    for (const name of Object.keys(entry.dependencies ?? {})) {
      if (path !== '' && resolve(packages, path, name) === undefined) missing.push(name);
    }
  }
  const unique = [...new Set(missing)].sort();
  if (unique.length > 0) {
    const more = unique.length > 1 ? ` and ${unique.length - 1} more` : '';
    problems.push(`the lock is missing ${unique[0]}${more} (optional platform packages must all be recorded)`);
  }
  return problems;
}

// resolve finds the lock entry Node's module resolution would use for name
// required from the package at path: its own node_modules, then each
// enclosing one up to the root.
function resolve(packages, path, name) {
  let dir = path;
  for (;;) {
    const key = dir === '' ? `node_modules/${name}` : `${dir}/node_modules/${name}`;
    if (packages[key] !== undefined) return key;
    if (dir === '') return undefined;
    const i = dir.lastIndexOf('/node_modules/');
    dir = i < 0 ? '' : dir.slice(0, i);
  }
}

function main() {
  const here = fileURLToPath(new URL('.', import.meta.url));
  const dir = process.argv[2] ?? join(here, '..', 'frontend');
  let pkg, lock;
  try {
    pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
    lock = JSON.parse(readFileSync(join(dir, 'package-lock.json'), 'utf8'));
  } catch (err) {
    console.error(`memtray: cannot read ${dir}'s package.json and package-lock.json: ${err.message}`);
    process.exit(2);
  }
  const problems = checkLock(pkg, lock);
  if (problems.length > 0) {
    const shown = relative(process.cwd(), dir) || '.';
    console.error(`memtray: ${shown}/package-lock.json is out of sync with package.json: ${problems.join('; ')}. Fix: (cd ${shown} && npm install --package-lock-only --no-audit --no-fund) and commit the lock.`);
    process.exit(1);
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) main();
