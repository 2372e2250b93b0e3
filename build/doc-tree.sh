#!/usr/bin/env bash
# Lays out the documentation a package ships into DEST: README.md and every
# file it links to, transitively through docs/*.md (node build/check-links.mjs
# --shipped: today every docs/*.md page and the screenshots the README shows),
# at the same relative paths, so that DEST/README.md's links resolve:
#   DEST/README.md, DEST/docs/install.md, DEST/docs/first-run.png, ...
# Files 0644, directories 0755. Then checks DEST as an installed tree
# (check-links.mjs --tree): every link of every page resolves inside DEST.
# Used by build/package.sh (the .deb's /usr/share/doc/memtray) and the
# Makefile's linux-cli (the tarball, beside the binary).
# Usage: build/doc-tree.sh DEST   (DEST is created; it must not hold a README.md yet)
set -euo pipefail
dest=$(realpath -m "${1:?usage: build/doc-tree.sh DEST}")
cd "$(dirname "$0")/.."
umask 022

command -v node >/dev/null || { echo "doc-tree: node is missing (build/deps.sh installs it)" >&2; exit 1; }
[ ! -e "$dest/README.md" ] || { echo "doc-tree: $dest already holds a README.md" >&2; exit 1; }
files=$(node build/check-links.mjs --shipped)
mkdir -p "$dest"
while IFS= read -r f; do
  case "$f" in '' | /* | ../* | */../*) echo "doc-tree: refusing to ship '$f'" >&2; exit 1 ;; esac
  d=$(dirname "$f")
  [ "$d" = . ] || install -d -m 0755 "$dest/$d"
  install -m 0644 "$f" "$dest/$f"
done <<<"$files"
node build/check-links.mjs --tree "$dest" || { echo "doc-tree: links in $dest do not resolve (above)" >&2; exit 1; }
echo "doc-tree: $(wc -l <<<"$files") files, $(cd "$dest" && xargs -d '\n' cat <<<"$files" | wc -c) bytes in $dest" >&2
