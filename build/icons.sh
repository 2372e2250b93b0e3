#!/usr/bin/env bash
# Generates the app icon's hicolor tree for the Linux packages:
#   OUTDIR/hicolor/<n>x<n>/apps/memtray.png for n in 16 22 24 32 48 64 128 256 512
# from build/appicon.png (512x512; assets/app-icon.png is the same drawing at
# 256, which would have to be scaled up for 512), with ImageMagick's convert
# (build/deps.sh package installs it). Metadata and timestamps are stripped,
# so the same source gives the same bytes.
# Usage: build/icons.sh OUTDIR   (the deb and the AppImage: ICON_DIR=OUTDIR)
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:?usage: build/icons.sh OUTDIR}
src=build/appicon.png
command -v convert >/dev/null || { echo "icons: convert is missing (apt-get install imagemagick, or build/deps.sh package)" >&2; exit 1; }
[ "$(identify -format '%wx%h' "$src")" = 512x512 ] || { echo "icons: $src must be 512x512" >&2; exit 1; }
for n in 16 22 24 32 48 64 128 256 512; do
  d=$out/hicolor/${n}x${n}/apps
  mkdir -p "$d"
  convert "$src" -filter Lanczos -resize "${n}x${n}" -strip -define png:exclude-chunks=date,time "PNG32:$d/memtray.png"
done
