package embed

import (
	"context"
	"errors"
	"github.com/memtray/memtray/backend/embed/ollamafake"
	"strings"
	"testing"
	"time"

	"github.com/memtray/memtray/backend/config"
	"github.com/memtray/memtray/backend/memory"
)

func embCfg(provider, host string) config.Embedder {
	c := config.Default().Embedder
	c.Provider = provider
	c.OllamaHost = host
	c.Timeout = config.Duration(2 * time.Second)
	return c
}

func TestSelect(t *testing.T) {
	cases := []struct {
		name     string
		provider string
		setup    func(k *ollamafake.Knobs)
		absent   bool   // point at a closed port instead of the fake
		want     string // provider picked; "" when an error is expected
		reason   string // substring of Choice.Reason
		wantErr  error
	}{
		{name: "builtin", provider: "builtin", want: "builtin", reason: "embedder.provider is builtin"},
		{name: "auto with ollama and model", provider: "auto", want: "ollama", reason: "Ollama answered at http://127.0.0.1:"},
		{name: "auto without model", provider: "auto", setup: func(k *ollamafake.Knobs) { k.Uninstall("nomic-embed-text") },
			want: "builtin", reason: `does not have "nomic-embed-text" (run ` + "`memtray pull`"},
		{name: "auto with ollama absent", provider: "auto", absent: true, want: "builtin", reason: "Ollama not reachable at http://127.0.0.1:"},
		{name: "auto with ollama hanging", provider: "auto", setup: func(k *ollamafake.Knobs) { k.HangTags = true },
			want: "builtin", reason: "Ollama not reachable"},
		{name: "auto with embed failing", provider: "auto", setup: func(k *ollamafake.Knobs) { k.Fail = 100 },
			want: "builtin", reason: "did not embed"},
		{name: "auto with a bad embed answer", provider: "auto", setup: func(k *ollamafake.Knobs) { k.Mode = "wrongcount" },
			want: "builtin", reason: "did not embed"},
		{name: "ollama", provider: "ollama", want: "ollama", reason: "embedder.provider is ollama"},
		{name: "ollama absent", provider: "ollama", absent: true, wantErr: memory.ErrUnavailable},
		{name: "ollama without model", provider: "ollama", setup: func(k *ollamafake.Knobs) { k.Uninstall("nomic-embed-text") }, wantErr: ErrModelNotFound},
		{name: "unknown provider", provider: "magic", wantErr: memory.ErrInvalid},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newFakeOllama(t)
			if c.setup != nil {
				f.Set(c.setup)
			}
			host := f.URL()
			if c.absent {
				host = ollamafake.ClosedURL(t)
			}
			start := time.Now()
			e, ch, err := Select(context.Background(), embCfg(c.provider, host))
			if took := time.Since(start); took > 4*time.Second {
				t.Errorf("Select took %s", took)
			}
			if c.wantErr != nil {
				if !errors.Is(err, c.wantErr) {
					t.Fatalf("error %v, want %v", err, c.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("Select: %v", err)
			}
			if ch.Provider != c.want || !strings.Contains(ch.Reason, c.reason) {
				t.Errorf("choice %+v, want provider %s with reason containing %q", ch, c.want, c.reason)
			}
			if ch.Model != e.Model() {
				t.Errorf("choice model %q, embedder %q", ch.Model, e.Model())
			}
			if _, ok := e.(*Cached); !ok {
				t.Errorf("embedder %T is not cached", e)
			}
			if e.Dim() <= 0 {
				t.Errorf("Dim = %d: unknown after Select", e.Dim())
			}
			vecs, err := e.Embed(context.Background(), []string{"hello world"})
			if err != nil || len(vecs) != 1 || len(vecs[0]) != e.Dim() {
				t.Errorf("Embed through the choice: %v", err)
			}
		})
	}
}

func TestSelectEnvHostAndNoCache(t *testing.T) {
	f := newFakeOllama(t)
	t.Setenv("OLLAMA_HOST", f.URL())
	cfg := embCfg("auto", "")
	cfg.CacheSize = 0
	e, ch, err := Select(context.Background(), cfg)
	if err != nil || ch.Provider != "ollama" {
		t.Fatalf("Select = %+v, %v", ch, err)
	}
	if _, ok := e.(*Ollama); !ok {
		t.Errorf("embedder %T, want *Ollama without a cache", e)
	}
}

func TestSelectHangingIsQuick(t *testing.T) {
	f := newFakeOllama(t)
	f.Set(func(k *ollamafake.Knobs) { k.HangTags = true })
	cfg := embCfg("auto", f.URL())
	cfg.Timeout = config.Duration(time.Minute)
	start := time.Now()
	_, ch, err := Select(context.Background(), cfg)
	if err != nil || ch.Provider != "builtin" {
		t.Fatalf("Select = %+v, %v", ch, err)
	}
	if took := time.Since(start); took < ReachTimeout || took > ReachTimeout+time.Second {
		t.Errorf("auto with a hanging Ollama took %s, want about %s", took, ReachTimeout)
	}
}

func TestForModel(t *testing.T) {
	f := newFakeOllama(t)
	cfg := embCfg("auto", f.URL())
	ctx := context.Background()
	cases := []struct {
		model   string
		wantErr error
		wantDim int
	}{
		{BuiltinModel, nil, BuiltinDim},
		{"builtin-hash-v0", memory.ErrModelMismatch, 0},
		{"ollama:nomic-embed-text", nil, 16},
		{"ollama:llama3.2", nil, 16},
		{"ollama:mxbai-embed-large", ErrModelNotFound, 0},
		{"ollama:", memory.ErrInvalid, 0},
		{"mystery:text-embedding-3-small", memory.ErrInvalid, 0},
		{"", memory.ErrInvalid, 0},
	}
	for _, c := range cases {
		e, err := ForModel(ctx, cfg, c.model)
		if c.wantErr != nil {
			if !errors.Is(err, c.wantErr) {
				t.Errorf("ForModel(%q) error %v, want %v", c.model, err, c.wantErr)
			}
			continue
		}
		if err != nil {
			t.Errorf("ForModel(%q): %v", c.model, err)
			continue
		}
		if e.Model() != c.model || e.Dim() != c.wantDim {
			t.Errorf("ForModel(%q) = %s dim %d", c.model, e.Model(), e.Dim())
		}
	}
	// Ollama down: an error, never a silent switch to another model.
	cfg.OllamaHost = ollamafake.ClosedURL(t)
	if _, err := ForModel(ctx, cfg, "ollama:nomic-embed-text"); !errors.Is(err, memory.ErrUnavailable) {
		t.Errorf("ForModel with Ollama down: %v", err)
	}
}
