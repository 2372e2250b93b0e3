#!/usr/bin/env bash
# The packaging test (make test-package; issue "Packaging and install"):
#   - builds the .deb (make deb) and checks it with dpkg-deb: Package,
#     Version, Architecture, Depends; the file list (binary, .desktop entry,
#     every icon size, the systemd user unit, copyright); no maintainer
#     scripts and nothing outside /usr (removing it leaves $HOME alone);
#   - the documentation: /usr/share/doc/memtray holds copyright (build/copyright.sh
#     of the packaged binary), README.md and exactly the files README.md links
#     to (check-links.mjs --shipped),
#     and every relative link of the installed pages resolves inside it
#     (check-links.mjs --tree); the same for the Linux CLI tarball (make
#     linux-cli), whose README.md and docs/ sit beside the binary;
#   - the Linux CLI tarball unpacks into one folder, memtray_<version>_linux_amd64/
#     (the binary, LICENSES.txt, README.md, docs/; files 0644, the binary and
#     directories 0755, owned by root), and its LICENSES.txt is build/copyright.sh
#     of the binary it holds;
#   - apt-get resolves its Depends on this system (simulated, nothing installed);
#   - extracts it (dpkg -x) into a scratch root and runs the binary there:
#     `version`, `version --json`, and `serve` on a free loopback port whose
#     /api/health names the same version;
#   - desktop-file-validate on the .desktop entry, systemd-analyze verify on
#     the unit (where those tools exist);
#   - the cross-builds: the Windows desktop app (make windows, built with
#     the .deb: a zip of memtray.exe, its LICENSES.txt and the docs), the
#     macOS CLI; the static Linux CLI (make linux-cli) runs.
# Usage: build/test-package.sh
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PATH:/usr/local/go/bin"
start=$(date +%s)

fail() { echo "test-package: FAIL: $*" >&2; exit 1; }
step() { echo "test-package: $*" >&2; }

build/deps.sh package
# One version for the whole run (the tree may change while it runs).
version=$(build/version.sh)
commit=$(build/version.sh commit)
arch=$(go env GOARCH)
deb=dist/memtray_${version}_${arch}.deb
win_zip=dist/memtray_${version}_windows_amd64.zip
tgz=dist/memtray_${version}_linux_amd64.tar.gz
rm -f "$deb" "$win_zip" "$tgz"
# One make: the UI is built once for all three.
make --no-print-directory deb windows linux-cli VERSION="$version" COMMIT="$commit" >&2
[ -f "$deb" ] || fail "$deb was not built"
step "$deb: $(stat -c %s "$deb") bytes"

scratch=$(mktemp -d)
pid=""
cleanup() {
  if [ -n "$pid" ]; then kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; fi
  rm -rf "$scratch"
}
trap cleanup EXIT

# Control fields.
field() { dpkg-deb -f "$deb" "$1"; }
[ "$(field Package)" = memtray ] || fail "Package: $(field Package)"
[ "$(field Version)" = "$version" ] || fail "Version: $(field Version), want $version"
[ "$(field Architecture)" = "$arch" ] || fail "Architecture: $(field Architecture), want $arch"
depends=$(field Depends)
for d in 'libgtk-3-0 | libgtk-3-0t64' 'libwebkit2gtk-4.1-0'; do
  case ", $depends," in *", $d,"* | *", $d ("*) ;; *) fail "Depends lacks '$d': $depends" ;; esac
done
dpkg-deb -I "$deb" >"$scratch/info"
grep -q '^ Description: Long-term memory for AI coding agents' "$scratch/info" || fail "no Description"

# The control archive: control and md5sums only (no maintainer scripts).
ctrl=$(dpkg-deb --ctrl-tarfile "$deb" | tar -t | grep -v '^\./$' | LC_ALL=C sort | tr '\n' ' ')
[ "$ctrl" = "./control ./md5sums " ] || fail "control archive holds more than control and md5sums: $ctrl"

# The file list.
dpkg-deb -c "$deb" >"$scratch/list"
has() { grep -Eq "^$1 +root/root +[0-9]+ [0-9-]+ [0-9:]+ \./$2\$" "$scratch/list" || fail "no $2 ($1 root/root) in the package"; }
has -rwxr-xr-x usr/bin/memtray
has -rw-r--r-- usr/share/applications/memtray.desktop
for n in 16 22 24 32 48 64 128 256 512; do has -rw-r--r-- "usr/share/icons/hicolor/${n}x${n}/apps/memtray.png"; done
has -rw-r--r-- usr/lib/systemd/user/memtray.service
has -rw-r--r-- usr/share/doc/memtray/copyright
# The documentation: README.md and what it links to (one list, computed from
# the links), regular files 0644 in directories 0755, nothing else.
node build/check-links.mjs --shipped >"$scratch/shipped" || fail "check-links.mjs --shipped"
grep -qx README.md "$scratch/shipped" || fail "check-links.mjs --shipped does not list README.md"
grep -qx 'docs/.*\.md' "$scratch/shipped" || fail "check-links.mjs --shipped lists no docs/*.md"
while IFS= read -r f; do has -rw-r--r-- "usr/share/doc/memtray/$f"; done <"$scratch/shipped"
awk '$6 ~ /^\.\/usr\/share\/doc\/memtray\/./ && $1 !~ /^d/ {sub("^\\./usr/share/doc/memtray/", "", $6); print $6}' "$scratch/list" |
  grep -vx copyright | LC_ALL=C sort >"$scratch/doc-files"
LC_ALL=C sort "$scratch/shipped" | diff - "$scratch/doc-files" >&2 || fail "/usr/share/doc/memtray holds other files than README.md's links (diff above: < missing, > extra)"
if awk '$6 ~ /^\.\/usr\/share\/doc\// && $1 ~ /^d/ && $1 != "drwxr-xr-x"' "$scratch/list" | grep .; then fail "documentation directories not 0755 (above)"; fi
if awk '{print $6}' "$scratch/list" | grep -Ev '^\./(usr(/.*)?)?$'; then fail "files outside /usr (above)"; fi

# apt can satisfy Depends here (a simulation: nothing is installed).
if [ "$(id -u)" = 0 ]; then
  apt-get -s -o Debug::NoLocking=1 install "./$deb" >"$scratch/apt" 2>&1 || { cat "$scratch/apt" >&2; fail "apt-get cannot install $deb"; }
  grep -q '^Inst memtray ' "$scratch/apt" || { cat "$scratch/apt" >&2; fail "apt-get would not install memtray"; }
fi

# Extract and run the binary from the scratch root.
root=$scratch/root
dpkg -x "$deb" "$root"
exe=$root/usr/bin/memtray
node build/check-links.mjs --tree "$root/usr/share/doc/memtray" || fail "links of the installed documentation do not resolve in /usr/share/doc/memtray (above)"
# The copyright file is build/copyright.sh of the binary the package holds.
build/copyright.sh "$exe" >"$scratch/deb-copyright" || fail "build/copyright.sh of the .deb's binary"
cmp -s "$scratch/deb-copyright" "$root/usr/share/doc/memtray/copyright" || fail "/usr/share/doc/memtray/copyright is not build/copyright.sh of /usr/bin/memtray"
grep -Eqx 'github\.com/[^ ]+@v[^ ]+' "$scratch/deb-copyright" || fail "/usr/share/doc/memtray/copyright names no Go module"
out=$("$exe" version)
case "$out" in "memtray $version"*) ;; *) fail "version printed: $out" ;; esac
echo "$out" | grep -q "^commit: *$commit\$" || fail "version: commit is not $commit: $out"
"$exe" version --json >"$scratch/version.json"
python3 - "$scratch/version.json" "$version" "$commit" <<'EOF' || fail "version --json: $(cat "$scratch/version.json")"
import json, sys
b = json.load(open(sys.argv[1]))
assert b["version"] == sys.argv[2] and b["commit"] == sys.argv[3], b
assert b["build_date"][:2] == "20" and b["go_version"].startswith("go") and b["os"] == "linux", b
EOF

# Headless from the package, on a private home and a free port.
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
mkdir -p "$scratch/home"
HOME=$scratch/home XDG_DATA_HOME=$scratch/home/data XDG_CONFIG_HOME=$scratch/home/config DISPLAY= WAYLAND_DISPLAY= \
  "$exe" serve --listen "127.0.0.1:$port" >"$scratch/serve.log" 2>&1 &
pid=$!
for _ in $(seq 100); do
  curl -fsS "http://127.0.0.1:$port/api/health" >"$scratch/health.json" 2>/dev/null && break
  kill -0 "$pid" 2>/dev/null || { cat "$scratch/serve.log" >&2; fail "memtray serve exited"; }
  sleep 0.1
done
python3 - "$scratch/health.json" "$version" <<'EOF' || fail "/api/health: $(cat "$scratch/health.json")"
import json, sys
h = json.load(open(sys.argv[1]))
assert h["service"] == "memtray" and h["version"] == sys.argv[2] and h["build"]["version"] == sys.argv[2], h
EOF
kill "$pid"; wait "$pid" 2>/dev/null || true; pid=""
[ -d "$scratch/home/data/memtray" ] || fail "serve kept no data in \$XDG_DATA_HOME/memtray"

# The .desktop entry and the unit.
if command -v desktop-file-validate >/dev/null; then
  desktop-file-validate "$root/usr/share/applications/memtray.desktop" || fail "desktop-file-validate"
else
  step "desktop-file-validate is missing (apt-get install desktop-file-utils): skipped"
fi
grep -qx 'StartupWMClass=memtray' "$root/usr/share/applications/memtray.desktop" || fail "no StartupWMClass=memtray"
grep -qx 'ExecStart=/usr/bin/memtray serve' "$root/usr/lib/systemd/user/memtray.service" || fail "the unit does not run memtray serve"
if command -v systemd-analyze >/dev/null; then
  # ExecStart must exist: check a copy pointing at the extracted binary.
  sed "s|^ExecStart=/usr/bin/memtray|ExecStart=$exe|" "$root/usr/lib/systemd/user/memtray.service" >"$scratch/memtray.service"
  systemd-analyze verify "$scratch/memtray.service" 2>&1 | grep -v 'Documentation=' | grep . && fail "systemd-analyze verify (above)"
fi

# The cross-builds: the Windows desktop app, the macOS CLI.
# The Windows zip: one folder holding memtray.exe, LICENSES.txt, README.md and
# its docs, unpacked as a user would.
[ -f "$win_zip" ] || fail "$win_zip was not built"
wtop=memtray_${version}_windows_amd64
{ echo "$wtop"; echo "$wtop/memtray.exe"; echo "$wtop/LICENSES.txt"; sed "s|/.*||; s|^|$wtop/|" "$scratch/shipped"; sed "s|^|$wtop/|" "$scratch/shipped"; } |
  LC_ALL=C sort -u >"$scratch/zip-want"
python3 -c 'import sys, zipfile; print("\n".join(n.rstrip("/") for n in zipfile.ZipFile(sys.argv[1]).namelist()))' "$win_zip" |
  LC_ALL=C sort >"$scratch/zip-files"
diff "$scratch/zip-want" "$scratch/zip-files" >&2 || fail "$win_zip holds other files than $wtop/ with memtray.exe, LICENSES.txt, README.md and its links (diff above: < missing, > extra)"
python3 -m zipfile -e "$win_zip" "$scratch/zip"
exe_win=$scratch/zip/$wtop/memtray.exe
[ "$(head -c 2 "$exe_win")" = MZ ] || fail "$wtop/memtray.exe is not a Windows executable"
if command -v file >/dev/null; then
  file "$exe_win" | grep -q 'PE32+ executable (GUI) x86-64' || fail "$wtop/memtray.exe: $(file -b "$exe_win"), want a GUI PE32+"
fi
node build/check-links.mjs --tree "$scratch/zip/$wtop" || fail "links of the documentation in $win_zip do not resolve (above)"
build/copyright.sh "$exe_win" "memtray.exe beside this file" >"$scratch/win-licences" || fail "build/copyright.sh of $wtop/memtray.exe"
cmp -s "$scratch/win-licences" "$scratch/zip/$wtop/LICENSES.txt" || fail "$wtop/LICENSES.txt is not build/copyright.sh of the memtray.exe beside it"
grep -q 'Apache License' "$scratch/win-licences" && grep -Eqx 'github\.com/wailsapp/wails/v2@v[^ ]+' "$scratch/win-licences" ||
  fail "$wtop/LICENSES.txt lacks memtray's Apache-2.0 text or Wails'"
GOOS=darwin GOARCH=arm64 CGO_ENABLED=0 go build -trimpath -o "$scratch/memtray-darwin" ./app || fail "the macOS CLI does not build"

# The Linux CLI tarball: one folder holding the binary, LICENSES.txt, README.md
# and its docs, unpacked as a user would.
[ -f "$tgz" ] || fail "$tgz was not built"
top=memtray_${version}_linux_amd64
{ echo "$top"; echo "$top/memtray"; echo "$top/LICENSES.txt"; sed "s|/.*||; s|^|$top/|" "$scratch/shipped"; sed "s|^|$top/|" "$scratch/shipped"; } |
  LC_ALL=C sort -u >"$scratch/tgz-want"
tar -tzf "$tgz" | sed 's|/$||' | LC_ALL=C sort >"$scratch/tgz-files"
diff "$scratch/tgz-want" "$scratch/tgz-files" >&2 || fail "$tgz holds other files than $top/ with memtray, LICENSES.txt, README.md and its links (diff above: < missing, > extra)"
tar -tvzf "$tgz" >"$scratch/tgz-list"
awk '$2 != "0/0" && $2 != "root/root" { print; bad = 1 } END { exit bad }' "$scratch/tgz-list" >&2 || fail "$tgz: entries not owned by root (above)"
awk -v top="$top" '{ n = $6; sub("/$", "", n); want = (substr($1, 1, 1) == "d" || n == top "/memtray") ? "rwxr-xr-x" : "rw-r--r--" }
  substr($1, 2) != want { print; bad = 1 } END { exit bad }' "$scratch/tgz-list" >&2 || fail "$tgz: modes other than 0755 (directories, the binary) and 0644 (above)"
mkdir "$scratch/tgz"
tar -xzf "$tgz" -C "$scratch/tgz"
node build/check-links.mjs --tree "$scratch/tgz/$top" || fail "links of the documentation in $tgz do not resolve (above)"
out=$("$scratch/tgz/$top/memtray" version)
case "$out" in "memtray $version"*) ;; *) fail "$tgz: version printed: $out" ;; esac
# The licences are those of the binary beside them, with memtray's own in full.
build/copyright.sh "$scratch/tgz/$top/memtray" "memtray beside this file" >"$scratch/licences" || fail "build/copyright.sh of $tgz's binary"
cmp -s "$scratch/licences" "$scratch/tgz/$top/LICENSES.txt" || fail "$top/LICENSES.txt is not build/copyright.sh of the memtray beside it"
grep -qx 'memtray' "$scratch/licences" && grep -q 'Apache License' "$scratch/licences" || fail "LICENSES.txt lacks memtray's Apache-2.0 text"
grep -Eqx 'github\.com/[^ ]+@v[^ ]+' "$scratch/licences" || fail "LICENSES.txt names no Go module"

step "passed in $(($(date +%s) - start))s; $deb: $(stat -c %s "$deb") bytes; $win_zip: $(stat -c %s "$win_zip") bytes; $tgz: $(stat -c %s "$tgz") bytes"
