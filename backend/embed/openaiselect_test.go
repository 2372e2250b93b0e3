package embed

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/memtray/memtray/backend/embed/ollamafake"
	"github.com/memtray/memtray/backend/embed/openaifake"
	"github.com/memtray/memtray/backend/memory"
)

// TestSelectOpenAI: provider openai, and auto's order: Ollama, then the
// OpenAI-compatible server when a model is configured, then built-in.
func TestSelectOpenAI(t *testing.T) {
	cases := []struct {
		name      string
		provider  string
		ollama    bool // a fake Ollama with the model answers
		openai    bool // the fake OpenAI server answers
		model     string
		set       func(k *openaifake.Knobs)
		want      string
		reason    []string
		notReason string
		wantErr   error
	}{
		{name: "openai", provider: "openai", openai: true, model: "voyage-4-nano", want: "openai",
			reason: []string{"embedder.provider is openai; http://127.0.0.1:", `answered with "voyage-4-nano" (dimension 16)`}},
		{name: "openai unknown model", provider: "openai", openai: true, model: "nope", wantErr: ErrModelNotServed},
		{name: "openai absent", provider: "openai", model: "voyage-4-nano", wantErr: memory.ErrUnavailable},
		{name: "openai without model", provider: "openai", openai: true, wantErr: memory.ErrInvalid},
		{name: "auto prefers ollama", provider: "auto", ollama: true, openai: true, model: "voyage-4-nano", want: "ollama"},
		{name: "auto falls to openai", provider: "auto", openai: true, model: "voyage-4-nano", want: "openai",
			reason: []string{"Ollama not reachable at", `answered with "voyage-4-nano"`}},
		{name: "auto openai without models route", provider: "auto", openai: true, model: "voyage-4-nano",
			set: func(k *openaifake.Knobs) { k.NoModelsRoute = true }, want: "openai"},
		{name: "auto openai absent", provider: "auto", model: "voyage-4-nano", want: "builtin",
			reason: []string{"Ollama not reachable at", "no OpenAI-compatible server answers at http://127.0.0.1:"}},
		{name: "auto openai lacks the model", provider: "auto", openai: true, model: "nope", want: "builtin",
			reason: []string{"did not embed with \"nope\"", "not served"}},
		{name: "auto openai not configured", provider: "auto", openai: true, want: "builtin",
			reason: []string{"Ollama not reachable at"}, notReason: "OpenAI"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			host := ollamafake.ClosedURL(t)
			if c.ollama {
				host = newFakeOllama(t).URL()
			}
			cfg := embCfg(c.provider, host)
			cfg.OpenAIURL, cfg.OpenAIModel = openaifake.ClosedURL(t), c.model
			if c.openai {
				f := openaifake.New(t, openaifake.Options{})
				if c.set != nil {
					f.Set(c.set)
				}
				cfg.OpenAIURL = f.URL()
			}
			e, ch, err := Select(context.Background(), cfg)
			if c.wantErr != nil {
				if !errors.Is(err, c.wantErr) {
					t.Fatalf("err = %v, want %v", err, c.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if ch.Provider != c.want || ch.Model != e.Model() {
				t.Fatalf("choice = %+v, model %s", ch, e.Model())
			}
			for _, r := range c.reason {
				if !strings.Contains(ch.Reason, r) {
					t.Errorf("reason %q lacks %q", ch.Reason, r)
				}
			}
			if c.notReason != "" && strings.Contains(ch.Reason, c.notReason) {
				t.Errorf("reason %q has %q", ch.Reason, c.notReason)
			}
			if c.want == "openai" && (e.Model() != "openai:"+c.model || e.Dim() != 16) {
				t.Fatalf("embedder %s dim %d", e.Model(), e.Dim())
			}
		})
	}
}

// TestForModelOpenAI: a store's "openai:<m>" reopens the configured server
// with model m, probed; it never substitutes another model.
func TestForModelOpenAI(t *testing.T) {
	f := openaifake.New(t, openaifake.Options{Models: []string{"voyage-4-nano", "Qwen3-Embedding-0.6B"}, Dim: 20})
	cfg := embCfg("auto", ollamafake.ClosedURL(t))
	cfg.OpenAIURL = f.URL()
	e, err := ForModel(context.Background(), cfg, "openai:Qwen3-Embedding-0.6B")
	if err != nil || e.Model() != "openai:Qwen3-Embedding-0.6B" || e.Dim() != 20 {
		t.Fatalf("= %v, %v", e, err)
	}
	if _, err := ForModel(context.Background(), cfg, "openai:"); !errors.Is(err, memory.ErrInvalid) {
		t.Fatalf("empty name: %v", err)
	}
	if _, err := ForModel(context.Background(), cfg, "openai:other"); !errors.Is(err, ErrModelNotServed) {
		t.Fatalf("unknown: %v", err)
	}
	cfg.OpenAIURL = openaifake.ClosedURL(t)
	if _, err := ForModel(context.Background(), cfg, "openai:voyage-4-nano"); !errors.Is(err, memory.ErrUnavailable) {
		t.Fatalf("closed: %v", err)
	}
}

// TestReconnectingOpenAI: a store on an OpenAI-compatible model that did
// not answer at start embeds once the server answers again.
func TestReconnectingOpenAI(t *testing.T) {
	f := openaifake.New(t, openaifake.Options{})
	f.Set(func(k *openaifake.Knobs) { k.Fail, k.FailStatus = 3, 503 })
	cfg := embCfg("auto", ollamafake.ClosedURL(t))
	cfg.OpenAIURL = f.URL()
	r := NewReconnecting(cfg, "openai:voyage-4-nano", 16, errors.New("loading"))
	if _, err := r.Embed(context.Background(), []string{"a"}); !errors.Is(err, memory.ErrUnavailable) || r.Available() {
		t.Fatalf("before a retry: %v", err)
	}
	later := time.Now().Add(RetryEvery + time.Second)
	r.now = func() time.Time { return later }
	if _, err := r.Embed(context.Background(), []string{"a"}); !errors.Is(err, memory.ErrUnavailable) || !strings.Contains(err.Error(), "Loading model") {
		t.Fatalf("while loading: %v", err)
	}
	later = later.Add(RetryEvery + time.Second)
	vecs, err := r.Embed(context.Background(), []string{"a"})
	if err != nil || len(vecs) != 1 || len(vecs[0]) != 16 || !r.Available() {
		t.Fatalf("after the server is back: %v, %v", vecs, err)
	}
}

// TestOpenAIModelNames: shortened vectors are named apart from the
// model's own, and a store's name reopens them with its dimensions,
// whatever the config says now.
func TestOpenAIModelNames(t *testing.T) {
	for in, want := range map[string]struct {
		name string
		dims int
		ok   bool
	}{
		"openai:text-embedding-3-small":     {"text-embedding-3-small", 0, true},
		"openai:text-embedding-3-small#512": {"text-embedding-3-small", 512, true},
		"openai:BAAI/bge-m3":                {"BAAI/bge-m3", 0, true},
		"openai:m#0":                        {"", 0, false},
		"openai:m#x":                        {"", 0, false},
		"openai:m#+5":                       {"", 0, false},
		"openai:#5":                         {"", 0, false},
		"openai:":                           {"", 0, false},
		"ollama:m":                          {"", 0, false},
	} {
		name, dims, ok := ParseOpenAIModel(in)
		if name != want.name || dims != want.dims || ok != want.ok {
			t.Errorf("ParseOpenAIModel(%q) = %q, %d, %v", in, name, dims, ok)
		}
	}
	f := openaifake.New(t, openaifake.Options{Models: []string{"text-embedding-3-small"}, Dim: 32, Shortenable: true})
	cfg := embCfg("openai", ollamafake.ClosedURL(t))
	cfg.OpenAIURL, cfg.OpenAIModel, cfg.Dimensions = f.URL(), "text-embedding-3-small", 8
	e, _, err := Select(context.Background(), cfg)
	if err != nil || e.Model() != "openai:text-embedding-3-small#8" || e.Dim() != 8 {
		t.Fatalf("Select = %v, %v", e, err)
	}
	cfg.Dimensions = 16
	for model, dim := range map[string]int{"openai:text-embedding-3-small#8": 8, "openai:text-embedding-3-small": 32} {
		e, err := ForModel(context.Background(), cfg, model)
		if err != nil || e.Model() != model || e.Dim() != dim {
			t.Errorf("ForModel(%q) = %v, %v", model, e, err)
		}
	}
}
