#!/usr/bin/env bash
# Builds the AppImage (issue "Packaging and install"):
#   dist/memtray-<version>-<arch>.AppImage
# a type-2 AppImage: our runtime (cmd/appimage-runtime: a static Go ELF with
# "AI\x02" at offset 8) followed by a squashfs image (Debian's mksquashfs,
# zstd) of this AppDir:
#   AppRun -> usr/bin/memtray      the desktop build (make desktop)
#   memtray.desktop, memtray.png (256 px), .DirIcon -> memtray.png
#   usr/share/applications/memtray.desktop   build/linux/memtray.desktop
#   usr/share/icons/hicolor/<size>/apps/memtray.png   build/icons.sh
#   usr/share/doc/memtray/copyright   build/copyright.sh of the binary: memtray's
#                                     licence and every bundled one (as the .deb's)
# WebKitGTK and GTK are not bundled: the AppImage uses the system's
# libwebkit2gtk-4.1 (as Wails AppImages do).
# Timestamps come from $SOURCE_DATE_EPOCH (default: the last commit's time),
# so the same commit gives the same image.
# Usage: build/appimage.sh [BINARY [VERSION]]
#   BINARY   the desktop memtray (default bin/memtray, built by make desktop)
#   VERSION  default: build/version.sh, else git describe
#   OUT=dir  where to write (default dist)
# The AppImage's path is the last line printed.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PATH:/usr/local/go/bin"

bin=${1:-bin/memtray}
version=${2:-}
if [ -z "$version" ]; then
  if [ -x build/version.sh ]; then version=$(build/version.sh); else
    version=$(git describe --tags --always --dirty 2>/dev/null || echo dev)
  fi
fi
out=${OUT:-dist}
case "$version" in */*|'') echo "appimage: bad version '$version'" >&2; exit 1 ;; esac

if [ ! -x "$bin" ]; then
  echo "appimage: $bin is missing; build it with make desktop" >&2; exit 1
fi
# The AppImage is the desktop app: refuse a headless build (make build).
if ! go version -m "$bin" | grep -Eq '^\s*build\s+-tags=.*\bdesktop\b'; then
  echo "appimage: $bin was not built with -tags desktop,...; run make desktop" >&2; exit 1
fi
if ! command -v mksquashfs >/dev/null; then
  echo "appimage: mksquashfs is missing (build/deps.sh package installs squashfs-tools)" >&2; exit 1
fi
case "$(go env GOARCH)" in
  amd64) arch=x86_64 ;;
  arm64) arch=aarch64 ;;
  *) echo "appimage: no AppImage architecture name for $(go env GOARCH)" >&2; exit 1 ;;
esac
export SOURCE_DATE_EPOCH=${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct 2>/dev/null || date +%s)}

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# The runtime: static (no libc needed to start), stripped, with the mark.
runtime=$work/runtime
CGO_ENABLED=0 go build -trimpath -ldflags "-s -w -X main.version=$version" -o "$runtime" ./cmd/appimage-runtime
printf 'AI\x02' | dd of="$runtime" bs=1 seek=8 count=3 conv=notrunc status=none

# The AppDir.
app=$work/AppDir
mkdir -p "$app/usr/bin" "$app/usr/share/applications"
install -m 0755 "$bin" "$app/usr/bin/memtray"
ln -s usr/bin/memtray "$app/AppRun"

# The .desktop entry and the icons are the .deb's: build/linux/memtray.desktop
# and build/icons.sh's hicolor tree (or DESKTOP_FILE, ICON_DIR).
desktop=${DESKTOP_FILE:-build/linux/memtray.desktop}
[ -f "$desktop" ] || { echo "appimage: no .desktop entry at $desktop" >&2; exit 1; }
grep -q '^Icon=memtray$' "$desktop" || { echo "appimage: $desktop must say Icon=memtray" >&2; exit 1; }
{ cat "$desktop"; printf 'X-AppImage-Version=%s\n' "$version"; } >"$app/memtray.desktop"
chmod 0644 "$app/memtray.desktop"
cp "$app/memtray.desktop" "$app/usr/share/applications/memtray.desktop"

icons=${ICON_DIR:-}
if [ -z "$icons" ]; then
  icons=$work/icons
  build/icons.sh "$icons" >&2
fi
mkdir -p "$app/usr/share/icons"
cp -r "$icons/hicolor" "$app/usr/share/icons/"
[ -f "$app/usr/share/icons/hicolor/256x256/apps/memtray.png" ] || { echo "appimage: no 256x256 memtray.png in $icons/hicolor" >&2; exit 1; }
install -m 0644 "$app/usr/share/icons/hicolor/256x256/apps/memtray.png" "$app/memtray.png"
ln -s memtray.png "$app/.DirIcon"

# The licences of what the binary bundles (MIT, BSD and Apache ask for their
# text in a binary distribution), where the .deb has them.
install -d -m 0755 "$app/usr/share/doc/memtray"
build/copyright.sh "$bin" "usr/bin/memtray of this AppImage" >"$app/usr/share/doc/memtray/copyright"
chmod 0644 "$app/usr/share/doc/memtray/copyright"

# The image: zstd (go-diskfs reads it; quick to decompress), owned by root,
# no xattrs; appended to the runtime.
mksquashfs "$app" "$work/image.sqfs" -comp zstd -root-owned -no-xattrs -noappend -quiet -no-progress >/dev/null
mkdir -p "$out"
target=$out/memtray-$version-$arch.AppImage
cat "$runtime" "$work/image.sqfs" >"$target.tmp"
chmod 0755 "$target.tmp"

# The runtime must find the image where it was put.
offset=$("$target.tmp" --appimage-offset)
if [ "$offset" != "$(stat -c %s "$runtime")" ]; then
  echo "appimage: the runtime finds the image at $offset, not at $(stat -c %s "$runtime")" >&2; exit 1
fi
mv "$target.tmp" "$target"
echo "appimage: $(stat -c %s "$target") bytes (runtime $(stat -c %s "$runtime"), squashfs $(stat -c %s "$work/image.sqfs"); binary $(stat -c %s "$bin"))" >&2
echo "$target"
