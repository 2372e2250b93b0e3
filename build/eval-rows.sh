#!/usr/bin/env bash
# Prints every row issue 19's pipeline work is judged on, one line each, as
# docs/benchmarks.md quotes them: `eval sessions` on sessions-dev (overall,
# coverage by where, unrelated prompts with no project and inside each
# project) and sessions-dev-more, `eval filter`, `eval recall` (hybrid
# R@5 overall, negatives), LoCoMo and LongMemEval (hybrid).
# Usage: build/eval-rows.sh [BINARY [quick]]
#   BINARY  a memtray build (default bin/memtray: make build)
#   quick   skips LoCoMo and LongMemEval (about a minute less)
#   SHARED=dir  where the shared data is (default ../shared); a set that is
#               absent is skipped, said so.
set -u
B=${1:-bin/memtray}
S=${SHARED:-../shared}
have() { [ -e "$S/$1" ] || { echo "skipped: $S/$1 absent"; return 1; }; }
echo "## dev"
have eval/sessions-dev.json && "$B" eval sessions "$S/eval/sessions-dev.json" 2>/dev/null | grep -E "overall|unrelated|asked inside|coverage by|R@5 with|user preferences"
echo "## dev-more"
have eval/sessions-dev-more.json && "$B" eval sessions "$S/eval/sessions-dev-more.json" 2>/dev/null | grep -E "overall|unrelated|asked inside|R@5 with|user preferences"
echo "## filter"
have eval/filter-dev.jsonl && "$B" eval filter "$S/eval/filter-dev.jsonl" 2>/dev/null | grep -E "substantive recall|noise rejection|low-value rejection"
echo "## recall"
have eval/recall-dev.json && "$B" eval recall "$S/eval/recall-dev.json" 2>/dev/null | grep -E "^(overall|negatives empty) " | head -2
if [ "${2:-}" != quick ]; then
	echo "## locomo"
	have data/locomo/locomo10.json && "$B" eval recall --locomo "$S/data/locomo/locomo10.json" 2>/dev/null | grep -iE "hybrid|overall" | head -4
	echo "## longmemeval"
	have data/longmemeval/longmemeval_s_cleaned_499.json.gz && "$B" eval recall --longmemeval "$S/data/longmemeval/longmemeval_s_cleaned_499.json.gz" 2>/dev/null | grep -iE "hybrid|overall" | head -4
fi
exit 0
