#!/usr/bin/env bash
# Writes a package's copyright file to stdout: memtray's own notice, then the
# licence of every third-party component compiled into BINARY: the Go
# standard library, each Go module `go version -m` lists (its
# LICENSE/COPYING/NOTICE files, from the module cache), and Svelte (bundled
# into the embedded UI). MIT, BSD and Apache licences ask for their text in
# a binary distribution, so every package carries this file, generated from
# the binary it ships:
#   the .deb        /usr/share/doc/memtray/copyright        (build/package.sh)
#   the AppImage    usr/share/doc/memtray/copyright         (build/appimage.sh)
#   CLI tarball     memtray_<version>_linux_amd64/LICENSES.txt (make linux-cli)
#   Windows zip     memtray_<version>_windows_amd64/LICENSES.txt (make windows)
#   macOS           memtray.app/Contents/Resources/LICENSES.txt (.github/workflows/macos.yml)
# Usage: build/copyright.sh BINARY [WHERE] > copyright
#   WHERE  the binary's place in the package, for the heading. Without it the
#          file is the .deb's (/usr/bin/memtray): memtray's notice is
#          build/linux/copyright, which points at Debian's
#          /usr/share/common-licenses/Apache-2.0 (Debian policy: no copy of
#          it). With it memtray's Apache-2.0 text (LICENSE) is included in
#          full, as other systems have no such copy.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PATH:/usr/local/go/bin"
bin=${1:?usage: build/copyright.sh BINARY [WHERE]}
where=${2:-}
[ -f "$bin" ] || { echo "copyright: no binary at $bin" >&2; exit 1; }

section() {
  printf '\n\n================================================================\n%s\n================================================================\n' "$1"
}
if [ -z "$where" ]; then
  cat build/linux/copyright
  where=/usr/bin/memtray
else
  case "$where" in *$'\n'*) echo "copyright: WHERE must be one line" >&2; exit 1 ;; esac
  printf '%s\n\nCopyright: the memtray developers\nLicense: Apache-2.0, in full below.\n' "$(head -n 1 build/linux/copyright)"
  section "memtray"
  cat LICENSE
fi
licences() { # DIR: the licence files at a module's root
  find "$1" -maxdepth 1 -type f \( -iname 'LICEN[CS]E*' -o -iname 'COPYING*' -o -iname 'NOTICE*' \) | LC_ALL=C sort
}
printf '\n\nThird-party components compiled into %s, with their licences.\n' "$where"

# The Go the binary was built with (its licence text is the same in every release).
section "Go standard library and runtime $(go version "$bin" | awk '{print $NF}')"
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
