package embed

import (
	"context"
	"errors"
	"github.com/memtray/memtray/backend/embed/ollamafake"
	"testing"
	"time"

	"github.com/memtray/memtray/backend/config"
	"github.com/memtray/memtray/backend/memory"
	"github.com/ollama/ollama/api"
)

func TestReconnecting(t *testing.T) {
	f := newFakeOllama(t)
	var saved []api.ListModelResponse
	f.Set(func(k *ollamafake.Knobs) { saved = append(saved, k.Models...) })
	f.Uninstall("nomic-embed-text") // the model is not there yet
	cfg := config.Default().Embedder
	cfg.OllamaHost = f.URL()
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	r := NewReconnecting(cfg, "ollama:nomic-embed-text", 16, errors.New("connection refused"))
	r.now = func() time.Time { return now }
	r.lastTry = now
	ctx := context.Background()

	steps := []struct {
		name      string
		advance   time.Duration
		install   bool
		wantOK    bool
		wantCalls int // embed requests the fake has served after the step
	}{
		{"within the retry interval: no request", time.Second, false, false, 0},
		{"retry, model still missing", RetryEvery, false, false, 0},
		{"model pulled, but too soon to retry", time.Second, true, false, 0},
		{"retry succeeds", RetryEvery, true, true, 2}, // the probe, then the text
		{"stays connected", time.Second, true, true, 3},
	}
	for _, s := range steps {
		now = now.Add(s.advance)
		if s.install {
			f.Set(func(k *ollamafake.Knobs) { k.Models = saved })
		}
		vecs, err := r.Embed(ctx, []string{"the queue drains every 5 seconds: " + s.name})
		if s.wantOK {
			if err != nil || len(vecs) != 1 || len(vecs[0]) != 16 {
				t.Fatalf("%s: %v", s.name, err)
			}
		} else if !errors.Is(err, memory.ErrUnavailable) {
			t.Fatalf("%s: err %v, want ErrUnavailable", s.name, err)
		}
		if calls, _ := f.Calls(); calls != s.wantCalls {
			t.Fatalf("%s: %d embed requests, want %d", s.name, calls, s.wantCalls)
		}
		if r.Available() != s.wantOK {
			t.Fatalf("%s: Available = %v", s.name, r.Available())
		}
	}
	if r.Model() != "ollama:nomic-embed-text" || r.Dim() != 16 {
		t.Fatalf("Model/Dim = %s/%d", r.Model(), r.Dim())
	}
}
