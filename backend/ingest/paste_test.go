package ingest

import (
	"strings"
	"testing"

	"github.com/memtray/memtray/backend/memory"
)

// TestPastedMaterial: a document pasted into a user's message (table
// rows, headings, numbered section labels, bold field labels) gives no
// user preference, whatever "should" or "must" it says; a hand-typed
// message with a heading or two keeps its rules, and a record line of a
// pasted document may still stand as a project fact.
func TestPastedMaterial(t *testing.T) {
	for _, tc := range []struct {
		name   string
		text   string
		pasted bool
		prefs  int // candidates kept as the user's preference
		facts  int // candidates kept as project facts
	}{
		{
			name: "reference list with a tab table",
			text: "Below is a full list of the lifecycle hooks a build orchestrator should expose.\n\n" +
				"1. Pipeline Hooks\nStage\tWhat it does\tTypical use\n" +
				"1.1 Before Build\tRuns once before compiling.\tFetch secrets, warm caches.\n" +
				"1.2 After Build\tRuns when artifacts exist.\tSign binaries, upload symbols.\n" +
				"2.1 On Failure\tRuns when a step fails.\tCollect logs, page the on-call.\n\n" +
				"Every orchestrator should also support retry policies rather than fixed delays.\n" +
				"A complete system must cover about 30 hook points.",
			pasted: true,
		},
		{
			name: "markdown spec with bold labels",
			text: "Here is the spec you wrote:\n\n# Feature: Offline Sync\n\n**Branch**: `004-offline-sync`\n**Status**: Draft\n\n" +
				"## Stories\n\n### Story 1 - Edits survive a restart\n\nAs a field worker, I want my edits to be kept when the tablet restarts, so I never lose work.\n\n" +
				"- **REQ-001**: The client MUST queue writes while offline.\n- **REQ-002**: The queue should never drop an edit.",
			pasted: true,
		},
		{
			name:   "two-column table pasted alone",
			text:   "Sensor\tYou should calibrate it before each run with the bench fixture.\nGateway\tMust reconnect within 5 seconds using the backoff in net/retry.go.",
			pasted: false, // no document marks: only its rows are dropped
		},
		{
			name:   "hand-typed message with one heading keeps its rule",
			text:   "## Setup\nAlways use pnpm in this repository, never npm or yarn.",
			pasted: false,
			prefs:  1,
		},
		{
			name:   "plain rule with should",
			text:   "Commits in this repo should always be signed off with `git commit -s`.",
			pasted: false,
			prefs:  1,
		},
		{
			name: "record line of a pasted document stays a fact",
			text: "## Stack\n## Hosting\n## Data\n" +
				"Database: PostgreSQL 16 on Fly.io, migrations in `db/migrations/` run by goose.",
			pasted: true,
			facts:  1,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			prose, _ := splitFences(tc.text)
			if got := pastedMaterial(prose); got != tc.pasted {
				t.Errorf("pastedMaterial = %v, want %v", got, tc.pasted)
			}
			prefs, facts := 0, 0
			for _, c := range userCandidates(tc.text) {
				switch {
				case !c.Keep:
				case c.Class == ClassPreference:
					prefs++
				default:
					facts++
				}
			}
			if prefs != tc.prefs || facts != tc.facts {
				t.Errorf("userCandidates: %d preferences, %d facts; want %d, %d\n%+v", prefs, facts, tc.prefs, tc.facts, userCandidates(tc.text))
			}
		})
	}
}

// TestTableRow: tab-separated cells and markdown rows are table rows;
// prose, a list item and an indented line are not.
func TestTableRow(t *testing.T) {
	for _, tc := range []struct {
		line string
		want bool
	}{
		{"M220 S100\tSet feed rate\tAll firmware", true},
		{"Gateway\tMust reconnect within 5 seconds.", true},
		{"| flag | default | meaning |", true},
		{"\tindented with one tab", false},
		{"Use the bench fixture to calibrate, see docs | tips.", false},
		{"- item one", false},
	} {
		if got := tableRow(tc.line); got != tc.want {
			t.Errorf("tableRow(%q) = %v, want %v", tc.line, got, tc.want)
		}
	}
}

// TestPastedRecordLine: in pasted material, a sentence after a kept
// record sentence of the same line belongs to that record's fact, cue
// word or not; on a line of its own it is no preference.
func TestPastedRecordLine(t *testing.T) {
	text := "## Stack\n## Data\n## Auth\n" +
		"Validation: Joi for request bodies. Use joi-to-ts to derive the types from the schemas.\n" +
		"Use small pure functions everywhere."
	cands := userCandidates(text)
	var kept []string
	for _, c := range cands {
		if c.Keep {
			kept = append(kept, c.Text)
			if c.Type == memory.TypeUser {
				t.Errorf("%q is typed user in pasted material", c.Text)
			}
		}
	}
	want := "Validation: Joi for request bodies. Use joi-to-ts to derive the types from the schemas."
	if len(kept) != 1 || kept[0] != want {
		t.Errorf("kept %q, want [%q]", kept, want)
	}
}

// TestPastedOutput: tool output a user pastes under their request (a
// compiler's diagnostics, a linter's report, a test runner's failures, a
// stack trace) gives no candidate, whatever "should", "must" or "you
// want" its lines say; the user's own rule next to it is kept, and a
// message with a single location-like line keeps its prose. The fixtures
// imitate each tool's format; none is copied from a real session.
func TestPastedOutput(t *testing.T) {
	for _, tc := range []struct {
		name  string
		text  string
		rules []string // the preferences kept, by a word each holds
		facts int      // other candidates kept
	}{
		{
			name: "rustc diagnostics with notes and help",
			text: "please get rid of these and keep the build warning free:\n\n" +
				"warning: unused `Future` that must be awaited\n" +
				"  --> crates/relay/src/pump.rs:88:9\n" +
				"   |\n" +
				"88 |         sink.flush_all();\n" +
				"   |         ^^^^^^^^^^^^^^^^\n" +
				"   |\n" +
				"   = note: futures do nothing unless you `.await` or poll them, which should always be done\n" +
				"   = note: `#[warn(unused_must_use)]` on by default\n\n" +
				"error[E0425]: cannot find value `retry_budget` in this scope\n" +
				"   --> crates/relay/src/pump.rs:140:21\n" +
				"    |\n" +
				"140 |     let left = retry_budget - spent;\n" +
				"    |                ^^^^^^^^^^^^ not found in this scope\n" +
				"help: you might want to import the constant, which should be in `crate::limits`\n" +
				"    |\n" +
				"  3 + use crate::limits::retry_budget;\n" +
				"    |\n",
		},
		{
			name: "gcc and clang with carets and notes",
			text: "The firmware build broke again:\n" +
				"src/motor/stepper.c:212:14: warning: comparison of integer expressions of different signedness [-Wsign-compare]\n" +
				"  212 |   if (steps < target_steps) {\n" +
				"      |             ^\n" +
				"src/motor/stepper.c:40:6: note: the declaration should always match the definition in stepper.h\n" +
				"   40 | void stepper_arm(int axis);\n" +
				"      |      ^~~~~~~~~~~\n",
		},
		{
			name: "go vet and go test failures",
			text: "Always run the race detector before you push.\n\n" +
				"./internal/queue/lease.go:57:3: unreachable code\n" +
				"--- FAIL: TestLeaseRenew (0.02s)\n" +
				"    lease_test.go:91: renewed lease should never expire before its deadline, got 3s left\n" +
				"FAIL\n",
			rules: []string{"race detector"},
		},
		{
			name: "tsc and eslint reports",
			text: "src/api/client.ts(14,7): error TS2322: Type 'string' is not assignable to type 'number'.\n" +
				"src/api/client.ts(31,3): error TS2554: Expected 2 arguments, but got 1; you must always pass the options object.\n\n" +
				"/home/dev/web/src/hooks/useCart.ts\n" +
				"  12:5  error    'total' is assigned a value but never used  no-unused-vars\n" +
				"  40:1  warning  Prefer default export, you should never mix styles  import/prefer-default-export\n",
		},
		{
			name: "pytest failure with a traceback",
			text: "________________________ test_quota_resets ________________________\n\n" +
				"    def test_quota_resets(clock):\n" +
				">       assert quota.left(clock) == 10\n" +
				"E       AssertionError: the quota should always reset at midnight UTC\n" +
				"E       assert 7 == 10\n\n" +
				"tests/test_quota.py:48: AssertionError\n",
		},
		{
			name: "node stack trace under the user's rule",
			text: "Never swallow errors in the payment worker; log them with the order id.\n" +
				"Error: connect ECONNREFUSED 127.0.0.1:6379, the cache must be reachable\n" +
				"    at TCPConnectWrap.afterConnect [as oncomplete] (node:net:1555:16)\n" +
				"    at Worker.run (/srv/pay/worker.js:77:11)\n",
			rules: []string{"payment worker"},
		},
		{
			name:  "one location-like line in prose is no paste",
			text:  "The retry limit lives in config/limits.yaml and should always stay at 5 so the pager does not flood.",
			rules: []string{"retry limit"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var rules []string
			facts := 0
			for _, c := range userCandidates(tc.text) {
				switch {
				case !c.Keep:
				case c.Class == ClassPreference:
					rules = append(rules, c.Text)
				default:
					facts++
				}
			}
			if len(rules) != len(tc.rules) || facts != tc.facts {
				t.Fatalf("userCandidates kept rules %q and %d facts; want %d rules (%q), %d facts", rules, facts, len(tc.rules), tc.rules, tc.facts)
			}
			for i, w := range tc.rules {
				if !strings.Contains(rules[i], w) {
					t.Errorf("rule %q does not hold %q", rules[i], w)
				}
			}
		})
	}
}

// TestPastedOutputLines: the lines of output form are marked; label lines
// and indented continuations only in a message carrying pasted output.
func TestPastedOutputLines(t *testing.T) {
	for _, tc := range []struct {
		name  string
		lines []string
		want  []bool
	}{
		{"diagnostic block",
			[]string{"fix this:", "warning: unused variable: `n`", " --> src/a.rs:3:9", "  |", "3 |     let n = 1;", "  |         ^ help: prefix it with an underscore", "  = note: on by default", "Thanks, and always run clippy."},
			[]bool{false, true, true, true, true, true, true, false}},
		{"a label alone is the user's words",
			[]string{"note: we always deploy from main", "warning: the staging db is shared"},
			[]bool{false, false}},
		{"one location line alone",
			[]string{"main.go:12:2: undefined: cfg", "    it should be passed in"},
			[]bool{true, false}},
		{"python traceback continuation",
			[]string{"Traceback (most recent call last):", `  File "app/run.py", line 9, in <module>`, "    start()", "ValueError: port must be set"},
			[]bool{true, true, true, true}},
		{"a tilde path or a pointing caret is no caret line",
			[]string{"~/.config/app holds the settings", "~ is home", "^ that is the bug, always check for nil", "    ^~~~~"},
			[]bool{false, false, false, true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := pastedOutput(tc.lines)
			for i := range tc.lines {
				if got[i] != tc.want[i] {
					t.Errorf("line %q: output %v, want %v", tc.lines[i], got[i], tc.want[i])
				}
			}
		})
	}
}
