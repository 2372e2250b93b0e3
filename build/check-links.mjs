#!/usr/bin/env node
// Checks the relative links of the repository's Markdown pages: every
// [text](path), ![alt](path) and [ref]: path in README.md and docs/*.md
// names a file or directory that exists, and every #anchor (on its own or
// after a Markdown file's path) names a heading of that page, as GitHub
// makes anchors from headings (lower case, punctuation dropped, spaces to
// hyphens, a repeated heading gets -1, -2, ...). Links to other sites
// (http:, https:, mailto:) are not followed. Text in code spans and fenced
// code blocks is not a link.
//
// The packages ship README.md with the documentation it links to (under
// /usr/share/doc/memtray in the .deb, beside the binary in the CLI tarball;
// build/doc-tree.sh lays it out): --shipped lists those files, and --tree
// checks such an installed tree, where a link must also stay inside it.
//
// Usage: node build/check-links.mjs [FILE.md...]   (default: README.md docs/*.md)
//        node build/check-links.mjs --shipped      README.md and every file it
//            links to, transitively through the Markdown pages: one path a line
//        node build/check-links.mjs --tree DIR     every *.md under DIR (which
//            must hold README.md), each link resolving inside DIR
// Exit 0 when every link resolves; 1 with one line per broken link; 2 when a
// named file cannot be read (or, with --shipped, a link leaves the repository).
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Returns the lines of a Markdown text with fenced code blocks blanked. */
function proseLines(md) {
  const lines = md.split(/\r?\n/);
  let fence = null;
  return lines.map((line) => {
    const m = line.match(/^ {0,3}(`{3,}|~{3,})/);
    if (fence) {
      if (m && m[1][0] === fence[0] && m[1].length >= fence.length && line.trim() === m[1]) fence = null;
      return '';
    }
    if (m) {
      fence = m[1];
      return '';
    }
    return line;
  });
}

/** Removes code spans from one line (their text is never a link). */
function dropCodeSpans(line) {
  return line.replace(/(`+)[\s\S]*?\1/g, '');
}

/**
 * Returns the anchor GitHub gives a heading's text: the rendered text (code
 * spans' content kept as written, link text kept, HTML tags dropped) in lower case,
 * every character that is not a letter, digit, space, hyphen or underscore
 * dropped, and spaces turned into hyphens.
 */
export function slug(heading) {
  const text = heading
    .split(/(`+[^`]*`+)/) // code spans keep their text as written
    .map((part, i) =>
      i % 2 === 1
        ? part.replace(/`/g, '')
        : part
            .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1') // links and images: their text
            .replace(/<[^>]+>/g, ''), // inline HTML tags
    )
    .join('')
    .toLowerCase()
    .trim();
  return text.replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '').replace(/ /g, '-');
}

/** Returns the set of anchors a Markdown page defines: its headings' slugs and explicit ids. */
export function anchors(md) {
  const seen = new Map();
  const out = new Set();
  for (const line of proseLines(md)) {
    const h = line.match(/^ {0,3}#{1,6}[ \t]+(.*?)(?:[ \t]+#+)?[ \t]*$/);
    if (h) {
      const base = slug(h[1]);
      const n = seen.get(base) ?? 0;
      seen.set(base, n + 1);
      out.add(n === 0 ? base : `${base}-${n}`);
    }
    for (const m of line.matchAll(/<a\s+(?:name|id)="([^"]+)"/g)) out.add(m[1]);
  }
  return out;
}

/** Returns the link targets of a Markdown page with their line numbers, outside code. */
export function links(md) {
  const out = [];
  proseLines(md).forEach((raw, i) => {
    const line = dropCodeSpans(raw);
    for (const m of line.matchAll(/!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]*)>?(?:\s+"[^"]*")?\s*\)/g)) {
      out.push({ target: m[1], line: i + 1 });
    }
    const ref = line.match(/^ {0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+.*)?$/);
    if (ref) out.push({ target: ref[1], line: i + 1 });
  });
  return out;
}

/**
 * Returns where a relative link target leads: the file or directory (absolute,
 * '' when the target is the page itself) and the anchor ('' when none); null
 * for a link to another site or an empty target.
 */
function resolveTarget(pageAbs, target) {
  if (target === '' || /^[a-z][a-z0-9+.-]*:/i.test(target)) return null; // another site, mailto:
  const hash = target.indexOf('#');
  const path = decodeURIComponent(hash < 0 ? target : target.slice(0, hash));
  const anchor = hash < 0 ? '' : decodeURIComponent(target.slice(hash + 1));
  const dest = path === '' ? pageAbs : resolve(dirname(pageAbs), path.split('?')[0]);
  return { path, anchor, dest };
}

/** Reports whether abs is root or a path under it. */
function inside(root, abs) {
  const rel = relative(root, abs);
  return rel === '' || (rel !== '..' && !rel.startsWith(`..${sep}`) && !isAbsolute(rel));
}

/**
 * Returns one line per broken link in the given Markdown files (paths
 * relative to root): a file that does not exist, or an anchor that the page
 * it points to does not define. With within set, a link that leads outside
 * root is broken too (an installed documentation tree must hold what it
 * links to).
 */
export function checkFiles(root, files, { within = false } = {}) {
  root = resolve(root);
  const problems = [];
  const pageAnchors = new Map();
  const anchorsOf = (abs) => {
    if (!pageAnchors.has(abs)) pageAnchors.set(abs, anchors(readFileSync(abs, 'utf8')));
    return pageAnchors.get(abs);
  };
  for (const file of files) {
    const abs = resolve(root, file);
    const md = readFileSync(abs, 'utf8');
    for (const { target, line } of links(md)) {
      const to = resolveTarget(abs, target);
      if (to === null) continue;
      const { path, anchor, dest } = to;
      const where = `${relative(root, abs)}:${line}`;
      if (within && !inside(root, dest)) {
        problems.push(`${where}: ${target}: leads outside ${root}`);
        continue;
      }
      if (path !== '' && !existsSync(dest)) {
        problems.push(`${where}: ${target}: no such file ${relative(root, dest)}`);
        continue;
      }
      if (anchor === '') continue;
      if (!dest.endsWith('.md') || statSync(dest).isDirectory()) continue;
      if (!anchorsOf(dest).has(anchor)) {
        problems.push(`${where}: ${target}: ${relative(root, dest)} has no heading #${anchor}`);
      }
    }
  }
  return problems;
}

/** Returns README.md and every docs/*.md of root, relative to root. */
export function defaultFiles(root) {
  const docs = existsSync(join(root, 'docs'))
    ? readdirSync(join(root, 'docs')).filter((f) => f.endsWith('.md')).sort().map((f) => join('docs', f))
    : [];
  return ['README.md', ...docs];
}

/**
 * Returns what a package ships for README.md's links to work: README.md and
 * every file it links to, then every file those Markdown pages link to, and
 * so on (paths relative to root, sorted; a link to a directory adds nothing,
 * a link to a missing file is checkFiles' to report). Throws when a link
 * leads outside root: a package cannot lay that out beside the README.
 */
export function shippedFiles(root, start = 'README.md') {
  root = resolve(root);
  const found = new Set([start]);
  const todo = [start];
  while (todo.length > 0) {
    const file = todo.pop();
    const abs = resolve(root, file);
    for (const { target, line } of links(readFileSync(abs, 'utf8'))) {
      const to = resolveTarget(abs, target);
      if (to === null || to.path === '') continue;
      if (!inside(root, to.dest)) throw new Error(`${file}:${line}: ${target} leads outside ${root}`);
      if (!existsSync(to.dest) || statSync(to.dest).isDirectory()) continue;
      const rel = relative(root, to.dest);
      if (found.has(rel)) continue;
      found.add(rel);
      if (rel.endsWith('.md')) todo.push(rel);
    }
  }
  return [...found].sort();
}

/** Returns every *.md file under dir (relative to dir, sorted). */
export function treeFiles(dir) {
  const out = [];
  const walk = (rel) => {
    for (const e of readdirSync(join(dir, rel), { withFileTypes: true })) {
      const p = join(rel, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.isFile() && e.name.endsWith('.md')) out.push(p);
    }
  };
  walk('');
  return out.sort();
}

/**
 * Returns one line per broken link of an installed documentation tree (a
 * package's /usr/share/doc/memtray, an unpacked tarball): every *.md under
 * dir, each link resolving to a file inside dir. Throws when dir holds no
 * README.md.
 */
export function checkTree(dir) {
  if (!existsSync(join(dir, 'README.md'))) throw new Error(`${dir}: no README.md`);
  return checkFiles(dir, treeFiles(dir), { within: true });
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
  const args = process.argv.slice(2);
  let problems;
  try {
    if (args[0] === '--shipped') {
      if (args.length !== 1) throw new Error('--shipped takes no arguments');
      for (const f of shippedFiles(root)) console.log(f);
      process.exit(0);
    }
    if (args[0] === '--tree') {
      if (args.length !== 2) throw new Error('usage: --tree DIR');
      problems = checkTree(args[1]);
    } else {
      const files = args.length > 0 ? args.map((f) => relative(root, resolve(f))) : defaultFiles(root);
      problems = checkFiles(root, files);
    }
  } catch (err) {
    console.error(`check-links: ${err.message}`);
    process.exit(2);
  }
  for (const p of problems) console.error(p);
  process.exit(problems.length === 0 ? 0 : 1);
}
