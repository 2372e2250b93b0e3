package store

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/memtray/memtray/backend/memory"
	bolt "go.etcd.io/bbolt"
)

func TestPutGetUpdateDelete(t *testing.T) {
	ctx := context.Background()
	s := openTest(t, t.TempDir())

	m := mustPut(t, s, memory.Memory{Text: "  Use   pnpm, never npm, in the quill repo. ", Project: "quill", Embedding: testEmb.vec("use pnpm never npm quill")})
	if len(m.ID) != 32 || !ValidID(m.ID) {
		t.Errorf("generated id %q is not 32 hex chars", m.ID)
	}
	if m.Kind != memory.KindFact || m.Type != memory.TypeProject || m.Importance != 0.5 {
		t.Errorf("defaults not applied: %+v", m)
	}
	if !m.CreatedAt.Equal(t0) || !m.UpdatedAt.Equal(t0) {
		t.Errorf("times = %v %v, want %v", m.CreatedAt, m.UpdatedAt, t0)
	}
	if m.ContentHash != memory.ContentHash("Use pnpm, never npm, in the quill repo.") {
		t.Errorf("content hash not computed over normalised text")
	}
	if m.EmbeddingModel != testEmb.model {
		t.Errorf("embedding model = %q", m.EmbeddingModel)
	}

	got, err := s.Get(ctx, m.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Text != m.Text || !slices.Equal(got.Embedding, m.Embedding) || got.Project != "quill" {
		t.Errorf("Get = %+v, want %+v", got, m)
	}
	if _, err := s.Get(ctx, "nope"); !errors.Is(err, memory.ErrNotFound) {
		t.Errorf("Get(missing) err = %v, want ErrNotFound", err)
	}

	// A given valid id is kept; the same id twice is refused.
	m2 := mem("The deploy script lives in scripts/deploy.sh")
	m2.ID = "m002"
	m2 = mustPut(t, s, m2)
	if m2.ID != "m002" {
		t.Errorf("given id not kept: %q", m2.ID)
	}
	if _, err := s.Put(ctx, m2); !errors.Is(err, memory.ErrInvalid) {
		t.Errorf("duplicate id err = %v, want ErrInvalid", err)
	}

	many, err := s.GetMany(ctx, []string{m.ID, "m002", "missing"})
	if err != nil || len(many) != 2 {
		t.Fatalf("GetMany = %d records, %v", len(many), err)
	}
	if f, ok, err := s.FindByHash(ctx, m2.ContentHash, ""); err != nil || !ok || f.ID != "m002" {
		t.Errorf("FindByHash = %v %v %v", f.ID, ok, err)
	}
	if _, ok, _ := s.FindByHash(ctx, memory.ContentHash("never stored"), ""); ok {
		t.Error("FindByHash found a hash never stored")
	}

	// Update: counters only.
	later := memory.FixedClock{T: t0.Add(time.Hour)}
	s.clock = later
	u, err := s.Update(ctx, m.ID, func(x *memory.Memory) error { x.AccessCount++; x.CreatedAt = time.Time{}; return nil })
	if err != nil {
		t.Fatal(err)
	}
	if u.AccessCount != 1 || !u.CreatedAt.Equal(t0) || !u.UpdatedAt.Equal(later.T) {
		t.Errorf("Update = access %d created %v updated %v", u.AccessCount, u.CreatedAt, u.UpdatedAt)
	}
	// Changing the text without a new embedding is refused.
	if _, err := s.Update(ctx, m.ID, func(x *memory.Memory) error { x.Text = "something else"; return nil }); !errors.Is(err, memory.ErrInvalid) {
		t.Errorf("text change without embedding: err = %v", err)
	}
	// With one it re-indexes both legs and the hash index.
	u, err = s.Update(ctx, m.ID, func(x *memory.Memory) error {
		x.Text = "Use bun in the quill repo"
		x.Embedding = testEmb.vec(x.Text)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if hits, _ := s.TextSearch(ctx, "bun", 5, Filter{}); len(hits) != 1 || hits[0].ID != m.ID {
		t.Errorf("TextSearch(bun) after update = %v", hits)
	}
	if hits, _ := s.TextSearch(ctx, "pnpm", 5, Filter{}); len(hits) != 0 {
		t.Errorf("TextSearch(pnpm) still finds the old text: %v", hits)
	}
	if _, ok, _ := s.FindByHash(ctx, m.ContentHash, "quill"); ok {
		t.Error("old hash still indexed")
	}
	if f, ok, _ := s.FindByHash(ctx, u.ContentHash, "quill"); !ok || f.ID != m.ID {
		t.Error("new hash not indexed")
	}
	// fn's error aborts.
	boom := errors.New("boom")
	if _, err := s.Update(ctx, m.ID, func(x *memory.Memory) error { x.AccessCount = 99; return boom }); !errors.Is(err, boom) {
		t.Errorf("Update fn error = %v", err)
	}
	if g, _ := s.Get(ctx, m.ID); g.AccessCount != 1 {
		t.Errorf("aborted update was written: access %d", g.AccessCount)
	}
	if _, err := s.Update(ctx, "missing", func(*memory.Memory) error { return nil }); !errors.Is(err, memory.ErrNotFound) {
		t.Errorf("Update(missing) = %v", err)
	}

	if err := s.Delete(ctx, m.ID); err != nil {
		t.Fatal(err)
	}
	if err := s.Delete(ctx, m.ID); !errors.Is(err, memory.ErrNotFound) {
		t.Errorf("second Delete = %v", err)
	}
	if s.Count() != 1 {
		t.Errorf("Count = %d, want 1", s.Count())
	}
	if hits, _ := s.TextSearch(ctx, "bun quill", 5, Filter{}); len(hits) != 0 {
		t.Errorf("deleted memory still found by text: %v", hits)
	}
	if hits, _ := s.VectorSearch(ctx, u.Embedding, 5, Filter{}); len(hits) != 1 || hits[0].ID != "m002" {
		t.Errorf("vector search after delete = %v", hits)
	}
}

func TestPutValidation(t *testing.T) {
	ctx := context.Background()
	s := openTest(t, t.TempDir())
	nan := testEmb.vec("x")
	nan[3] = float32(nanF())
	cases := []struct {
		name string
		m    memory.Memory
		want error
	}{
		{"empty text", memory.Memory{Text: "  ", Embedding: testEmb.vec("a")}, memory.ErrInvalid},
		{"invalid utf8", memory.Memory{Text: "bad \xff text", Embedding: testEmb.vec("a")}, memory.ErrInvalid},
		{"nul byte", memory.Memory{Text: "bad \x00 text", Embedding: testEmb.vec("a")}, memory.ErrInvalid},
		{"unknown kind", memory.Memory{Text: "a", Kind: "gossip", Embedding: testEmb.vec("a")}, memory.ErrInvalid},
		{"importance", memory.Memory{Text: "a", Importance: 2, Embedding: testEmb.vec("a")}, memory.ErrInvalid},
		{"bad id", memory.Memory{ID: "has space", Text: "a", Embedding: testEmb.vec("a")}, memory.ErrInvalid},
		{"no embedding", memory.Memory{Text: "a"}, memory.ErrModelMismatch},
		{"wrong dim", memory.Memory{Text: "a", Embedding: make([]float32, 8)}, memory.ErrModelMismatch},
		{"wrong model", memory.Memory{Text: "a", Embedding: testEmb.vec("a"), EmbeddingModel: "other"}, memory.ErrModelMismatch},
		{"nan", memory.Memory{Text: "a", Embedding: nan}, memory.ErrInvalid},
		{"negative counter", memory.Memory{Text: "a", AccessCount: -1, Embedding: testEmb.vec("a")}, memory.ErrInvalid},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if _, err := s.Put(ctx, c.m); !errors.Is(err, c.want) {
				t.Errorf("Put err = %v, want %v", err, c.want)
			}
		})
	}
	if s.Count() != 0 {
		t.Errorf("invalid puts stored %d records", s.Count())
	}
	// A zero embedding (a text without a usable token) is stored, found by
	// text, never by vector.
	z := mustPut(t, s, memory.Memory{Text: "the and of zzzword", Embedding: make([]float32, testDim)})
	if ts, _ := s.TextSearch(ctx, "zzzword", 5, Filter{}); len(ts) != 1 {
		t.Errorf("zero-vector record not found by text: %v", ts)
	}
	if vs, err := s.VectorSearch(ctx, testEmb.vec("zzzword"), 5, Filter{}); err != nil || len(vs) != 0 {
		t.Errorf("zero-vector record found by vector: %v %v", vs, err)
	}
	if vs, err := s.VectorSearch(ctx, make([]float32, testDim), 5, Filter{}); err != nil || len(vs) != 0 {
		t.Errorf("zero query: %v %v", vs, err)
	}
	if err := s.Delete(ctx, z.ID); err != nil {
		t.Fatal(err)
	}
	// A batch with one bad record stores nothing.
	_, err := s.PutBatch(ctx, []memory.Memory{mem("good one"), {Text: ""}})
	if err == nil || s.Count() != 0 {
		t.Errorf("PutBatch with a bad record: err %v, count %d", err, s.Count())
	}
	out, err := s.PutBatch(ctx, []memory.Memory{mem("good one"), mem("good two")})
	if err != nil || len(out) != 2 || s.Count() != 2 {
		t.Errorf("PutBatch: %v, %d", err, s.Count())
	}
}

func nanF() float64 { z := 0.0; return z / z }

func TestFilters(t *testing.T) {
	ctx := context.Background()
	type fx struct {
		id, text, project string
		kind              memory.Kind
		source            string
		created           time.Time
		cooldown          time.Time
		superseded        bool
		typ               memory.Type
	}
	fixtures := []fx{
		{"a", "postgres migration runs with alembic upgrade head", "tallyho", memory.KindConvention, "capture", t0.Add(-72 * time.Hour), time.Time{}, false, ""},
		{"b", "postgres connection pool size is twenty", "tallyho", memory.KindConfig, "mcp", t0.Add(-48 * time.Hour), time.Time{}, false, memory.TypeUser},
		{"c", "postgres vacuum runs nightly at three", "harbor", memory.KindFact, "ingest:runbook.md", t0.Add(-24 * time.Hour), time.Time{}, false, ""},
		{"d", "postgres replica lag alert fires above ten seconds", "harbor", memory.KindDebugging, "ingest:alerts.md", t0.Add(-1 * time.Hour), t0.Add(time.Hour), false, memory.TypeUser},
		{"e", "postgres was version thirteen", "harbor", memory.KindFact, "capture", t0.Add(-96 * time.Hour), time.Time{}, true, ""},
		{"f", "postgres snooze expired long ago", "", memory.KindFact, "cli", t0.Add(-5 * time.Hour), t0.Add(-time.Hour), false, ""},
	}
	dir := t.TempDir()
	s := openTest(t, dir)
	for _, f := range fixtures {
		m := mem(f.text)
		m.ID, m.Project, m.Kind, m.Source, m.CreatedAt, m.CooldownUntil, m.Type = f.id, f.project, f.kind, f.source, f.created, f.cooldown, f.typ
		if f.superseded {
			m.SupersededBy = "a"
		}
		mustPut(t, s, m)
	}
	qv := testEmb.vec("postgres")
	cases := []struct {
		name string
		f    Filter
		want []string
	}{
		{"default excludes snoozed and superseded", Filter{}, []string{"a", "b", "c", "f"}},
		{"include snoozed", Filter{IncludeSnoozed: true}, []string{"a", "b", "c", "d", "f"}},
		{"include superseded", Filter{IncludeSuperseded: true}, []string{"a", "b", "c", "e", "f"}},
		{"project", Filter{Project: "harbor", IncludeSnoozed: true, IncludeSuperseded: true}, []string{"c", "d", "e"}},
		{"project default", Filter{Project: "harbor"}, []string{"c"}},
		{"kinds", Filter{Kinds: []memory.Kind{memory.KindConvention, memory.KindConfig}}, []string{"a", "b"}},
		{"one kind", Filter{Kinds: []memory.Kind{memory.KindFact}, IncludeSuperseded: true}, []string{"c", "e", "f"}},
		{"source exact", Filter{Source: "capture", IncludeSuperseded: true}, []string{"a", "e"}},
		{"source prefix", Filter{Source: "ingest:", IncludeSnoozed: true}, []string{"c", "d"}},
		{"since", Filter{Since: t0.Add(-30 * time.Hour)}, []string{"c", "f"}},
		{"until", Filter{Until: t0.Add(-48 * time.Hour)}, []string{"a"}},
		{"range", Filter{Since: t0.Add(-48 * time.Hour), Until: t0.Add(-24 * time.Hour)}, []string{"b"}},
		{"project and kind", Filter{Project: "tallyho", Kinds: []memory.Kind{memory.KindConfig}}, []string{"b"}},
		{"nothing", Filter{Project: "nope"}, nil},
		{"projects", Filter{Projects: []string{"tallyho"}}, []string{"a", "b"}},
		{"projects and no project", Filter{Projects: []string{"harbor", ""}}, []string{"c", "f"}},
		{"an unknown project of projects", Filter{Projects: []string{"nope", ""}}, []string{"f"}},
		{"projects plus types", Filter{Projects: []string{""}, PlusTypes: []memory.Type{memory.TypeUser}, IncludeSnoozed: true}, []string{"b", "d", "f"}},
		{"projects plus types and project", Filter{Project: "harbor", Projects: []string{""}, PlusTypes: []memory.Type{memory.TypeUser}, IncludeSnoozed: true}, []string{"d"}},
		{"no project but a source", Filter{Projects: []string{"harbor", ""}, NoProjectBut: []string{"cli"}}, []string{"c"}},
		{"no project but another source", Filter{Projects: []string{"harbor", ""}, NoProjectBut: []string{"capture", "unknown"}}, []string{"c", "f"}},
		{"no project but a source, plus types", Filter{Projects: []string{""}, NoProjectBut: []string{"cli", "mcp"}, PlusTypes: []memory.Type{memory.TypeUser}, IncludeSnoozed: true}, []string{"b", "d"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var it []string
			if err := s.Iterate(ctx, c.f, func(m memory.Memory) error { it = append(it, m.ID); return nil }); err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(it, c.want) {
				t.Errorf("Iterate = %v, want %v", it, c.want)
			}
			vs, err := s.VectorSearch(ctx, qv, 10, c.f)
			if err != nil {
				t.Fatal(err)
			}
			got := ids(vs)
			slices.Sort(got)
			if !slices.Equal(got, c.want) {
				t.Errorf("VectorSearch = %v, want %v", got, c.want)
			}
			ts, err := s.TextSearch(ctx, "postgres", 10, c.f)
			if err != nil {
				t.Fatal(err)
			}
			got = ids(ts)
			slices.Sort(got)
			if !slices.Equal(got, c.want) {
				t.Errorf("TextSearch = %v, want %v", got, c.want)
			}
		})
	}
	// n smaller than the matches: exactly n come back even when filtering drops some.
	vs, _ := s.VectorSearch(ctx, qv, 2, Filter{Source: "ingest:", IncludeSnoozed: true})
	ts, _ := s.TextSearch(ctx, "postgres", 2, Filter{Since: t0.Add(-30 * time.Hour)})
	if len(vs) != 2 || len(ts) != 2 {
		t.Errorf("n=2 gave %d vector, %d text results", len(vs), len(ts))
	}
	// Stop on fn error.
	stop := errors.New("stop")
	n := 0
	if err := s.Iterate(ctx, Filter{}, func(memory.Memory) error { n++; return stop }); !errors.Is(err, stop) || n != 1 {
		t.Errorf("Iterate stop: %v after %d", err, n)
	}
	// Bad filters are refused.
	if _, err := s.VectorSearch(ctx, qv, 5, Filter{Kinds: []memory.Kind{"nope"}}); !errors.Is(err, memory.ErrInvalid) {
		t.Errorf("bad kind filter: %v", err)
	}
	if _, err := s.TextSearch(ctx, "x", 0, Filter{}); !errors.Is(err, memory.ErrInvalid) {
		t.Errorf("n=0: %v", err)
	}
	for _, f := range []Filter{{PlusTypes: []memory.Type{memory.TypeUser}}, {Projects: []string{""}, PlusTypes: []memory.Type{"nope"}},
		{Projects: []string{"harbor"}, NoProjectBut: []string{"cli"}}} {
		if _, err := s.VectorSearch(ctx, qv, 5, f); !errors.Is(err, memory.ErrInvalid) {
			t.Errorf("bad filter %+v: %v", f, err)
		}
	}
	// A reopened store knows its vectors' types (they are read after the
	// vectors at Open).
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = openTest(t, dir)
	vs, err := s.VectorSearch(ctx, qv, 10, Filter{Projects: []string{""}, PlusTypes: []memory.Type{memory.TypeUser}})
	if got := ids(vs); err != nil || !slices.Equal(sorted(got), []string{"b", "f"}) {
		t.Errorf("VectorSearch after reopening = %v, %v; want [b f]", got, err)
	}
}

func sorted(s []string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return s
}

func TestIterateManyAndOrder(t *testing.T) {
	ctx := context.Background()
	s := openTest(t, t.TempDir())
	var batch []memory.Memory
	for i := 0; i < 700; i++ {
		batch = append(batch, mem(fmt.Sprintf("note number %d about topic %d", i, i%7)))
	}
	out, err := s.PutBatch(ctx, batch)
	if err != nil {
		t.Fatal(err)
	}
	// Updating one keeps insertion order; Iterate's fn may write to the store.
	var seen []string
	err = s.Iterate(ctx, Filter{}, func(m memory.Memory) error {
		seen = append(seen, m.ID)
		if len(seen) == 300 {
			_, err := s.Update(ctx, out[0].ID, func(x *memory.Memory) error { x.AccessCount++; return nil })
			return err
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(seen) != 700 {
		t.Fatalf("iterated %d", len(seen))
	}
	for i := range out {
		if seen[i] != out[i].ID {
			t.Fatalf("order differs at %d", i)
		}
	}
}

func TestVectorAndTextRanking(t *testing.T) {
	ctx := context.Background()
	s := openTest(t, t.TempDir())
	texts := []string{
		"the daily usage report buckets by UTC hour",
		"feature flags come from posthog evaluated server side",
		"never write accounts balance directly post a row to credit ledger",
		"shipments have exactly one active label",
		"invoices are generated once per subscription period",
		"yjs documents are compacted into snapshots every 500 updates",
	}
	var stored []memory.Memory
	for _, tx := range texts {
		stored = append(stored, mustPut(t, s, mem(tx)))
	}
	for i, tx := range texts {
		vs, err := s.VectorSearch(ctx, testEmb.vec(tx), 3, Filter{})
		if err != nil {
			t.Fatal(err)
		}
		if len(vs) != 3 || vs[0].ID != stored[i].ID || vs[0].Score < 0.999 {
			t.Errorf("VectorSearch(%q) = %v", tx, vs)
		}
		for j := 1; j < len(vs); j++ {
			if vs[j].Score > vs[j-1].Score {
				t.Errorf("vector scores not descending: %v", vs)
			}
		}
	}
	ts, err := s.TextSearch(ctx, "How are INVOICES generated for a subscription?", 3, Filter{})
	if err != nil || len(ts) == 0 || ts[0].ID != stored[4].ID {
		t.Errorf("TextSearch invoices = %v, %v", ts, err)
	}
	// BM25: a rarer term outweighs a common one.
	for _, tx := range []string{"label printer setup", "label colours"} {
		mustPut(t, s, mem(tx))
	}
	ts, _ = s.TextSearch(ctx, "active label", 5, Filter{})
	if len(ts) < 3 || ts[0].ID != stored[3].ID {
		t.Errorf("TextSearch(active label) = %v", ts)
	}
	for j := 1; j < len(ts); j++ {
		if ts[j].Score > ts[j-1].Score {
			t.Errorf("text scores not descending: %v", ts)
		}
	}
	// Weighted terms: a boosted term decides the order; bad weights are
	// refused.
	for _, c := range []struct {
		terms []Term
		want  string
	}{
		{[]Term{{Text: "invoic", Boost: 4}, {Text: "activ", Boost: 0.1}}, stored[4].ID},
		{[]Term{{Text: "invoic", Boost: 0.1}, {Text: "activ", Boost: 4}}, stored[3].ID},
	} {
		ts, err := s.TextSearchTerms(ctx, c.terms, 3, Filter{})
		if err != nil || len(ts) == 0 || ts[0].ID != c.want {
			t.Errorf("TextSearchTerms(%v) = %v, %v; want %s first", c.terms, ts, err, c.want)
		}
	}
	for _, bad := range []float64{0, -1, math.Inf(1), math.NaN()} {
		if _, err := s.TextSearchTerms(ctx, []Term{{Text: "label", Boost: bad}}, 3, Filter{}); !errors.Is(err, memory.ErrInvalid) {
			t.Errorf("boost %v: err = %v, want ErrInvalid", bad, err)
		}
	}
	// Free text is not query syntax: operators and punctuation are harmless.
	for _, q := range []string{`+label -"active" title:x~2 (a OR`, `*`, `\`, `"`, "label:/regex/", strings.Repeat("label ", 5000)} {
		if _, err := s.TextSearch(ctx, q, 5, Filter{}); err != nil {
			t.Errorf("TextSearch(%.30q): %v", q, err)
		}
	}
	if ts, err := s.TextSearch(ctx, "the and of", 5, Filter{}); err != nil || len(ts) != 0 {
		t.Errorf("stop-word query = %v %v", ts, err)
	}
	if _, err := s.TextSearch(ctx, "bad \xff", 5, Filter{}); !errors.Is(err, memory.ErrInvalid) {
		t.Errorf("invalid utf8 query: %v", err)
	}
	if _, err := s.VectorSearch(ctx, make([]float32, 3), 5, Filter{}); !errors.Is(err, memory.ErrModelMismatch) {
		t.Errorf("wrong-dim query: %v", err)
	}
}

func TestAnalyzeDocFreq(t *testing.T) {
	ctx := context.Background()
	s := openTest(t, t.TempDir())
	got := s.Analyze("The Runners were running to the Databases' indexes")
	want := []string{"runner", "run", "databas", "index"}
	if !slices.Equal(got, want) {
		t.Errorf("Analyze = %q, want %q", got, want)
	}
	for _, tx := range []string{"running the database", "database index rebuilt", "index of runners"} {
		mustPut(t, s, mem(tx))
	}
	df, err := s.DocFreq(ctx, s.Analyze("database index running zebra"))
	if err != nil {
		t.Fatal(err)
	}
	wantDF := map[string]int{"databas": 2, "index": 2, "run": 1, "zebra": 0}
	for k, v := range wantDF {
		if df[k] != v {
			t.Errorf("DocFreq[%s] = %d, want %d (all %v)", k, df[k], v, df)
		}
	}
}

func TestReopenPersistsAndIsClean(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s := openTest(t, dir)
	var stored []memory.Memory
	for i := 0; i < 50; i++ {
		stored = append(stored, mustPut(t, s, mem(fmt.Sprintf("persisted fact number %d with word%d", i, i))))
	}
	if err := s.Delete(ctx, stored[7].ID); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Update(ctx, stored[8].ID, func(m *memory.Memory) error {
		m.Text = "rewritten fact eight"
		m.Embedding = testEmb.vec(m.Text)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	seq := s.Info().Seq
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if _, err := s.Get(ctx, stored[0].ID); err == nil {
		t.Error("Get after Close succeeded")
	}

	s2 := openTest(t, dir)
	info := s2.Info()
	if info.Count != 49 || info.Seq != seq || info.RepairedOnOpen != 0 || len(info.Warnings) != 0 {
		t.Errorf("Info after reopen = %+v (seq before %d)", info, seq)
	}
	for i, m := range stored {
		got, err := s2.Get(ctx, m.ID)
		if i == 7 {
			if !errors.Is(err, memory.ErrNotFound) {
				t.Errorf("deleted record back: %v", err)
			}
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		if i != 8 && (got.Text != m.Text || !slices.Equal(got.Embedding, m.Embedding)) {
			t.Errorf("record %d changed across reopen", i)
		}
	}
	if ts, _ := s2.TextSearch(ctx, "rewritten", 3, Filter{}); len(ts) != 1 || ts[0].ID != stored[8].ID {
		t.Errorf("text index after reopen: %v", ts)
	}
	if vs, _ := s2.VectorSearch(ctx, stored[20].Embedding, 1, Filter{}); len(vs) != 1 || vs[0].ID != stored[20].ID {
		t.Errorf("vector index after reopen: %v", vs)
	}
}

func TestTextIndexRebuilt(t *testing.T) {
	ctx := context.Background()
	for _, damage := range []string{"removed", "corrupt"} {
		t.Run(damage, func(t *testing.T) {
			dir := t.TempDir()
			s := openTest(t, dir)
			for i := 0; i < 20; i++ {
				mustPut(t, s, mem(fmt.Sprintf("rebuild check %d token%d", i, i)))
			}
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(dir, textDir)
			switch damage {
			case "removed":
				if err := os.RemoveAll(path); err != nil {
					t.Fatal(err)
				}
			case "corrupt":
				if err := os.WriteFile(filepath.Join(path, "index_meta.json"), []byte("{garbage"), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			s2 := openTest(t, dir)
			info := s2.Info()
			if info.Count != 20 || info.RepairedOnOpen != 20 {
				t.Errorf("Info = %+v", info)
			}
			if damage == "corrupt" && (len(info.Warnings) != 1 || !strings.Contains(info.Warnings[0], "moved to")) {
				t.Errorf("warnings = %q", info.Warnings)
			}
			if ts, _ := s2.TextSearch(ctx, "token13", 3, Filter{}); len(ts) != 1 {
				t.Errorf("search after rebuild: %v", ts)
			}
		})
	}
}

func TestModelMismatchAndFormat(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s := openTest(t, dir)
	mustPut(t, s, mem("one record"))
	s.Close()

	_, err := Open(ctx, Options{Dir: dir, Model: "other-model", Dim: 64})
	if !errors.Is(err, memory.ErrModelMismatch) || !strings.Contains(err.Error(), "other-model") || !strings.Contains(err.Error(), testEmb.model) {
		t.Errorf("model mismatch err = %v", err)
	}
	// Empty model: take the store's.
	s2, err := Open(ctx, Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if s2.Info().Model != testEmb.model || s2.Info().Dim != testDim {
		t.Errorf("Info = %+v", s2.Info())
	}
	s2.Close()
	// A new store needs a model.
	if _, err := Open(ctx, Options{Dir: t.TempDir()}); !errors.Is(err, memory.ErrInvalid) {
		t.Errorf("new store without model: %v", err)
	}
	// An empty store adopts a new model.
	empty := t.TempDir()
	s3 := openTest(t, empty)
	s3.Close()
	s4, err := Open(ctx, Options{Dir: empty, Model: "m2", Dim: 8})
	if err != nil || s4.Info().Model != "m2" || s4.Info().Dim != 8 {
		t.Fatalf("empty store model switch: %v", err)
	}
	s4.Close()

	// A newer format version is refused and left untouched.
	db, err := bolt.Open(filepath.Join(dir, dbFile), 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Update(func(tx *bolt.Tx) error { return tx.Bucket(bucketMeta).Put(keyFormat, u64(FormatVersion+1)) }); err != nil {
		t.Fatal(err)
	}
	db.Close()
	if _, err := Open(ctx, Options{Dir: dir, Model: testEmb.model, Dim: testDim}); !errors.Is(err, memory.ErrNewerFormat) {
		t.Errorf("newer format err = %v", err)
	}
	// Bad options.
	for _, o := range []Options{{}, {Dir: dir, Model: "x"}, {Dir: dir, Dim: 3}, {Dir: dir, Model: "x", Dim: -1}} {
		if _, err := Open(ctx, o); !errors.Is(err, memory.ErrInvalid) {
			t.Errorf("Open(%+v) = %v", o, err)
		}
	}
}

func TestFileModes(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	s := openTest(t, dir)
	mustPut(t, s, mem("mode check"))
	s.Close()
	fi, err := os.Stat(dir)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o700 {
		t.Errorf("dir mode %v", fi.Mode().Perm())
	}
	err = filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		if fi.Mode().IsRegular() && fi.Mode().Perm()&0o077 != 0 {
			t.Errorf("%s has mode %v", p, fi.Mode().Perm())
		}
		if fi.IsDir() && fi.Mode().Perm()&0o077 != 0 {
			t.Errorf("dir %s has mode %v", p, fi.Mode().Perm())
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestHelperProcess is not a test: the lock and crash tests re-execute the
// test binary with MEMTRAY_STORE_HELPER set to run a store in a child process.
func TestHelperProcess(t *testing.T) {
	mode := os.Getenv("MEMTRAY_STORE_HELPER")
	if mode == "" {
		t.Skip("helper process only")
	}
	dir := os.Getenv("MEMTRAY_STORE_DIR")
	var err error
	switch mode {
	case "hold":
		err = helperHold(dir)
	case "crash":
		err = helperCrash(dir)
	case "applycrash":
		err = helperApplyCrash(dir)
	case "diskfull":
		err = helperDiskFull(dir)
	case "openstats":
		err = helperOpenStats(dir)
	default:
		err = fmt.Errorf("unknown helper mode %q", mode)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "helper:", err)
		os.Exit(2)
	}
	os.Exit(0)
}

// helperHold opens the store, says so, and waits to be killed.
func helperHold(dir string) error {
	s, err := Open(context.Background(), Options{Dir: dir, Model: testEmb.model, Dim: testDim})
	if err != nil {
		return err
	}
	defer s.Close()
	fmt.Println("open")
	time.Sleep(time.Minute)
	return nil
}

func helperCmd(t *testing.T, mode, dir string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperProcess$", "-test.count=1")
	cmd.Env = append(os.Environ(), "MEMTRAY_STORE_HELPER="+mode, "MEMTRAY_STORE_DIR="+dir)
	return cmd
}

func TestLockHeldByAnotherProcess(t *testing.T) {
	dir := t.TempDir()
	cmd := helperCmd(t, "hold", dir)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	buf := make([]byte, 5)
	if _, err := out.Read(buf); err != nil || string(buf[:4]) != "open" {
		t.Fatalf("helper did not open the store: %q %v", buf, err)
	}
	start := time.Now()
	_, err = Open(context.Background(), Options{Dir: dir, Model: testEmb.model, Dim: testDim, LockTimeout: 300 * time.Millisecond})
	took := time.Since(start)
	if !errors.Is(err, memory.ErrLocked) {
		t.Fatalf("second Open err = %v, want ErrLocked", err)
	}
	if !strings.Contains(err.Error(), fmt.Sprintf("pid %d", cmd.Process.Pid)) {
		t.Errorf("error does not name the owner pid %d: %v", cmd.Process.Pid, err)
	}
	if took > 3*time.Second {
		t.Errorf("second Open took %v", took)
	}
	// Once the owner is gone (even by SIGKILL), the store opens.
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
	s, err := Open(context.Background(), Options{Dir: dir, Model: testEmb.model, Dim: testDim})
	if err != nil {
		t.Fatalf("Open after the owner died: %v", err)
	}
	s.Close()
}

func TestPeek(t *testing.T) {
	dir := t.TempDir()
	if _, ok, err := Peek(dir); ok || err != nil {
		t.Errorf("Peek(empty dir) = %v %v", ok, err)
	}
	s := openTest(t, dir)
	mustPut(t, s, mem("peek at me"))
	s.Close()
	info, ok, err := Peek(dir)
	if err != nil || !ok || info.Model != testEmb.model || info.Dim != testDim || info.Count != 1 || info.FormatVersion != FormatVersion {
		t.Errorf("Peek = %+v %v %v", info, ok, err)
	}
}

func TestReconcileFullCompare(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s := openTest(t, dir)
	var stored []memory.Memory
	for i := 0; i < 30; i++ {
		stored = append(stored, mustPut(t, s, mem(fmt.Sprintf("reconcile me %d token%dx", i, i))))
	}
	// Damage the text index behind the store's back: one doc missing, one
	// extra. The watermark says all is well; the count does not.
	b := s.text.NewBatch()
	b.Delete(stored[3].ID)
	if err := b.Index("ghost", map[string]any{fieldText: "ghost token3x", fieldSeq: "1"}); err != nil {
		t.Fatal(err)
	}
	if err := s.text.Batch(b); err != nil {
		t.Fatal(err)
	}
	b = s.text.NewBatch()
	b.Delete(stored[4].ID)
	if err := s.text.Batch(b); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s2 := openTest(t, dir)
	if r := s2.Info().RepairedOnOpen; r != 3 {
		t.Errorf("repaired %d, want 3", r)
	}
	for _, i := range []int{3, 4} {
		ts, _ := s2.TextSearch(ctx, fmt.Sprintf("token%dx", i), 5, Filter{})
		if len(ts) != 1 || ts[0].ID != stored[i].ID {
			t.Errorf("token%dx after repair: %v", i, ts)
		}
	}
}

func TestTextIndexFailureIsRepaired(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s := openTest(t, dir)
	mustPut(t, s, mem("before the failure alpha"))
	// Make every text-index write fail.
	if err := s.text.Close(); err != nil {
		t.Fatal(err)
	}
	m, err := s.Put(ctx, mem("written while the index is down beta"))
	if !errors.Is(err, ErrIndexPending) {
		t.Fatalf("Put with a failing text index: %v", err)
	}
	if g, gerr := s.Get(ctx, m.ID); gerr != nil || g.Text != m.Text {
		t.Fatalf("record not stored: %v", gerr)
	}
	if vs, _ := s.VectorSearch(ctx, m.Embedding, 1, Filter{}); len(vs) != 1 || vs[0].ID != m.ID {
		t.Errorf("vector index misses the record: %v", vs)
	}
	s.text = nil // already closed above
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s2 := openTest(t, dir)
	if ts, _ := s2.TextSearch(ctx, "beta", 5, Filter{}); len(ts) != 1 || ts[0].ID != m.ID {
		t.Errorf("not repaired at open: %v (repaired %d)", ts, s2.Info().RepairedOnOpen)
	}
}

// TestVectorSearchMany: several queries in one pass give the lists each
// query gives alone, in order; a zero query gives nothing.
func TestVectorSearchMany(t *testing.T) {
	ctx := context.Background()
	s := openTest(t, t.TempDir())
	for i := 0; i < 40; i++ {
		mustPut(t, s, mem(fmt.Sprintf("memory number %d about topic %d", i, i%7)))
	}
	qs := [][]float32{testEmb.vec("topic 3"), make([]float32, s.dim), testEmb.vec("memory number 12")}
	// A query zero outside a range of coordinates.
	part := append([]float32(nil), qs[0]...)
	for i := range part[:len(part)/2] {
		part[i] = 0
	}
	qs = append(qs, part)
	got, err := s.VectorSearchMany(ctx, qs, 5, Filter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(qs) {
		t.Fatalf("%d lists for %d queries", len(got), len(qs))
	}
	for i, q := range qs {
		alone, err := s.VectorSearch(ctx, q, 5, Filter{})
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got[i], alone) {
			t.Errorf("query %d: many %v, alone %v", i, got[i], alone)
		}
	}
	if len(got[1]) != 0 {
		t.Errorf("zero query: %v", got[1])
	}
	if _, err := s.VectorSearchMany(ctx, [][]float32{{1, 2}}, 5, Filter{}); !errors.Is(err, memory.ErrModelMismatch) {
		t.Errorf("wrong dimension: err = %v", err)
	}
}

// TestProjects: Projects lists the projects of the stored memories, sorted,
// and follows deletes; a Projects filter that nothing in the store can
// match returns nothing from either leg.
func TestProjects(t *testing.T) {
	ctx := context.Background()
	s := openTest(t, t.TempDir())
	for _, f := range []struct{ id, project string }{{"a1", "tallyho"}, {"a2", "harbor"}, {"a3", "harbor"}, {"a4", "atlas"}} {
		m := mem("postgres notes of " + f.id)
		m.ID, m.Project = f.id, f.project
		mustPut(t, s, m)
	}
	if got := s.Projects(); !slices.Equal(got, []string{"atlas", "harbor", "tallyho"}) {
		t.Errorf("Projects = %v", got)
	}
	if err := s.Delete(ctx, "a4"); err != nil {
		t.Fatal(err)
	}
	if got := s.Projects(); !slices.Equal(got, []string{"harbor", "tallyho"}) {
		t.Errorf("Projects after deleting atlas's one memory = %v", got)
	}
	f := Filter{Projects: []string{""}, PlusTypes: []memory.Type{memory.TypeUser}}
	if ts, err := s.TextSearch(ctx, "postgres", 10, f); err != nil || len(ts) != 0 {
		t.Errorf("TextSearch with nothing in reach = %v, %v", ts, err)
	}
	if vs, err := s.VectorSearch(ctx, testEmb.vec("postgres"), 10, f); err != nil || len(vs) != 0 {
		t.Errorf("VectorSearch with nothing in reach = %v, %v", vs, err)
	}
}
