package embedders

import "github.com/memtray/memtray/backend/calib"

// Job kinds of the service's jobs (package jobs).
const (
	// JobPull pulls an Ollama model (PullModel).
	JobPull = "pull"
	// JobReembed switches the store to another embedding model (Reembed).
	JobReembed = "reembed"
)

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
	// OpenAI is what the OpenAI-compatible server says (the configured
	// one, or the one the query asked about).
	OpenAI OpenAIInfo `json:"openai"`
	// Thresholds are the similarity thresholds in effect for Model and
	// where each came from (see docs/embedders.md).
	Thresholds []calib.Value `json:"thresholds"`
}

// EmbedderQuery are GET /api/embedder's optional query parameters: an
// OpenAI-compatible server to test instead of the configured one
// (openai_url, openai_model, openai_key_env, dimensions). Empty fields
// take the configured values.
type EmbedderQuery struct {
	OpenAIURL    string `json:"openai_url,omitempty"`
	OpenAIModel  string `json:"openai_model,omitempty"`
	OpenAIKeyEnv string `json:"openai_key_env,omitempty"`
	Dimensions   int    `json:"dimensions,omitempty"`
}

// Empty reports whether q asks about nothing beyond the configuration.
func (q EmbedderQuery) Empty() bool { return q == EmbedderQuery{} }

// OpenAIInfo describes an OpenAI-compatible embeddings server asked for
// its models and probed with a text.
type OpenAIInfo struct {
	// URL, Model, KeyEnv and Dimensions are what was asked (the config's
	// embedder.openai_* or the query's).
	URL        string `json:"url"`
	Model      string `json:"model"`
	KeyEnv     string `json:"key_env,omitempty"`
	Dimensions int    `json:"dimensions,omitempty"`
	// Checked: a model was named and the server was asked; without one
	// (embedder.openai_model empty) nothing was asked.
	Checked bool `json:"checked"`
	// Reachable: the server answered; Error says why the model does not
	// embed.
	Reachable bool   `json:"reachable"`
	Error     string `json:"error,omitempty"`
	// Models are the models it lists (GET {url}/models).
	Models []string `json:"models"`
	// Dim is the probe's vector length (0 when it failed).
	Dim int `json:"dim"`
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
	// Provider is "builtin", "ollama" or "openai".
	Provider string `json:"provider"`
	// Model is the Ollama model (provider ollama; empty is
	// embedder.ollama_model) or the OpenAI-compatible server's (provider
	// openai; empty is embedder.openai_model).
	Model string `json:"model,omitempty"`
	// OpenAIURL, OpenAIKeyEnv and Dimensions (provider openai) replace the
	// config's embedder.openai_url, openai_key_env and dimensions; the
	// switch saves them to the config file.
	OpenAIURL    string `json:"openai_url,omitempty"`
	OpenAIKeyEnv string `json:"openai_key_env,omitempty"`
	Dimensions   int    `json:"dimensions,omitempty"`
}
