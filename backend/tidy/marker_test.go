package tidy

import (
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

func TestDetectMarker(t *testing.T) {
	cases := []struct {
		name, content string
		want          string // phrase, "" for no marker
		where         string
	}{
		// H1 markers.
		{"h1 COMPLETED", "# Auth migration — COMPLETED\n\nSteps...\n- [ ] more\n", "— COMPLETED", WhereH1},
		{"h1 COMPLETED bare", "# COMPLETED auth migration\n\nbody\n", "COMPLETED", WhereH1},
		{"h1 label", "# [Completed] auth migration\n\nbody\n", "Completed", WhereH1},
		{"h1 -- Done", "# Fix login -- Done\n\nbody\n", "-- Done", WhereH1},
		{"h1 em dash complete", "# Fix login — Complete\n\nbody\n", "— Complete", WhereH1},
		{"h1 en dash done", "# Fix login – done\n\nbody\n", "– done", WhereH1},
		{"h1 check done", "# ✅ Done: fix login\n\nbody\n", "✅ Done", WhereH1},
		{"h1 check vs16 complete", "# Fix login ✅\ufe0f Complete\n\nbody\n", "✅\ufe0f Complete", WhereH1},
		{"h1 bold done", "# Fix login -- **Done**\n\nbody\n", "-- **Done", WhereH1},
		{"h1 finalized last word", "# API spec finalized\n\nbody\n", "finalized", WhereH1},
		{"h1 no plan needed", "# Typo in README: no plan needed\n\nbody\n", "no plan needed", WhereH1},
		{"h1 indented", "   # Fix -- Done\nbody\n", "-- Done", WhereH1},
		{"h1 after front matter and fence", "---\ntitle: x\n---\n```sh\n# COMPLETED in a shell comment\n```\n# Real plan\n\nbody\n", "", ""},
		{"h1 CRLF and BOM", "\ufeff# Plan -- Done\r\n\r\nbody\r\n", "-- Done", WhereH1},
		// Last-line markers.
		{"last COMPLETED", "# Plan\n\nbody\n\nStatus: COMPLETED\n\n\n", "COMPLETED", WhereLastLine},
		{"last -- Done", "# Plan\n\nbody\n-- Done", "-- Done", WhereLastLine},
		{"last no further planning", "# Plan\n\nbody\n\nNo further planning required.\n", "No further planning", WhereLastLine},
		{"last no code changes", "# Question about config\n\nanswer\n\nNo  code\tchanges.\n", "No  code\tchanges", WhereLastLine},
		{"last finalized", "# Plan\n\nbody\n\nPlan finalised.\n", "finalised", WhereLastLine},
		{"last all completed", "# Plan\n\nbody\n\nAll phases completed.\n", "completed", WhereLastLine},
		{"last ✅ Complete", "# Plan\n\nbody\n\n✅ Complete\n", "✅ Complete", WhereLastLine},
		// False positives: none of these is completed.
		{"done in checklist", "# Plan\n\n- [x] Done: write tests\n- [ ] ship\n\nNext: review.\n", "", ""},
		{"checklist last line", "# Plan\n\n- [ ] a\n- [x] Step 3 -- Done\n", "", ""},
		{"numbered checklist last line", "# Plan\n\n1. [x] migration COMPLETED\n", "", ""},
		{"table row last line", "# Plan\n\n| step | state |\n|---|---|\n| 1 | ✅ Done |\n", "", ""},
		{"complete mid-file", "# Plan\n\nPhase 1 -- Complete\nPhase 2 -- Done\nCOMPLETED\n\nPhase 3 next.\n", "", ""},
		{"COMPLETED in body only", "# Rollout plan\n\nStatus: COMPLETED for staging\n\nProduction pending.\n", "", ""},
		{"topic word in h1", "# Track completed orders in the dashboard\n\nbody\n", "", ""},
		{"not finalized", "# API design (not finalized)\n\nbody\n", "", ""},
		{"not yet completed", "# Plan\n\nbody\n\nNot yet completed.\n", "", ""},
		{"to be finalized", "# Plan\n\nbody\n\nDetails to be finalized\n", "", ""},
		{"isn't completed", "# Plan\n\nbody\n\nThis isn't completed\n", "", ""},
		{"NOT COMPLETED", "# Migration — NOT COMPLETED\n\nbody\n", "", ""},
		{"done word alone", "# Plan\n\nbody\n\nDone\n", "", ""},
		{"single dash done", "# Plan\n\nbody\n\n- Done with the parser\n", "", ""},
		{"h2 is not h1", "## Auth -- Done\n\nbody\n", "", ""},
		{"complete without dash", "# Complete rewrite of the parser\n\nbody\n", "", ""},
		{"incomplete", "# Plan\n\nbody\n\nincomplete -- donex\n", "", ""},
		{"overlong h1", "# " + strings.Repeat("x ", MaxMarkerLine/2) + "-- Done\n\nbody\n", "", ""},
		{"empty", "", "", ""},
		{"blank", "\n\n  \n", "", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := DetectMarker([]byte(c.content))
			switch {
			case c.want == "" && m != nil:
				t.Fatalf("want no marker, got %+v", *m)
			case c.want != "" && m == nil:
				t.Fatalf("want %q in %s, got none", c.want, c.where)
			case c.want != "" && (m.Phrase != c.want || m.Where != c.where):
				t.Fatalf("want %q in %s, got %+v", c.want, c.where, *m)
			}
		})
	}
}

// FuzzClassify checks marker detection and classification never panic, and
// that a marker is only ever reported from the H1 or the last non-empty line.
func FuzzClassify(f *testing.F) {
	for _, s := range []string{
		"# Plan -- Done\n", "# Plan\n\n- [x] Done\n", "# A\nb\nCOMPLETED", "```\n# x\n", "\ufeff#\t✅\ufe0f done",
		"# not finalized", "No further planning", "— complete —", "| ✅ Done |", "# \xff\xfe COMPLETED",
	} {
		f.Add("p.md", []byte(s), int64(3))
	}
	now := time.Date(2025, 6, 15, 12, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, name string, content []byte, ageDays int64) {
		m := DetectMarker(content)
		if m != nil {
			h1, last := planLines(content)
			if (m.Where == WhereH1 && m.Line != h1) || (m.Where == WhereLastLine && m.Line != last) {
				t.Fatalf("marker %+v is not from the H1 %q or the last line %q", *m, h1, last)
			}
			if !strings.Contains(m.Line, m.Phrase) || m.Phrase == "" {
				t.Fatalf("marker %+v: phrase not in line", *m)
			}
			if utf8.ValidString(string(content)) && !utf8.ValidString(m.Phrase) {
				t.Fatalf("marker %+v: phrase cuts a rune", *m)
			}
		}
		if ageDays < 0 || ageDays > 1e5 {
			ageDays %= 1e5
		}
		files := []File{
			{Name: name, Size: int64(len(content)), ModTime: now.Add(-time.Duration(ageDays) * 24 * time.Hour), Content: content},
			{Name: strings.TrimSuffix(name, ".md") + "-agent-x.md", Size: 10, ModTime: now.Add(-30 * 24 * time.Hour)},
		}
		plans := Classify(files, DefaultOptions(now))
		if len(plans) != 2 {
			t.Fatalf("got %d plans", len(plans))
		}
		for _, p := range plans {
			if (p.Action == Archive) != (p.Class == Completed) || (p.Action == Trash) != (p.Class == Stale) {
				t.Fatalf("class %s with action %s", p.Class, p.Action)
			}
		}
	})
}
