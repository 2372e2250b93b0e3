// Package embedders is the embedders service: which embedding model runs
// and why, what the configured Ollama and OpenAI-compatible servers offer,
// pulling an Ollama model and switching the store and every component to
// another model (a re-embedding), both as jobs; and the similarity
// thresholds in effect for the model.
package embedders

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync/atomic"
	"time"

	"github.com/memtray/memtray/backend/calib"
	"github.com/memtray/memtray/backend/config"
	"github.com/memtray/memtray/backend/embed"
	"github.com/memtray/memtray/backend/jobs"
	"github.com/memtray/memtray/backend/memory"
	"github.com/memtray/memtray/backend/noise"
	"github.com/memtray/memtray/backend/store"
)

// Time limits of the service's checks, before any job starts.
const (
	// inspectTimeout bounds each question EmbedderInfo asks Ollama.
	inspectTimeout = 1500 * time.Millisecond
	// reachTimeout bounds the check that Ollama answers before a pull.
	reachTimeout = 3 * time.Second
	// checkTimeout bounds making and probing the embedder a re-embedding
	// switches to.
	checkTimeout = 15 * time.Second
)

// Options configures New. Embedder, Store, Jobs, Live, Choice and
// SetChoice are required; the other functions may be nil.
type Options struct {
	// Embedder is the embedder every component uses; a re-embedding
	// swaps its model.
	Embedder *embed.Swappable
	// Store is the store a re-embedding switches.
	Store *store.Store
	// Jobs runs pulls and re-embeddings.
	Jobs *jobs.Runner
	// Logger gets pulls and switches; nil discards.
	Logger *slog.Logger
	// Live is the embedder section of the live config.
	Live func() config.Embedder
	// Choice says which embedder is in use and why; SetChoice records a
	// new one, right after the switch of model.
	Choice    func() embed.Choice
	SetChoice func(embed.Choice)
	// Degraded reports that the model does not answer.
	Degraded func() bool
	// Scorer is the write pipeline's content scorer (nil when off), whose
	// prototypes a re-embedding embeds with the new model.
	Scorer func() *noise.Scorer
	// Calibrate calibrates the similarity thresholds to a model (nil when
	// it cannot be); Recalibrate applies that calibration to the running
	// components after the switch.
	Calibrate   func(ctx context.Context, emb memory.Embedder) *calib.Result
	Recalibrate func(r *calib.Result, model string)
	// Update changes the live config and the config file (package
	// settings' Update); a switch saves the new model with it.
	Update func(change func(next *config.Config) error, filePatch map[string]any) error
}

// Service is the embedders service; New makes one.
type Service struct {
	o          Options
	thresholds atomic.Pointer[[]calib.Value]
}

// New returns the service.
func New(o Options) (*Service, error) {
	if o.Embedder == nil || o.Store == nil || o.Jobs == nil || o.Live == nil || o.Choice == nil || o.SetChoice == nil {
		return nil, errors.New("embedders: an embedder, a store, a job runner, the live config and the choice are required")
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Degraded == nil {
		o.Degraded = func() bool { return false }
	}
	if o.Scorer == nil {
		o.Scorer = func() *noise.Scorer { return nil }
	}
	if o.Calibrate == nil {
		o.Calibrate = func(context.Context, memory.Embedder) *calib.Result { return nil }
	}
	if o.Recalibrate == nil {
		o.Recalibrate = func(*calib.Result, string) {}
	}
	if o.Update == nil {
		o.Update = func(func(*config.Config) error, map[string]any) error { return nil }
	}
	return &Service{o: o}, nil
}

// SetThresholds records the similarity thresholds in effect (the daemon's
// calibration at start and after a switch).
func (s *Service) SetThresholds(vals []calib.Value) { s.thresholds.Store(&vals) }

// Thresholds are the similarity thresholds in effect and where each came
// from (calibrated, config, default).
func (s *Service) Thresholds() []calib.Value {
	if p := s.thresholds.Load(); p != nil {
		return append([]calib.Value(nil), *p...)
	}
	return nil
}

// EmbedderInfo describes the embedder in use, the store's model, what the
// configured Ollama offers and what the OpenAI-compatible server (the
// configured one, or q's) answers.
func (s *Service) EmbedderInfo(ctx context.Context, q EmbedderQuery) (EmbedderInfo, error) {
	cfg := s.o.Live()
	cur := embed.Snapshot(s.o.Embedder)
	ch := s.o.Choice()
	si := s.o.Store.Info()
	out := EmbedderInfo{Model: cur.Model(), Provider: ch.Provider, Reason: ch.Reason, Dim: cur.Dim(),
		Degraded: s.o.Degraded(), StoreModel: si.Model, StoreDim: si.Dim, Memories: si.Count,
		Builtin: embed.BuiltinModel, ConfiguredProvider: cfg.Provider,
		ConfiguredModel: cmp.Or(cfg.OllamaModel, embed.DefaultOllamaModel)}
	st := embed.InspectOllama(ctx, cfg.OllamaHost, inspectTimeout)
	out.Ollama = OllamaInfo{Host: st.Host, Reachable: st.Reachable, Error: st.Error, Version: st.Version,
		Models: make([]OllamaModel, 0, len(st.Models)), HasConfigured: embed.HasLocal(st.Models, out.ConfiguredModel)}
	for _, m := range st.Models {
		out.Ollama.Models = append(out.Ollama.Models, OllamaModel{Name: m.Name, Size: m.Size, Family: m.Family,
			ParameterSize: m.ParameterSize, Embedding: m.Embedding})
	}
	out.OpenAI = openAIInfo(ctx, cfg, q)
	out.Thresholds = s.Thresholds()
	return out, nil
}

// openAIInfo asks the OpenAI-compatible server of cfg, with q's fields in
// place of cfg's, for its models and probes its model; without a model it
// asks nothing.
func openAIInfo(ctx context.Context, cfg config.Embedder, q EmbedderQuery) OpenAIInfo {
	cfg = withOpenAI(cfg, q.OpenAIModel, q.OpenAIURL, q.OpenAIKeyEnv, q.Dimensions)
	info := OpenAIInfo{URL: cmp.Or(cfg.OpenAIURL, embed.DefaultOpenAIURL), Model: cfg.OpenAIModel, KeyEnv: cfg.OpenAIKeyEnv,
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
func (s *Service) PullModel(ctx context.Context, req PullRequest) (jobs.Job, error) {
	cfg := s.o.Live()
	if j, ok := s.o.Jobs.Running(JobPull); ok {
		return j, jobs.Busy(j)
	}
	o, err := embed.NewOllama(embed.OllamaOptions{Host: cfg.OllamaHost, Model: cmp.Or(strings.TrimSpace(req.Model), cfg.OllamaModel),
		Timeout: time.Duration(cfg.Timeout)})
	if err != nil {
		return jobs.Job{}, &memory.FieldErrors{Message: "invalid pull", Fields: map[string]string{"model": err.Error()}}
	}
	rctx, cancel := context.WithTimeout(ctx, reachTimeout)
	_, err = o.Version(rctx)
	cancel()
	if err != nil {
		return jobs.Job{}, fmt.Errorf("pull %s: %w", o.ModelName(), err)
	}
	return s.o.Jobs.Start(JobPull, o.ModelName(), jobs.UnitBytes, func(ctx context.Context, j *jobs.Task) (string, error) {
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
		s.o.Logger.Info("ollama model pulled", "model", o.ModelName(), "host", o.Host())
		return fmt.Sprintf("%s is ready in Ollama at %s", o.ModelName(), o.Host()), nil
	})
}

// Reembed starts a job that re-embeds every memory with the model req
// names and switches to it (see runReembed). The model is made and probed
// first, so an Ollama that does not answer, or lacks the model, fails the
// request itself.
func (s *Service) Reembed(ctx context.Context, req ReembedRequest) (jobs.Job, error) {
	cfg := s.o.Live()
	sel := cfg
	switch req.Provider {
	case "builtin":
		if req.Model != "" {
			return jobs.Job{}, &memory.FieldErrors{Message: "invalid re-embedding",
				Fields: map[string]string{"model": "only the ollama provider takes a model"}}
		}
		sel.Provider = "builtin"
	case "ollama":
		sel.Provider, sel.OllamaModel = "ollama", cmp.Or(strings.TrimSpace(req.Model), cfg.OllamaModel, embed.DefaultOllamaModel)
	case "openai":
		sel = withOpenAI(sel, req.Model, req.OpenAIURL, req.OpenAIKeyEnv, req.Dimensions)
		sel.Provider = "openai"
		if fields := openAIFieldErrors(sel); fields != nil {
			return jobs.Job{}, &memory.FieldErrors{Message: "invalid re-embedding", Fields: fields}
		}
	default:
		return jobs.Job{}, &memory.FieldErrors{Message: "invalid re-embedding",
			Fields: map[string]string{"provider": fmt.Sprintf("must be builtin, ollama or openai, not %q", req.Provider)}}
	}
	if req.Provider != "openai" && (req.OpenAIURL != "" || req.OpenAIKeyEnv != "" || req.Dimensions != 0) {
		return jobs.Job{}, &memory.FieldErrors{Message: "invalid re-embedding",
			Fields: map[string]string{"provider": "openai_url, openai_key_env and dimensions go with the openai provider only"}}
	}
	if j, ok := s.o.Jobs.Running(JobReembed); ok {
		return j, jobs.Busy(j)
	}
	cctx, cancel := context.WithTimeout(ctx, checkTimeout)
	emb, choice, err := embed.Select(cctx, sel)
	cancel()
	switch {
	case errors.Is(err, embed.ErrModelNotFound):
		return jobs.Job{}, fmt.Errorf("%w: %w (pull it first)", memory.ErrNotFound, err)
	case errors.Is(err, embed.ErrModelNotServed):
		return jobs.Job{}, fmt.Errorf("%w: %w", memory.ErrNotFound, err)
	case err != nil:
		return jobs.Job{}, fmt.Errorf("switch to %s: %w", sel.Provider, err)
	}
	if cur := s.o.Store.Info().Model; emb.Model() == cur {
		return jobs.Job{}, fmt.Errorf("%w: the store already uses %s", memory.ErrInvalid, cur)
	}
	reason := fmt.Sprintf("switched to by a re-embedding at %s", time.Now().Format(time.DateTime))
	if detail, ok := strings.CutPrefix(choice.Reason, "embedder.provider is "+sel.Provider+"; "); ok {
		reason += "; " + detail // what the server answered
	}
	choice.Reason = reason
	return s.o.Jobs.Start(JobReembed, emb.Model(), jobs.UnitMemories, func(ctx context.Context, j *jobs.Task) (string, error) {
		return s.runReembed(ctx, j, emb, choice, sel)
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
func (s *Service) runReembed(ctx context.Context, j *jobs.Task, emb memory.Embedder, choice embed.Choice, sel config.Embedder) (string, error) {
	from, model := s.o.Embedder.Model(), emb.Model()
	var prep *noise.Prepared
	sc := s.o.Scorer()
	if sc != nil {
		j.Progress("embedding the content scorer's prototypes", 0, 0)
		p, err := sc.Prepare(ctx, emb)
		if err != nil {
			return "", err
		}
		prep = p
	}
	j.Progress("calibrating the similarity thresholds", 0, 0)
	cal := s.o.Calibrate(ctx, emb) // nil when the model cannot be calibrated
	j.Progress("embedding", 0, int64(s.o.Store.Count()))
	err := s.o.Store.ReembedWith(ctx, emb, store.ReembedOptions{
		Progress: func(done, total int) { j.Progress("embedding", int64(done), int64(total)) },
		Switched: func() {
			s.o.Embedder.Swap(emb)
			s.o.SetChoice(choice)
		},
	})
	if err != nil {
		return "", err
	}
	if prep != nil {
		sc.Install(prep)
	}
	s.o.Recalibrate(cal, model)
	n := s.o.Store.Count()
	s.o.Logger.Info("embedding model switched", "from", from, "to", model, "memories", n)
	result := fmt.Sprintf("re-embedded %d memories with %s (was %s)", n, model, from)
	if err := s.saveEmbedder(model, sel); err != nil {
		s.o.Logger.Warn("embedding model switched but not saved to the config file", "err", err)
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
func (s *Service) saveEmbedder(model string, sel config.Embedder) error {
	section := map[string]any{"provider": "builtin"}
	if name, ok := strings.CutPrefix(model, embed.OllamaPrefix); ok {
		section = map[string]any{"provider": "ollama", "ollama_model": name}
	}
	if name, _, ok := embed.ParseOpenAIModel(model); ok {
		section = map[string]any{"provider": "openai", "openai_model": name, "openai_url": sel.OpenAIURL,
			"openai_key_env": sel.OpenAIKeyEnv, "dimensions": sel.Dimensions}
	}
	return s.o.Update(func(next *config.Config) error {
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
