#!/usr/bin/env bash
# Installs what building and testing memtray needs and is missing:
# Debian/Ubuntu packages (as root, or through sudo), then Go modules.
# Usage: build/deps.sh [test|run|desktop|package]
set -euo pipefail
what=${1:-run}
cd "$(dirname "$0")/.."

need=()
have() { command -v "$1" >/dev/null 2>&1; }
have gcc || need+=(gcc libc6-dev)   # cgo, needed by -race
have git || need+=(git)
have make || need+=(make)
have pkg-config || need+=(pkg-config)
have node || need+=(nodejs)         # the UI (frontend/) is built with Vite
have npm || need+=(npm)
if [ "$what" = test ]; then
  have chromium || need+=(chromium) # the UI's end-to-end tests (playwright-core)
fi
# The desktop app (Wails: GTK 3 and WebKitGTK 4.1) for `make desktop`, for
# `make run` where there is a display, and for the tests; the tests also run
# the window under Xvfb, the tray on a private D-Bus bus and take screenshots.
pkgok() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q '^install ok installed'; }
if [ "$what" = test ] || [ "$what" = desktop ] || { [ "$what" = run ] && [ -n "${DISPLAY:-}${WAYLAND_DISPLAY:-}" ]; }; then
  pkgok libgtk-3-dev || need+=(libgtk-3-dev)
  pkgok libwebkit2gtk-4.1-dev || need+=(libwebkit2gtk-4.1-dev)
fi
if [ "$what" = test ]; then
  have Xvfb || need+=(xvfb)
  have xauth || need+=(xauth)
  have dbus-daemon || need+=(dbus)
  have import || have xwd || need+=(imagemagick)
fi
# The AppImage (make appimage) is a squashfs image made with mksquashfs; the
# runtime's tests (cmd/appimage-runtime) make images too and mount them with
# FUSE (fusermount3, for a user other than root).
if [ "$what" = package ] || [ "$what" = test ]; then
  have mksquashfs || need+=(squashfs-tools)
fi
# The team store's tests (backend/team) run a real PostgreSQL server of their
# own (initdb and postgres from Debian's package, not a system service).
if [ "$what" = test ]; then
  ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || have initdb || need+=(postgresql)
fi
if [ "$what" = test ]; then
  have fusermount3 || have fusermount || need+=(fuse3)
fi
# The Linux packages (make package): icons scaled with ImageMagick; the
# .desktop entry checked with desktop-file-validate (make test-package).
if [ "$what" = package ]; then
  have convert || need+=(imagemagick)
  have desktop-file-validate || need+=(desktop-file-utils)
  have zip || need+=(zip)           # the Windows build ships as a zip (make windows)
fi
if ! have go && [ ! -x /usr/local/go/bin/go ]; then
  # Debian's Go is older than go.mod's; with GOTOOLCHAIN=auto it fetches the
  # right toolchain from the Go module proxy on first use.
  need+=(golang-go ca-certificates)
fi

if [ ${#need[@]} -gt 0 ]; then
  echo "memtray: installing ${need[*]}" >&2
  sudo=""
  if [ "$(id -u)" != 0 ]; then
    if have sudo; then sudo=sudo; else
      echo "memtray: please install as root: apt-get install ${need[*]}" >&2; exit 1
    fi
  fi
  $sudo apt-get -o DPkg::Lock::Timeout=300 update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get -o DPkg::Lock::Timeout=300 install -y -qq "${need[@]}" >/dev/null
fi

export PATH="$PATH:/usr/local/go/bin"
go mod download
# The UI's npm packages, pinned by frontend/package-lock.json; reinstalled
# only when the lock file changed. First check that the lock agrees with
# package.json the way every npm's `npm ci` needs (all optional platform
# packages recorded): a lock that npm 10 accepts can fail under npm 11 on a
# fresh machine, so say what is wrong and how to fix it in one line instead.
node build/check-lock.mjs frontend
if [ ! -f frontend/node_modules/.package-lock.json ] || [ frontend/package-lock.json -nt frontend/node_modules/.package-lock.json ]; then
  (cd frontend && npm ci --no-audit --no-fund --loglevel=error)
fi
