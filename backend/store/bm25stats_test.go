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
// documents, rounded up). It also checks the store's running count of
// tokens is what the index holds.
func bleveAvgLength(t *testing.T, s *Store) float64 {
	t.Helper()
	st, err := s.bm25Stats()
	if err != nil {
		t.Fatal(err)
	}
	ai, err := s.text.Advanced()
	if err != nil {
		t.Fatal(err)
	}
	r, err := ai.Reader()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	tokens, names := s.textTokens()
	if n, err := fieldTokens(context.Background(), r, fieldText); err != nil || n != tokens {
		t.Errorf("the index holds %d tokens (%v), the store counts %d", n, err, tokens)
	}
	if n, err := fieldTokens(context.Background(), r, fieldNames); err != nil || n != names || st.FieldCardinality[fieldNames] != names {
		t.Errorf("the index holds %d names (%v), the store counts %d, the statistics %d", n, err, names, st.FieldCardinality[fieldNames])
	}
	return math.Ceil(float64(st.FieldCardinality[fieldText]) / st.DocCount)
}

// TestBM25AverageIsMeanTokens checks bleve is given the mean number of
// tokens of the texts as their average length, as BM25 defines it, and
// not the number of distinct terms per document (bleve's own count): a
// memory that repeats its words is as long as its tokens, however few
// terms it has. The average follows every write, before and after a
// reopen (where the count is the one the index kept, or is counted in
// the index, and a loaded text is counted only when it is replaced or
// deleted).
func TestBM25AverageIsMeanTokens(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s := openTest(t, dir)
	var a, b, c memory.Memory
	setText := func(id, text string) func() error {
		return func() error {
			_, err := s.Update(ctx, id, func(m *memory.Memory) error {
				m.Text, m.Embedding = text, testEmb.vec(text)
				return nil
			})
			return err
		}
	}
	steps := []struct {
		name  string
		write func() error
		want  float64
	}{
		{"two memories", func() error {
			// 6 tokens ("the" is a stop word), 3 distinct terms.
			a = mustPut(t, s, mem("Deploy deploy deploy deploy the billing service"))
			// 2 tokens, 2 terms: mean 4, distinct terms (merged) 4/2 = 2.
			b = mustPut(t, s, mem("Billing retries"))
			return nil
		}, 4},
		// 2 -> 10 tokens: mean 8.
		{"update makes one longer", func() error {
			return setText(b.ID, "Billing retries retries retries retries retries retries retries retries retries")()
		}, 8},
		{"a third", func() error {
			// 1 token: 17/3, rounded up 6.
			c = mustPut(t, s, mem("Retries"))
			return nil
		}, 6},
		{"delete", func() error { return s.Delete(ctx, a.ID) }, 6}, // 11/2 = 5.5, rounded up
		{"reopen", func() error {
			if err := s.Close(); err != nil {
				return err
			}
			s = openTest(t, dir)
			return nil
		}, 6},
		// A version that keeps no count wrote after this one.
		{"a count kept at another watermark", func() error {
			if err := s.Close(); err != nil {
				return err
			}
			s = openTest(t, dir)
			if err := s.text.SetInternal([]byte(internalTokens), append(u64(s.textLast-1), u64(1000)...)); err != nil {
				return err
			}
			s.tokens = -1
			return s.countIndexTokens(ctx, false)
		}, 6},
		// As after a repair, or for an index that kept no count.
		{"counted in the index", func() error {
			s.tokens = -1
			return s.countIndexTokens(ctx, true)
		}, 6},
		{"a loaded one updated", func() error { return setText(c.ID, "Retries backoff jitter")() }, 7}, // 10 + 3
		{"an access leaves the text", func() error { _, err := s.RecordAccess(ctx, t0, b.ID); return err }, 7},
		{"a loaded one deleted", func() error { return s.Delete(ctx, b.ID) }, 3},
	}
	for _, st := range steps {
		if err := st.write(); err != nil {
			t.Fatalf("%s: %v", st.name, err)
		}
		if got := bleveAvgLength(t, s); got != st.want {
			t.Errorf("%s: bleve's average length %v, want %v", st.name, got, st.want)
		}
	}
}

// TestBM25NamesCount checks the names field's count the statistics give
// bleve is the count of the terms the index holds in it (bleveAvgLength),
// after every kind of write, a reopen, and writes to memories loaded by
// it: the store keeps it with every write rather than walking the
// field's postings for the first search after each.
func TestBM25NamesCount(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s := openTest(t, dir)
	var a, b, c memory.Memory
	setText := func(id *string, text string) func() error {
		return func() error {
			_, err := s.Update(ctx, *id, func(m *memory.Memory) error {
				m.Text, m.Embedding = text, testEmb.vec(text)
				return nil
			})
			return err
		}
	}
	steps := []struct {
		name  string
		write func() error
		want  int
	}{
		{"none", func() error { return nil }, 0},
		{"three memories", func() error {
			a = mustPut(t, s, mem("Build with --firmware and ./out/ then run make()"))
			b = mustPut(t, s, mem("The billing service retries"))
			c = mustPut(t, s, mem("Set $HOME before JIRA-123 is closed"))
			return nil
		}, 6},
		{"an update adds names", setText(&b.ID, "Billing reads config/billing.yaml with -v"), 8},
		{"an update keeps the text", func() error { _, err := s.RecordAccess(ctx, t0, b.ID); return err }, 8},
		{"a delete", func() error { return s.Delete(ctx, a.ID) }, 4},
		{"reopen", func() error {
			if err := s.Close(); err != nil {
				return err
			}
			s = openTest(t, dir)
			return nil
		}, 4},
		{"a loaded one updated", setText(&c.ID, "Set $PATH"), 3},
		{"a loaded one deleted", func() error { return s.Delete(ctx, b.ID) }, 1},
	}
	for _, st := range steps {
		if err := st.write(); err != nil {
			t.Fatalf("%s: %v", st.name, err)
		}
		bleveAvgLength(t, s)
		if _, names := s.textTokens(); names != st.want {
			t.Errorf("%s: %d names, want %d", st.name, names, st.want)
		}
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
