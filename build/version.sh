#!/usr/bin/env bash
# Prints what the build stamps into memtray (Makefile LDFLAGS) and names the
# packages with, from git:
#   build/version.sh [version]  the version, valid for Debian (starts with a
#                               digit; only [0-9A-Za-z.+~]):
#       tag v1.2.3 on HEAD      1.2.3
#       5 commits after it      1.2.3+git20251122.5.d9941b2
#       no tag at all           0.0.0~git20251122.d9941b2
#       uncommitted changes     +dirty appended (.dirty after a +)
#     the date is the commit's (UTC), so a commit always gets one version.
#   build/version.sh commit     the full commit hash (-dirty when modified)
#   build/version.sh date       the build date, RFC 3339 UTC: now, or
#                               $SOURCE_DATE_EPOCH when set (reproducible)
# Outside a git checkout: 0.0.0~dev, unknown.
set -euo pipefail
cd "$(dirname "$0")/.."

dirty=""
ingit=false
if git rev-parse --verify -q HEAD >/dev/null 2>&1; then
  ingit=true
  git diff --quiet HEAD -- 2>/dev/null || dirty=yes
fi

case "${1:-version}" in
version)
  if ! $ingit; then echo "0.0.0~dev"; exit 0; fi
  sha=$(git rev-parse --short=7 HEAD)
  day=$(TZ=UTC git log -1 --format=%cd --date=format-local:%Y%m%d HEAD)
  tag=$(git describe --tags --abbrev=0 --match 'v[0-9]*' HEAD 2>/dev/null || true)
  if [ -n "$tag" ]; then
    base=$(printf '%s' "${tag#v}" | tr -c '0-9A-Za-z.+~\n' '.')
    n=$(git rev-list --count "$tag..HEAD")
    if [ "$n" = 0 ]; then v=$base; else v="$base+git$day.$n.$sha"; fi
  else
    v="0.0.0~git$day.$sha"
  fi
  if [ -n "$dirty" ]; then
    case $v in *+*) v="$v.dirty" ;; *) v="$v+dirty" ;; esac
  fi
  echo "$v"
  ;;
commit)
  if ! $ingit; then echo unknown; exit 0; fi
  echo "$(git rev-parse HEAD)${dirty:+-dirty}"
  ;;
date)
  e=${SOURCE_DATE_EPOCH:-$(date +%s)}
  date -u -d "@$e" +%Y-%m-%dT%H:%M:%SZ 2>/dev/null || date -u -r "$e" +%Y-%m-%dT%H:%M:%SZ # GNU, BSD
  ;;
*)
  echo "usage: build/version.sh [version|commit|date]" >&2
  exit 2
  ;;
esac
