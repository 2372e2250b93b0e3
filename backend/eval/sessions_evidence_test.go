package eval

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/memtray/memtray/backend/search"
)

// TestLogEvidence: each record is kept for the distributions and, with
// SessionsOptions.Evidence set, written as one JSON line.
func TestLogEvidence(t *testing.T) {
	var b bytes.Buffer
	r := &sessionsRun{opts: SessionsOptions{Evidence: &b}}
	recs := []EvidenceRecord{
		{Kind: EvidenceRelevant, Session: "D1", Fact: "F1", Query: "Which package manager?", Project: "shop", Hit: true, Given: 3,
			Evidence: &search.Evidence{Coverage: 0.6, Lexical: true}},
		{Kind: EvidenceUnrelated, Query: "Explain monads", Given: 0},
	}
	for _, rec := range recs {
		if err := r.logEvidence(rec); err != nil {
			t.Fatal(err)
		}
	}
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	if len(lines) != 2 || len(r.evidence) != 2 {
		t.Fatalf("%d lines, %d records kept:\n%s", len(lines), len(r.evidence), b.String())
	}
	var got EvidenceRecord
	if err := json.Unmarshal([]byte(lines[0]), &got); err != nil {
		t.Fatal(err)
	}
	if got.Kind != EvidenceRelevant || !got.Hit || got.Evidence == nil || got.Evidence.Coverage != 0.6 {
		t.Errorf("first line read back as %+v", got)
	}
	if strings.Contains(lines[1], `"evidence"`) {
		t.Errorf("a recall without a test wrote evidence: %s", lines[1])
	}
	if err := (&sessionsRun{}).logEvidence(recs[0]); err != nil {
		t.Errorf("without a writer: %v", err)
	}
}

// TestDumpEvidenceDistributions: each record is counted in its column
// (relevant queries by hit, unrelated prompts by whether they were given
// memories) and in the row of its value; a record without a test is not
// counted.
func TestDumpEvidenceDistributions(t *testing.T) {
	ev := func(cov, unk float64, lacks ...string) *search.Evidence {
		return &search.Evidence{Coverage: cov, Unknown: unk, BestLacks: lacks}
	}
	recs := []EvidenceRecord{
		{Kind: EvidenceRelevant, Hit: true, Given: 5, Evidence: ev(0.65, 0)},
		{Kind: EvidenceRelevant, Hit: true, Given: 5, Evidence: ev(0.62, 0.1)},
		{Kind: EvidenceRelevant, Hit: false, Given: 5, Evidence: ev(0.1, 0)}, // a miss: no column
		{Kind: EvidenceUnrelated, Given: 4, Evidence: ev(0.45, 0.2, "rust")},
		{Kind: EvidenceUnrelatedInProject, Given: 2, Evidence: ev(0.25, 0.2)},
		{Kind: EvidenceUnrelated, Given: 0, Evidence: ev(0.1, 0.5)},
		{Kind: EvidenceUnrelated, Given: 0}, // no test
	}
	var b bytes.Buffer
	dumpEvidenceDistributions(&b, recs)
	out := b.String()
	row := func(table, label string) string {
		i := strings.Index(out, table)
		if i < 0 {
			t.Fatalf("no table %q:\n%s", table, out)
		}
		for _, l := range strings.Split(out[i:], "\n") {
			if f := strings.Fields(l); len(f) > 0 && strings.HasPrefix(strings.TrimSpace(l), label+" ") {
				return strings.Join(f[len(strings.Fields(label)):], " ")
			}
		}
		t.Fatalf("table %q has no row %q:\n%s", table, label, out)
		return ""
	}
	for _, tc := range []struct{ table, label, want string }{
		{"coverage (best", ".6-.8", "2 0 0 0"},
		{"coverage (best", ".4-.5", "0 1 0 0"},
		{"coverage (best", ".2-.3", "0 0 1 0"},
		{"coverage (best", "< .2", "0 0 0 1"},
		{"coverage (best", "all", "2 1 1 1"},
		{"coverage - unknown", "<= 0", "0 0 0 1"},
		{"coverage - unknown", "0-.1", "0 0 1 0"},
		{"names the store knows", "1", "0 1 0 0"},
		{"names the store knows", "0", "2 0 1 1"},
	} {
		if got := row(tc.table, tc.label); got != tc.want {
			t.Errorf("%s, row %s: %q, want %q", tc.table, tc.label, got, tc.want)
		}
	}
}
