package embedders

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/memtray/memtray/backend/calib"
	"github.com/memtray/memtray/backend/config"
	"github.com/memtray/memtray/backend/embed"
	"github.com/memtray/memtray/backend/jobs"
	"github.com/memtray/memtray/backend/memory"
	"github.com/memtray/memtray/backend/store"
)

// open returns a service over a real store built with the built-in model.
func open(t *testing.T) *Service {
	t.Helper()
	ctx := context.Background()
	emb := embed.NewBuiltin()
	st, err := store.Open(ctx, store.Options{Dir: t.TempDir(), Model: emb.Model(), Dim: emb.Dim(),
		Clock: memory.FixedClock{T: time.Date(2026, 5, 6, 7, 8, 9, 0, time.UTC)}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	runner := jobs.New(func(jobs.Job) {})
	t.Cleanup(runner.Close)
	choice := embed.Choice{Provider: "builtin", Model: emb.Model(), Reason: "test"}
	cfg := config.Default().Embedder
	cfg.OllamaHost = "http://127.0.0.1:1" // nothing listens
	s, err := New(Options{Embedder: embed.NewSwappable(emb), Store: st, Jobs: runner,
		Live: func() config.Embedder { return cfg }, Choice: func() embed.Choice { return choice }, SetChoice: func(embed.Choice) {}})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestNewNeedsParts(t *testing.T) {
	if _, err := New(Options{}); err == nil {
		t.Fatal("New without parts: no error")
	}
}

// TestReembedRefused: requests refused before any job starts.
func TestReembedRefused(t *testing.T) {
	s := open(t)
	var fe *memory.FieldErrors
	for _, tt := range []struct {
		name  string
		req   ReembedRequest
		field string // a field error on it; "" for ErrInvalid
	}{
		{"builtin with a model", ReembedRequest{Provider: "builtin", Model: "x"}, "model"},
		{"unknown provider", ReembedRequest{Provider: "nope"}, "provider"},
		{"openai fields with ollama", ReembedRequest{Provider: "ollama", OpenAIURL: "http://127.0.0.1:1/v1"}, "provider"},
		{"openai without a model", ReembedRequest{Provider: "openai"}, "model"},
		{"the model in use", ReembedRequest{Provider: "builtin"}, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := s.Reembed(context.Background(), tt.req)
			switch {
			case tt.field == "" && !errors.Is(err, memory.ErrInvalid):
				t.Fatalf("err = %v, want ErrInvalid", err)
			case tt.field != "" && (!errors.As(err, &fe) || fe.Fields[tt.field] == ""):
				t.Fatalf("err = %v, want a field error on %s", err, tt.field)
			}
			if js, _ := s.o.Jobs.Jobs(context.Background()); len(js) != 0 {
				t.Fatalf("a refused request started %d jobs", len(js))
			}
		})
	}
}

func TestEmbedderInfo(t *testing.T) {
	s := open(t)
	s.SetThresholds([]calib.Value{{Name: "a", Value: 0.5}})
	info, err := s.EmbedderInfo(context.Background(), EmbedderQuery{})
	if err != nil {
		t.Fatal(err)
	}
	if info.Model != embed.BuiltinModel || info.StoreModel != embed.BuiltinModel || info.Ollama.Reachable || info.OpenAI.Checked ||
		len(info.Thresholds) != 1 || info.Reason != "test" {
		t.Fatalf("info: %+v", info)
	}
	// Thresholds are a copy.
	info.Thresholds[0].Value = 1
	if s.Thresholds()[0].Value != 0.5 {
		t.Fatal("Thresholds shares its slice")
	}
}
