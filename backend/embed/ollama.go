package embed

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/ollama/ollama/api"

	"github.com/memtray/memtray/backend/config"
	"github.com/memtray/memtray/backend/memory"
)

// Defaults of OllamaOptions.
const (
	// DefaultOllamaHost is where Ollama listens unless OLLAMA_HOST or the
	// configuration says otherwise.
	DefaultOllamaHost = config.DefaultOllamaHost
	// DefaultOllamaModel is the embedding model asked for by default.
	DefaultOllamaModel = "nomic-embed-text"
	// DefaultOllamaTimeout bounds one request when OllamaOptions.Timeout is 0.
	DefaultOllamaTimeout = 30 * time.Second
	// DefaultOllamaRetries is how many times a transient failure is retried.
	DefaultOllamaRetries = 2
	// DefaultOllamaBatch is how many texts go in one /api/embed request.
	DefaultOllamaBatch = 32
	// DefaultOllamaBackoff is the first wait before a retry; it doubles.
	DefaultOllamaBackoff = 250 * time.Millisecond
	// maxBackoff caps the wait between two retries.
	maxBackoff = 4 * time.Second
	// dialTimeout bounds opening a connection to Ollama.
	dialTimeout = 5 * time.Second
)

// ErrModelNotFound says Ollama answers but does not have the model. It is
// not retried; pulling the model (Ollama.Pull, `memtray pull` or
// `ollama pull`) fixes it.
var ErrModelNotFound = errors.New("embedding model not installed in Ollama")

// OllamaPrefix starts the Model() name of every Ollama embedder.
const OllamaPrefix = "ollama:"

// OllamaOptions configures NewOllama. Zero values mean the defaults.
type OllamaOptions struct {
	// Host is Ollama's URL ("http://host:port", "host:port" or "host").
	// Empty means $OLLAMA_HOST, else DefaultOllamaHost.
	Host string
	// Model is the embedding model; empty means DefaultOllamaModel.
	Model string
	// Timeout bounds one HTTP request (one attempt); 0 means
	// DefaultOllamaTimeout.
	Timeout time.Duration
	// Retries is how many times a transient failure (connection refused or
	// reset, timeout, 5xx, 429) is retried with backoff; 0 means
	// DefaultOllamaRetries, a negative value means no retry.
	Retries int
	// Backoff is the first wait before a retry, doubled each time (with
	// jitter, capped at 4 s); 0 means DefaultOllamaBackoff.
	Backoff time.Duration
	// BatchSize is how many texts go in one request; 0 means
	// DefaultOllamaBatch.
	BatchSize int
	// HTTPClient replaces the HTTP client; nil means a client with a 5 s
	// dial timeout and no overall timeout (Timeout applies per request).
	HTTPClient *http.Client
}

// Ollama embeds texts with a model served by a local Ollama through
// /api/embed. It is safe for concurrent use. Its dimension is learned from
// the first successful call (see Probe); Dim returns 0 before that.
type Ollama struct {
	client *api.Client
	base   *url.URL
	model  string
	clientLimits
	dim atomic.Int64
}

// NewOllama checks the options and returns an Ollama embedder. It does not
// contact Ollama; call Probe or HasModel for that.
func NewOllama(opts OllamaOptions) (*Ollama, error) {
	host := opts.Host
	if host == "" {
		host = os.Getenv("OLLAMA_HOST")
	}
	base, err := config.ParseOllamaHost(host)
	if err != nil {
		return nil, err
	}
	model := strings.TrimSpace(opts.Model)
	if model == "" {
		model = DefaultOllamaModel
	}
	if err := checkModelName(model); err != nil {
		return nil, err
	}
	o := &Ollama{base: base, model: model, clientLimits: clientLimits{
		timeout: opts.Timeout, retries: opts.Retries, backoff: opts.Backoff, batchSize: opts.BatchSize}}
	if err := o.normalize("ollama", DefaultOllamaBatch); err != nil {
		return nil, err
	}
	o.client = api.NewClient(base, serverClient(opts.HTTPClient))
	return o, nil
}

// checkModelName rejects names Ollama could never serve.
func checkModelName(m string) error {
	if len(m) > 256 || !memory.ValidUTF8(m) || strings.ContainsAny(m, " \t\r\n\"'\\") {
		return fmt.Errorf("ollama model name %q: %w", m, memory.ErrInvalid)
	}
	return nil
}

// Model returns "ollama:<model>", without a ":latest" tag, so that
// "nomic-embed-text" and "nomic-embed-text:latest" name the same vectors.
func (o *Ollama) Model() string { return OllamaPrefix + canonicalModel(o.model) }

// ModelName returns the model name as sent to Ollama.
func (o *Ollama) ModelName() string { return o.model }

// Host returns Ollama's base URL.
func (o *Ollama) Host() string { return o.base.String() }

// Dim returns the vector length learned from the first successful call, 0
// before any.
func (o *Ollama) Dim() int { return int(o.dim.Load()) }

// BatchSize returns how many texts go in one request; Cached uses it to
// split large calls.
func (o *Ollama) BatchSize() int { return o.batchSize }

// canonicalModel lowercases a model name and drops a ":latest" tag.
func canonicalModel(m string) string {
	m = strings.ToLower(strings.TrimSpace(m))
	return strings.TrimSuffix(m, ":latest")
}

// Probe embeds a short text to check that Ollama answers with the model and
// to learn the dimension, which it returns.
func (o *Ollama) Probe(ctx context.Context) (int, error) {
	if _, err := o.Embed(ctx, []string{"memtray embedding probe"}); err != nil {
		return 0, err
	}
	return o.Dim(), nil
}

// Embed returns one L2-normalised vector per text, in order, sending at most
// BatchSize texts per request. Empty texts are an error (Ollama cannot embed
// them). Every request has its own timeout and transient failures are
// retried with backoff; ctx bounds the whole call.
//
// Models trained with task prefixes (see TaskPrefixes) get their document
// prefix in front of every text.
func (o *Ollama) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	return o.embed(ctx, texts, o.prefixes().Document)
}

// EmbedQuery embeds a search query, with the model's query prefix when it
// was trained with one.
func (o *Ollama) EmbedQuery(ctx context.Context, text string) ([]float32, error) {
	vecs, err := o.embed(ctx, []string{text}, o.prefixes().Query)
	if err != nil {
		return nil, err
	}
	return vecs[0], nil
}

// TaskPrefix is what a model expects in front of queries and documents.
type TaskPrefix struct {
	Query, Document string
}

// TaskPrefixes lists the embedding models, by name without tag, that were
// trained with task prefixes, as their model cards say.
var TaskPrefixes = map[string]TaskPrefix{
	"nomic-embed-text":       {Query: "search_query: ", Document: "search_document: "},
	"mxbai-embed-large":      {Query: "Represent this sentence for searching relevant passages: "},
	"snowflake-arctic-embed": {Query: "Represent this sentence for searching relevant passages: "},
}

func (o *Ollama) prefixes() TaskPrefix {
	name, _, _ := strings.Cut(o.model, ":")
	if i := strings.LastIndex(name, "/"); i >= 0 {
		name = name[i+1:]
	}
	return TaskPrefixes[strings.ToLower(name)]
}

func (o *Ollama) embed(ctx context.Context, texts []string, prefix string) ([][]float32, error) {
	for i, t := range texts {
		if strings.TrimSpace(t) == "" {
			return nil, fmt.Errorf("ollama embed: text %d is empty: %w", i, memory.ErrInvalid)
		}
	}
	out := make([][]float32, 0, len(texts))
	for start := 0; start < len(texts); start += o.batchSize {
		batch := texts[start:min(start+o.batchSize, len(texts))]
		if prefix != "" {
			withPrefix := make([]string, len(batch))
			for i, t := range batch {
				withPrefix[i] = prefix + t
			}
			batch = withPrefix
		}
		vecs, err := o.embedBatch(ctx, batch)
		if err != nil {
			return nil, err
		}
		out = append(out, vecs...)
	}
	return out, nil
}

// embedBatch sends one /api/embed request, retrying transient failures.
func (o *Ollama) embedBatch(ctx context.Context, batch []string) ([][]float32, error) {
	req := &api.EmbedRequest{Model: o.model, Input: batch}
	var resp *api.EmbedResponse
	err := o.retry(ctx, "embed", func(actx context.Context) error {
		var err error
		resp, err = o.client.Embed(actx, req)
		return err
	})
	if err != nil {
		return nil, err
	}
	vecs, err := checkVectors(resp.Embeddings, len(batch))
	if err != nil {
		return nil, fmt.Errorf("ollama embed with %q at %s: %w", o.model, o.Host(), err)
	}
	if err := o.learnDim(len(vecs[0])); err != nil {
		return nil, err
	}
	return vecs, nil
}

// learnDim records the first dimension seen and refuses a different one later.
func (o *Ollama) learnDim(d int) error {
	if o.dim.CompareAndSwap(0, int64(d)) {
		return nil
	}
	if had := o.dim.Load(); had != int64(d) {
		return fmt.Errorf("ollama embed with %q at %s: dimension changed from %d to %d (was the model replaced?): %w",
			o.model, o.Host(), had, d, memory.ErrModelMismatch)
	}
	return nil
}

// checkVectors validates an /api/embed answer for want texts and returns
// L2-normalised copies: the right count, one dimension, finite values, no
// zero vector.
func checkVectors(embs [][]float32, want int) ([][]float32, error) {
	if len(embs) != want {
		return nil, fmt.Errorf("got %d vectors for %d texts", len(embs), want)
	}
	out := make([][]float32, len(embs))
	dim := 0
	for i, v := range embs {
		if len(v) == 0 {
			return nil, fmt.Errorf("vector %d is empty", i)
		}
		if i == 0 {
			dim = len(v)
		} else if len(v) != dim {
			return nil, fmt.Errorf("vector %d has dimension %d, vector 0 has %d", i, len(v), dim)
		}
		var sum float64
		for j, x := range v {
			f := float64(x)
			if math.IsNaN(f) || math.IsInf(f, 0) {
				return nil, fmt.Errorf("vector %d has a non-finite value at %d", i, j)
			}
			sum += f * f
		}
		if sum == 0 || math.IsInf(sum, 0) {
			return nil, fmt.Errorf("vector %d has zero or unbounded length", i)
		}
		inv := 1 / math.Sqrt(sum)
		nv := make([]float32, len(v))
		for j, x := range v {
			nv[j] = float32(float64(x) * inv)
		}
		out[i] = nv
	}
	return out, nil
}

// HasModel reports whether Ollama lists the model in /api/tags, matching the
// name with and without a ":latest" tag. One attempt, bounded by Timeout.
func (o *Ollama) HasModel(ctx context.Context) (bool, error) {
	actx, cancel := context.WithTimeout(ctx, o.timeout)
	defer cancel()
	list, err := o.client.List(actx)
	if err != nil {
		var se api.StatusError
		if errors.As(err, &se) && se.StatusCode == http.StatusNotFound {
			return false, fmt.Errorf("no Ollama API at %s (404 on /api/tags): %w", o.Host(), memory.ErrUnavailable)
		}
		werr, _ := o.classify(ctx, "list models", err)
		return false, werr
	}
	want := canonicalModel(o.model)
	for _, m := range list.Models {
		if canonicalModel(m.Name) == want || canonicalModel(m.Model) == want {
			return true, nil
		}
	}
	return false, nil
}

// Version returns the Ollama server's version (one attempt, bounded by
// Timeout).
func (o *Ollama) Version(ctx context.Context) (string, error) {
	actx, cancel := context.WithTimeout(ctx, o.timeout)
	defer cancel()
	v, err := o.client.Version(actx)
	if err != nil {
		werr, _ := o.classify(ctx, "version", err)
		return "", werr
	}
	return v, nil
}

// PullProgress is one progress line of a model pull, as Ollama streams it:
// a status ("pulling manifest", "pulling <digest>", "verifying sha256
// digest", "writing manifest", "success") and, while downloading a layer,
// its digest and byte counts.
type PullProgress struct {
	Status    string `json:"status"`
	Digest    string `json:"digest,omitempty"`
	Total     int64  `json:"total,omitempty"`
	Completed int64  `json:"completed,omitempty"`
}

// Pull asks Ollama to download the model, calling progress (which may be
// nil) for every progress line. Only ctx bounds it, since a pull can take
// minutes. It fails if the stream ends without "success".
func (o *Ollama) Pull(ctx context.Context, progress func(PullProgress)) error {
	done := false
	err := o.client.Pull(ctx, &api.PullRequest{Model: o.model}, func(r api.ProgressResponse) error {
		if r.Status == "success" {
			done = true
		}
		if progress != nil {
			progress(PullProgress{Status: r.Status, Digest: r.Digest, Total: r.Total, Completed: r.Completed})
		}
		return nil
	})
	if err != nil {
		var se api.StatusError
		if errors.As(err, &se) || ctx.Err() != nil || isConnError(err) {
			werr, _ := o.classify(ctx, "pull "+o.model, err)
			return werr
		}
		// An error line inside the stream, e.g. "pull model manifest: file does not exist".
		return fmt.Errorf("ollama at %s could not pull %q: %w", o.Host(), o.model, err)
	}
	if !done {
		return fmt.Errorf("ollama at %s: pull of %q ended before success (connection lost?): %w",
			o.Host(), o.model, memory.ErrUnavailable)
	}
	return nil
}

// retry runs call with a per-attempt timeout, retrying transient failures
// with exponential backoff and jitter until the retries are spent or ctx
// ends.
func (o *Ollama) retry(ctx context.Context, what string, call func(context.Context) error) error {
	for attempt := 0; ; attempt++ {
		actx, cancel := context.WithTimeout(ctx, o.timeout)
		err := call(actx)
		cancel()
		if err == nil {
			return nil
		}
		werr, transient := o.classify(ctx, what, err)
		if !transient || attempt >= o.retries {
			if attempt > 0 {
				return fmt.Errorf("%w (after %d attempts)", werr, attempt+1)
			}
			return werr
		}
		wait := o.backoff << attempt
		if wait > maxBackoff || wait <= 0 {
			wait = maxBackoff
		}
		wait = wait/2 + rand.N(wait/2+1)
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("ollama %s at %s: %w (last error: %v)", what, o.Host(), ctx.Err(), werr)
		case <-t.C:
		}
	}
}

// classify wraps err with a clear message and says whether it is worth a
// retry. parent is the caller's context: its end is never retried.
func (o *Ollama) classify(parent context.Context, what string, err error) (error, bool) {
	host := o.Host()
	if perr := parent.Err(); perr != nil {
		return fmt.Errorf("ollama %s at %s: %w", what, host, perr), false
	}
	var se api.StatusError
	if errors.As(err, &se) {
		msg := se.ErrorMessage
		if msg == "" {
			msg = http.StatusText(se.StatusCode)
		}
		switch {
		case se.StatusCode == http.StatusNotFound:
			return fmt.Errorf("ollama at %s: %w: %q (%s); run `memtray pull` or `ollama pull %s`",
				host, ErrModelNotFound, o.model, msg, o.model), false
		case se.StatusCode == http.StatusTooManyRequests || se.StatusCode >= 500:
			return fmt.Errorf("ollama %s at %s: server error %d: %s: %w", what, host, se.StatusCode, msg, memory.ErrUnavailable), true
		default:
			return fmt.Errorf("ollama %s at %s rejected the request (%d): %s", what, host, se.StatusCode, msg), false
		}
	}
	var ae api.AuthorizationError
	if errors.As(err, &ae) {
		return fmt.Errorf("ollama %s at %s: not authorized (%d)", what, host, ae.StatusCode), false
	}
	if errors.Is(err, context.DeadlineExceeded) || isTimeout(err) {
		return fmt.Errorf("ollama %s at %s: no answer within %s: %w", what, host, o.timeout, memory.ErrUnavailable), true
	}
	if isConnError(err) {
		return fmt.Errorf("ollama %s at %s: %w: is Ollama running? start it with `ollama serve` or set embedder.provider to builtin (%v)",
			what, host, memory.ErrUnavailable, err), true
	}
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	if errors.As(err, &syn) || errors.As(err, &typ) || strings.HasPrefix(err.Error(), "unmarshal:") {
		return fmt.Errorf("ollama %s at %s: malformed response: %v", what, host, err), false
	}
	return fmt.Errorf("ollama %s at %s: %w", what, host, err), false
}

// isTimeout reports a network timeout.
func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// isConnError reports failures to reach or keep a connection to the server.
func isConnError(err error) bool {
	if errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) ||
		errors.Is(err, syscall.EPIPE) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
		return true
	}
	var oe *net.OpError
	if errors.As(err, &oe) {
		return true
	}
	var de *net.DNSError
	return errors.As(err, &de)
}
