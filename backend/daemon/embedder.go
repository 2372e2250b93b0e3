package daemon

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/memtray/memtray/backend/config"
	"github.com/memtray/memtray/backend/embed"
	"github.com/memtray/memtray/backend/httpapi"
	"github.com/memtray/memtray/backend/jobs"
	"github.com/memtray/memtray/backend/memory"
	"github.com/memtray/memtray/backend/noise"
	"github.com/memtray/memtray/backend/store"
)

// Time limits of the embedder routes' checks, before any job starts.
const (
	// inspectTimeout bounds each question GET /api/embedder asks Ollama.
	inspectTimeout = 1500 * time.Millisecond
	// reachTimeout bounds the check that Ollama answers before a pull.
	reachTimeout = 3 * time.Second
	// checkTimeout bounds making and probing the embedder a re-embedding
	// switches to.
	checkTimeout = 15 * time.Second
)

// setEmbedder makes e the embedder every component uses (at start).
func (d *Daemon) setEmbedder(e memory.Embedder, c embed.Choice) {
	d.emb = embed.NewSwappable(e)
	d.choice.Store(&c)
}

// EmbedderInfo describes the embedder in use, the store's model, what the
// configured Ollama offers and what the OpenAI-compatible server (the
// configured one, or q's) answers (see httpapi.Embedders).
func (d *Daemon) EmbedderInfo(ctx context.Context, q httpapi.EmbedderQuery) (httpapi.EmbedderInfo, error) {
	cfg := d.settings.Live().Embedder
	cur := embed.Snapshot(d.emb)
	ch := d.EmbedderChoice()
	si := d.store.Info()
	out := httpapi.EmbedderInfo{Model: cur.Model(), Provider: ch.Provider, Reason: ch.Reason, Dim: cur.Dim(),
		Degraded: d.embedderDegraded(), StoreModel: si.Model, StoreDim: si.Dim, Memories: si.Count,
		Builtin: embed.BuiltinModel, ConfiguredProvider: cfg.Provider,
		ConfiguredModel: cmp.Or(cfg.OllamaModel, embed.DefaultOllamaModel)}
	st := embed.InspectOllama(ctx, cfg.OllamaHost, inspectTimeout)
	out.Ollama = httpapi.OllamaInfo{Host: st.Host, Reachable: st.Reachable, Error: st.Error, Version: st.Version,
		Models: make([]httpapi.OllamaModel, 0, len(st.Models)), HasConfigured: embed.HasLocal(st.Models, out.ConfiguredModel)}
	for _, m := range st.Models {
		out.Ollama.Models = append(out.Ollama.Models, httpapi.OllamaModel{Name: m.Name, Size: m.Size, Family: m.Family,
			ParameterSize: m.ParameterSize, Embedding: m.Embedding})
	}
	out.OpenAI = d.openAIInfo(ctx, cfg, q)
	out.Thresholds = d.Thresholds()
	return out, nil
}

// openAIInfo asks the OpenAI-compatible server of cfg, with q's fields in
// place of cfg's, for its models and probes its model; without a model it
// asks nothing.
func (d *Daemon) openAIInfo(ctx context.Context, cfg config.Embedder, q httpapi.EmbedderQuery) httpapi.OpenAIInfo {
	cfg = withOpenAI(cfg, q.OpenAIModel, q.OpenAIURL, q.OpenAIKeyEnv, q.Dimensions)
	info := httpapi.OpenAIInfo{URL: cmp.Or(cfg.OpenAIURL, embed.DefaultOpenAIURL), Model: cfg.OpenAIModel, KeyEnv: cfg.OpenAIKeyEnv,
		Dimensions: cfg.Dimensions, Models: []string{}}
	if strings.TrimSpace(cfg.OpenAIModel) == "" {
		return info
	}
	st := embed.InspectOpenAI(ctx, cfg, inspectTimeout)
	info.Checked, info.URL, info.Reachable, info.Error, info.Dim = true, st.URL, st.Reachable, st.Error, st.Dim
	if st.Models != nil {
		info.Models = st.Models
	}
	return info
}

// withOpenAI returns cfg with the non-empty OpenAI-compatible fields given.
func withOpenAI(cfg config.Embedder, model, url, keyEnv string, dims int) config.Embedder {
	cfg.OpenAIModel = cmp.Or(strings.TrimSpace(model), cfg.OpenAIModel)
	cfg.OpenAIURL = cmp.Or(strings.TrimSpace(url), cfg.OpenAIURL)
	cfg.OpenAIKeyEnv = cmp.Or(strings.TrimSpace(keyEnv), cfg.OpenAIKeyEnv)
	if dims != 0 {
		cfg.Dimensions = dims
	}
	return cfg
}

// PullModel starts a job that pulls an Ollama model (the configured one
// when req names none), once Ollama has answered. Its progress counts the
// bytes of every layer seen so far.
func (d *Daemon) PullModel(ctx context.Context, req httpapi.PullRequest) (httpapi.Job, error) {
	cfg := d.settings.Live().Embedder
	if j, ok := d.jobs.Running(httpapi.JobPull); ok {
		return j, jobs.Busy(j)
	}
	o, err := embed.NewOllama(embed.OllamaOptions{Host: cfg.OllamaHost, Model: cmp.Or(strings.TrimSpace(req.Model), cfg.OllamaModel),
		Timeout: time.Duration(cfg.Timeout)})
	if err != nil {
		return httpapi.Job{}, &httpapi.FieldErrors{Message: "invalid pull", Fields: map[string]string{"model": err.Error()}}
	}
	rctx, cancel := context.WithTimeout(ctx, reachTimeout)
	_, err = o.Version(rctx)
	cancel()
	if err != nil {
		return httpapi.Job{}, fmt.Errorf("pull %s: %w", o.ModelName(), err)
	}
	return d.jobs.Start(httpapi.JobPull, o.ModelName(), httpapi.UnitBytes, func(ctx context.Context, j *jobs.Task) (string, error) {
		type layer struct{ done, total int64 }
		layers := map[string]layer{}
		var order []string
		err := o.Pull(ctx, func(p embed.PullProgress) {
			if p.Digest != "" && p.Total > 0 {
				if _, ok := layers[p.Digest]; !ok {
					order = append(order, p.Digest)
				}
				layers[p.Digest] = layer{done: min(p.Completed, p.Total), total: p.Total}
			}
			var done, total int64
			for _, dg := range order {
				done, total = done+layers[dg].done, total+layers[dg].total
			}
			j.Progress(p.Status, done, total)
		})
		if err != nil {
			return "", err
		}
		d.log.Info("ollama model pulled", "model", o.ModelName(), "host", o.Host())
		return fmt.Sprintf("%s is ready in Ollama at %s", o.ModelName(), o.Host()), nil
	})
}

// Reembed starts a job that re-embeds every memory with the model req
// names and switches the daemon to it (see runReembed). The model is made
// and probed first, so an Ollama that does not answer, or lacks the model,
// fails the request itself.
func (d *Daemon) Reembed(ctx context.Context, req httpapi.ReembedRequest) (httpapi.Job, error) {
	cfg := d.settings.Live().Embedder
	sel := cfg
	switch req.Provider {
	case "builtin":
		if req.Model != "" {
			return httpapi.Job{}, &httpapi.FieldErrors{Message: "invalid re-embedding",
				Fields: map[string]string{"model": "only the ollama provider takes a model"}}
		}
		sel.Provider = "builtin"
	case "ollama":
		sel.Provider, sel.OllamaModel = "ollama", cmp.Or(strings.TrimSpace(req.Model), cfg.OllamaModel, embed.DefaultOllamaModel)
	case "openai":
		sel = withOpenAI(sel, req.Model, req.OpenAIURL, req.OpenAIKeyEnv, req.Dimensions)
		sel.Provider = "openai"
		if fields := openAIFieldErrors(sel); fields != nil {
			return httpapi.Job{}, &httpapi.FieldErrors{Message: "invalid re-embedding", Fields: fields}
		}
	default:
		return httpapi.Job{}, &httpapi.FieldErrors{Message: "invalid re-embedding",
			Fields: map[string]string{"provider": fmt.Sprintf("must be builtin, ollama or openai, not %q", req.Provider)}}
	}
	if req.Provider != "openai" && (req.OpenAIURL != "" || req.OpenAIKeyEnv != "" || req.Dimensions != 0) {
		return httpapi.Job{}, &httpapi.FieldErrors{Message: "invalid re-embedding",
			Fields: map[string]string{"provider": "openai_url, openai_key_env and dimensions go with the openai provider only"}}
	}
	if j, ok := d.jobs.Running(httpapi.JobReembed); ok {
		return j, jobs.Busy(j)
	}
	cctx, cancel := context.WithTimeout(ctx, checkTimeout)
	emb, choice, err := embed.Select(cctx, sel)
	cancel()
	switch {
	case errors.Is(err, embed.ErrModelNotFound):
		return httpapi.Job{}, fmt.Errorf("%w: %w (pull it first)", memory.ErrNotFound, err)
	case errors.Is(err, embed.ErrModelNotServed):
		return httpapi.Job{}, fmt.Errorf("%w: %w", memory.ErrNotFound, err)
	case err != nil:
		return httpapi.Job{}, fmt.Errorf("switch to %s: %w", sel.Provider, err)
	}
	if cur := d.store.Info().Model; emb.Model() == cur {
		return httpapi.Job{}, fmt.Errorf("%w: the store already uses %s", memory.ErrInvalid, cur)
	}
	reason := fmt.Sprintf("switched to by a re-embedding at %s", time.Now().Format(time.DateTime))
	if detail, ok := strings.CutPrefix(choice.Reason, "embedder.provider is "+sel.Provider+"; "); ok {
		reason += "; " + detail // what the server answered
	}
	choice.Reason = reason
	return d.jobs.Start(httpapi.JobReembed, emb.Model(), httpapi.UnitMemories, func(ctx context.Context, j *jobs.Task) (string, error) {
		return d.runReembed(ctx, j, emb, choice, sel)
	})
}

// runReembed re-embeds every memory with emb while the daemon keeps
// serving, then switches: the store re-embeds without holding its write
// lock and finishes under it (store.ReembedWith); right after the store
// switched, still under that lock, every component's embedder switches
// too (embed.Swappable), so a memory embedded before the switch and
// written after it is refused by the store and embedded again by its
// writer. The content scorer's prototypes are embedded with the new model
// beforehand and installed right after; skill indexes follow the model by
// themselves. The choice is saved to the config file, so a restart keeps
// it (the store records its model anyway), with sel's server fields for an
// OpenAI-compatible model.
func (d *Daemon) runReembed(ctx context.Context, j *jobs.Task, emb memory.Embedder, choice embed.Choice, sel config.Embedder) (string, error) {
	from, model := d.emb.Model(), emb.Model()
	var prep *noise.Prepared
	sc := d.pipeline.Scorer()
	if sc != nil {
		j.Progress("embedding the content scorer's prototypes", 0, 0)
		p, err := sc.Prepare(ctx, emb)
		if err != nil {
			return "", err
		}
		prep = p
	}
	j.Progress("calibrating the similarity thresholds", 0, 0)
	cal := d.calibrationOrWarn(ctx, emb) // nil when the model cannot be calibrated
	j.Progress("embedding", 0, int64(d.store.Count()))
	err := d.store.ReembedWith(ctx, emb, store.ReembedOptions{
		Progress: func(done, total int) { j.Progress("embedding", int64(done), int64(total)) },
		Switched: func() {
			d.emb.Swap(emb)
			d.choice.Store(&choice)
		},
	})
	if err != nil {
		return "", err
	}
	if prep != nil {
		sc.Install(prep)
	}
	d.recalibrate(cal, model)
	n := d.store.Count()
	d.log.Info("embedding model switched", "from", from, "to", model, "memories", n)
	result := fmt.Sprintf("re-embedded %d memories with %s (was %s)", n, model, from)
	if err := d.saveEmbedder(model, sel); err != nil {
		d.log.Warn("embedding model switched but not saved to the config file", "err", err)
		result += "; not saved to the config file: " + err.Error()
	}
	return result, nil
}

// openAIFieldErrors checks the OpenAI-compatible fields of a switch, by
// the request's field names.
func openAIFieldErrors(sel config.Embedder) map[string]string {
	fields := map[string]string{}
	if strings.TrimSpace(sel.OpenAIModel) == "" {
		fields["model"] = "name the model (embedder.openai_model is empty)"
	}
	for _, fe := range config.CheckOpenAIEmbedder(sel) {
		name := strings.TrimPrefix(fe.Field, "embedder.")
		if name == "openai_model" {
			name = "model"
		}
		fields[name] = fe.Problem
	}
	if len(fields) == 0 {
		return nil
	}
	return fields
}

// saveEmbedder records model as the configured embedder: in the live
// config and, when the daemon has a config file, in it. An
// OpenAI-compatible model saves sel's server fields with it (the key's
// variable name, never the key).
func (d *Daemon) saveEmbedder(model string, sel config.Embedder) error {
	section := map[string]any{"provider": "builtin"}
	if name, ok := strings.CutPrefix(model, embed.OllamaPrefix); ok {
		section = map[string]any{"provider": "ollama", "ollama_model": name}
	}
	if name, _, ok := embed.ParseOpenAIModel(model); ok {
		section = map[string]any{"provider": "openai", "openai_model": name, "openai_url": sel.OpenAIURL,
			"openai_key_env": sel.OpenAIKeyEnv, "dimensions": sel.Dimensions}
	}
	return d.settings.Update(func(next *config.Config) error {
		next.Embedder.Provider = section["provider"].(string)
		if name, ok := section["ollama_model"].(string); ok {
			next.Embedder.OllamaModel = name
		}
		if name, ok := section["openai_model"].(string); ok {
			next.Embedder = withOpenAI(next.Embedder, name, sel.OpenAIURL, sel.OpenAIKeyEnv, 0)
			next.Embedder.Dimensions = sel.Dimensions
		}
		if err := next.Validate(); err != nil {
			return fmt.Errorf("config after the switch: %w", err)
		}
		return nil
	}, map[string]any{"embedder": section})
}
