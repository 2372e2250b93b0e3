// Tests of build/check-links.mjs: node --test build/
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, mkdirSync, readdirSync, statSync, writeFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { anchors, checkFiles, checkTree, defaultFiles, links, shippedFiles, slug, treeFiles } from './check-links.mjs';

const slugCases = [
  ['Quick start (Debian / Ubuntu)', 'quick-start-debian--ubuntu'],
  ['Where your data lives, moving it', 'where-your-data-lives-moving-it'],
  ['`capture.transcripts`', 'capturetranscripts'],
  ['`steward.types.<name>`', 'stewardtypesname'],
  ['The real clients (`make test-clients`)', 'the-real-clients-make-test-clients'],
  ['AppImage (any x86-64 Linux with WebKitGTK 4.1)', 'appimage-any-x86-64-linux-with-webkitgtk-41'],
  ['Settings → Embedder', 'settings--embedder'],
  ['A [link](x.md) in a heading', 'a-link-in-a-heading'],
  ['snake_case kept', 'snake_case-kept'],
];
for (const [heading, want] of slugCases) {
  test(`slug: ${heading}`, () => assert.equal(slug(heading), want));
}

test('anchors: repeated headings are numbered, code blocks are not headings', () => {
  const md = '# Title\n\n## Usage\n\n```sh\n# not a heading\n```\n\n## Usage\n\n### Usage ###\n<a name="custom"></a>\n';
  assert.deepEqual([...anchors(md)].sort(), ['custom', 'title', 'usage', 'usage-1', 'usage-2']);
});

test('links: inline, images, references; not in code', () => {
  const md = [
    'See [the docs](docs/a.md#top) and ![a picture](docs/p.png "title").',
    'Not `[code](nope.md)` here.',
    '```',
    '[fenced](nope.md)',
    '```',
    '[ref]: docs/b.md',
    '[nested [brackets]](c.md)',
  ].join('\n');
  assert.deepEqual(links(md), [
    { target: 'docs/a.md#top', line: 1 },
    { target: 'docs/p.png', line: 1 },
    { target: 'docs/b.md', line: 6 },
    { target: 'c.md', line: 7 },
  ]);
});

test('checkFiles: finds missing files and anchors, follows good ones', () => {
  const root = mkdtempSync(join(tmpdir(), 'check-links-'));
  try {
    mkdirSync(join(root, 'docs'));
    writeFileSync(join(root, 'docs', 'shot.png'), '');
    writeFileSync(join(root, 'docs', 'a.md'), '# A\n\n## Part one\n\nBack to [the README](../README.md#intro).\n');
    writeFileSync(
      join(root, 'README.md'),
      [
        '# Intro',
        '[ok](docs/a.md#part-one) [ok too](#intro) ![ok](docs/shot.png) [web](https://example.com/x#y)',
        '[no file](docs/gone.md) [no anchor](docs/a.md#part-two) [no local anchor](#nowhere)',
        '[dir](docs/) [not markdown](docs/shot.png#x)',
      ].join('\n'),
    );
    assert.deepEqual(defaultFiles(root), ['README.md', join('docs', 'a.md')]);
    assert.deepEqual(checkFiles(root, defaultFiles(root)), [
      'README.md:3: docs/gone.md: no such file docs/gone.md',
      'README.md:3: docs/a.md#part-two: docs/a.md has no heading #part-two',
      'README.md:3: #nowhere: README.md has no heading #nowhere',
    ]);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

test("the repository's README.md and docs/*.md link only to what exists", () => {
  const root = fileURLToPath(new URL('..', import.meta.url));
  assert.deepEqual(checkFiles(root, defaultFiles(root)), []);
});

/** Writes files (path relative to root: content) under a new temporary root; returns it. */
function tree(files) {
  const root = mkdtempSync(join(tmpdir(), 'check-links-'));
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(join(root, path, '..'), { recursive: true });
    writeFileSync(join(root, path), content);
  }
  return root;
}

test('shippedFiles: README.md and what it links to, transitively; not what nothing links to', () => {
  const root = tree({
    'README.md': '# R\n[a](docs/a.md#x) ![p](docs/p.png) [dir](docs/) [gone](docs/gone.md) [web](https://e.com/y.md) [self](#r)\n',
    'docs/a.md': '# A\n[b](b.md) [back](../README.md) [code](`../x.md`)\n```\n[fenced](c.md)\n```\n',
    'docs/b.md': '# B\n[a again](./a.md) [img](img/q.png)\n',
    'docs/c.md': '# C (linked only from a code block)\n',
    'docs/unlinked.md': '# nobody links here\n',
    'docs/p.png': '',
    'docs/img/q.png': '',
    'docs/unused.png': '',
  });
  try {
    assert.deepEqual(shippedFiles(root), ['README.md', 'docs/a.md', 'docs/b.md', 'docs/img/q.png', 'docs/p.png']);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

test('shippedFiles: a link out of the repository cannot be shipped', () => {
  const root = tree({ 'r/README.md': '[a](docs/a.md)\n', 'r/docs/a.md': '[out](../../secret.md)\n', 'secret.md': 'x' });
  try {
    assert.throws(() => shippedFiles(join(root, 'r')), /docs\/a\.md:1: \.\.\/\.\.\/secret\.md leads outside/);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

test('checkTree: every page under the tree, links kept inside it', () => {
  const root = tree({
    'usr/share/doc/memtray/README.md': '# R\n[a](docs/a.md#a) [gone](docs/gone.md) [up](../../../../etc.md)\n',
    'usr/share/doc/memtray/docs/a.md': '# A\n[back](../README.md#r) [bad](../README.md#nope) [sibling](../../other/x.md)\n',
    'usr/share/doc/other/x.md': '# X\n',
    'etc.md': '',
  });
  const doc = join(root, 'usr/share/doc/memtray');
  try {
    assert.deepEqual(treeFiles(doc), ['README.md', join('docs', 'a.md')]);
    assert.deepEqual(checkTree(doc), [
      'README.md:2: docs/gone.md: no such file docs/gone.md',
      `README.md:2: ../../../../etc.md: leads outside ${doc}`,
      'docs/a.md:2: ../README.md#nope: README.md has no heading #nope',
      `docs/a.md:2: ../../other/x.md: leads outside ${doc}`,
    ]);
    assert.throws(() => checkTree(join(doc, 'docs')), /no README\.md/);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

const repo = fileURLToPath(new URL('..', import.meta.url));

test("the repository's README.md alone (what the packages shipped before) has dead links", () => {
  const dest = mkdtempSync(join(tmpdir(), 'check-links-'));
  try {
    copyFileSync(join(repo, 'README.md'), join(dest, 'README.md'));
    assert.notDeepEqual(checkTree(dest), []);
  } finally {
    rmSync(dest, { recursive: true, force: true });
  }
});

test('build/doc-tree.sh lays out the shipped files so that every link resolves inside them', () => {
  const dest = join(mkdtempSync(join(tmpdir(), 'check-links-')), 'doc');
  try {
    execFileSync(join(repo, 'build', 'doc-tree.sh'), [dest], { stdio: ['ignore', 'ignore', 'pipe'] });
    assert.deepEqual(checkTree(dest), []);
    const laidOut = [];
    const walk = (rel) => {
      for (const e of readdirSync(join(dest, rel), { withFileTypes: true })) {
        const p = join(rel, e.name);
        const mode = statSync(join(dest, p)).mode & 0o777;
        if (e.isDirectory()) {
          assert.equal(mode, 0o755, p);
          walk(p);
        } else {
          assert.equal(mode, 0o644, p);
          laidOut.push(p);
        }
      }
    };
    walk('');
    assert.deepEqual(laidOut.sort(), shippedFiles(repo));
    // A second run into the same place is refused (no mixing with old files).
    assert.throws(() => execFileSync(join(repo, 'build', 'doc-tree.sh'), [dest], { stdio: 'pipe' }), /already holds a README\.md/);
  } finally {
    rmSync(join(dest, '..'), { recursive: true, force: true });
  }
});
