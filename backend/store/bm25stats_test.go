package store

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/memtray/memtray/backend/memory"
)

// layoutTexts are memories of assorted lengths and words, and a group of
// 24 that tie for "staging" (one mention each, the same length).
func layoutTexts() []memory.Memory {
	services := []string{"billing", "search", "gateway", "mailer", "scheduler"}
	tools := []string{"helm charts", "a blue green rollout", "terraform and a manual approval step", "the release train"}
	var ms []memory.Memory
	for i := range 40 {
		text := fmt.Sprintf("The %s service deploys with %s; owner note %d.", services[i%5], tools[i%4], i)
		if i%3 == 0 {
			text += " Rollbacks of the " + services[(i+1)%5] + " service need the on-call lead to approve them first."
		}
		m := mem(text)
		m.ID = fmt.Sprintf("d%02d", i)
		if i%2 == 0 {
			m.Project = "alpha"
		}
		ms = append(ms, m)
	}
	for i := range 24 {
		m := mem(fmt.Sprintf("Reminder about the staging cluster quota%c%c", 'a'+i%26, 'a'+i/26))
		m.ID = fmt.Sprintf("t%02d", i)
		m.Project, m.Kind = "alpha", memory.KindConfig
		ms = append(ms, m)
	}
	return ms
}

// TestTextSearchSameWhateverTheLayout writes the same memories into one
// store in one batch and into another one at a time, so their text
// indexes are split into segments differently, and checks every search
// ranks and scores alike in both: BM25 statistics summed per segment made
// the scores depend on the layout, and bleve orders equal scores by
// position, so ties at the cut took different memories.
func TestTextSearchSameWhateverTheLayout(t *testing.T) {
	ctx := context.Background()
	one := openTest(t, t.TempDir())
	if _, err := one.PutBatch(ctx, layoutTexts()); err != nil {
		t.Fatal(err)
	}
	each := openTest(t, t.TempDir())
	for _, m := range slices.Backward(layoutTexts()) {
		mustPut(t, each, m)
	}
	tests := []struct {
		q string
		n int
		f Filter
	}{
		{"staging", 5, Filter{}},
		{"staging quota", 10, Filter{}},
		{"billing service rollout", 6, Filter{}},
		{"who approves a rollback of the gateway", 8, Filter{}},
		{"helm", 3, Filter{}},
		{"service", 20, Filter{}},
		// Filters are term queries on their own fields: they need
		// statistics too.
		{"service", 7, Filter{Project: "alpha"}},
		{"staging", 4, Filter{Project: "alpha", Kinds: []memory.Kind{memory.KindConfig}}},
	}
	for _, tt := range tests {
		a, err := one.TextSearch(ctx, tt.q, tt.n, tt.f)
		if err != nil {
			t.Fatal(err)
		}
		if len(a) == 0 {
			t.Errorf("%q %+v: nothing found", tt.q, tt.f)
		}
		b, err := each.TextSearch(ctx, tt.q, tt.n, tt.f)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(a, b) {
			t.Errorf("%q: one batch gives %v, one at a time %v", tt.q, a, b)
		}
	}
	// A tie goes to the smaller id.
	got, err := each.TextSearch(ctx, "staging", 5, Filter{})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"t00", "t01", "t02", "t03", "t04"}; !slices.Equal(ids(got), want) {
		t.Errorf("staging: got %v, want %v", ids(got), want)
	}
}

func TestRoundScore(t *testing.T) {
	tests := []struct{ in, want float64 }{
		{0, 0},
		{0.07809269784262136, 0.0780926978},
		{0.07809269784262138, 0.0780926978}, // the same document's score in two layouts
		{1.5774858038680648, 1.5774858},
		{12.5, 12.5},
		{-2.25, -2.25},
	}
	for _, tt := range tests {
		if got := roundScore(tt.in); got != tt.want {
			t.Errorf("roundScore(%v) = %v, want %v", tt.in, got, tt.want)
		}
	}
}
