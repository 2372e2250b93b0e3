// Tests of build/check-links.mjs: node --test build/
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, mkdirSync, writeFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { anchors, checkFiles, defaultFiles, links, slug } from './check-links.mjs';

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
