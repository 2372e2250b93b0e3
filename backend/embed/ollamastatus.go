package embed

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/ollama/ollama/api"
)

// LocalModel is a model an Ollama server has locally (GET /api/tags).
type LocalModel struct {
	// Name is Ollama's name for it, e.g. "nomic-embed-text:latest".
	Name string
	// Size is its size on disk in bytes.
	Size int64
	// Family and ParameterSize come from Ollama's details ("nomic-bert", "137M").
	Family        string
	ParameterSize string
	// Embedding says the model embeds text: its family is a BERT-like
	// encoder or its name says "embed" (see LooksLikeEmbedding).
	Embedding bool
}

// embeddingFamilies are the model families of Ollama's embedding models
// (nomic-embed-text, mxbai-embed-large, all-minilm, bge-m3,
// snowflake-arctic-embed, paraphrase-multilingual, granite-embedding).
var embeddingFamilies = []string{"bert", "nomic-bert", "nomic-bert-moe", "xlm-roberta", "roberta", "gte"}

// embeddingNames are name parts of embedding models whose family says
// nothing (embeddinggemma is a gemma3, qwen3-embedding a qwen3).
var embeddingNames = []string{"embed", "minilm", "bge-", "e5-", "gte-"}

// LooksLikeEmbedding guesses from a model's name and families whether it
// embeds text. Ollama's tag list does not say; asking /api/show for each
// model would.
func LooksLikeEmbedding(name string, families ...string) bool {
	for _, f := range families {
		if slices.Contains(embeddingFamilies, strings.ToLower(f)) {
			return true
		}
	}
	n := strings.ToLower(name)
	if i := strings.LastIndex(n, "/"); i >= 0 {
		n = n[i+1:]
	}
	for _, p := range embeddingNames {
		if strings.Contains(n, p) {
			return true
		}
	}
	return false
}

// Models lists the models Ollama has locally, embedding models first,
// then by name. One attempt, bounded by the timeout.
func (o *Ollama) Models(ctx context.Context) ([]LocalModel, error) {
	actx, cancel := context.WithTimeout(ctx, o.timeout)
	defer cancel()
	list, err := o.client.List(actx)
	if err != nil {
		werr, _ := o.classify(ctx, "list models", err)
		return nil, werr
	}
	return localModels(list.Models), nil
}

// localModels converts and sorts Ollama's list.
func localModels(ms []api.ListModelResponse) []LocalModel {
	out := make([]LocalModel, 0, len(ms))
	for _, m := range ms {
		fams := append([]string{m.Details.Family}, m.Details.Families...)
		out = append(out, LocalModel{Name: m.Name, Size: m.Size, Family: m.Details.Family,
			ParameterSize: m.Details.ParameterSize, Embedding: LooksLikeEmbedding(m.Name, fams...)})
	}
	slices.SortStableFunc(out, func(a, b LocalModel) int {
		if a.Embedding != b.Embedding {
			if a.Embedding {
				return -1
			}
			return 1
		}
		return strings.Compare(a.Name, b.Name)
	})
	return out
}

// HasLocal reports whether models holds name, with or without ":latest",
// ignoring case, as HasModel matches.
func HasLocal(models []LocalModel, name string) bool {
	want := canonicalModel(name)
	for _, m := range models {
		if canonicalModel(m.Name) == want {
			return true
		}
	}
	return false
}

// OllamaState is what an Ollama server says about itself: whether it
// answers, its version and its local models.
type OllamaState struct {
	// Host is the URL asked.
	Host string
	// Reachable: /api/tags answered.
	Reachable bool
	// Version is the server's version ("" when it did not say).
	Version string
	// Models are the local models (see Ollama.Models).
	Models []LocalModel
	// Error says why Ollama is not reachable.
	Error string
}

// InspectOllama asks the Ollama at host (empty: $OLLAMA_HOST, else the
// default) for its models and version, each within timeout. It never
// fails: a bad host or an Ollama that does not answer is told in Error.
func InspectOllama(ctx context.Context, host string, timeout time.Duration) OllamaState {
	o, err := NewOllama(OllamaOptions{Host: host, Timeout: timeout, Retries: -1})
	if err != nil {
		return OllamaState{Host: host, Error: err.Error()}
	}
	st := OllamaState{Host: o.Host()}
	models, err := o.Models(ctx)
	if err != nil {
		st.Error = err.Error()
		return st
	}
	st.Reachable, st.Models = true, models
	if v, err := o.Version(ctx); err == nil {
		st.Version = v
	}
	return st
}
