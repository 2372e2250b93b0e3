#!/usr/bin/env bash
# Builds the Debian package (issue "Packaging and install"):
#   dist/memtray_<version>_<arch>.deb
# with nfpm (installed at the pinned version into bin/tools, not into
# go.mod) from build/nfpm.yaml: the desktop binary as /usr/bin/memtray, the
# .desktop entry, the hicolor icons (generated here by build/icons.sh into
# bin/package), the systemd user unit (not enabled), the copyright file
# (build/copyright.sh) and the README with the docs it links to
# (build/doc-tree.sh: /usr/share/doc/memtray/README.md, .../docs/). No
# maintainer scripts.
# Timestamps come from $SOURCE_DATE_EPOCH (default: the last commit's time).
# Usage: build/package.sh [BINARY [VERSION]]
#   BINARY   the desktop memtray (default bin/memtray, built by make desktop)
#   VERSION  default: build/version.sh
#   OUT=dir  where to write (default dist)
# The package's path is the last line printed.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PATH:/usr/local/go/bin"

nfpm_version=v2.45.2
bin=${1:-bin/memtray}
version=${2:-$(build/version.sh)}
out=${OUT:-dist}
stage=bin/package

case "$version" in
  [0-9]*) ;;
  *) echo "package: version '$version' must start with a digit (Debian)" >&2; exit 1 ;;
esac
if ! printf '%s' "$version" | grep -Eq '^[0-9A-Za-z.+~]+$'; then
  echo "package: version '$version' has characters Debian does not allow" >&2; exit 1
fi
if [ ! -x "$bin" ]; then
  echo "package: $bin is missing; build it with make desktop" >&2; exit 1
fi
# The package holds the desktop app: refuse a headless build (make build).
if ! go version -m "$bin" | grep -Eq '^\s*build\s+-tags=.*\bdesktop\b'; then
  echo "package: $bin was not built with -tags desktop,...; run make desktop" >&2; exit 1
fi
case "$(go env GOARCH)" in
  amd64 | arm64) arch=$(go env GOARCH) ;;
  *) echo "package: no Debian architecture for $(go env GOARCH)" >&2; exit 1 ;;
esac

nfpm=bin/tools/nfpm
if ! { [ -x $nfpm ] && go version -m $nfpm | grep -Eq "^\s*mod\s+github.com/goreleaser/nfpm/v2\s+$nfpm_version\s"; }; then
  echo "package: installing nfpm $nfpm_version into bin/tools" >&2
  GOBIN="$PWD/bin/tools" go install "github.com/goreleaser/nfpm/v2/cmd/nfpm@$nfpm_version"
fi

rm -rf "$stage"
mkdir -p "$stage" "$out"
build/icons.sh "$stage/icons"
build/copyright.sh "$bin" >"$stage/copyright"
build/doc-tree.sh "$stage/doc"

export SOURCE_DATE_EPOCH=${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct 2>/dev/null || date +%s)}
export MEMTRAY_VERSION=$version MEMTRAY_ARCH=$arch MEMTRAY_BIN=$bin MEMTRAY_STAGE=$stage
export MEMTRAY_MAINTAINER=${MEMTRAY_MAINTAINER:-memtray developers <memtray@users.noreply.github.com>}
target=$out/memtray_${version}_${arch}.deb
$nfpm package --config build/nfpm.yaml --packager deb --target "$target" >&2
echo "package: $(stat -c %s "$target") bytes (binary $(stat -c %s "$bin"))" >&2
echo "$target"
