package store

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/memtray/memtray/backend/memory"
)

// fillVaried stores records using every field of memory.Memory.
func fillVaried(t *testing.T, s *Store) []memory.Memory {
	t.Helper()
	var out []memory.Memory
	for i := 0; i < 40; i++ {
		m := mem(fmt.Sprintf("varied record %d: the %s of project p%d uses port %d", i, []string{"cache", "queue", "index"}[i%3], i%4, 8000+i))
		m.Kind = memory.Kinds[i%len(memory.Kinds)]
		m.Type = memory.Types[i%len(memory.Types)]
		m.Project = fmt.Sprintf("p%d", i%4)
		m.Source = []string{"capture", "mcp", "ingest:README.md", ""}[i%4]
		m.Surface = []string{"", "symbol"}[i%2]
		m.Importance = 0.1 + float64(i%9)/10
		m.Pinned = i%5 == 0
		m.AccessCount = i
		m.ReinforcedCount = i / 2
		m.FeedbackSum = float64(i%3) - 1
		m.FeedbackN = i % 3
		m.CreatedAt = t0.Add(-time.Duration(i) * time.Hour).In(time.FixedZone("X", 3600))
		m.UpdatedAt = m.CreatedAt.Add(time.Minute)
		if i%3 == 0 {
			m.Hits = []time.Time{t0.Add(-time.Minute), t0.Add(-time.Second)}
			m.LastAccessed = t0.Add(-time.Second)
			m.LastReinforcedAt = t0.Add(-2 * time.Second)
		}
		if i%7 == 0 {
			m.CooldownUntil = t0.Add(24 * time.Hour)
		}
		if i > 0 && i%6 == 0 {
			m.Supersedes = out[i-1].ID
		}
		if i%8 == 1 {
			m.ExtendsSource = out[0].ID
		}
		out = append(out, mustPut(t, s, m))
	}
	return out
}

func export(t *testing.T, s *Store) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := s.Export(context.Background(), &b); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func lines(b []byte) []string { return strings.Split(strings.TrimRight(string(b), "\n"), "\n") }

func TestExportImportRoundTrip(t *testing.T) {
	ctx := context.Background()
	a := openTest(t, t.TempDir())
	fillVaried(t, a)
	// A deleted record and an updated one must export as they are now.
	var first memory.Memory
	_ = a.Iterate(ctx, Filter{}, func(m memory.Memory) error { first = m; return errors.New("stop") })
	if err := a.Delete(ctx, first.ID); err != nil {
		t.Fatal(err)
	}
	exp1 := export(t, a)
	l1 := lines(exp1)
	var hdr ExportHeader
	if err := json.Unmarshal([]byte(l1[0]), &hdr); err != nil {
		t.Fatal(err)
	}
	if hdr.Format != ExportFormat || hdr.Version != 1 || hdr.EmbeddingModel != testEmb.model || hdr.Dim != testDim || hdr.Count != 39 || len(l1) != 41 {
		t.Fatalf("header %+v, %d lines", hdr, len(l1))
	}
	if l1[len(l1)-1] != `{"end":true,"count":39}` {
		t.Errorf("trailer %s", l1[len(l1)-1])
	}

	b := openTest(t, t.TempDir())
	var progress [][2]int
	rep, err := b.Import(ctx, bytes.NewReader(exp1), ImportOptions{Progress: func(d, n int) { progress = append(progress, [2]int{d, n}) }})
	if err != nil {
		t.Fatal(err)
	}
	if rep != (ImportReport{Total: 39, Imported: 39}) || len(progress) == 0 || progress[len(progress)-1] != [2]int{39, 39} {
		t.Errorf("report %+v, progress %v", rep, progress)
	}
	exp2 := export(t, b)
	l2 := lines(exp2)
	if !slices.Equal(l1[1:], l2[1:]) {
		for i := 1; i < min(len(l1), len(l2)); i++ {
			if l1[i] != l2[i] {
				t.Fatalf("line %d differs:\n%s\n%s", i, l1[i], l2[i])
			}
		}
		t.Fatalf("exports differ in length: %d vs %d", len(l1), len(l2))
	}
	// The imported store searches like the original.
	// (Scores, not ids: ties may come in another order, and BM25 statistics
	// of the original still count the deleted record.)
	for _, m := range []string{"varied record 17: the index of project p1 uses port 8017", "varied record 30"} {
		va, _ := a.VectorSearch(ctx, testEmb.vec(m), 3, Filter{IncludeSnoozed: true})
		vb, _ := b.VectorSearch(ctx, testEmb.vec(m), 3, Filter{IncludeSnoozed: true})
		ta, _ := a.TextSearch(ctx, m, 1, Filter{IncludeSnoozed: true})
		tb, _ := b.TextSearch(ctx, m, 1, Filter{IncludeSnoozed: true})
		if len(va) != 3 || len(vb) != 3 || va[0] != vb[0] || va[2].Score != vb[2].Score || len(ta) != 1 || len(tb) != 1 || ta[0].ID != tb[0].ID {
			t.Errorf("searches differ after import: %v %v / %v %v", va, vb, ta, tb)
		}
	}

	// Importing the same file again: every record is a duplicate.
	rep, err = b.Import(ctx, bytes.NewReader(exp1), ImportOptions{})
	if err != nil || rep != (ImportReport{Total: 39, Duplicates: 39}) {
		t.Errorf("re-import: %+v %v", rep, err)
	}
}

func TestImportCollisionsAndReembed(t *testing.T) {
	ctx := context.Background()
	a := openTest(t, t.TempDir())
	r1 := mustPut(t, a, memory.Memory{ID: "shared-id", Text: "text from store a", Embedding: testEmb.vec("text from store a")})
	r2 := mustPut(t, a, memory.Memory{ID: "child", Text: "a child of shared", Supersedes: "shared-id", Embedding: testEmb.vec("a child")})
	_ = r2
	exp := export(t, a)

	b := openTest(t, t.TempDir())
	mustPut(t, b, memory.Memory{ID: "shared-id", Text: "different text in store b", Embedding: testEmb.vec("different")})
	rep, err := b.Import(ctx, bytes.NewReader(exp), ImportOptions{})
	if err != nil || rep.Imported != 2 {
		t.Fatalf("import: %+v %v", rep, err)
	}
	f, ok, _ := b.FindByHash(ctx, r1.ContentHash, "")
	if !ok || f.ID == "shared-id" || len(f.ID) != 32 {
		t.Errorf("colliding id not replaced: %q", f.ID)
	}
	c, err := b.Get(ctx, "child")
	if err != nil || c.Supersedes != f.ID {
		t.Errorf("link not rewritten: %q want %q (%v)", c.Supersedes, f.ID, err)
	}

	// Another model: refused without an embedder, re-embedded with one.
	other := wordEmbedder{model: "words-small", dim: 16}
	dir := t.TempDir()
	o, err := Open(ctx, Options{Dir: dir, Model: other.model, Dim: other.dim})
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	if _, err := o.Import(ctx, bytes.NewReader(exp), ImportOptions{}); !errors.Is(err, memory.ErrModelMismatch) {
		t.Errorf("import of another model without embedder: %v", err)
	}
	if _, err := o.Import(ctx, bytes.NewReader(exp), ImportOptions{Embedder: testEmb}); !errors.Is(err, memory.ErrModelMismatch) {
		t.Errorf("import with an embedder of the wrong model: %v", err)
	}
	if o.Count() != 0 {
		t.Fatal("refused import wrote records")
	}
	rep, err = o.Import(ctx, bytes.NewReader(exp), ImportOptions{Embedder: other})
	if err != nil || rep.Reembedded != 2 || rep.Imported != 2 {
		t.Fatalf("re-embedding import: %+v %v", rep, err)
	}
	g, _ := o.Get(ctx, "child")
	if g.EmbeddingModel != other.model || !slices.Equal(g.Embedding, other.vec(g.Text)) {
		t.Errorf("record not re-embedded: %q %d", g.EmbeddingModel, len(g.Embedding))
	}
}

// validExport returns a small valid export stream.
func validExport(t testing.TB) []byte {
	s := openTest(t, t.TempDir())
	for _, tx := range []string{"first exported memory", "second exported memory", "third one"} {
		mustPut(t, s, mem(tx))
	}
	var b bytes.Buffer
	if err := s.Export(context.Background(), &b); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// noVecLine is the record line l as Export writes it when the record's
// vector is damaged: without "embedding", marked "embedding_damaged".
func noVecLine(t *testing.T, l string) string {
	t.Helper()
	var rec map[string]any
	if err := json.Unmarshal([]byte(l), &rec); err != nil {
		t.Fatal(err)
	}
	delete(rec, "embedding")
	rec["embedding_damaged"] = true
	b, err := json.Marshal(rec)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestImportRejectsBadStreams(t *testing.T) {
	ctx := context.Background()
	good := validExport(t)
	gl := lines(good)
	join := func(ls ...string) []byte { return []byte(strings.Join(ls, "\n") + "\n") }
	replaceIn := func(i int, old, new string) []byte {
		ls := slices.Clone(gl)
		ls[i] = strings.Replace(ls[i], old, new, 1)
		return join(ls...)
	}
	var rec map[string]any
	_ = json.Unmarshal([]byte(gl[1]), &rec)
	rec["embedding"] = []float32{1, 2, 3}
	shortVec, _ := json.Marshal(rec)
	rec["embedding"] = nil
	rec["text"] = strings.Repeat("x", MaxExportLine)
	huge, _ := json.Marshal(rec)

	cases := []struct {
		name string
		data []byte
		want error
		msg  string
	}{
		{"empty", nil, memory.ErrInvalid, "empty"},
		{"corrupt line", join(gl[0], gl[1], `{"id":"x","text":`, gl[3], gl[4]), memory.ErrInvalid, "line 3"},
		{"truncated", join(gl[:3]...), memory.ErrInvalid, "truncated"},
		{"truncated mid-line", good[:len(good)-30], memory.ErrInvalid, ""},
		{"wrong version", replaceIn(0, `"version":1`, `"version":0`), memory.ErrInvalid, "version"},
		{"newer version", replaceIn(0, `"version":1`, `"version":3`), memory.ErrNewerFormat, "version 3"},
		{"a vector left out, unmarked", replaceIn(1, `"embedding":[`, `"x":[`), memory.ErrModelMismatch, "line 2"},
		{"a vector left out, marked in version 1", join(gl[0], noVecLine(t, gl[1]), gl[2], gl[3], gl[4]), memory.ErrInvalid, "line 2"},
		{"a vector left out, marked, not counted", join(strings.Replace(gl[0], `"version":1`, `"version":2`, 1), noVecLine(t, gl[1]), gl[2], gl[3], gl[4]),
			memory.ErrInvalid, "without their vector"},
		{"a vector kept, marked", join(strings.Replace(strings.Replace(gl[0], `"version":1`, `"version":2`, 1), `"count":3`, `"count":3,"without_vector":1`, 1),
			strings.Replace(gl[1], `{`, `{"embedding_damaged":true,`, 1), gl[2], gl[3], gl[4]), memory.ErrInvalid, "line 2"},
		{"without_vector in version 1", replaceIn(0, `"count":3`, `"count":3,"without_vector":1`), memory.ErrInvalid, "without_vector"},
		{"not an export", replaceIn(0, ExportFormat, "something-else"), memory.ErrInvalid, "not a memtray export"},
		{"dim mismatch", join(gl[0], string(shortVec), gl[2], gl[3], gl[4]), memory.ErrModelMismatch, "line 2"},
		{"header dim mismatch", replaceIn(0, fmt.Sprintf(`"dim":%d`, testDim), `"dim":64`), memory.ErrModelMismatch, "line 2"},
		{"record of another model", replaceIn(2, `"embedding_model":"`+testEmb.model, `"embedding_model":"zzz`), memory.ErrModelMismatch, "line 3"},
		{"invalid utf8", replaceIn(1, "first", "fi\xffrst"), memory.ErrInvalid, "UTF-8"},
		{"escaped NUL", replaceIn(1, "first", `fi\u0000rst`), memory.ErrInvalid, "line 2"},
		{"oversized line", join(gl[0], string(huge), gl[2], gl[3], gl[4]), memory.ErrInvalid, "longer than"},
		{"count mismatch", replaceIn(4, `"count":3`, `"count":2`), memory.ErrInvalid, "trailer"},
		{"header count too small", replaceIn(0, `"count":3`, `"count":2`), memory.ErrInvalid, "more records"},
		{"data after trailer", join(append(slices.Clone(gl), gl[1])...), memory.ErrInvalid, "after the trailer"},
		{"blank line", join(gl[0], "", gl[1], gl[2], gl[3], gl[4]), memory.ErrInvalid, "empty line"},
		{"bad hash", replaceIn(1, `"content_hash":"`, `"content_hash":"00`), memory.ErrInvalid, "content_hash"},
		{"bad kind", replaceIn(1, `"kind":"fact"`, `"kind":"rumour"`), memory.ErrInvalid, "kind"},
		{"duplicate id", join(gl[0], gl[1], gl[1], gl[3], gl[4]), memory.ErrInvalid, "twice"},
		{"bad id", replaceIn(1, `"id":"`, `"id":"bad id `), memory.ErrInvalid, "id"},
		{"NaN-ish importance", replaceIn(1, `"importance":0.5`, `"importance":7`), memory.ErrInvalid, "importance"},
	}
	dir := t.TempDir()
	s := openTest(t, dir)
	mustPut(t, s, mem("already stored and must stay"))
	before := export(t, s)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rep, err := s.Import(ctx, bytes.NewReader(c.data), ImportOptions{})
			if !errors.Is(err, c.want) {
				t.Fatalf("err = %v, want %v", err, c.want)
			}
			if c.msg != "" && !strings.Contains(err.Error(), c.msg) {
				t.Errorf("err %q does not mention %q", err, c.msg)
			}
			if rep.Imported != 0 {
				t.Errorf("imported %d", rep.Imported)
			}
			after := export(t, s)
			if !slices.Equal(lines(before)[1:], lines(after)[1:]) {
				t.Error("store changed")
			}
		})
	}
	// The good stream is accepted.
	if rep, err := s.Import(ctx, bytes.NewReader(good), ImportOptions{}); err != nil || rep.Imported != 3 {
		t.Errorf("good stream: %+v %v", rep, err)
	}
}

// FuzzImport feeds arbitrary streams to the export parser: it must never
// panic, and whatever it accepts must be internally consistent.
func FuzzImport(f *testing.F) {
	seeds, _ := filepath.Glob(filepath.Join("testdata", "import", "*.jsonl"))
	for _, p := range seeds {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b)
		}
	}
	f.Add([]byte(`{"format":"memtray-export","version":1,"embedding_model":"m","dim":2,"count":0,"exported_at":"2025-01-01T00:00:00Z"}` + "\n" + `{"end":true,"count":0}` + "\n"))
	f.Add([]byte(`{"format":"memtray-export","version":1,"embedding_model":"m","dim":2,"count":1,"exported_at":"2025-01-01T00:00:00Z"}` + "\n" +
		`{"id":"a","text":"hello","embedding":[0.6,0.8],"kind":"fact"}` + "\n" + `{"end":true,"count":1}` + "\n"))
	f.Add([]byte(`{"format":"memtray-export","version":2,"embedding_model":"m","dim":2,"count":2,"exported_at":"2025-01-01T00:00:00Z","without_vector":1}` + "\n" +
		`{"id":"a","text":"hello","embedding":[0.6,0.8],"kind":"fact"}` + "\n" + `{"id":"b","text":"world","kind":"fact","embedding_damaged":true}` + "\n" +
		`{"end":true,"count":2}` + "\n"))
	f.Add([]byte("{\"end\":true}\n"))
	f.Add([]byte("\xff\xfe\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		ef, err := ParseExport(bytes.NewReader(data))
		if err != nil {
			if !errors.Is(err, memory.ErrInvalid) && !errors.Is(err, memory.ErrNewerFormat) && !errors.Is(err, memory.ErrModelMismatch) {
				t.Fatalf("error without a sentinel: %v", err)
			}
			return
		}
		if len(ef.Records) != ef.Header.Count {
			t.Fatalf("accepted %d records, header says %d", len(ef.Records), ef.Header.Count)
		}
		seen := map[string]bool{}
		without := 0 // records without their vector: as many as the header counts
		for _, m := range ef.Records {
			if err := m.Validate(); err != nil {
				t.Fatalf("accepted invalid record: %v", err)
			}
			if len(m.Embedding) == 0 {
				without++
			} else if len(m.Embedding) != ef.Header.Dim {
				t.Fatal("accepted a record of another shape")
			}
			if m.EmbeddingModel != ef.Header.EmbeddingModel {
				t.Fatal("accepted a record of another model")
			}
			if m.ID != "" && seen[m.ID] {
				t.Fatal("accepted duplicate ids")
			}
			seen[m.ID] = true
		}
		if without != ef.Header.WithoutVector || (without > 0 && ef.Header.Version < 2) {
			t.Fatalf("accepted %d records without a vector, header (version %d) counts %d", without, ef.Header.Version, ef.Header.WithoutVector)
		}
	})
}

// TestImportRewrite: a rewrite (the daemon's redaction) changes the texts
// it matches before duplicates are decided; those records get the new
// text's hash and vector, the others keep theirs; without an embedder the
// import is refused before anything is written.
func TestImportRewrite(t *testing.T) {
	ctx := context.Background()
	a := openTest(t, t.TempDir())
	keep := "The billing worker retries failed charges three times with exponential backoff."
	secret := "Deploy with the token ghp_0123456789abcdefghijABCDEFGHIJ012345 from the vault."
	masked := "Deploy with the token [REDACTED:github] from the vault."
	for _, tx := range []string{keep, secret} {
		if _, err := a.Put(ctx, mem(tx)); err != nil {
			t.Fatal(err)
		}
	}
	exp := export(t, a)
	rewrite := func(s string) (string, bool) {
		out := strings.ReplaceAll(s, "ghp_0123456789abcdefghijABCDEFGHIJ012345", "[REDACTED:github]")
		return out, out != s
	}
	b := openTest(t, t.TempDir())
	if _, err := b.Import(ctx, bytes.NewReader(exp), ImportOptions{Rewrite: rewrite}); !errors.Is(err, memory.ErrModelMismatch) || b.Count() != 0 {
		t.Fatalf("a rewrite without an embedder: %v, %d stored", err, b.Count())
	}
	rep, err := b.Import(ctx, bytes.NewReader(exp), ImportOptions{Rewrite: rewrite, Embedder: testEmb})
	if err != nil || rep != (ImportReport{Total: 2, Imported: 2, Rewritten: 1}) {
		t.Fatalf("import = %+v, %v", rep, err)
	}
	texts := map[string]memory.Memory{}
	_ = b.Iterate(ctx, Filter{IncludeSnoozed: true}, func(m memory.Memory) error { texts[m.Text] = m; return nil })
	m, ok := texts[masked]
	if !ok || len(texts) != 2 || m.ContentHash != memory.ContentHash(masked) || !slices.Equal(m.Embedding, testEmb.vec(masked)) {
		t.Fatalf("stored %v", slices.Collect(maps.Keys(texts)))
	}
	if k := texts[keep]; !slices.Equal(k.Embedding, testEmb.vec(keep)) {
		t.Fatal("an unchanged record lost its vector")
	}
	if strings.Contains(string(export(t, b)), "ghp_") {
		t.Fatal("the secret came back in the export")
	}
	// Imported again: the rewritten text is a duplicate of the stored one.
	if rep, err = b.Import(ctx, bytes.NewReader(exp), ImportOptions{Rewrite: rewrite, Embedder: testEmb}); err != nil || rep.Duplicates != 2 {
		t.Fatalf("again = %+v, %v", rep, err)
	}
}

// switchingEmbedder embeds with cur; on its at-th call it first runs
// onSwitch (a re-embedding of the store finishing, which swaps cur) and
// still answers with the model it had: vectors made just before a switch.
type switchingEmbedder struct {
	mu       sync.Mutex
	cur      wordEmbedder
	calls    int
	at       int
	onSwitch func()
}

func (e *switchingEmbedder) Model() string { e.mu.Lock(); defer e.mu.Unlock(); return e.cur.model }
func (e *switchingEmbedder) Dim() int      { e.mu.Lock(); defer e.mu.Unlock(); return e.cur.dim }

func (e *switchingEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	e.mu.Lock()
	old := e.cur
	e.calls++
	fire := e.calls == e.at
	e.mu.Unlock()
	if fire {
		e.onSwitch()
	}
	return old.Embed(ctx, texts)
}

// TestImportAcrossModelSwitch: the store switches embedding models while
// an import of another model's file runs (between embedding a batch and
// writing it); the import embeds that batch and the rest for the new model
// and stores them all, instead of stopping with a model mismatch.
func TestImportAcrossModelSwitch(t *testing.T) {
	ctx := context.Background()
	src := openTest(t, t.TempDir())
	n := importBatch*2 + 10
	ms := make([]memory.Memory, n)
	for i := range ms {
		ms[i] = mem(fmt.Sprintf("imported memory number %d about the release train", i))
	}
	if _, err := src.PutBatch(ctx, ms); err != nil {
		t.Fatal(err)
	}
	var exp bytes.Buffer
	if err := src.Export(ctx, &exp); err != nil {
		t.Fatal(err)
	}
	v1, v2 := wordEmbedder{model: "words-a", dim: 16}, wordEmbedder{model: "words-b", dim: 24}
	s, err := Open(ctx, Options{Dir: t.TempDir(), Model: v1.model, Dim: v1.dim})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	mustPut(t, s, memory.Memory{Text: "a memory stored before the switch", Embedding: v1.vec("a memory stored before the switch")})
	emb := &switchingEmbedder{cur: v1, at: 2}
	emb.onSwitch = func() {
		if err := s.Reembed(ctx, v2, nil); err != nil {
			t.Errorf("reembed: %v", err)
		}
		emb.mu.Lock()
		emb.cur = v2
		emb.mu.Unlock()
	}
	rep, err := s.Import(ctx, bytes.NewReader(exp.Bytes()), ImportOptions{Embedder: emb})
	if err != nil || rep.Imported != n || rep.Reembedded != n {
		t.Fatalf("import across a switch: %+v %v", rep, err)
	}
	if info := s.Info(); info.Model != v2.model || info.Count != n+1 {
		t.Fatalf("store after: %+v", info)
	}
	if err := s.Iterate(ctx, Filter{}, func(m memory.Memory) error {
		if m.EmbeddingModel != v2.model || !slices.Equal(m.Embedding, v2.vec(m.Text)) {
			t.Errorf("%s holds a vector of %q, not %s's of its text", m.ID, m.EmbeddingModel, v2.model)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}

// TestExportDamagedVectors: a store holding records whose stored vector
// is damaged (NaN, a number short) exports every record all the same
// (at 914b286 the export failed: "json: unsupported value: NaN", nothing
// written): those without their vector, marked and counted in a version
// 2 header. An import into a fresh store embeds them anew with its
// embedder and brings every record back, found by vector; without one, or
// with one that fails, it keeps them as a damaged vector is kept
// (checkImportedWithoutVector: at 4c30b9e it refused the file). A healthy store's export stays version 1, unchanged.
func TestExportDamagedVectors(t *testing.T) {
	t.Parallel() // slow under -race; its own dirs (and helper processes): overlaps the other slow tests
	ctx := context.Background()
	dir, path := damagedStore(t, vecDamageRecords)
	texts := templateTexts(t, vecDamageRecords)
	healthy := openTest(t, dir)
	clean := export(t, healthy)
	if h := lines(clean)[0]; !strings.Contains(h, `"version":1,`) || strings.Contains(h, "without_vector") || bytes.Contains(clean, []byte("embedding_damaged")) {
		t.Errorf("a healthy store's export header %s: want version 1, nothing without its vector", h)
	}
	if err := healthy.Close(); err != nil {
		t.Fatal(err)
	}
	var damaged []string
	for id := range texts {
		if len(damaged) < 2 {
			damaged = append(damaged, id)
		}
	}
	rewriteVector(t, path, damaged[0], setFloat(0, float32(math.NaN())))
	rewriteVector(t, path, damaged[1], func(emb []byte) []byte { return emb[:len(emb)-4] })
	s := openTest(t, dir)
	exp := export(t, s)
	f, err := ParseExport(bytes.NewReader(exp))
	if err != nil {
		t.Fatalf("ParseExport of the export: %v", err)
	}
	if f.Header.Version != 2 || f.Header.WithoutVector != 2 || len(f.Records) != vecDamageRecords {
		t.Fatalf("header %+v, %d records: want version 2, 2 without their vector, %d records", f.Header, len(f.Records), vecDamageRecords)
	}
	for _, l := range lines(exp)[1 : vecDamageRecords+1] {
		marked := strings.Contains(l, `"embedding_damaged":true`)
		if named := strings.Contains(l, damaged[0]) || strings.Contains(l, damaged[1]); marked != named || marked == strings.Contains(l, `"embedding":`) {
			t.Errorf("line %.80s…: marked %v, one of the damaged %v: want only those marked, and without an embedding", l, marked, named)
		}
	}

	// The export as a file on disk, read back as `memtray import FILE`
	// reads it.
	file := filepath.Join(t.TempDir(), "damaged-export.jsonl")
	if err := os.WriteFile(file, exp, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		emb  memory.Embedder
	}{
		{"no embedder", nil},
		{"an embedder that fails", &failingEmbedder{wordEmbedder: testEmb}},
	} {
		t.Run("imported with "+tc.name, func(t *testing.T) {
			checkImportedWithoutVector(t, file, texts, damaged, tc.emb)
		})
	}
	fresh := openTest(t, t.TempDir())
	rep, err := fresh.Import(ctx, bytes.NewReader(exp), ImportOptions{Embedder: testEmb})
	if err != nil || rep.Imported != vecDamageRecords || rep.WithoutVector != 2 || rep.Reembedded != 2 {
		t.Fatalf("Import = %+v, %v: want %d imported, 2 without their vector, re-embedded", rep, err, vecDamageRecords)
	}
	for id, text := range texts {
		m, err := fresh.Get(ctx, id)
		if err != nil || m.Text != text {
			t.Fatalf("record %s after the round trip: %q, %v", id, m.Text, err)
		}
		hits, err := fresh.VectorSearch(ctx, testEmb.vec(text), 1, Filter{})
		if err != nil || len(hits) != 1 || hits[0].ID != id {
			t.Errorf("vector search of %s's text = %v, %v", id, ids(hits), err)
		}
	}
	if w := fresh.Info().Warnings; len(w) != 0 {
		t.Errorf("warnings of the imported store: %q", w)
	}
	// Its own export is whole again: version 1.
	if h := lines(export(t, fresh))[0]; !strings.Contains(h, `"version":1,`) {
		t.Errorf("the imported store's export header %s: want version 1", h)
	}
}

// checkImportedWithoutVector imports the export file at path, whose
// records damaged are held without their vector, into a fresh store with
// emb (nil, or one that fails): every record is imported, those two
// without a vector, counted in the report, named by Open's warning,
// readable and found by their words but not by vector, until
// RepairVectors embeds them; a store reopened keeps them so.
func checkImportedWithoutVector(t *testing.T, path string, texts map[string]string, damaged []string, emb memory.Embedder) {
	t.Helper()
	ctx := context.Background()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	dir := t.TempDir()
	s := openTest(t, dir)
	rep, err := s.Import(ctx, f, ImportOptions{Embedder: emb})
	if err != nil || rep.Imported != len(texts) || rep.WithoutVector != 2 || rep.KeptWithoutVector != 2 || rep.Reembedded != 0 {
		t.Fatalf("Import = %+v, %v: want %d imported, 2 kept without their vector", rep, err, len(texts))
	}
	if w := strings.Join(s.Info().Warnings, "\n"); !strings.Contains(w, "2 memories have a damaged vector") {
		t.Errorf("warnings right after the import: %q, want the two named", w)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = openTest(t, dir)
	if w := strings.Join(s.Info().Warnings, "\n"); !strings.Contains(w, "2 memories have a damaged vector") {
		t.Errorf("warnings after the import: %q, want the two named", w)
	}
	for _, id := range damaged {
		m, err := s.Get(ctx, id)
		if err != nil || m.Text != texts[id] || len(m.Embedding) != 0 {
			t.Fatalf("record %s: %q with %d dims, %v; want its text, no vector", id, m.Text, len(m.Embedding), err)
		}
		if hits, err := s.TextSearch(ctx, texts[id], 1, Filter{}); err != nil || len(hits) != 1 || hits[0].ID != id {
			t.Errorf("text search of %s's text = %v, %v", id, ids(hits), err)
		}
		if hits, _ := s.VectorSearch(ctx, testEmb.vec(texts[id]), 1, Filter{}); len(hits) == 1 && hits[0].ID == id {
			t.Errorf("%s found by a vector it does not have", id)
		}
	}
	if n, err := s.RepairVectors(ctx, testEmb); err != nil || n != 2 {
		t.Fatalf("RepairVectors = %d, %v, want 2", n, err)
	}
	for id, text := range texts {
		if hits, err := s.VectorSearch(ctx, testEmb.vec(text), 1, Filter{}); err != nil || len(hits) != 1 || hits[0].ID != id {
			t.Errorf("vector search of %s's text after the repair = %v, %v", id, ids(hits), err)
		}
	}
	if w := s.Info().Warnings; len(w) != 0 {
		t.Errorf("warnings after the repair: %q", w)
	}
}
