package daemon

import (
	"bytes"
	"context"
	"encoding/binary"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memtray/memtray/backend/memory"
	"github.com/memtray/memtray/backend/store"
)

// TestDamagedVectorRepairedAtStart: a memory whose stored vector a flipped
// disk sector made NaN is embedded anew when the daemon starts (it has
// the store's embedder), so it is found by meaning again and the store has
// nothing left to warn about.
func TestDamagedVectorRepairedAtStart(t *testing.T) {
	ctx := context.Background()
	cfg := testConfig(t)
	d := openAt(t, cfg, nil)
	text := "the billing service retries webhooks with exponential backoff"
	vecs, err := d.emb.Embed(ctx, []string{text})
	if err != nil {
		t.Fatal(err)
	}
	m, err := d.store.Put(ctx, memory.Memory{Text: text, Embedding: vecs[0]})
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	// The vector as packed in the records file: NaN over its last number.
	var packed []byte
	for _, f := range vecs[0] {
		packed = binary.LittleEndian.AppendUint32(packed, math.Float32bits(f))
	}
	path := filepath.Join(cfg.DataDir, StoreDir, "memtray.db")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	at := bytes.Index(b, packed)
	if at < 0 || bytes.Count(b, packed) != 1 {
		t.Fatal("the vector is not stored once, contiguously, in the records file")
	}
	binary.LittleEndian.PutUint32(b[at+len(packed)-4:], math.Float32bits(float32(math.NaN())))
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	// What a daemon without the repair would serve: the warning.
	st, err := store.Open(ctx, store.Options{Dir: filepath.Join(cfg.DataDir, StoreDir)})
	if err != nil {
		t.Fatal(err)
	}
	if w := strings.Join(st.Info().Warnings, "\n"); !strings.Contains(w, "1 memory has a damaged vector") {
		t.Fatalf("the damaged vector is not reported: %q", w)
	}
	st.Close()

	d2 := openAt(t, cfg, nil)
	if w := d2.store.Info().Warnings; len(w) != 0 {
		t.Errorf("warnings after the start: %q", w)
	}
	hits, err := d2.store.VectorSearch(ctx, vecs[0], 1, store.Filter{})
	if err != nil || len(hits) != 1 || hits[0].ID != m.ID || math.Abs(float64(hits[0].Score)-1) > 1e-3 {
		t.Errorf("vector search = %+v, %v: want %s, scored 1", hits, err, m.ID)
	}
}
