package embed

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"time"

	"github.com/memtray/memtray/backend/config"
)

// maxListedModels bounds how many model names Models keeps.
const maxListedModels = 200

// Models lists the models the server offers (GET {url}/models, answered
// {"data":[{"id":...}]} by llama-server, LM Studio, vLLM, LocalAI and
// OpenAI), sorted, at most 200. One attempt, bounded by the timeout.
func (o *OpenAI) Models(ctx context.Context) ([]string, error) {
	actx, cancel := context.WithTimeout(ctx, o.timeout)
	defer cancel()
	body, err := o.do(actx, http.MethodGet, "/models", nil)
	if err != nil {
		werr, _ := o.classify(ctx, "list models", err)
		return nil, werr
	}
	var r struct {
		Data []struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	if err := json.Unmarshal(body, &r); err != nil {
		return nil, fmt.Errorf("openai list models at %s: answer is not a model list (%v): %s", o.URL(), err, snippet(body))
	}
	out := make([]string, 0, len(r.Data))
	for _, m := range r.Data {
		if m.ID != "" && len(out) < maxListedModels {
			out = append(out, oneLine(m.ID, 256))
		}
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

// OpenAIState is what an OpenAI-compatible server says when asked for the
// configured model: whether it embeds with it, and in how many dimensions.
type OpenAIState struct {
	// URL and Model are what was asked.
	URL   string
	Model string
	// Reachable: the server answered (its model list or the probe).
	Reachable bool
	// Models are the models it lists (empty when it has no list).
	Models []string
	// Dim is the probe's vector length; 0 when the probe failed.
	Dim int
	// Error says why the model does not embed.
	Error string
}

// InspectOpenAI asks the server cfg configures for its models and embeds
// a probe text with cfg.OpenAIModel, each within timeout. It never fails:
// a bad configuration, a server that does not answer or a model it lacks
// is told in Error.
func InspectOpenAI(ctx context.Context, cfg config.Embedder, timeout time.Duration) OpenAIState {
	st := OpenAIState{URL: cfg.OpenAIURL, Model: cfg.OpenAIModel}
	if st.URL == "" {
		st.URL = DefaultOpenAIURL
	}
	o, err := NewOpenAI(OpenAIOptions{URL: cfg.OpenAIURL, Model: cfg.OpenAIModel, KeyEnv: cfg.OpenAIKeyEnv,
		Dimensions: cfg.Dimensions, Timeout: timeout, Retries: -1})
	if err != nil {
		st.Error = err.Error()
		return st
	}
	st.URL = o.URL()
	models, lerr := o.Models(ctx)
	if lerr == nil {
		st.Reachable, st.Models = true, models
	}
	dim, err := o.Probe(ctx)
	if err != nil {
		st.Reachable = st.Reachable || !isUnreachable(err)
		st.Error = err.Error()
		return st
	}
	st.Reachable, st.Dim = true, dim
	return st
}
