package steward

import (
	"context"
	"reflect"
	"slices"
	"sort"
	"testing"
	"time"

	"github.com/memtray/memtray/backend/config"
	"github.com/memtray/memtray/backend/embed"
	"github.com/memtray/memtray/backend/memory"
	"github.com/memtray/memtray/backend/store"
)

// now is the tests' present; records are made relative to it.
var now = time.Date(2025, 9, 1, 12, 0, 0, 0, time.UTC)

var testEmb = embed.NewBuiltin()

func daysAgo(d int) time.Time { return now.Add(-time.Duration(d) * day) }

// rec describes a hand-made memory.
type rec struct {
	id, text   string
	typ        memory.Type
	project    string
	importance float64
	access     int
	reinforced int
	created    int // days ago
	accessed   int // days ago; -1: never
	pinned     bool
	superseded bool
	cooldown   time.Time
}

func (r rec) memory(t testing.TB) memory.Memory {
	vecs, err := testEmb.Embed(context.Background(), []string{r.text})
	if err != nil {
		t.Fatal(err)
	}
	m := memory.Memory{ID: r.id, Text: r.text, Type: r.typ, Project: r.project, Importance: r.importance,
		AccessCount: r.access, ReinforcedCount: r.reinforced, CreatedAt: daysAgo(r.created), Pinned: r.pinned,
		Embedding: vecs[0], CooldownUntil: r.cooldown, Source: memory.SourceCapture}
	if m.Project == "" {
		m.Project = "proj"
	}
	if r.accessed >= 0 && r.access > 0 {
		m.LastAccessed = daysAgo(r.accessed)
		m.Hits = []time.Time{daysAgo(r.accessed)}
	}
	if r.reinforced > 0 && r.accessed >= 0 {
		m.LastReinforcedAt = daysAgo(r.accessed)
	}
	if r.superseded {
		m.SupersededBy = "someone-newer"
	}
	if m.Importance == 0 {
		m.Importance = 0.5
	}
	return m
}

// openStore opens a store in dir with the built-in embedder, its clock at now.
func openStore(t testing.TB, dir string) *store.Store {
	t.Helper()
	st, err := store.Open(context.Background(), store.Options{Dir: dir, Model: testEmb.Model(), Dim: testEmb.Dim(), Clock: memory.FixedClock{T: now}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	return st
}

// fixture opens a fresh store holding recs and a steward over it.
func fixture(t testing.TB, cfg config.Steward, recs ...rec) (*store.Store, *Steward) {
	t.Helper()
	st := openStore(t, t.TempDir())
	ms := make([]memory.Memory, len(recs))
	for i, r := range recs {
		ms[i] = r.memory(t)
	}
	if len(ms) > 0 {
		if _, err := st.PutBatch(context.Background(), ms); err != nil {
			t.Fatal(err)
		}
	}
	return st, New(st, cfg, Options{Dir: t.TempDir(), Clock: memory.FixedClock{T: now}})
}

func defaults() config.Steward { return config.Default().Steward }

// everything returns every live record (embeddings included) and the trash.
func everything(t testing.TB, st *store.Store) (map[string]memory.Memory, []store.TrashedMemory) {
	t.Helper()
	ctx := context.Background()
	out := map[string]memory.Memory{}
	if err := st.Iterate(ctx, store.Filter{IncludeSnoozed: true, IncludeSuperseded: true}, func(m memory.Memory) error {
		out[m.ID] = m
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	tr, err := st.Trash(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return out, tr
}

// diffRecords lists the ids whose records differ between a and b.
func diffRecords(a, b map[string]memory.Memory) []string {
	var out []string
	for id, x := range a {
		if y, ok := b[id]; !ok || !reflect.DeepEqual(x, y) {
			out = append(out, id)
		}
	}
	for id := range b {
		if _, ok := a[id]; !ok {
			out = append(out, id)
		}
	}
	sort.Strings(out)
	return slices.Compact(out)
}

// actionsFor returns the plan's actions on id, by op.
func actionsFor(p *Plan, id string) map[string]Action {
	out := map[string]Action{}
	for _, a := range p.Actions {
		if a.ID == id {
			out[a.Op] = a
		}
	}
	return out
}
