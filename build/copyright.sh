#!/usr/bin/env bash
# Writes the packages' copyright file to stdout: memtray's own notice
# (build/linux/copyright), then the licence of every third-party component
# compiled into BINARY: the Go standard library, each Go module `go version
# -m` lists (its LICENSE/COPYING/NOTICE files, from the module cache), and
# Svelte (bundled into the embedded UI).
# Usage: build/copyright.sh BINARY > copyright
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PATH:/usr/local/go/bin"
bin=${1:?usage: build/copyright.sh BINARY}

cat build/linux/copyright
section() {
  printf '\n\n================================================================\n%s\n================================================================\n' "$1"
}
licences() { # DIR: the licence files at a module's root
  find "$1" -maxdepth 1 -type f \( -iname 'LICEN[CS]E*' -o -iname 'COPYING*' -o -iname 'NOTICE*' \) | LC_ALL=C sort
}
printf '\n\nThird-party components compiled into /usr/bin/memtray, with their licences.\n'

section "Go standard library and runtime $(go env GOVERSION)"
cat "$(go env GOROOT)/LICENSE"

# "dep PATH VERSION SUM", or a replaced one followed by "=> PATH VERSION SUM".
mods=$(go version -m "$bin" | awk '$1 == "dep" { if (m != "") print m; m = $2 "@" $3 } $1 == "=>" { m = $2 "@" $3 } END { if (m != "") print m }')
[ -n "$mods" ] || { echo "copyright: $bin lists no Go modules (not a Go binary?)" >&2; exit 1; }
# One go mod download for all: the directory of each module@version.
go mod download -json $mods | awk -F'"' '$2 == "Path" { p = $4 } $2 == "Version" { v = $4 } $2 == "Dir" { print p "@" v " " $4 }' >"${TMPDIR:-/tmp}/memtray-mods.$$"
trap 'rm -f "${TMPDIR:-/tmp}/memtray-mods.$$"' EXIT
missing=0
while read -r mod dir; do
  section "$mod"
  files=$(licences "$dir")
  if [ -z "$files" ]; then
    echo "(no licence file in the module)"; missing=$((missing + 1)); continue
  fi
  for f in $files; do
    [ "$(echo "$files" | wc -l)" -gt 1 ] && printf -- '--- %s ---\n' "$(basename "$f")"
    cat "$f"
  done
done <"${TMPDIR:-/tmp}/memtray-mods.$$"

svelte=frontend/node_modules/svelte
if [ -f $svelte/package.json ]; then
  section "svelte $(sed -n 's/^  "version": "\(.*\)",$/\1/p' $svelte/package.json) (in the embedded UI)"
  cat $svelte/LICENSE.md
else
  echo "copyright: $svelte is missing (npm ci in frontend/)" >&2; exit 1
fi
[ "$missing" = 0 ] || echo "copyright: $missing module(s) without a licence file" >&2
