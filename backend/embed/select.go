package embed

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/memtray/memtray/backend/config"
	"github.com/memtray/memtray/backend/memory"
)

// ReachTimeout bounds the "does Ollama answer?" check of provider "auto".
const ReachTimeout = time.Second

// Choice says which embedder Select picked and why, for logs and the UI.
type Choice struct {
	// Provider is "builtin", "ollama" or "openai".
	Provider string `json:"provider"`
	// Model is the embedder's Model().
	Model string `json:"model"`
	// Reason explains the pick in a sentence, e.g. "Ollama not reachable at
	// http://127.0.0.1:11434".
	Reason string `json:"reason"`
}

// Select builds the embedder cfg asks for and wraps it in a Cached of
// cfg.CacheSize entries when that is positive.
//
//   - "builtin": the built-in embedder.
//   - "ollama": Ollama with cfg.OllamaModel, checked with HasModel and Probe;
//     any failure is an error (ErrModelNotFound, memory.ErrUnavailable...).
//   - "openai": the OpenAI-compatible server at cfg.OpenAIURL with
//     cfg.OpenAIModel, probed; any failure is an error.
//   - "auto": Ollama when it answers within ReachTimeout, lists the model
//     and embeds a probe text; else, when cfg.OpenAIModel is set, the
//     OpenAI-compatible server when it answers within ReachTimeout and
//     embeds a probe text; else the built-in embedder, with the reasons.
//
// An existing store fixes its model: use ForModel to reopen it with the same
// embedder, and switch models only through an explicit reindex.
func Select(ctx context.Context, cfg config.Embedder) (memory.Embedder, Choice, error) {
	switch cfg.Provider {
	case "builtin":
		b := NewBuiltin()
		return wrap(b, cfg), Choice{Provider: "builtin", Model: b.Model(), Reason: "embedder.provider is builtin"}, nil
	case "ollama":
		o, err := newOllamaFor(cfg, cfg.OllamaModel)
		if err != nil {
			return nil, Choice{}, err
		}
		if err := checkOllama(ctx, o, o.timeout); err != nil {
			return nil, Choice{}, err
		}
		return wrap(o, cfg), Choice{Provider: "ollama", Model: o.Model(),
			Reason: fmt.Sprintf("embedder.provider is ollama; %s answered with %q (dimension %d)", o.Host(), o.ModelName(), o.Dim())}, nil
	case "openai":
		o, err := newOpenAIFor(cfg, cfg.OpenAIModel)
		if err != nil {
			return nil, Choice{}, err
		}
		if _, err := o.Probe(ctx); err != nil {
			return nil, Choice{}, err
		}
		return wrap(o, cfg), Choice{Provider: "openai", Model: o.Model(),
			Reason: fmt.Sprintf("embedder.provider is openai; %s answered with %q (dimension %d)", o.URL(), o.ModelName(), o.Dim())}, nil
	case "auto", "":
		b := NewBuiltin()
		fallback := func(reason string) (memory.Embedder, Choice, error) {
			if cfg.OpenAIModel == "" {
				return wrap(b, cfg), Choice{Provider: "builtin", Model: b.Model(), Reason: reason}, nil
			}
			o, oerr := autoOpenAI(ctx, cfg)
			if oerr == nil {
				return wrap(o, cfg), Choice{Provider: "openai", Model: o.Model(),
					Reason: fmt.Sprintf("%s; %s answered with %q (dimension %d)", reason, o.URL(), o.ModelName(), o.Dim())}, nil
			}
			if ctx.Err() != nil {
				return nil, Choice{}, fmt.Errorf("select embedder: %w", ctx.Err())
			}
			return wrap(b, cfg), Choice{Provider: "builtin", Model: b.Model(), Reason: reason + "; " + oerr.Error()}, nil
		}
		o, err := newOllamaFor(cfg, cfg.OllamaModel)
		if err != nil {
			return fallback(fmt.Sprintf("Ollama not usable: %v", err))
		}
		if err := checkOllama(ctx, o, ReachTimeout); err != nil {
			if ctx.Err() != nil {
				return nil, Choice{}, fmt.Errorf("select embedder: %w", ctx.Err())
			}
			switch {
			case errors.Is(err, ErrModelNotFound):
				return fallback(fmt.Sprintf("Ollama at %s does not have %q (run `memtray pull` or `ollama pull %s`)",
					o.Host(), o.ModelName(), o.ModelName()))
			case errors.Is(err, errNotReachable):
				return fallback(fmt.Sprintf("Ollama not reachable at %s", o.Host()))
			default:
				return fallback(fmt.Sprintf("Ollama at %s did not embed: %v", o.Host(), err))
			}
		}
		return wrap(o, cfg), Choice{Provider: "ollama", Model: o.Model(),
			Reason: fmt.Sprintf("Ollama answered at %s with %q (dimension %d)", o.Host(), o.ModelName(), o.Dim())}, nil
	default:
		return nil, Choice{}, fmt.Errorf("embedder.provider %q: must be auto, builtin, ollama or openai: %w", cfg.Provider, memory.ErrInvalid)
	}
}

// ForModel returns the embedder that produced vectors named model (a
// store's recorded Model()), wrapped in a cache like Select: "builtin-…"
// gives the built-in embedder, which must be the same version; "ollama:<m>"
// gives Ollama with model m at cfg's host, checked and probed, so Dim is
// known; "openai:<m>[#<d>]" gives the OpenAI-compatible server of cfg with
// model m (and dimensions d), probed. It never substitutes another model.
func ForModel(ctx context.Context, cfg config.Embedder, model string) (memory.Embedder, error) {
	switch {
	case model == BuiltinModel:
		return wrap(NewBuiltin(), cfg), nil
	case model == LexicalModel:
		// Stores made before the word vectors keep their lexical vectors
		// until `memtray reindex` moves them to the built-in model.
		return wrap(NewLexical(), cfg), nil
	case strings.HasPrefix(model, "builtin"):
		return nil, fmt.Errorf("store was embedded with %q, which this memtray does not have (it has %q); run `memtray reindex`: %w",
			model, BuiltinModel, memory.ErrModelMismatch)
	case strings.HasPrefix(model, OllamaPrefix):
		name := strings.TrimPrefix(model, OllamaPrefix)
		if name == "" {
			return nil, fmt.Errorf("embedding model %q names no Ollama model: %w", model, memory.ErrInvalid)
		}
		o, err := newOllamaFor(cfg, name)
		if err != nil {
			return nil, err
		}
		if err := checkOllama(ctx, o, o.timeout); err != nil {
			return nil, fmt.Errorf("store was embedded with %q: %w", model, err)
		}
		return wrap(o, cfg), nil
	case strings.HasPrefix(model, OpenAIPrefix):
		name, dims, ok := ParseOpenAIModel(model)
		if !ok {
			return nil, fmt.Errorf("embedding model %q names no model (openai:<model>[#<dimensions>]): %w", model, memory.ErrInvalid)
		}
		// The store's vectors have the dimensions its name says, whatever
		// embedder.dimensions says now.
		cfg.Dimensions = dims
		o, err := newOpenAIFor(cfg, name)
		if err != nil {
			return nil, fmt.Errorf("store was embedded with %q: %w", model, err)
		}
		if _, err := o.Probe(ctx); err != nil {
			return nil, fmt.Errorf("store was embedded with %q: %w", model, err)
		}
		return wrap(o, cfg), nil
	default:
		return nil, fmt.Errorf("unknown embedding model %q: %w", model, memory.ErrInvalid)
	}
}

// errNotReachable marks a failure to get any answer from Ollama.
var errNotReachable = errors.New("ollama not reachable")

// checkOllama asks /api/tags within reach, then probes the model with the
// embedder's own timeout. A failure to reach Ollama wraps errNotReachable and
// memory.ErrUnavailable.
func checkOllama(ctx context.Context, o *Ollama, reach time.Duration) error {
	rctx, cancel := context.WithTimeout(ctx, reach)
	has, err := o.HasModel(rctx)
	cancel()
	if err != nil {
		if !errors.Is(err, memory.ErrUnavailable) {
			err = fmt.Errorf("%w: %w", memory.ErrUnavailable, err)
		}
		return fmt.Errorf("%w: %w", errNotReachable, err)
	}
	if !has {
		return fmt.Errorf("ollama at %s: %w: %q; run `memtray pull` or `ollama pull %s`",
			o.Host(), ErrModelNotFound, o.ModelName(), o.ModelName())
	}
	if _, err := o.Probe(ctx); err != nil {
		return err
	}
	return nil
}

// newOllamaFor makes an Ollama embedder from the configuration.
func newOllamaFor(cfg config.Embedder, model string) (*Ollama, error) {
	return NewOllama(OllamaOptions{
		Host:      cfg.OllamaHost,
		Model:     model,
		Timeout:   time.Duration(cfg.Timeout),
		BatchSize: cfg.BatchSize,
	})
}

// autoOpenAI is auto's second choice: the configured OpenAI-compatible
// server, when it answers its model list within ReachTimeout (any answer,
// even a 404, will do) and then embeds a probe text.
func autoOpenAI(ctx context.Context, cfg config.Embedder) (*OpenAI, error) {
	o, err := newOpenAIFor(cfg, cfg.OpenAIModel)
	if err != nil {
		return nil, fmt.Errorf("OpenAI-compatible server not usable: %w", err)
	}
	rctx, cancel := context.WithTimeout(ctx, ReachTimeout)
	_, err = o.Models(rctx)
	cancel()
	if err != nil && isUnreachable(err) {
		return nil, fmt.Errorf("no OpenAI-compatible server answers at %s", o.URL())
	}
	if _, err := o.Probe(ctx); err != nil {
		return nil, fmt.Errorf("%s did not embed with %q: %w", o.URL(), o.ModelName(), err)
	}
	return o, nil
}

// newOpenAIFor makes an OpenAI-compatible embedder from the configuration.
func newOpenAIFor(cfg config.Embedder, model string) (*OpenAI, error) {
	return NewOpenAI(OpenAIOptions{
		URL:        cfg.OpenAIURL,
		Model:      model,
		KeyEnv:     cfg.OpenAIKeyEnv,
		Dimensions: cfg.Dimensions,
		Timeout:    time.Duration(cfg.Timeout),
		BatchSize:  cfg.BatchSize,
	})
}

// wrap puts the configured cache in front of e.
func wrap(e memory.Embedder, cfg config.Embedder) memory.Embedder {
	if cfg.CacheSize > 0 {
		return NewCached(e, cfg.CacheSize)
	}
	return e
}
