package store

import (
	"context"
	"fmt"
	"math"
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

// bleveAvgLength is the average text length bleve scores with given these
// statistics (search/searcher/search_term.go: the count over the
// documents, rounded up).
func bleveAvgLength(t *testing.T, s *Store) float64 {
	t.Helper()
	st, err := s.bm25Stats()
	if err != nil {
		t.Fatal(err)
	}
	return math.Ceil(float64(st.FieldCardinality[fieldText]) / st.DocCount)
}

// TestBM25AverageIsMeanTokens checks bleve is given the mean number of
// tokens of the texts as their average length, as BM25 defines it, and
// not the number of distinct terms per document (bleve's own count): a
// memory that repeats its words is as long as its tokens, however few
// terms it has. The average follows every write and survives a reopen.
func TestBM25AverageIsMeanTokens(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s := openTest(t, dir)
	// 6 tokens ("the" is a stop word), 3 distinct terms.
	a := mustPut(t, s, mem("Deploy deploy deploy deploy the billing service"))
	// 2 tokens, 2 terms: mean 4, distinct terms (merged) 4/2 = 2.
	b := mustPut(t, s, mem("Billing retries"))
	steps := []struct {
		name  string
		write func() error
		want  float64
	}{
		{"two memories", func() error { return nil }, 4},
		{"update makes one longer", func() error {
			// 2 -> 10 tokens: mean 8.
			_, err := s.Update(ctx, b.ID, func(m *memory.Memory) error {
				m.Text = "Billing retries retries retries retries retries retries retries retries retries"
				m.Embedding = testEmb.vec(m.Text)
				return nil
			})
			return err
		}, 8},
		{"a third", func() error {
			// 1 token: 17/3, rounded up 6.
			mustPut(t, s, mem("Retries"))
			return nil
		}, 6},
		{"delete", func() error { return s.Delete(ctx, a.ID) }, 6}, // 11/2 = 5.5, rounded up
	}
	for _, st := range steps {
		if err := st.write(); err != nil {
			t.Fatalf("%s: %v", st.name, err)
		}
		if got := bleveAvgLength(t, s); got != st.want {
			t.Errorf("%s: bleve's average length %v, want %v", st.name, got, st.want)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = openTest(t, dir)
	if got := bleveAvgLength(t, s); got != 6 {
		t.Errorf("reopened: bleve's average length %v, want 6", got)
	}
}

func TestTextLength(t *testing.T) {
	tests := []struct {
		text string
		want int32
	}{
		{"", 0},
		{"the and of", 0},
		{"Deploy deploy deploy the billing service", 5},
		{"The user's preferred editor is Helix.", 4}, // possessive dropped with "is", "the"
	}
	for _, tt := range tests {
		if got := textLength(tt.text); got != tt.want {
			t.Errorf("textLength(%q) = %d, want %d", tt.text, got, tt.want)
		}
	}
}
