#!/usr/bin/env bash
# The desktop app's tests (issue "Desktop app"): installs what is missing
# (build/deps.sh test: GTK, WebKitGTK 4.1, Xvfb, xauth, dbus, imagemagick),
# builds the app with the desktop tags and runs
#   - app/tray: the tray against a real daemon on a private D-Bus session
#     bus with a minimal StatusNotifierWatcher (menu via GetLayout, a click
#     on Capture pauses capture, checked through the API);
#   - app/desktoptest: the built app under Xvfb and a private bus: the page
#     loads through Wails' AssetServer and reports /api/health and an
#     /api/events event, a screenshot is saved, the tray registers and
#     pauses capture, a second launch hands over, Quit stops it cleanly,
#     and a relaunched app stops cleanly on SIGTERM (exit 0, store closed);
#   - app/desktoptest (TestDesktopAppWhileServeRuns): the app launched while
#     `memtray serve` holds its data dir shows a window saying why (where
#     the running UI is), serve is untouched, closing it exits 1.
# Artefacts (desktop-window.png, desktop-app.log) go to $MEMTRAY_ARTEFACTS,
# default bin/test-artefacts/desktop.
# Usage: build/test-desktop.sh [go test flags, e.g. -run TestDesktopApp]
set -euo pipefail
cd "$(dirname "$0")/.."
build/deps.sh test
export PATH="$PATH:/usr/local/go/bin"

tags=desktop,production,webkit2_41
bin=bin/memtray-desktop
version=$(git describe --tags --always --dirty 2>/dev/null || echo dev)
echo "memtray: building the desktop app ($tags) into $bin" >&2
go vet -tags "$tags" ./app/...
go build -trimpath -tags "$tags" -ldflags "-s -w -X github.com/memtray/memtray/backend/cli.Version=$version" -o "$bin" ./app

export MEMTRAY_DESKTOP_TESTS=1 # skipping for want of a tool is a failure here
export MEMTRAY_DESKTOP_BIN="$PWD/$bin"
export MEMTRAY_ARTEFACTS="${MEMTRAY_ARTEFACTS:-$PWD/bin/test-artefacts/desktop}"
mkdir -p "$MEMTRAY_ARTEFACTS"
# No -race: fyne.io/systray races with itself on the first GetLayout (see
# app/tray/tray_dbus_test.go); the app's own code is raced in `make test`.
go test -count=1 -v -timeout 10m "$@" ./app/tray/ ./app/desktoptest/
echo "memtray: desktop tests passed; screenshot: $MEMTRAY_ARTEFACTS/desktop-window.png" >&2
