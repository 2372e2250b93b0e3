package search

import (
	"context"
	"testing"

	"github.com/memtray/memtray/backend/config"
	"github.com/memtray/memtray/backend/embed"
	"github.com/memtray/memtray/backend/memory"
	"github.com/memtray/memtray/backend/store"
)

// TestSetVectorFloor: a vector floor set after New (a model switch's
// calibration) decides which candidates without lexical evidence pass;
// 0 goes back to the config's, and an unset config means 0.3.
func TestSetVectorFloor(t *testing.T) {
	ctx := context.Background()
	emb := embed.NewBuiltin()
	st, err := store.Open(ctx, store.Options{Dir: t.TempDir(), Model: emb.Model(), Dim: emb.Dim()})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	for _, text := range []string{
		"The billing worker retries a failed Stripe webhook three times with a one minute backoff.",
		"Invoices are rendered to PDF by a headless Chromium sidecar in the invoice service pod.",
		"Feature branches deploy preview environments named after the branch on every push.",
		"The nightly backup of the user database is copied to a second region.",
	} {
		vec, err := emb.Embed(ctx, []string{text})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := st.Put(ctx, memory.Memory{Text: text, Project: "p", Embedding: vec[0]}); err != nil {
			t.Fatal(err)
		}
	}
	cfg := config.Default().Search
	cfg.EvidenceGate = false
	e := New(st, emb, cfg, nil)
	below := func() int {
		t.Helper()
		res, err := e.Run(ctx, Query{Text: "how are payment notifications retried?", Mode: ModeVector})
		if err != nil {
			t.Fatal(err)
		}
		return res.BelowAbsolute
	}
	if got := e.vectorFloor(); got != config.BuiltinVectorFloor {
		t.Fatalf("unset floor = %v, want %v", got, config.BuiltinVectorFloor)
	}
	unset := below()
	e.SetVectorFloor(0.001)
	if got := below(); got != 0 {
		t.Fatalf("floor 0.001 dropped %d candidates", got)
	}
	e.SetVectorFloor(0.999)
	if got := below(); got < unset || got == 0 {
		t.Fatalf("floor 0.999 dropped %d candidates, the default %d", got, unset)
	}
	e.SetVectorFloor(0)
	if got := below(); got != unset {
		t.Fatalf("back to the config's: %d dropped, want %d", got, unset)
	}
}

// TestSkillCatalogSetFloor: the floor set after NewSkillCatalog applies to
// the indexes built after it; 0 means the built-in model's.
func TestSkillCatalogSetFloor(t *testing.T) {
	c := NewSkillCatalog(embed.NewBuiltin(), 0)
	dirs := []string{"testdata/skills/user"}
	for _, tt := range []struct{ set, want float64 }{{0, config.BuiltinSkillFloor}, {0.8, 0.8}} {
		c.SetFloor(tt.set)
		clear(c.indexes)
		x, err := c.Index(context.Background(), dirs)
		if err != nil {
			t.Fatal(err)
		}
		if x.floor != tt.want {
			t.Fatalf("SetFloor(%v): index floor %v, want %v", tt.set, x.floor, tt.want)
		}
	}
}
