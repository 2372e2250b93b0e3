package store

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/memtray/memtray/backend/memory"
	bolt "go.etcd.io/bbolt"
)

// vecDamageRecords is the size of the stores the damaged-vector tests use:
// the doctor's, whose template a record's bytes are found once in (a
// smaller store's freed pages can hold an older copy of it, which
// nanVector refuses).
const vecDamageRecords = doctorRecords

// rewriteVector rewrites one record's packed vector (the value's last
// 4*testDim bytes) with fn, through bbolt: the record stays readable, only
// its vector is damaged.
func rewriteVector(t *testing.T, path, id string, fn func(emb []byte) []byte) {
	t.Helper()
	db, err := bolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.Update(func(tx *bolt.Tx) error {
		recs := tx.Bucket(bucketRecs)
		v := bytes.Clone(recs.Get([]byte(id)))
		head, emb := v[:len(v)-4*testDim], v[len(v)-4*testDim:]
		return recs.Put([]byte(id), append(head, fn(emb)...))
	}); err != nil {
		t.Fatal(err)
	}
}

// setFloat returns a damage that writes f over component i.
func setFloat(i int, f float32) func([]byte) []byte {
	return func(emb []byte) []byte {
		binary.LittleEndian.PutUint32(emb[4*i:], math.Float32bits(f))
		return emb
	}
}

// vectorDamages are the damages a record's stored vector can have, each
// made by the test on a real store.
var vectorDamages = []struct {
	name   string
	damage func(t *testing.T, path, id string)
	warned bool // false: a zero vector, a record's legitimate state (no usable token)
}{
	{"NaN flipped in the file", func(t *testing.T, path, id string) { nanVector(t, path, id) }, true},
	{"NaN first", func(t *testing.T, path, id string) {
		rewriteVector(t, path, id, setFloat(0, float32(math.NaN())))
	}, true},
	{"+Inf", func(t *testing.T, path, id string) { rewriteVector(t, path, id, setFloat(3, float32(math.Inf(1)))) }, true},
	{"-Inf", func(t *testing.T, path, id string) { rewriteVector(t, path, id, setFloat(7, float32(math.Inf(-1)))) }, true},
	{"one number short", func(t *testing.T, path, id string) {
		rewriteVector(t, path, id, func(emb []byte) []byte { return emb[:len(emb)-4] })
	}, true},
	{"one number too many", func(t *testing.T, path, id string) {
		rewriteVector(t, path, id, func(emb []byte) []byte { return binary.LittleEndian.AppendUint32(emb, math.Float32bits(0.5)) })
	}, true},
	{"no vector at all", func(t *testing.T, path, id string) {
		rewriteVector(t, path, id, func([]byte) []byte { return nil })
	}, true},
	{"all zeros", func(t *testing.T, path, id string) {
		rewriteVector(t, path, id, func(emb []byte) []byte { return make([]byte, len(emb)) })
	}, false},
}

// TestOpenDamagedVector: a record whose stored vector is damaged is still
// read, listed and found by its words; it is left out of the vector index
// (no search scores it, so none scores NaN); Open's warnings count it and
// name the command that repairs it, and that command (Reembed, what
// `memtray reindex` runs) does.
func TestOpenDamagedVector(t *testing.T) {
	t.Parallel() // slow under -race; its own dirs (and helper processes): overlaps the other slow tests
	ctx := context.Background()
	for _, tc := range vectorDamages {
		t.Run(tc.name, func(t *testing.T) {
			dir, path := damagedStore(t, vecDamageRecords)
			id := firstRecordID(t, path)
			tc.damage(t, path, id)
			s, err := Open(ctx, Options{Dir: dir, Model: testEmb.model, Dim: testDim})
			if err != nil {
				t.Fatalf("Open: %v", err)
			}
			defer s.Close()
			m, err := s.Get(ctx, id)
			if err != nil {
				t.Fatalf("Get of the damaged record: %v", err)
			}
			if s.Count() != vecDamageRecords {
				t.Errorf("Count = %d, want %d", s.Count(), vecDamageRecords)
			}
			if _, ok := s.vec.rows[id]; ok {
				t.Error("the damaged record is in the vector index")
			}
			if got := s.vec.count(); got != vecDamageRecords-1 {
				t.Errorf("vector index holds %d rows, want %d", got, vecDamageRecords-1)
			}
			hits, err := s.VectorSearch(ctx, testEmb.vec(m.Text), vecDamageRecords, Filter{})
			if err != nil {
				t.Fatal(err)
			}
			for i, h := range hits {
				if h.ID == id || math.IsNaN(float64(h.Score)) || (i > 0 && h.Score > hits[i-1].Score) {
					t.Errorf("vector hit %d = %s scored %v (damaged %s): want it left out, every score a number, in order", i, h.ID, h.Score, id)
				}
			}
			if th, err := s.TextSearch(ctx, m.Text, 3, Filter{}); err != nil || len(th) == 0 || th[0].ID != id {
				t.Errorf("text search of its own text = %v, %v: want %s first", ids(th), err, id)
			}
			listed, _, err := s.List(ctx, ListQuery{Limit: vecDamageRecords})
			if err != nil || !slices.Contains(listed, id) {
				t.Errorf("List = %v, %v: want %s listed", listed, err, id)
			}
			w := strings.Join(s.Info().Warnings, "\n")
			want := []string{"1 memory has a damaged vector", id, "memtray reindex", "memtray doctor"}
			for _, x := range want {
				if tc.warned != strings.Contains(w, x) {
					t.Errorf("Info().Warnings = %q: has %q = %v, want %v", w, x, !tc.warned, tc.warned)
				}
			}
			if !tc.warned {
				return
			}
			// The repair the warning names: every text embedded anew.
			if err := s.Reembed(ctx, testEmb, nil); err != nil {
				t.Fatalf("Reembed: %v", err)
			}
			if w := s.Info().Warnings; len(w) != 0 {
				t.Errorf("warnings after the repair: %q", w)
			}
			hits, err = s.VectorSearch(ctx, testEmb.vec(m.Text), 1, Filter{})
			if err != nil || len(hits) != 1 || hits[0].ID != id {
				t.Errorf("vector search after the repair = %v, %v: want %s", ids(hits), err, id)
			}
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			s2 := openTest(t, dir)
			if w := s2.Info().Warnings; len(w) != 0 {
				t.Errorf("warnings at the next Open: %q", w)
			}
		})
	}
}

// TestRepairVectors: what the daemon does at start with its embedder (of
// the store's model): the damaged records' texts are embedded anew, found
// by vector again, the warning goes; the records keep their timestamps
// and take the repair's new sequence number (at 9937c7b they kept the
// old one: ChangedSince never found them); another model's embedder is
// refused.
func TestRepairVectors(t *testing.T) {
	t.Parallel() // slow under -race; its own dirs (and helper processes): overlaps the other slow tests
	ctx := context.Background()
	for _, tc := range vectorDamages {
		t.Run(tc.name, func(t *testing.T) {
			dir, path := damagedStore(t, vecDamageRecords)
			id := firstRecordID(t, path)
			tc.damage(t, path, id)
			s := openTest(t, dir)
			before, err := s.Get(ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			seq := s.Info().Seq
			if _, err := s.RepairVectors(ctx, wordEmbedder{model: "other-v1", dim: testDim}); tc.warned && !errors.Is(err, memory.ErrModelMismatch) {
				t.Errorf("RepairVectors with another model = %v, want ErrModelMismatch", err)
			}
			n, err := s.RepairVectors(ctx, testEmb)
			if want := map[bool]int{true: 1, false: 0}[tc.warned]; err != nil || n != want {
				t.Fatalf("RepairVectors = %d, %v, want %d", n, err, want)
			}
			if w := s.Info().Warnings; len(w) != 0 {
				t.Errorf("warnings after the repair: %q", w)
			}
			if !tc.warned {
				return
			}
			hits, err := s.VectorSearch(ctx, testEmb.vec(before.Text), 1, Filter{})
			if err != nil || len(hits) != 1 || hits[0].ID != id {
				t.Errorf("vector search after the repair = %v, %v: want %s", ids(hits), err, id)
			}
			after, err := s.Get(ctx, id)
			if err != nil || !after.UpdatedAt.Equal(before.UpdatedAt) || s.Info().Seq != seq+1 || !slices.Equal(after.Embedding, testEmb.vec(before.Text)) {
				t.Errorf("after the repair: %v, updated %v (was %v), seq %d (want %d), vector %v", err, after.UpdatedAt, before.UpdatedAt, s.Info().Seq, seq+1, after.Embedding)
			}
			// The repair is a write: what keys on the sequence number
			// (the steward's incremental merge scan) sees the record.
			if changed, now, err := s.ChangedSince(ctx, seq); err != nil || now != seq+1 || len(changed) != 1 || !mapHas(changed, id) {
				t.Errorf("ChangedSince(%d) after the repair = %v, %d, %v; want %s alone at %d", seq, changed, now, err, id, seq+1)
			}
			if n, err := s.RepairVectors(ctx, testEmb); n != 0 || err != nil {
				t.Errorf("a second RepairVectors = %d, %v, want nothing to do", n, err)
			}
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			s2 := openTest(t, dir)
			if w := s2.Info().Warnings; len(w) != 0 {
				t.Errorf("warnings at the next Open: %q", w)
			}
		})
	}
}

// TestDamagedVectorWarningCounts: many damaged records make one warning
// that counts them and names a few.
func TestDamagedVectorWarningCounts(t *testing.T) {
	dir, path := damagedStore(t, vecDamageRecords)
	var damaged []string
	db, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	_ = db.View(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketRecs).ForEach(func(k, _ []byte) error {
			if len(damaged) < 5 {
				damaged = append(damaged, string(k))
			}
			return nil
		})
	})
	db.Close()
	for _, id := range damaged {
		rewriteVector(t, path, id, setFloat(1, float32(math.NaN())))
	}
	s := openTest(t, dir)
	var hits []string
	for _, w := range s.Info().Warnings {
		if strings.Contains(w, damagedVectorMarker) {
			hits = append(hits, w)
		}
	}
	if len(hits) != 1 || !strings.HasPrefix(hits[0], "5 memories have a damaged vector") || !strings.Contains(hits[0], damaged[0]) || strings.Contains(hits[0], damaged[4]) {
		t.Errorf("warnings = %q: want one counting 5 and naming the first 3", s.Info().Warnings)
	}
	if got := s.vec.count(); got != vecDamageRecords-5 {
		t.Errorf("vector index holds %d rows, want %d", got, vecDamageRecords-5)
	}
}

// nanEmbedder answers NaN for every text: a broken embedding server.
type nanEmbedder struct{ wordEmbedder }

func (e nanEmbedder) Embed(_ context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i := range out {
		out[i] = make([]float32, e.dim)
		out[i][0] = float32(math.NaN())
	}
	return out, nil
}

// TestNonFiniteVectorRefused: every way a vector enters the store refuses
// one with a NaN or Inf component, with an error that says so, and stores
// nothing.
func TestNonFiniteVectorRefused(t *testing.T) {
	ctx := context.Background()
	bad := map[string]float32{"NaN": float32(math.NaN()), "Inf": float32(math.Inf(1)), "-Inf": float32(math.Inf(-1))}
	for name, f := range bad {
		vec := func() []float32 { v := testEmb.vec("a damaged vector"); v[2] = f; return v }
		m := memory.Memory{Text: "a damaged vector", Embedding: vec()}
		writes := []struct {
			name  string
			write func(s *Store) error
		}{
			{"Put", func(s *Store) error { _, err := s.Put(ctx, m); return err }},
			{"PutBatch", func(s *Store) error { _, err := s.PutBatch(ctx, []memory.Memory{m}); return err }},
			{"Apply", func(s *Store) error {
				c := m
				c.ID = s.NewID()
				return s.Apply(ctx, Batch{Put: []memory.Memory{c}})
			}},
			{"Update", func(s *Store) error {
				_, err := s.Update(ctx, s.mustFirst(t), func(x *memory.Memory) error { x.Embedding = vec(); return nil })
				return err
			}},
			{"Supersede", func(s *Store) error { _, err := s.Supersede(ctx, s.mustFirst(t), m); return err }},
			{"ApplyTeam", func(s *Store) error {
				c := m
				c.ID = s.NewID()
				// A pull skips and counts what the store refuses (one bad
				// row never stops it) and says why, for the sync's log.
				res, err := s.ApplyTeam(ctx, TeamChanges{Put: []memory.Memory{c}})
				if err != nil || res.Invalid != 1 || res.Put != 0 {
					return fmt.Errorf("ApplyTeam = %+v, %v: want the put counted invalid", res, err)
				}
				return errors.New(res.InvalidWhy)
			}},
			{"Reembed", func(s *Store) error {
				return s.Reembed(ctx, nanEmbedder{wordEmbedder{model: "nan-v1", dim: testDim}}, nil)
			}},
			{"VectorSearch", func(s *Store) error { _, err := s.VectorSearch(ctx, vec(), 3, Filter{}); return err }},
		}
		for _, w := range writes {
			t.Run(name+"/"+w.name, func(t *testing.T) {
				dir := t.TempDir()
				s := openTest(t, dir)
				mustPut(t, s, mem("a healthy memory"))
				err := w.write(s)
				if err == nil || !strings.Contains(err.Error(), "NaN or Inf") {
					t.Fatalf("err = %v, want one saying NaN or Inf", err)
				}
				if s.Count() != 1 || s.vec.count() != 1 || s.Info().Model != testEmb.model {
					t.Errorf("after the refusal: %d records, %d vectors, model %s", s.Count(), s.vec.count(), s.Info().Model)
				}
			})
		}
	}
	// An export file cannot spell NaN or Inf in JSON; a number too big for
	// a float32 is what a damaged one can hold, and Import refuses it.
	t.Run("Import", func(t *testing.T) {
		s := openTest(t, t.TempDir())
		var b bytes.Buffer
		fmt.Fprintf(&b, `{"format":%q,"version":%d,"embedding_model":%q,"dim":%d,"count":1,"exported_at":"2025-06-01T12:00:00Z"}`+"\n",
			ExportFormat, ExportVersion, testEmb.model, testDim)
		v := make([]string, testDim)
		for i := range v {
			v[i] = "0.1"
		}
		v[2] = "1e39"
		fmt.Fprintf(&b, `{"text":"a damaged vector","embedding":[%s]}`+"\n", strings.Join(v, ","))
		_, err := s.Import(ctx, &b, ImportOptions{})
		if err == nil || !errors.Is(err, memory.ErrInvalid) && !strings.Contains(err.Error(), "float32") {
			t.Fatalf("Import = %v, want the vector refused", err)
		}
		if s.Count() != 0 {
			t.Errorf("%d records imported", s.Count())
		}
	})
}

// mustFirst is the id of some stored record.
func (s *Store) mustFirst(t *testing.T) string {
	t.Helper()
	for id := range s.entries {
		return id
	}
	t.Fatal("empty store")
	return ""
}

// TestBrokenTextIndexesPruned: Open keeps only the newest text index moved
// aside, removing older ones whether it moved one aside now or not.
func TestBrokenTextIndexesPruned(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s := openTest(t, dir)
	mustPut(t, s, mem("a memory that outlives its text index"))
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	text := filepath.Join(dir, textDir)
	old := []string{"20251101T000000.000000000", "20251102T000000.000000000", "20251103T000000.000000000"}
	for _, ts := range old {
		if err := os.MkdirAll(filepath.Join(text+brokenSuffix+ts, "store"), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(text+brokenSuffix+ts, "store", "root.bolt"), []byte("old"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	left := func() []string {
		got, _ := filepath.Glob(text + brokenSuffix + "*")
		for i := range got {
			got[i] = strings.TrimPrefix(got[i], text+brokenSuffix)
		}
		return got
	}
	// A healthy index: the older ones go, the newest stays.
	s, err := Open(ctx, Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if got := left(); !slices.Equal(got, old[2:]) {
		t.Errorf("after an Open: %q left, want %q", got, old[2:])
	}
	// A garbled index: moved aside, and it is the one kept.
	edit(t, filepath.Join(text, "store", "root.bolt"), func(b []byte) {
		for i := range b {
			b[i] ^= 0x5a
		}
	})
	s, err = Open(ctx, Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	got := left()
	if len(got) != 1 || got[0] <= old[2] {
		t.Errorf("after a rebuild: %q left, want only the index just moved aside", got)
	}
	if hits, err := s.TextSearch(ctx, "outlives", 1, Filter{}); err != nil || len(hits) != 1 {
		t.Errorf("text search after the rebuild = %v, %v", hits, err)
	}
}

// gatedEmbedder is testEmb that, at each Embed, says it started and waits
// until release is closed.
type gatedEmbedder struct {
	wordEmbedder
	started chan struct{}
	release chan struct{}
}

func (e gatedEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	e.started <- struct{}{}
	<-e.release
	return e.wordEmbedder.Embed(ctx, texts)
}

// TestRepairVectorsWritesMeanwhile: RepairVectors embeds without the
// write lock (the daemon retries it while it runs, against an embedder
// that may be slow or hang), so a write goes through while the embedder
// works; a record whose text was edited meanwhile (it brought its own
// vector) is left alone, a record untouched is repaired.
func TestRepairVectorsWritesMeanwhile(t *testing.T) {
	ctx := context.Background()
	for _, edit := range []bool{false, true} {
		t.Run(fmt.Sprintf("edited=%v", edit), func(t *testing.T) {
			dir, path := damagedStore(t, vecDamageRecords)
			id := firstRecordID(t, path)
			nanVector(t, path, id)
			s := openTest(t, dir)
			emb := gatedEmbedder{wordEmbedder: testEmb, started: make(chan struct{}), release: make(chan struct{})}
			type result struct {
				n   int
				err error
			}
			done := make(chan result, 1)
			go func() {
				n, err := s.RepairVectors(ctx, emb)
				done <- result{n, err}
			}()
			<-emb.started
			// While the embedder works: a new memory, and maybe an edit of
			// the damaged one's text. Under the old lock these waited for
			// the embedder, and the test for release: it never came.
			text := "the deploy script tags every release with the commit hash"
			if _, err := s.Put(ctx, memory.Memory{Text: text, Embedding: testEmb.vec(text)}); err != nil {
				t.Fatal(err)
			}
			edited := "the staging database is reset every sunday night"
			if edit {
				if _, err := s.Update(ctx, id, func(m *memory.Memory) error {
					m.Text, m.Embedding = edited, testEmb.vec(edited)
					return nil
				}); err != nil {
					t.Fatal(err)
				}
			}
			close(emb.release)
			r := <-done
			if want := map[bool]int{false: 1, true: 0}[edit]; r.err != nil || r.n != want {
				t.Fatalf("RepairVectors = %d, %v, want %d", r.n, r.err, want)
			}
			if w := s.Info().Warnings; len(w) != 0 {
				t.Errorf("warnings after the repair: %q", w)
			}
			m, err := s.Get(ctx, id)
			want := testEmb.vec(m.Text)
			if err != nil || (edit && m.Text != edited) || !slices.Equal(m.Embedding, want) {
				t.Errorf("the record after the repair: %v, text %q, vector of its text %v", err, m.Text, slices.Equal(m.Embedding, want))
			}
		})
	}
}

// mapHas reports whether set holds id.
func mapHas(set map[string]struct{}, id string) bool {
	_, ok := set[id]
	return ok
}

// TestRepairVectorsTellsNoTeam: a repair of a team memory's damaged
// vector changes nothing the team shares: the team outbox is as it was
// before it (no put: a push would make a new team version of the same
// text, over other members' edits), and the record's UpdatedAt is kept.
func TestRepairVectorsTellsNoTeam(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s := openTeam(t, dir)
	var ms []memory.Memory
	for i := range 3 {
		ms = append(ms, mustPut(t, s, teamMem(fmt.Sprintf("The deploy script %d tags the image with the commit hash", i))))
	}
	out, _, err := s.Outbox(ctx, 0)
	if err != nil || len(out) != 3 {
		t.Fatalf("outbox before: %d entries, %v", len(out), err)
	}
	if err := s.AckOutbox(ctx, out, nil); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	rewriteVector(t, filepath.Join(dir, dbFile), ms[1].ID, setFloat(0, float32(math.NaN())))
	s = openTeam(t, dir)
	if n, err := s.RepairVectors(ctx, testEmb); err != nil || n != 1 {
		t.Fatalf("RepairVectors = %d, %v, want 1", n, err)
	}
	if out, _, err := s.Outbox(ctx, 0); err != nil || len(out) != 0 {
		t.Errorf("outbox after the repair: %+v, %v; want empty", out, err)
	}
	if n, err := s.OutboxLen(); err != nil || n != 0 {
		t.Errorf("OutboxLen after the repair = %d, %v", n, err)
	}
	after, err := s.Get(ctx, ms[1].ID)
	if err != nil || !after.UpdatedAt.Equal(ms[1].UpdatedAt) {
		t.Errorf("after the repair: %v, updated %v (was %v)", err, after.UpdatedAt, ms[1].UpdatedAt)
	}
}
