#!/usr/bin/env bash
# Re-records the fixtures of the real agent clients (issue 24): runs the
# pinned Claude Code and Codex (cmd/clientcheck's versions, installed from
# npm into ${XDG_CACHE_HOME:-~/.cache}/memtray-test-clients on first use)
# through memtray in a temporary HOME against fake upstreams on 127.0.0.1,
# and writes what they sent, scrubbed of temporary paths and keys, into
#   backend/capture/testdata/clients/<client>-<version>/  model requests
#   backend/cli/testdata/clients/<client>-<version>/      hook stdin JSON
#     (and mcp-client.jsonl, mcp-server.jsonl there: the MCP exchange)
# `make test` reads them (backend/capture/clients_test.go, backend/cli/*clients_test.go). After a
# client upgrade: bump the versions in cmd/clientcheck/clients.go, run this,
# review `git diff`, run the tests, commit. Also prints clientcheck's table
# (its exit status is that of the table: a FAIL row fails this script only
# when RECORD_STRICT=1, since the fixtures are written either way).
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PATH:/usr/local/go/bin"
bin=$(mktemp -d)
trap 'rm -rf "$bin"' EXIT
go build -o "$bin/memtray" ./app
go build -o "$bin/clientcheck" ./cmd/clientcheck
# The fixture folders are replaced whole: a file a client no longer sends goes.
for d in backend/capture/testdata/clients backend/cli/testdata/clients do
  rm -rf "$d"
done
rc=0
"$bin/clientcheck" -memtray "$bin/memtray" -record . -runs 1 "$@" || rc=$?
echo "fixtures written:"
find backend/capture/testdata/clients backend/cli/testdata/clients -type f | sort
if [ "${RECORD_STRICT:-0}" = 1 ]; then exit $rc; fi
