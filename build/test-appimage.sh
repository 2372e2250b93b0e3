#!/usr/bin/env bash
# The AppImage's test (issue "Packaging and install"): runs
# dist/memtray-<version>-x86_64.AppImage as a user would, on this machine
# with Go and Node taken away (as root: in a private mount namespace, each
# go/node/npm binary and Go's tree covered by an empty mount; otherwise only
# dropped from PATH, which is said), each run under Xvfb on a private D-Bus
# bus with a fresh HOME (so a fresh data dir and cache):
#   - the runtime's own options: --appimage-version, --appimage-offset (the
#     squashfs magic is there), --appimage-extract [PATTERN], and the CLI
#     through AppRun (--help);
#   - the licences: usr/share/doc/memtray/copyright is in the image (0644),
#     names third-party Go modules and is build/copyright.sh of the image's
#     own usr/bin/memtray (computed before Go is taken away);
#   - with FUSE: the window opens from the mounted image (a fuse.appimage
#     mount of this file, no extract cache), SIGTERM to the AppImage's
#     process stops the app (exit 0) and the mount goes; skipped, and said
#     so, when FUSE cannot mount here (MEMTRAY_REQUIRE_FUSE=1 makes that a
#     failure);
#   - extract-and-run: APPIMAGE_EXTRACT_AND_RUN=1 on an empty cache (it
#     extracts to ~/.cache/memtray-appimage/<sha256>/), then
#     --appimage-extract-and-run again, which reuses that directory.
# Each run waits for the window (xwininfo) and for the page to report it
# loaded (the app's self-test report, MEMTRAY_SELFTEST_REPORT, as
# build/test-desktop.sh uses), saves a screenshot and prints the start time:
# launch to the window mapped, and to the page loaded.
# Artefacts (screenshots, logs, times.txt) go to $MEMTRAY_ARTEFACTS, default
# bin/test-artefacts/appimage.
# Usage: build/test-appimage.sh [APPIMAGE]   (default: make appimage's)
set -euo pipefail
cd "$(dirname "$0")/.."

if [ "${1:-}" != --inside ]; then
  build/deps.sh test
  appimage=${1:-}
  if [ -z "$appimage" ]; then
    appimage=$(make --no-print-directory -s appimage | tail -n 1)
  fi
  [ -f "$appimage" ] || { echo "test-appimage: no AppImage at '$appimage'" >&2; exit 1; }
  appimage=$(realpath "$appimage")
  art=${MEMTRAY_ARTEFACTS:-$PWD/bin/test-artefacts/appimage}
  mkdir -p "$art"
  art=$(realpath "$art")
  # The copyright file the image must hold: build/copyright.sh of its own
  # binary (needs Go, so here, before it is taken away).
  rm -f "$art/copyright.want"
  x=$(mktemp -d)
  if (cd "$x" && "$appimage" --appimage-extract usr/bin/memtray >/dev/null) && [ -x "$x/squashfs-root/usr/bin/memtray" ]; then
    build/copyright.sh "$x/squashfs-root/usr/bin/memtray" "usr/bin/memtray of this AppImage" >"$art/copyright.want" || rm -f "$art/copyright.want"
  fi
  rm -rf "$x"
  if [ "$(id -u)" = 0 ] && unshare --mount --propagation private true 2>/dev/null; then
    exec unshare --mount --propagation private "$0" --inside "$appimage" "$art" hide
  fi
  exec "$0" --inside "$appimage" "$art" path
fi
appimage=$2 art=$3 how=$4
passed=0 failed=0 skipped=0
ok() { echo "ok: $*"; passed=$((passed + 1)); }
fail() { echo "FAIL: $*"; failed=$((failed + 1)); }
skip() { echo "skipped: $*"; skipped=$((skipped + 1)); }

tmp=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$tmp"
}
trap cleanup EXIT

# Go and Node away: this is a user's machine without them.
clean_path=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
if [ "$how" = hide ]; then
  for tool in go gofmt node nodejs npm npx corepack; do
    for p in $(PATH="$PATH:$clean_path:/usr/local/go/bin" type -aP "$tool"); do
      mount --bind /dev/null "$(realpath "$p")"
    done
  done
  for d in /usr/local/go /usr/lib/go /usr/lib/go-* /usr/share/go /usr/share/go-* /usr/lib/node_modules /usr/share/nodejs /usr/lib/nodejs; do
    [ -d "$d" ] && mount -t tmpfs -o ro,size=4k none "$d"
  done
fi
found=$(PATH=$clean_path:/usr/local/go/bin type -aP go node npm || true)
if [ -z "$found" ]; then
  ok "Go and Node are absent here (go, node, npm: none found)"
elif [ "$how" = hide ]; then
  fail "Go or Node is still reachable: $found"
else
  echo "note: not root, so Go and Node are only left out of PATH; still installed: $(echo $found)"
fi

# userenv HOME sets E to a command prefix for a fresh user environment:
# only what a desktop session has.
userenv() {
  mkdir -p "$1/run" && chmod 700 "$1/run"
  E=(env -i HOME="$1" PATH="$clean_path" LANG=C.UTF-8 USER=memtray-test
    DISPLAY="${display:-}" DBUS_SESSION_BUS_ADDRESS="${bus:-}" XDG_RUNTIME_DIR="$1/run")
}

# The runtime's options.
userenv "$tmp/cli"
if out=$("${E[@]}" "$appimage" --appimage-version) && [[ $out == *"AppImage runtime"* ]]; then
  ok "--appimage-version: $out"
else fail "--appimage-version: $out"; fi
offset=$("${E[@]}" "$appimage" --appimage-offset || true)
magic=$(dd if="$appimage" bs=1 skip="${offset:-0}" count=4 status=none 2>/dev/null || true)
if [[ $offset =~ ^[0-9]+$ ]] && [ "$magic" = hsqs ]; then
  ok "--appimage-offset: $offset (squashfs magic there; file $(stat -c %s "$appimage") bytes)"
else fail "--appimage-offset: '$offset' has '$magic'"; fi
mkdir -p "$tmp/x1" "$tmp/x2"
if (cd "$tmp/x1" && "${E[@]}" "$appimage" --appimage-extract >/dev/null) &&
  [ "$(readlink "$tmp/x1/squashfs-root/AppRun")" = usr/bin/memtray ] &&
  [ -x "$tmp/x1/squashfs-root/usr/bin/memtray" ] && [ -f "$tmp/x1/squashfs-root/memtray.desktop" ] &&
  [ -s "$tmp/x1/squashfs-root/memtray.png" ] && [ -L "$tmp/x1/squashfs-root/.DirIcon" ]; then
  ok "--appimage-extract: squashfs-root/ has AppRun -> usr/bin/memtray, memtray.desktop, memtray.png, .DirIcon ($(du -sh "$tmp/x1/squashfs-root" | cut -f1))"
else fail "--appimage-extract"; fi
# The licences of what the binary bundles, where the .deb has them.
cr=$tmp/x1/squashfs-root/usr/share/doc/memtray/copyright
modules=$(grep -Ec '^[a-z0-9.-]+\.[a-z]+/[^ ]+@v[^ ]+$' "$cr" 2>/dev/null || true)
if [ ! -f "$cr" ]; then fail "no usr/share/doc/memtray/copyright in the AppImage"
elif [ "$(stat -c %a "$cr")" != 644 ]; then fail "usr/share/doc/memtray/copyright is mode $(stat -c %a "$cr"), not 644"
elif [ "${modules:-0}" = 0 ] || ! grep -q '^Go standard library and runtime go' "$cr" || ! grep -q 'Apache License' "$cr"; then
  fail "usr/share/doc/memtray/copyright lacks the Go modules' (found ${modules:-0}), Go's or memtray's licence"
elif [ ! -f "$art/copyright.want" ]; then fail "build/copyright.sh of the image's usr/bin/memtray failed (before the run)"
elif ! cmp -s "$art/copyright.want" "$cr"; then fail "usr/share/doc/memtray/copyright is not build/copyright.sh of the image's usr/bin/memtray ($art/copyright.want)"
else ok "usr/share/doc/memtray/copyright: memtray's licence, Go's and $modules Go modules', as build/copyright.sh gives for the binary ($(stat -c %s "$cr") bytes)"; fi
if (cd "$tmp/x2" && "${E[@]}" "$appimage" --appimage-extract '*.desktop' >/dev/null) &&
  [ -f "$tmp/x2/squashfs-root/memtray.desktop" ] && [ ! -e "$tmp/x2/squashfs-root/usr/bin/memtray" ]; then
  ok "--appimage-extract '*.desktop': only the matching file"
else fail "--appimage-extract '*.desktop'"; fi
if out=$("${E[@]}" "$appimage" --help 2>&1) && [[ $out == *"usage: memtray"* ]]; then
  ok "the CLI through AppRun: --help"
else fail "the CLI through AppRun: --help: $out"; fi

# The display and the session bus.
Xvfb -displayfd 5 -screen 0 1280x800x24 -nolisten tcp -noreset 5>"$tmp/display" 2>"$tmp/xvfb.log" &
pids+=($!)
dbus-daemon --session --nofork --nopidfile --print-address=1 >"$tmp/bus" 2>/dev/null &
pids+=($!)
for _ in $(seq 100); do [ -s "$tmp/display" ] && [ -s "$tmp/bus" ] && break; sleep 0.1; done
display=:$(head -n 1 "$tmp/display") bus=$(head -n 1 "$tmp/bus")

ms() { echo $(($(date +%s%N) / 1000000)); }
# With MEMTRAY_DROP_CACHES=1 (as root), the kernel's page cache is dropped
# before each first start, so that WebKitGTK and the AppImage come from disk.
dropcaches() {
  if [ "${MEMTRAY_DROP_CACHES:-}" != 1 ]; then echo "page cache warm"; return; fi
  sync
  if echo 3 >/proc/sys/vm/drop_caches 2>/dev/null; then echo "page cache dropped"; else echo "page cache not droppable here"; fi
}
mounted() { awk -v src="$appimage" '$1 == src && $3 == "fuse.appimage" {print $2}' /proc/mounts; }
# The FUSE server's process (the runtime's child that serves the mount).
server_pid() {
  local f
  for f in /proc/[0-9]*/cmdline; do
    if tr '\0' ' ' <"$f" 2>/dev/null | grep -qF -- "--appimage-internal-fuse-server $appimage"; then
      f=${f#/proc/}; echo "${f%/cmdline}"; return
    fi
  done
}
# gone DIR: waits up to 10 s for the server to unmount and remove DIR.
gone() {
  for _ in $(seq 200); do
    [ -z "$(mounted)" ] && [ ! -e "$1" ] && return 0
    sleep 0.05
  done
  return 1
}

# launch NAME HOME [ENV=...] -- ARGS: starts the AppImage and waits for the
# window and the page; sets app_pid, t0 (the launch, in ms), t_window and
# t_page (ms after it).
launch() {
  local name=$1 h=$2
  shift 2
  local envs=()
  while [ "$1" != -- ]; do envs+=("$1"); shift; done
  shift
  mkdir -p "$h"
  local report=$h/selftest.jsonl log=$art/$name.log
  rm -f "$report"
  userenv "$h"
  t0=$(ms)
  "${E[@]}" MEMTRAY_SELFTEST_REPORT="$report" "${envs[@]}" "${launch_bin:-$appimage}" "$@" >"$log" 2>&1 &
  app_pid=$!
  pids+=("$app_pid")
  t_window="" t_page=""
  while [ $(($(ms) - t0)) -lt 90000 ]; do
    if ! kill -0 "$app_pid" 2>/dev/null; then
      echo "--- $name: the app exited early; its log:"; cat "$log"; return 1
    fi
    if [ -z "$t_window" ] && xwininfo -display "$display" -root -children 2>/dev/null | grep -q '"memtray"'; then
      t_window=$(($(ms) - t0))
    fi
    if [ -z "$t_page" ] && grep -q '"stage":"loaded"' "$report" 2>/dev/null; then
      t_page=$(($(ms) - t0))
    fi
    if [ -n "$t_window" ] && [ -n "$t_page" ] && grep -q '"stage":"health","status":200' "$report" 2>/dev/null; then
      return 0
    fi
    sleep 0.02
  done
  echo "--- $name: no window and loaded page within 90 s (window: ${t_window:-no}, page: ${t_page:-no}); log:"; cat "$log"
  # Stop it (it may show a dialog and wait), so that its mount or its
  # files do not fail the checks after this one.
  kill -TERM "$app_pid" 2>/dev/null || true; wait "$app_pid" 2>/dev/null || true
  return 1
}

# shot NAME: screenshots the display until the window has drawn (more than
# 64 colours), for up to 20 s; sets t_paint (ms after launch) and shot_info.
shot() {
  local png=$art/$1-window.png colours=0
  t_paint=""
  while [ $(($(ms) - t0)) -lt $((t_page + 20000)) ]; do
    import -display "$display" -window root "$png"
    colours=$(identify -format '%k' "$png")
    if [ "$colours" -gt 64 ]; then
      t_paint=$(($(ms) - t0))
      shot_info="$png ($colours colours)"
      return 0
    fi
    sleep 0.1
  done
  shot_info="$png has $colours colours: the window drew nothing"
  return 1
}

# stop: SIGTERM to the AppImage's process (the app: the runtime executed
# AppRun in its place); sets rc, its exit code.
stop() {
  kill -TERM "$app_pid"
  rc=0
  wait "$app_pid" || rc=$?
}

times=$art/times.txt
: >"$times"
record() { # NAME NOTE: after shot
  printf '%-24s window mapped %5s ms, page loaded %5s ms, painted %5s ms  (%s)\n' "$1" "$t_window" "$t_page" "${t_paint:-?}" "$2" | tee -a "$times"
}

# For reference, the same binary run directly from the extracted AppDir,
# without the runtime: the difference to it is the AppImage's cost.
caches=$(dropcaches)
launch_bin=$tmp/x1/squashfs-root/AppRun
if launch direct "$tmp/direct" -- app --listen 127.0.0.1:0 --embedder builtin; then
  shot direct || fail "direct: screenshot: $shot_info"
  record "direct (no AppImage)" "reference; $caches"
  stop
else fail "direct: the extracted app's window did not open"; fi
launch_bin=""

# With FUSE.
fuse_why=""
if [ ! -e /dev/fuse ]; then fuse_why="no /dev/fuse"
elif [ "$(id -u)" != 0 ] && ! command -v fusermount3 >/dev/null && ! command -v fusermount >/dev/null; then
  fuse_why="no fusermount3 or fusermount (package fuse3)"
else
  userenv "$tmp/probe"
  "${E[@]}" "$appimage" --appimage-mount >"$tmp/mount.out" 2>"$tmp/mount.err" &
  probe=$!
  for _ in $(seq 100); do [ -s "$tmp/mount.out" ] || ! kill -0 "$probe" 2>/dev/null && break; sleep 0.05; done
  mp=$(head -n 1 "$tmp/mount.out")
  if [ -n "$mp" ] && [ -L "$mp/AppRun" ]; then
    kill -TERM "$probe"; wait "$probe" || true
    [ -e "$mp" ] && fail "--appimage-mount left $mp behind" || ok "--appimage-mount mounted the AppDir at $mp and removed it on SIGTERM"
  else
    kill "$probe" 2>/dev/null || true; wait "$probe" 2>/dev/null || true
    fuse_why="mounting fails here: $(tr '\n' ' ' <"$tmp/mount.err")"
  fi
fi
if [ -n "$fuse_why" ]; then
  if [ "${MEMTRAY_REQUIRE_FUSE:-}" = 1 ]; then fail "FUSE unavailable ($fuse_why)"; else skip "FUSE unavailable ($fuse_why)"; fi
else
  caches=$(dropcaches)
  h=$tmp/fuse
  if launch fuse "$h" -- app --listen 127.0.0.1:0 --embedder builtin; then
    mp=$(mounted)
    if [ -n "$mp" ] && [ ! -e "$h/.cache/memtray-appimage" ]; then
      sp=$(server_pid)
      ok "FUSE: the window opened from the mounted image at $mp ($t_window ms to the window, $t_page ms to the page; the FUSE server, process $sp, holds $(awk '/^VmRSS/ {print $2, $3}' "/proc/$sp/status" 2>/dev/null))"
    else fail "FUSE: mount '$mp', extract cache $(ls "$h/.cache" 2>&1)"; fi
    if shot fuse; then ok "FUSE: screenshot $shot_info"; else fail "FUSE: screenshot: $shot_info"; fi
    record "FUSE" "$caches"
    stop
    if [ "$rc" = 0 ] && gone "$mp"; then
      ok "FUSE: SIGTERM to the AppImage's process (the app itself) stopped it with exit 0; the server unmounted and removed $mp"
    else fail "FUSE: after SIGTERM: exit $rc, mounts '$(mounted)'"; fi
  else fail "FUSE: the window did not open"; fi
fi

# Extract-and-run: first on an empty cache, then from the cache.
h=$tmp/extract
caches=$(dropcaches)
if launch extract-cold "$h" APPIMAGE_EXTRACT_AND_RUN=1 -- app --listen 127.0.0.1:0 --embedder builtin; then
  dirs=$(find "$h/.cache/memtray-appimage" -mindepth 1 -maxdepth 1 2>/dev/null)
  if [[ $(basename "$dirs") =~ ^[0-9a-f]{64}$ ]] && [ -L "$dirs/AppRun" ] && [ -z "$(mounted)" ]; then
    ok "extract-and-run: extracted to $dirs, no FUSE mount ($t_window ms to the window, $t_page ms to the page)"
  else fail "extract-and-run: cache '$dirs', mounts '$(mounted)'"; fi
  if shot extract; then ok "extract-and-run: screenshot $shot_info"; else fail "extract-and-run: screenshot: $shot_info"; fi
  record "extract-and-run, cold" "extracts first; $caches"
  stop
  [ "$rc" = 0 ] && ok "extract-and-run: SIGTERM stopped the app, exit 0" || fail "extract-and-run: exit $rc after SIGTERM"
else fail "extract-and-run: the window did not open"; fi
before=$(stat -c %i:%Y "$dirs" 2>/dev/null || true)
if launch extract-warm "$h" -- --appimage-extract-and-run app --listen 127.0.0.1:0 --embedder builtin; then
  shot extract-cached || fail "--appimage-extract-and-run: screenshot: $shot_info"
  record "extract-and-run, cached" "second start, same HOME"
  if [ -n "$before" ] && [ "$(stat -c %i:%Y "$dirs")" = "$before" ] &&
    [ "$(find "$h/.cache/memtray-appimage" -mindepth 1 -maxdepth 1 | wc -l)" = 1 ]; then
    ok "--appimage-extract-and-run: reused $dirs ($t_window ms to the window, $t_page ms to the page)"
  else fail "--appimage-extract-and-run: the cache was not reused"; fi
  stop
  [ "$rc" = 0 ] || fail "--appimage-extract-and-run: exit $rc after SIGTERM"
else fail "--appimage-extract-and-run: the window did not open"; fi

echo "AppImage: $(stat -c %s "$appimage") bytes; start times in $times; screenshots in $art"
echo "appimage: $passed passed, $failed failed, $skipped skipped"
[ "$failed" = 0 ]
