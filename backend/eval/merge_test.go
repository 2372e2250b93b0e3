package eval

import (
	"context"
	"strings"
	"testing"

	"github.com/memtray/memtray/backend/steward"
)

// TestMerge: the labelled pair merges, nothing else does, no load-bearing
// token is lost; a threshold above every pair merges nothing.
func TestMerge(t *testing.T) {
	for _, tc := range []struct {
		name      string
		threshold float64
		merged    int
	}{
		{"loose", 0.55, 1},
		{"strict", 0.99, 0},
	} {
		rep, err := RunMerge(context.Background(), "testdata/recall-tiny.json", "testdata/recall-tiny.meta.json", tc.threshold, Options{TempDir: t.TempDir()})
		if err != nil {
			t.Fatal(err)
		}
		logTable(t, rep)
		if rep.PairsMerged != tc.merged || rep.DistractorsMerged != 0 || rep.OtherMerges != 0 || rep.LostTokens != 0 {
			t.Errorf("%s: %+v", tc.name, rep)
		}
	}
	if _, err := RunMerge(context.Background(), "testdata/recall-tiny.json", "testdata/missing.json", 0, Options{}); err == nil {
		t.Error("a missing meta file was accepted")
	}
}

// TestMergeDevShared is the measure on recall-dev (skipped when
// ../shared is absent): no distractor and no unlabelled memory merged, no
// load-bearing token lost.
func TestMergeDevShared(t *testing.T) {
	path := sharedFile(t, "eval/recall-dev.json")
	meta := sharedFile(t, "eval/recall-dev.meta.json")
	rep, err := RunMerge(context.Background(), path, meta, 0, Options{TempDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	logTable(t, rep)
	if rep.DistractorsMerged != 0 || rep.OtherMerges != 0 || rep.LostTokens != 0 {
		t.Errorf("wrong merges: %+v", rep)
	}
	n := 0
	for _, c := range rep.RefusedBy {
		n += c
	}
	if n != rep.Refused {
		t.Errorf("refused %d, by reason %v", rep.Refused, rep.RefusedBy)
	}
}

// TestMergeTableRefusedBy: the table lists the refused pairs by the plan's
// reason, not all as a lost token.
func TestMergeTableRefusedBy(t *testing.T) {
	rep := &MergeReport{Refused: 3, RefusedBy: map[string]int{steward.RefusedPinned: 2, steward.RefusedToken: 1}}
	var b strings.Builder
	if err := rep.WriteTable(&b); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"near-duplicates refused  ", "  pinned  ", "  would lose a load-bearing token  "} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, b.String())
		}
	}
	if strings.Contains(b.String(), "refused (would lose") {
		t.Errorf("table labels every refusal a lost token:\n%s", b.String())
	}
}
