package embed

import (
	"context"
	"github.com/memtray/memtray/backend/embed/ollamafake"
	"strings"
	"testing"
	"time"
)

func TestLooksLikeEmbedding(t *testing.T) {
	for _, tc := range []struct {
		name     string
		families []string
		want     bool
	}{
		{"nomic-embed-text:latest", []string{"nomic-bert"}, true},
		{"mxbai-embed-large:latest", []string{"bert"}, true},
		{"all-minilm:l6-v2", []string{"bert"}, true},
		{"bge-m3:latest", []string{"xlm-roberta"}, true},
		{"embeddinggemma:300m", []string{"gemma3"}, true},
		{"hf.co/Qwen/Qwen3-Embedding-0.6B-GGUF:Q8_0", []string{"qwen3"}, true},
		{"llama3.2:latest", []string{"llama"}, false},
		{"qwen3:8b", []string{"qwen3"}, false},
		{"gemma3:4b", nil, false},
	} {
		if got := LooksLikeEmbedding(tc.name, tc.families...); got != tc.want {
			t.Errorf("LooksLikeEmbedding(%q, %q) = %v, want %v", tc.name, tc.families, got, tc.want)
		}
	}
}

func TestInspectOllama(t *testing.T) {
	ctx := context.Background()
	f := newFakeOllama(t)
	st := InspectOllama(ctx, f.URL(), time.Second)
	if !st.Reachable || st.Version != "0.13.0" || st.Error != "" || st.Host != f.URL() {
		t.Fatalf("InspectOllama = %+v", st)
	}
	if len(st.Models) != 2 || st.Models[0].Name != "nomic-embed-text:latest" || !st.Models[0].Embedding ||
		st.Models[0].Family != "nomic-bert" || st.Models[0].ParameterSize != "137M" || st.Models[1].Embedding {
		t.Fatalf("models = %+v", st.Models)
	}
	if !HasLocal(st.Models, "nomic-embed-text") || !HasLocal(st.Models, "Nomic-Embed-Text:latest") || HasLocal(st.Models, "mxbai-embed-large") {
		t.Fatal("HasLocal does not match as HasModel does")
	}

	down := InspectOllama(ctx, ollamafake.ClosedURL(t), time.Second)
	if down.Reachable || !strings.Contains(down.Error, "is Ollama running?") {
		t.Fatalf("InspectOllama of a closed port = %+v", down)
	}
	bad := InspectOllama(ctx, "ftp://example", time.Second)
	if bad.Reachable || !strings.Contains(bad.Error, "scheme") {
		t.Fatalf("InspectOllama of a bad host = %+v", bad)
	}
}
