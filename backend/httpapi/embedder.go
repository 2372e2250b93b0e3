package httpapi

import (
	"context"
	"net/http"
	"net/url"
	"strconv"

	"github.com/memtray/memtray/backend/embedders"
)

// Embedders is the part of Services that shows the embedder and changes
// it: which model runs and why, what Ollama offers, pulling an Ollama
// model and switching the store to another model. Pulls and switches are
// Jobs.
type Embedders interface {
	// EmbedderInfo describes the embedder in use, the store's model, the
	// Ollama server of the config and the OpenAI-compatible server of the
	// config or, when q names one, of q (the "test" of Settings).
	EmbedderInfo(ctx context.Context, q EmbedderQuery) (EmbedderInfo, error)
	// PullModel starts a job that pulls an Ollama model (ErrJobRunning
	// while a pull runs; memory.ErrUnavailable when Ollama does not answer).
	PullModel(ctx context.Context, req PullRequest) (Job, error)
	// Reembed starts a job that re-embeds every memory with another model
	// and then switches the store and the daemon to it, while the daemon
	// keeps serving (ErrJobRunning while one runs).
	Reembed(ctx context.Context, req ReembedRequest) (Job, error)
}

// The embedder's types are package embedders'.
type (
	// EmbedderInfo is what GET /api/embedder answers.
	EmbedderInfo = embedders.EmbedderInfo
	// EmbedderQuery are GET /api/embedder's optional query parameters.
	EmbedderQuery = embedders.EmbedderQuery
	// OpenAIInfo describes an OpenAI-compatible embeddings server asked
	// for its models and probed with a text.
	OpenAIInfo = embedders.OpenAIInfo
	// OllamaInfo describes the Ollama server at the configured host.
	OllamaInfo = embedders.OllamaInfo
	// OllamaModel is one of Ollama's local models.
	OllamaModel = embedders.OllamaModel
	// PullRequest is what POST /api/embedder/pull takes.
	PullRequest = embedders.PullRequest
	// ReembedRequest is what POST /api/embedder/reembed takes.
	ReembedRequest = embedders.ReembedRequest
)

// embedderRoutes registers the routes of Embedders and Jobs.
func (h *Handler) embedderRoutes() {
	h.mux.HandleFunc("GET /api/embedder", withoutBody(func(r *http.Request) (EmbedderInfo, error) {
		q, err := parseEmbedderQuery(r.URL.Query())
		if err != nil {
			return EmbedderInfo{}, err
		}
		return h.s.Embedders.EmbedderInfo(r.Context(), q)
	}))
	h.mux.HandleFunc("POST /api/embedder/pull", withJSON(func(r *http.Request, req PullRequest) (Job, error) {
		return h.s.Embedders.PullModel(r.Context(), req)
	}))
	h.mux.HandleFunc("POST /api/embedder/reembed", withJSON(func(r *http.Request, req ReembedRequest) (Job, error) {
		return h.s.Embedders.Reembed(r.Context(), req)
	}))
	h.jobRoutes()
}

// parseEmbedderQuery reads GET /api/embedder's query parameters.
func parseEmbedderQuery(v url.Values) (EmbedderQuery, error) {
	q := EmbedderQuery{OpenAIURL: v.Get("openai_url"), OpenAIModel: v.Get("openai_model"), OpenAIKeyEnv: v.Get("openai_key_env")}
	if d := v.Get("dimensions"); d != "" {
		n, err := strconv.Atoi(d)
		if err != nil {
			return q, &FieldErrors{Message: "invalid embedder query", Fields: map[string]string{"dimensions": "must be a whole number"}}
		}
		q.Dimensions = n
	}
	return q, nil
}

// EmbedderInfo runs GET /api/embedder, asking about the OpenAI-compatible
// server q names (the Settings "test") unless q is empty.
func (c *Client) EmbedderInfo(ctx context.Context, q EmbedderQuery) (EmbedderInfo, error) {
	v := url.Values{}
	for k, s := range map[string]string{"openai_url": q.OpenAIURL, "openai_model": q.OpenAIModel, "openai_key_env": q.OpenAIKeyEnv} {
		if s != "" {
			v.Set(k, s)
		}
	}
	if q.Dimensions != 0 {
		v.Set("dimensions", strconv.Itoa(q.Dimensions))
	}
	path := "/api/embedder"
	if len(v) > 0 {
		path += "?" + v.Encode()
	}
	var out EmbedderInfo
	err := c.do(ctx, http.MethodGet, path, nil, &out)
	return out, err
}

// PullModel runs POST /api/embedder/pull.
func (c *Client) PullModel(ctx context.Context, req PullRequest) (Job, error) {
	var out Job
	err := c.do(ctx, http.MethodPost, "/api/embedder/pull", req, &out)
	return out, err
}

// Reembed runs POST /api/embedder/reembed.
func (c *Client) Reembed(ctx context.Context, req ReembedRequest) (Job, error) {
	var out Job
	err := c.do(ctx, http.MethodPost, "/api/embedder/reembed", req, &out)
	return out, err
}
