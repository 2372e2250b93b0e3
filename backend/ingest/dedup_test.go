package ingest

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/memtray/memtray/backend/config"
	"github.com/memtray/memtray/backend/embed"
	"github.com/memtray/memtray/backend/memory"
	"github.com/memtray/memtray/backend/store"
)

// tableEmbedder embeds the texts of its table as listed (by trimmed text)
// and any other text as other. after, when set, runs once an Embed call
// has its vectors and before it returns them.
type tableEmbedder struct {
	model string
	table map[string][]float32
	other []float32
	after func(texts []string)
}

const tableDim = 8

func (e *tableEmbedder) Model() string { return e.model }
func (e *tableEmbedder) Dim() int      { return tableDim }

func (e *tableEmbedder) Embed(_ context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i, t := range texts {
		v, ok := e.table[strings.TrimSpace(t)]
		if !ok {
			v = e.other
		}
		out[i] = v
	}
	if e.after != nil {
		e.after(texts)
	}
	return out, nil
}

// unit is the unit vector along axis i.
func unit(i int) []float32 {
	v := make([]float32, tableDim)
	v[i] = 1
	return v
}

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
			// Every text but the stored one is old unit(0), the stored
			// one's new vector.
			oldEmb := &tableEmbedder{model: "table-old", table: map[string][]float32{stored: unit(1)}, other: unit(0)}
			newEmb := &tableEmbedder{model: "table-new", table: map[string][]float32{stored: unit(0)}, other: unit(2)}
			st, err := store.Open(ctx, store.Options{Dir: t.TempDir(), Model: oldEmb.model, Dim: tableDim, Clock: memory.FixedClock{T: t0}})
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
			oldEmb.after = func([]string) {
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
			if !strings.Contains(m.Text, tc.want) || m.EmbeddingModel != newEmb.model || fmt.Sprint(m.Embedding) != fmt.Sprint(unit(2)) {
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
