#!/usr/bin/env bash
# Ingests every unlabelled agent session of the shared data the way README
# tells a user to import history (`memtray ingest FILE...`, no --project)
# into a fresh data dir, then asks the unrelated prompts of sessions-dev and
# sessions-dev-more (`unrelated_prompts`) through the prompt hook's recall
# (`memtray recall`), with no project and inside each project the store
# holds, and counts what they were given: prompts answered, memories
# given, and how many of those belong to no project.
# Usage: build/unlabelled-reach.sh [BINARY [DATADIR]]
#   BINARY   a memtray build (default bin/memtray)
#   DATADIR  where the store is made and kept (default a temporary dir,
#            removed)
#   SHARED=dir  where the shared data is (default ../shared)
# Prints the memories per project (live ones, the types of those of no
# project), then one line per context: "<project|(none)> answered N/P
# given M of-no-project K".
set -eu
B=$(realpath "${1:-bin/memtray}")
S=$(realpath "${SHARED:-../shared}")
if [ -n "${2:-}" ]; then
	D=$(realpath -m "$2")
	mkdir -p "$D"
else
	D=$(mktemp -d)
fi
"$B" ingest --data-dir "$D" "$S"/data/agent-sessions/cursor/*.md "$S"/data/agent-sessions/aider/*.md \
	"$S"/data/agent-sessions/codex/*.jsonl "$S"/data/claude-code-transcripts/*.jsonl >"$D/ingest.out" 2>"$D/ingest.err"
"$B" export --data-dir "$D" "$D/export.jsonl" >/dev/null 2>&1
echo "## memories per project (live)"
jq -r 'select(.text != null and (.superseded_by // "") == "") | (.project // "") | if . == "" then "(none)" else . end' "$D/export.jsonl" |
	sort | uniq -c | sort -rn
echo "## types of the memories of no project"
jq -r 'select(.text != null and (.superseded_by // "") == "" and (.project // "") == "") | .type' "$D/export.jsonl" | sort | uniq -c
# A daemon on the store (capture off, no session files followed) answers
# the recalls: one store open instead of one per prompt.
printf '{"capture":{"enabled":false,"transcripts":{"enabled":false}}}\n' >"$D/config.json"
C=(--data-dir "$D" --config "$D/config.json")
"$B" serve "${C[@]}" --listen 127.0.0.1:0 >"$D/serve.out" 2>&1 &
SERVE=$!
trap 'kill $SERVE 2>/dev/null; wait $SERVE 2>/dev/null; [ -n "${2:-}" ] || rm -rf "$D"' EXIT
for _ in $(seq 100); do grep -q "is serving" "$D/serve.out" && break; sleep 0.2; done
mapfile -t projects < <(jq -r 'select(.text != null and (.superseded_by // "") == "") | .project // empty' "$D/export.jsonl" | sort -u)
mapfile -t prompts < <(jq -r '.unrelated_prompts[]' "$S/eval/sessions-dev.json" "$S/eval/sessions-dev-more.json")
echo "## unrelated prompts (${#prompts[@]}) through the prompt hook's recall"
ask() { # ask PROJECT: every prompt in it ("" : from /, no project)
	local p=$1 answered=0 given=0 none=0 out n k
	for q in "${prompts[@]}"; do
		if [ -z "$p" ]; then
			out=$(cd / && "$B" recall "${C[@]}" --json -- "$q")
		else
			out=$("$B" recall "${C[@]}" --json --project "$p" -- "$q")
		fi
		n=$(jq '.hits // [] | length' <<<"$out")
		k=$(jq '[.hits // [] | .[] | select((.memory.project // "") == "")] | length' <<<"$out")
		[ "$n" -gt 0 ] && answered=$((answered + 1))
		given=$((given + n))
		none=$((none + k))
	done
	echo "${p:-(none)} answered $answered/${#prompts[@]} given $given of-no-project $none"
}
ask ""
for p in "${projects[@]}"; do ask "$p"; done
