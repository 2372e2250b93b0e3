package recall

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/memtray/memtray/backend/config"
	"github.com/memtray/memtray/backend/embed"
	"github.com/memtray/memtray/backend/memory"
	"github.com/memtray/memtray/backend/search"
	"github.com/memtray/memtray/backend/store"
)

const prompt = "how are the retries of the payment gateway configured?"

// open returns a recaller over a real store holding memories about the
// payment gateway's retries, built with the default recall configuration.
func open(t testing.TB) (*search.Recaller, config.Recall) {
	t.Helper()
	rec, cfg, _ := openStore(t)
	return rec, cfg
}

// openStore is open with the store.
func openStore(t testing.TB) (*search.Recaller, config.Recall, *store.Store) {
	t.Helper()
	return openTexts(t, []string{
		"The payment gateway retries failed charges three times with exponential backoff, set by retries in config/gateway.yaml.",
		"Payment gateway retries are configured in config/gateway.yaml: retries: 3 and backoff_ms: 200.",
		"The payment gateway's retry backoff starts at 200 ms and doubles; change backoff_ms in config/gateway.yaml.",
		"Retries of the payment gateway stop after the third failure; the gateway config's max_retries sets it.",
	}, config.Default())
}

// openTexts returns a recaller with cfg over a real store on disk
// (t.TempDir) holding texts as facts m0, m1, ... (built-in embedder, the
// clock fixed at testNow), cfg's recall configuration and the store.
func openTexts(t testing.TB, texts []string, cfg config.Config) (*search.Recaller, config.Recall, *store.Store) {
	t.Helper()
	ctx := context.Background()
	clock := memory.FixedClock{T: testNow}
	emb := embed.NewBuiltin()
	st, err := store.Open(ctx, store.Options{Dir: t.TempDir(), Model: emb.Model(), Dim: emb.Dim(), Clock: clock})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	for i, text := range texts {
		vecs, err := emb.Embed(ctx, []string{text})
		if err != nil {
			t.Fatal(err)
		}
		m := memory.Memory{ID: fmt.Sprintf("m%d", i), Text: text, Kind: memory.KindFact, Embedding: vecs[0], CreatedAt: testNow}
		if _, err := st.Put(ctx, m); err != nil {
			t.Fatal(err)
		}
	}
	return search.NewRecaller(search.New(st, emb, cfg.Search, clock), st, cfg.Recall, clock), cfg.Recall, st
}

// testNow is the fixed time of openTexts' store and memories.
var testNow = time.Date(2026, 5, 6, 7, 8, 9, 0, time.UTC)

func TestNewNeedsRecaller(t *testing.T) {
	if _, err := New(Options{}); err == nil {
		t.Fatal("New without a recaller: no error")
	}
}

// TestRecallLiveLimits: a K lowered at runtime bounds prompt recalls but
// not explicit searches; unchanged limits leave requests alone.
func TestRecallLiveLimits(t *testing.T) {
	tests := []struct {
		name   string
		liveK  int
		event  string
		reqK   int
		minHit int
		maxHit int
	}{
		{"live k lowered bounds a prompt", 1, search.EventPrompt, 0, 1, 1},
		{"live k lowered bounds a request's k", 1, search.EventPrompt, 3, 1, 1},
		{"a search is not bounded", 1, search.EventSearch, 0, 2, 5},
		{"unchanged k", 5, search.EventPrompt, 0, 2, 5},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec, built := open(t)
			live := built
			live.K = tt.liveK
			s, err := New(Options{Recaller: rec, Built: built, Live: func() config.Recall { return live }})
			if err != nil {
				t.Fatal(err)
			}
			got, err := s.Recall(context.Background(), search.RecallRequest{SessionID: fmt.Sprintf("s%d", i), Prompt: prompt, Event: tt.event, K: tt.reqK})
			if err != nil {
				t.Fatalf("Recall: %v", err)
			}
			if len(got.Hits) < tt.minHit || len(got.Hits) > tt.maxHit {
				t.Fatalf("%d hits (skipped %q), want %d..%d", len(got.Hits), got.Skipped, tt.minHit, tt.maxHit)
			}
		})
	}
}

func TestResetSession(t *testing.T) {
	rec, built := open(t)
	s, err := New(Options{Recaller: rec, Built: built})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, id := range []string{"", "  ", string(make([]byte, search.MaxSessionIDLen+1))} {
		if err := s.ResetSession(ctx, id); !errors.Is(err, memory.ErrInvalid) {
			t.Errorf("ResetSession(%d bytes) = %v, want ErrInvalid", len(id), err)
		}
	}
	ask := func(turn string) int {
		t.Helper()
		got, err := s.Recall(ctx, search.RecallRequest{SessionID: "sess", Prompt: prompt, Turn: turn})
		if err != nil {
			t.Fatalf("Recall: %v", err)
		}
		return len(got.Hits)
	}
	first := ask("1")
	if first == 0 {
		t.Fatal("the first recall gave nothing")
	}
	if n := ask("2"); n != 0 {
		t.Fatalf("a session got %d memories it already had", n)
	}
	if err := s.ResetSession(ctx, "sess"); err != nil {
		t.Fatal(err)
	}
	if n := ask("3"); n != first {
		t.Fatalf("after a reset: %d memories, want %d again", n, first)
	}
}

func TestLowerBound(t *testing.T) {
	for _, tt := range []struct{ req, limit, want int }{
		{0, 3, 3}, {5, 3, 3}, {2, 3, 2}, {4, 0, 4}, {0, 0, 0}, {-1, 3, 3},
	} {
		if got := lowerBound(tt.req, tt.limit); got != tt.want {
			t.Errorf("lowerBound(%d, %d) = %d, want %d", tt.req, tt.limit, got, tt.want)
		}
	}
}
