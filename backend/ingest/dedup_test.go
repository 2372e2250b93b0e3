package ingest

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/memtray/memtray/backend/config"
	"github.com/memtray/memtray/backend/embed"
	"github.com/memtray/memtray/backend/embed/embedtest"
	"github.com/memtray/memtray/backend/memory"
	"github.com/memtray/memtray/backend/store"
)

// TestDedupAcrossModelSwitch: a text embedded with the old model just
// before the store switched models (a re-embedding finishing between the
// embed and dedup steps) must not be compared with the new model's vectors.
// Its old vector is the new vector of an unrelated stored memory, and it
// adds no load-bearing token to it: compared, it would be dropped as that
// memory's near duplicate. Instead the store refuses the search
// (memory.ErrModelMismatch), the text is embedded again with the new model
// and stored as a memory of its own: for an add (Write), a memory stated
// on purpose (Remember, through the stages) and a captured turn.
func TestDedupAcrossModelSwitch(t *testing.T) {
	const (
		stored = "Code reviews stay small and are answered the same day; the exporter in `export/csv.go` quotes every field because Excel splits unquoted fields at commas."
		text   = "Lunch is served on the second floor of the office."
	)
	tests := []struct {
		name string
		want string // the text stored
		add  func(ctx context.Context, p *Pipeline) (memory.Verdict, []string, error)
	}{
		{"write (add)", text, func(ctx context.Context, p *Pipeline) (memory.Verdict, []string, error) {
			res, err := p.Write(ctx, WriteRequest{Memory: memory.Memory{Text: text, Source: memory.SourceCLI}})
			return res.Decision.Verdict, res.Decision.MemoryIDs, err
		}},
		{"remember (stages)", text, func(ctx context.Context, p *Pipeline) (memory.Verdict, []string, error) {
			d, err := p.Remember(ctx, memory.Memory{Text: text})
			return d.Verdict, d.MemoryIDs, err
		}},
		{"captured turn", "export/csv.go", func(ctx context.Context, p *Pipeline) (memory.Verdict, []string, error) {
			exs := sessionOf("switch1", "go on", "Continuing with the exporter.")
			exs[0].Summary = "The exporter in `export/csv.go` quotes every field because Excel splits unquoted fields at commas."
			d, _, err := p.ProcessTurn(ctx, GroupTurns(exs)[0], nil, SessionState{})
			return d.Verdict, d.MemoryIDs, err
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			// Every text but the stored one is old embedtest.Unit(0), the stored
			// one's new vector.
			oldEmb := &embedtest.Table{Name: "table-old", Vecs: map[string][]float32{stored: embedtest.Unit(1)}, Other: embedtest.Unit(0)}
			newEmb := &embedtest.Table{Name: "table-new", Vecs: map[string][]float32{stored: embedtest.Unit(0)}, Other: embedtest.Unit(2)}
			st, err := store.Open(ctx, store.Options{Dir: t.TempDir(), Model: oldEmb.Name, Dim: embedtest.Dim, Clock: memory.FixedClock{T: t0}})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { st.Close() })
			sw := embed.NewSwappable(oldEmb)
			p, err := New(Options{Config: config.Default().Ingest, Embedder: sw, Store: st, Clock: memory.FixedClock{T: t0}})
			if err != nil {
				t.Fatal(err)
			}
			first, err := p.Write(ctx, WriteRequest{Memory: memory.Memory{Text: stored, Source: memory.SourceCLI}})
			if err != nil || first.Decision.Verdict != memory.VerdictStored {
				t.Fatalf("seed: %+v %v", first.Decision, err)
			}
			// The hook: once the old model has embedded the next text, the
			// store re-embeds with the new model and the embedder
			// switches, as a re-embedding job finishing right then does.
			switched := false
			oldEmb.After = func([]string) {
				if switched {
					return
				}
				switched = true
				if err := st.ReembedWith(ctx, newEmb, store.ReembedOptions{Switched: func() { sw.Swap(newEmb) }}); err != nil {
					t.Errorf("reembed: %v", err)
				}
			}

			verdict, ids, err := tc.add(ctx, p)
			if err != nil {
				t.Fatal(err)
			}
			if !switched {
				t.Fatal("the store never switched models: the test hook did not run")
			}
			if verdict != memory.VerdictStored || len(ids) != 1 || ids[0] == first.Memory.ID {
				t.Fatalf("verdict %s, ids %v (the stored memory is %s): want a new memory", verdict, ids, first.Memory.ID)
			}
			m, err := st.Get(ctx, ids[0])
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(m.Text, tc.want) || m.EmbeddingModel != newEmb.Name || fmt.Sprint(m.Embedding) != fmt.Sprint(embedtest.Unit(2)) {
				t.Errorf("stored %q, model %s, vector %v: want %q with the new model's vector", m.Text, m.EmbeddingModel, m.Embedding, tc.want)
			}
			old, err := st.Get(ctx, first.Memory.ID)
			if err != nil || old.ReinforcedCount != 0 || old.Superseded() {
				t.Errorf("the unrelated memory was touched: %+v %v", old, err)
			}
			if n := st.Count(); n != 2 {
				t.Errorf("%d memories, want 2", n)
			}
		})
	}
}

// seenEmbedder gives each distinct (trimmed) text it embeds a unit vector
// of its own, along axes from base on, in the order it first sees them:
// two texts are never near duplicates under one model, and no two models
// share a vector. after, when set, runs once an Embed call has its
// vectors and before it returns them.
type seenEmbedder struct {
	model string
	base  int
	seen  map[string]int
	after func(texts []string)
}

const seenDim = 32

func (e *seenEmbedder) Model() string { return e.model }
func (e *seenEmbedder) Dim() int      { return seenDim }

func (e *seenEmbedder) Embed(_ context.Context, texts []string) ([][]float32, error) {
	if e.seen == nil {
		e.seen = map[string]int{}
	}
	out := make([][]float32, len(texts))
	for i, t := range texts {
		k, ok := e.seen[strings.TrimSpace(t)]
		if !ok {
			k = len(e.seen)
			e.seen[strings.TrimSpace(t)] = k
		}
		out[i] = make([]float32, seenDim)
		out[i][(e.base+k)%seenDim] = 1
	}
	if e.after != nil {
		e.after(texts)
	}
	return out, nil
}

// TestModelSwitchMidRun: a run of two texts whose second meets the
// store's model switch (A to B) and, embedded again, a second switch (B
// to C) stores both once, with the last model: the first, stored before
// the switches, is not placed again as its own duplicate (reinforced)
// by a retry of the whole run, and a captured turn does not fail. A
// single text (Write) meeting both switches is stored too.
func TestModelSwitchMidRun(t *testing.T) {
	const (
		para1 = "The exporter in `export/csv.go` quotes every field because Excel splits unquoted fields at commas and semicolons."
		para2 = "The importer in `import/rows.go` skips rows with an empty `customer_id` column before it validates the remaining ones."
	)
	tests := []struct {
		name  string
		texts int // the memories the run stores
		add   func(ctx context.Context, p *Pipeline) (memory.Decision, error)
	}{
		{"remember, two chunks", 2, func(ctx context.Context, p *Pipeline) (memory.Decision, error) {
			return p.Remember(ctx, memory.Memory{Text: para1 + "\n\n" + para2})
		}},
		{"captured turn, two statements", 2, func(ctx context.Context, p *Pipeline) (memory.Decision, error) {
			exs := sessionOf("switch2", "look at the csv code", para1, "Let me read the importer.", para2)
			d, _, err := p.ProcessTurn(ctx, GroupTurns(exs)[0], nil, SessionState{})
			return d, err
		}},
		{"write, one text", 1, func(ctx context.Context, p *Pipeline) (memory.Decision, error) {
			res, err := p.Write(ctx, WriteRequest{Memory: memory.Memory{Text: para2, Source: memory.SourceCLI}})
			return res.Decision, err
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			a := &seenEmbedder{model: "seen-a", base: 0}
			b := &seenEmbedder{model: "seen-b", base: 10}
			c := &seenEmbedder{model: "seen-c", base: 20}
			st, err := store.Open(ctx, store.Options{Dir: t.TempDir(), Model: a.model, Dim: seenDim, Clock: memory.FixedClock{T: t0}})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { st.Close() })
			sw := embed.NewSwappable(a)
			cfg := config.Default().Ingest
			cfg.ChunkSize, cfg.MinChunk = 100, 20 // one chunk per paragraph
			p, err := New(Options{Config: cfg, Embedder: sw, Store: st, Clock: memory.FixedClock{T: t0}})
			if err != nil {
				t.Fatal(err)
			}
			switchTo := func(e memory.Embedder) {
				if err := st.ReembedWith(ctx, e, store.ReembedOptions{Switched: func() { sw.Swap(e) }}); err != nil {
					t.Errorf("reembed with %s: %v", e.Model(), err)
				}
			}
			// A to B once the run's texts are embedded with A; B to C
			// once the text with para2 is embedded again with B.
			toB, toC := false, false
			a.after = func([]string) {
				if !toB {
					toB = true
					switchTo(b)
				}
			}
			b.after = func(texts []string) {
				if !toC && len(texts) == 1 && strings.Contains(texts[0], "import/rows.go") {
					toC = true
					switchTo(c)
				}
			}

			d, err := tc.add(ctx, p)
			if err != nil {
				t.Fatalf("%v (decision %+v)", err, d)
			}
			if !toB || !toC {
				t.Fatalf("switched to B %v, to C %v: the test hooks did not run", toB, toC)
			}
			if d.Verdict != memory.VerdictStored {
				t.Errorf("verdict %s (%s), want stored", d.Verdict, d.Reason)
			}
			if n := st.Count(); n != tc.texts {
				t.Errorf("%d memories, want %d", n, tc.texts)
			}
			if err := st.Iterate(ctx, store.Filter{}, func(m memory.Memory) error {
				if m.ReinforcedCount != 0 || m.Superseded() || m.EmbeddingModel != c.model {
					t.Errorf("memory %q: reinforced %d, superseded %v, model %s: want stored once with %s",
						preview(m.Text), m.ReinforcedCount, m.Superseded(), m.EmbeddingModel, c.model)
				}
				return nil
			}); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestDedupStaysInProject: a memory is placed among the memories of its
// own project only (ownProject). Store.Filter's Project "" matches every
// project, so an exchange of no project used to reinforce another
// project's memory it nearly repeats, supersede one it adds to (the new
// version then of no project), or be dropped as an older version of
// another project's superseded memory. Every text here has the same
// vector: each is the others' near duplicate by similarity.
func TestDedupStaysInProject(t *testing.T) {
	const (
		base    = "The parser in `parse/lexer.go` caches tokens per file."
		again   = "The parser in parse/lexer.go caches tokens per file!"
		more    = "The parser in `parse/lexer.go` caches tokens per file, up to 64 MB."
		oldV    = "The parser in `parse/lexer.go` caches tokens per file for 30s."
		newV    = "The parser in `parse/lexer.go` caches tokens per file for 45s."
		oldVish = "The parser in parse/lexer.go caches tokens per file for 30s!"
		// other is base in other words' case: a text of its own (the
		// content hash is store-wide), the same vector
		other = "The Parser in `parse/lexer.go` Caches Tokens per File."
	)
	type seed struct{ project, text string }
	tests := []struct {
		name    string
		seeds   []seed // written in order through Write (each placed as any text is)
		project string // of the text written last
		text    string
		want    memory.Verdict
		// wantNew: the text is stored as a memory of its own, of project,
		// and no seed was reinforced or superseded by it
		wantNew bool
	}{
		{"no project repeats a project's memory", []seed{{"alpha", base}}, "", again, memory.VerdictStored, true},
		{"no project adds to a project's memory", []seed{{"alpha", base}}, "", more, memory.VerdictStored, true},
		{"no project repeats a project's older version", []seed{{"", base}, {"alpha", oldV}, {"alpha", newV}}, "", oldVish, memory.VerdictUpdated, true},
		{"a project repeats a memory of no project", []seed{{"", base}}, "alpha", again, memory.VerdictStored, true},
		{"a project repeats another project's memory", []seed{{"beta", base}}, "alpha", again, memory.VerdictStored, true},
		{"no project repeats a memory of no project", []seed{{"", other}, {"alpha", base}}, "", again, memory.VerdictMerged, false},
		{"a project repeats its own memory", []seed{{"", other}, {"alpha", base}}, "alpha", again, memory.VerdictMerged, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			emb := &embedtest.Table{Name: "table", Other: embedtest.Unit(0)}
			st, err := store.Open(ctx, store.Options{Dir: t.TempDir(), Model: emb.Name, Dim: embedtest.Dim, Clock: memory.FixedClock{T: t0}})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { st.Close() })
			p, err := New(Options{Config: config.Default().Ingest, Embedder: emb, Store: st, Clock: memory.FixedClock{T: t0}})
			if err != nil {
				t.Fatal(err)
			}
			before := map[string]memory.Memory{}
			for _, s := range tc.seeds {
				res, err := p.Write(ctx, WriteRequest{Memory: memory.Memory{Text: s.text, Project: s.project, Source: memory.SourceCLI}})
				if err != nil || (res.Decision.Verdict != memory.VerdictStored && res.Decision.Verdict != memory.VerdictUpdated) {
					t.Fatalf("seed %q of %q: %+v %v", s.text, s.project, res.Decision, err)
				}
				before[res.Memory.ID] = res.Memory
			}
			for id := range before { // as the seeds left them (a seed may supersede one)
				if before[id], err = st.Get(ctx, id); err != nil {
					t.Fatal(err)
				}
			}
			res, err := p.Write(ctx, WriteRequest{Memory: memory.Memory{Text: tc.text, Project: tc.project, Source: memory.SourceCLI}})
			if err != nil {
				t.Fatal(err)
			}
			if res.Decision.Verdict != tc.want {
				t.Fatalf("verdict %s (%s), want %s", res.Decision.Verdict, res.Decision.Reason, tc.want)
			}
			if !tc.wantNew {
				if res.Memory.Project != tc.project {
					t.Errorf("reinforced a memory of project %q, want %q", res.Memory.Project, tc.project)
				}
				return
			}
			if res.Memory.Text != tc.text || res.Memory.Project != tc.project || before[res.Memory.ID].ID != "" {
				t.Errorf("stored %q of project %q (id %s): want a new memory of project %q", res.Memory.Text, res.Memory.Project, res.Memory.ID, tc.project)
			}
			for id, b := range before {
				now, err := st.Get(ctx, id)
				if err != nil {
					t.Fatal(err)
				}
				if now.Project == tc.project {
					continue // the text's own project may be placed among
				}
				if now.ReinforcedCount != b.ReinforcedCount || now.SupersededBy != b.SupersededBy {
					t.Errorf("memory %q of project %q was touched: reinforced %d → %d, superseded by %q → %q",
						b.Text, b.Project, b.ReinforcedCount, now.ReinforcedCount, b.SupersededBy, now.SupersededBy)
				}
			}
		})
	}
}

// TestNewTokensNameForms: a near duplicate that changes a call on a
// dotted name outside backticks, a flag or a folder adds a load-bearing
// token (memory.LoadBearing's name forms), so dedup updates the memory
// rather than merging the change away; a restatement that changes only
// words adds none.
func TestNewTokensNameForms(t *testing.T) {
	cases := []struct {
		old, next string
		want      []string
	}{
		{"The getter returns abs(value) for the reading.", "The getter now returns abs(self._value) for the reading.", []string{"abs(self._value)", "self._value"}},
		{"Run the exporter with --dry-run first.", "Run the exporter with -n first.", []string{"-n"}},
		{"Generated tiles go to the bucket.", "Generated tiles go to assets/ now.", []string{"assets/"}},
		{"The getter returns abs(value) for the reading.", "The getter returns abs(value) for each reading.", nil},
	}
	for _, c := range cases {
		if got := newTokens(c.old, c.next); !slices.Equal(got, c.want) {
			t.Errorf("newTokens(%q, %q) = %q, want %q", c.old, c.next, got, c.want)
		}
	}
}
