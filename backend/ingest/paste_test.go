package ingest

import (
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
