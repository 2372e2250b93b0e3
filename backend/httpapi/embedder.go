package httpapi

import (
	"context"
	"net/http"
)

// Embedders is the part of Backend that shows the embedder and changes
// it: which model runs and why, what Ollama offers, pulling an Ollama
// model and switching the store to another model. Pulls and switches are
// Jobs.
type Embedders interface {
	// EmbedderInfo describes the embedder in use, the store's model and
	// the Ollama server of the config.
	EmbedderInfo(ctx context.Context) (EmbedderInfo, error)
	// PullModel starts a job that pulls an Ollama model (ErrJobRunning
	// while a pull runs; memory.ErrUnavailable when Ollama does not answer).
	PullModel(ctx context.Context, req PullRequest) (Job, error)
	// Reembed starts a job that re-embeds every memory with another model
	// and then switches the store and the daemon to it, while the daemon
	// keeps serving (ErrJobRunning while one runs).
	Reembed(ctx context.Context, req ReembedRequest) (Job, error)
}

// EmbedderInfo is what GET /api/embedder answers.
type EmbedderInfo struct {
	// Model is the embedding model in use; Provider and Reason say why it
	// was chosen (embed.Choice).
	Model    string `json:"model"`
	Provider string `json:"provider"`
	Reason   string `json:"reason"`
	// Dim is its vector length (0 while an Ollama model has not answered).
	Dim int `json:"dim"`
	// Degraded: the model does not answer; search runs on text alone.
	Degraded bool `json:"degraded"`
	// StoreModel and StoreDim are what the store records; Memories counts
	// the memories a re-embedding would embed.
	StoreModel string `json:"store_model"`
	StoreDim   int    `json:"store_dim"`
	Memories   int    `json:"memories"`
	// Builtin names the built-in model (offline, no download).
	Builtin string `json:"builtin"`
	// ConfiguredProvider and ConfiguredModel are the config's
	// embedder.provider and embedder.ollama_model (the model pulled and
	// offered by default).
	ConfiguredProvider string `json:"configured_provider"`
	ConfiguredModel    string `json:"configured_model"`
	// Ollama is what the configured Ollama server says.
	Ollama OllamaInfo `json:"ollama"`
}

// OllamaInfo describes the Ollama server at the configured host.
type OllamaInfo struct {
	// Host is the URL asked (embedder.ollama_host, else $OLLAMA_HOST, else
	// the default).
	Host string `json:"host"`
	// Reachable: it answered; Error says why not.
	Reachable bool   `json:"reachable"`
	Error     string `json:"error,omitempty"`
	// Version is its version, when it said.
	Version string `json:"version,omitempty"`
	// Models are its local models, embedding models first.
	Models []OllamaModel `json:"models"`
	// HasConfigured: the configured model is among Models.
	HasConfigured bool `json:"has_configured"`
}

// OllamaModel is one of Ollama's local models.
type OllamaModel struct {
	Name          string `json:"name"`
	Size          int64  `json:"size"`
	Family        string `json:"family,omitempty"`
	ParameterSize string `json:"parameter_size,omitempty"`
	// Embedding: the model embeds text, as far as its family and name tell.
	Embedding bool `json:"embedding"`
}

// PullRequest is what POST /api/embedder/pull takes.
type PullRequest struct {
	// Model is the Ollama model to pull; empty is embedder.ollama_model.
	Model string `json:"model,omitempty"`
}

// ReembedRequest is what POST /api/embedder/reembed takes: the model to
// switch the store to.
type ReembedRequest struct {
	// Provider is "builtin" or "ollama".
	Provider string `json:"provider"`
	// Model is the Ollama model (provider ollama); empty is
	// embedder.ollama_model.
	Model string `json:"model,omitempty"`
}

// embedderRoutes registers the routes of Embedders and Jobs.
func (h *Handler) embedderRoutes() {
	h.mux.HandleFunc("GET /api/embedder", withoutBody(func(r *http.Request) (EmbedderInfo, error) {
		return h.b.EmbedderInfo(r.Context())
	}))
	h.mux.HandleFunc("POST /api/embedder/pull", withJSON(func(r *http.Request, req PullRequest) (Job, error) {
		return h.b.PullModel(r.Context(), req)
	}))
	h.mux.HandleFunc("POST /api/embedder/reembed", withJSON(func(r *http.Request, req ReembedRequest) (Job, error) {
		return h.b.Reembed(r.Context(), req)
	}))
	h.jobRoutes()
}

// EmbedderInfo runs GET /api/embedder.
func (c *Client) EmbedderInfo(ctx context.Context) (EmbedderInfo, error) {
	var out EmbedderInfo
	err := c.do(ctx, http.MethodGet, "/api/embedder", nil, &out)
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
