package embed

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/memtray/memtray/backend/config"
	"github.com/memtray/memtray/backend/memory"
)

// OpenAIPrefix starts the Model() name of every embedder speaking the
// OpenAI embeddings protocol: "openai:<model>".
const OpenAIPrefix = "openai:"

// Defaults and bounds of OpenAIOptions.
const (
	// DefaultOpenAIURL is llama-server's default address.
	DefaultOpenAIURL = config.DefaultOpenAIURL
	// DefaultOpenAIBatch is how many texts go in one request.
	DefaultOpenAIBatch = 32
	// maxRetryAfter caps how long a server's Retry-After makes memtray wait.
	maxRetryAfter = 60 * time.Second
	// maxOpenAIBody bounds an answer's size.
	maxOpenAIBody = 256 << 20
	// maxErrorBody bounds how much of an error answer is read.
	maxErrorBody = 64 << 10
)

// ErrModelNotServed says an OpenAI-compatible server answers but does not
// serve the model asked for. It is not retried.
var ErrModelNotServed = errors.New("embedding model not served")

// OpenAIOptions configures NewOpenAI. Zero values mean the defaults.
type OpenAIOptions struct {
	// URL is the server's base URL, e.g. "http://127.0.0.1:8080/v1"
	// (config.ParseOpenAIURL); empty means DefaultOpenAIURL.
	URL string
	// Model is the model name sent with every request (required).
	Model string
	// KeyEnv names the environment variable holding the API key; empty
	// sends no key. A named variable that is unset or empty is an error.
	KeyEnv string
	// Dimensions asks for vectors of that length; 0 takes the model's own.
	Dimensions int
	// Timeout, Retries, Backoff and BatchSize as in OllamaOptions.
	Timeout   time.Duration
	Retries   int
	Backoff   time.Duration
	BatchSize int
	// HTTPClient replaces the HTTP client; nil means one with a 5 s dial
	// timeout (Timeout bounds each request).
	HTTPClient *http.Client
}

// OpenAI embeds texts with a server speaking the OpenAI embeddings
// protocol (POST {url}/embeddings): llama.cpp's llama-server, LM Studio,
// vLLM, LocalAI, Ollama's /v1 or a hosted API. It is safe for concurrent
// use. Its dimension is learned from the first successful call (see
// Probe); Dim returns 0 before that.
type OpenAI struct {
	hc         *http.Client
	base       *url.URL
	model      string
	keyEnv     string
	key        string
	dimensions int
	clientLimits
	dim atomic.Int64
	// sleep waits d or until ctx ends; tests record the waits instead.
	sleep func(ctx context.Context, d time.Duration) error
}

// NewOpenAI checks the options, reads the key from the environment and
// returns the embedder. It does not contact the server; call Probe.
func NewOpenAI(opts OpenAIOptions) (*OpenAI, error) {
	ecfg := config.Embedder{OpenAIURL: opts.URL, OpenAIModel: opts.Model, OpenAIKeyEnv: opts.KeyEnv, Dimensions: opts.Dimensions}
	if errs := config.CheckOpenAIEmbedder(ecfg); len(errs) > 0 {
		return nil, fmt.Errorf("openai embedder: %w: %w", errs, memory.ErrInvalid)
	}
	if strings.TrimSpace(opts.Model) == "" {
		return nil, fmt.Errorf("openai embedder: no model (set embedder.openai_model): %w", memory.ErrInvalid)
	}
	base, err := config.ParseOpenAIURL(opts.URL)
	if err != nil {
		return nil, err
	}
	o := &OpenAI{base: base, model: opts.Model, keyEnv: opts.KeyEnv, dimensions: opts.Dimensions,
		clientLimits: clientLimits{timeout: opts.Timeout, retries: opts.Retries, backoff: opts.Backoff, batchSize: opts.BatchSize}, sleep: sleepCtx}
	if o.keyEnv != "" {
		o.key = strings.TrimSpace(os.Getenv(o.keyEnv))
		if o.key == "" {
			return nil, fmt.Errorf("openai embedder: $%s (embedder.openai_key_env) is not set or empty: %w", o.keyEnv, memory.ErrInvalid)
		}
		if strings.ContainsAny(o.key, "\r\n") {
			return nil, fmt.Errorf("openai embedder: $%s holds a line break: %w", o.keyEnv, memory.ErrInvalid)
		}
	}
	if err := o.normalize("openai embedder", DefaultOpenAIBatch); err != nil {
		return nil, err
	}
	o.hc = serverClient(opts.HTTPClient)
	return o, nil
}

// Model returns "openai:<model>" as configured (servers' model names are
// case-sensitive), with "#<dimensions>" when it asks for shortened
// vectors: those are other vectors than the model's own.
func (o *OpenAI) Model() string {
	if o.dimensions > 0 {
		return OpenAIPrefix + o.model + "#" + strconv.Itoa(o.dimensions)
	}
	return OpenAIPrefix + o.model
}

// ParseOpenAIModel splits a Model() name of an OpenAI-compatible embedder,
// "openai:<model>[#<dimensions>]", into the model and the dimensions (0:
// the model's own). ok is false for other names or bad dimensions.
func ParseOpenAIModel(model string) (name string, dims int, ok bool) {
	name, ok = strings.CutPrefix(model, OpenAIPrefix)
	if !ok {
		return "", 0, false
	}
	if i := strings.LastIndexByte(name, '#'); i >= 0 {
		d, err := strconv.Atoi(name[i+1:])
		if err != nil || d < 1 || d > config.MaxDimensions || strconv.Itoa(d) != name[i+1:] {
			return "", 0, false
		}
		name, dims = name[:i], d
	}
	if name == "" {
		return "", 0, false
	}
	return name, dims, true
}

// ModelName returns the model name as sent to the server.
func (o *OpenAI) ModelName() string { return o.model }

// URL returns the server's base URL.
func (o *OpenAI) URL() string { return o.base.String() }

// Dim returns the vector length learned from the first successful call, 0
// before any.
func (o *OpenAI) Dim() int { return int(o.dim.Load()) }

// BatchSize returns how many texts go in one request; Cached uses it to
// split large calls.
func (o *OpenAI) BatchSize() int { return o.batchSize }

// Probe embeds a short text to check that the server answers with the
// model and to learn the dimension, which it returns.
func (o *OpenAI) Probe(ctx context.Context) (int, error) {
	if _, err := o.Embed(ctx, []string{"memtray embedding probe"}); err != nil {
		return 0, err
	}
	return o.Dim(), nil
}

// Embed returns one L2-normalised vector per text, in order, sending at
// most BatchSize texts per request. Empty texts are an error. Every
// request has its own timeout; transient failures (connection refused,
// timeouts, 429, 5xx) are retried with backoff, waiting what a 429 or
// 503's Retry-After asks (at most a minute); ctx bounds the whole call.
func (o *OpenAI) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	for i, t := range texts {
		if strings.TrimSpace(t) == "" {
			return nil, fmt.Errorf("openai embed: text %d is empty: %w", i, memory.ErrInvalid)
		}
	}
	out := make([][]float32, 0, len(texts))
	for start := 0; start < len(texts); start += o.batchSize {
		vecs, err := o.embedBatch(ctx, texts[start:min(start+o.batchSize, len(texts))])
		if err != nil {
			return nil, err
		}
		out = append(out, vecs...)
	}
	return out, nil
}

// openAIRequest is the body of POST /embeddings.
type openAIRequest struct {
	Model      string   `json:"model"`
	Input      []string `json:"input"`
	Dimensions int      `json:"dimensions,omitempty"`
}

// embedBatch sends one request, retrying transient failures, and checks
// the answer.
func (o *OpenAI) embedBatch(ctx context.Context, batch []string) ([][]float32, error) {
	body, err := json.Marshal(openAIRequest{Model: o.model, Input: batch, Dimensions: o.dimensions})
	if err != nil {
		return nil, fmt.Errorf("openai embed: encode request: %w", err)
	}
	var raw []byte
	err = o.retry(ctx, "embed", func(actx context.Context) error {
		var err error
		raw, err = o.do(actx, http.MethodPost, "/embeddings", body)
		return err
	})
	if err != nil {
		return nil, err
	}
	vecs, err := ParseEmbeddings(raw, len(batch), o.dimensions)
	if err != nil {
		return nil, fmt.Errorf("openai embed with %q at %s: %w", o.model, o.URL(), err)
	}
	if err := o.learnDim(len(vecs[0])); err != nil {
		return nil, err
	}
	return vecs, nil
}

// learnDim records the first dimension seen and refuses a different one later.
func (o *OpenAI) learnDim(d int) error {
	if o.dim.CompareAndSwap(0, int64(d)) {
		return nil
	}
	if had := o.dim.Load(); had != int64(d) {
		return fmt.Errorf("openai embed with %q at %s: dimension changed from %d to %d (was the model replaced?): %w",
			o.model, o.URL(), had, d, memory.ErrModelMismatch)
	}
	return nil
}

// statusError is a non-2xx answer: its status, the server's message and
// how long its Retry-After asks to wait.
type statusError struct {
	status     int
	message    string
	retryAfter time.Duration
}

func (e *statusError) Error() string {
	return fmt.Sprintf("status %d: %s", e.status, e.message)
}

// do sends one request (a JSON body, or none when body is nil) to
// {url}{path} within ctx and returns a 2xx answer's body; other answers
// are a *statusError with the server's message and Retry-After wait.
func (o *OpenAI) do(ctx context.Context, method, path string, body []byte) ([]byte, error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, o.URL()+path, rd)
	if err != nil {
		return nil, fmt.Errorf("build request: %w", err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", "application/json")
	if o.key != "" {
		req.Header.Set("Authorization", "Bearer "+o.key)
	}
	resp, err := o.hc.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		data, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
		return nil, &statusError{status: resp.StatusCode, message: ErrorMessage(data, resp.StatusCode),
			retryAfter: parseRetryAfter(resp.Header.Get("Retry-After"), time.Now())}
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxOpenAIBody+1))
	if err != nil {
		return nil, err
	}
	if len(data) > maxOpenAIBody {
		return nil, fmt.Errorf("answer is larger than %d bytes", maxOpenAIBody)
	}
	return data, nil
}

// parseRetryAfter reads a Retry-After header: seconds or an HTTP date.
// Anything else, or a time past, is 0.
func parseRetryAfter(v string, now time.Time) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	if n, err := strconv.ParseFloat(v, 64); err == nil {
		if n <= 0 || n != n {
			return 0
		}
		if n > maxRetryAfter.Seconds() {
			return maxRetryAfter
		}
		return time.Duration(n * float64(time.Second))
	}
	if t, err := http.ParseTime(v); err == nil {
		return min(max(t.Sub(now), 0), maxRetryAfter)
	}
	return 0
}

// retry runs call with a per-attempt timeout, retrying transient failures
// until the retries are spent or ctx ends. It waits what the server's
// Retry-After asked, else an exponential backoff with jitter.
func (o *OpenAI) retry(ctx context.Context, what string, call func(context.Context) error) error {
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
		var wait time.Duration
		var se *statusError
		if errors.As(err, &se) && se.retryAfter > 0 {
			wait = se.retryAfter
		} else {
			wait = o.backoff << attempt
			if wait > maxBackoff || wait <= 0 {
				wait = maxBackoff
			}
			wait = wait/2 + rand.N(wait/2+1)
		}
		if err := o.sleep(ctx, wait); err != nil {
			return fmt.Errorf("openai %s at %s: %w (last error: %v)", what, o.URL(), err, werr)
		}
	}
}

// sleepCtx waits d or until ctx ends.
func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// classify wraps err with a clear message and says whether it is worth a
// retry. parent is the caller's context: its end is never retried.
func (o *OpenAI) classify(parent context.Context, what string, err error) (error, bool) {
	at := o.URL()
	if perr := parent.Err(); perr != nil {
		return fmt.Errorf("openai %s at %s: %w", what, at, perr), false
	}
	var se *statusError
	if errors.As(err, &se) {
		switch {
		case se.status == http.StatusUnauthorized || se.status == http.StatusForbidden:
			hint := "set embedder.openai_key_env to the variable holding the API key"
			if o.keyEnv != "" {
				hint = fmt.Sprintf("check the key in $%s", o.keyEnv)
			}
			return fmt.Errorf("openai %s at %s: not authorized (%d): %s; %s", what, at, se.status, se.message, hint), false
		case se.status == http.StatusNotFound && looksLikeModelError(se.message):
			return fmt.Errorf("openai server at %s: %w: %q (%s)", at, ErrModelNotServed, o.model, se.message), false
		case se.status == http.StatusNotFound:
			return fmt.Errorf("openai %s at %s: no such route (404: %s); the URL usually ends in /v1: %w",
				what, at, se.message, memory.ErrUnavailable), false
		case se.status == http.StatusTooManyRequests || se.status >= 500:
			return fmt.Errorf("openai %s at %s: server error %d: %s: %w", what, at, se.status, se.message, memory.ErrUnavailable), true
		case looksLikeModelError(se.message) && !strings.Contains(strings.ToLower(se.message), "dimension"):
			return fmt.Errorf("openai server at %s: %w: %q (%d: %s)", at, ErrModelNotServed, o.model, se.status, se.message), false
		default:
			return fmt.Errorf("openai %s at %s rejected the request (%d): %s", what, at, se.status, se.message), false
		}
	}
	if errors.Is(err, context.DeadlineExceeded) || isTimeout(err) {
		return unreachableError{fmt.Errorf("openai %s at %s: no answer within %s: %w", what, at, o.timeout, memory.ErrUnavailable)}, true
	}
	if isConnError(err) {
		return unreachableError{fmt.Errorf("openai %s at %s: %w: is the server running? (%v)", what, at, memory.ErrUnavailable, err)}, true
	}
	return fmt.Errorf("openai %s at %s: %w", what, at, err), false
}

// unreachableError marks a failure to get any answer from the server
// (connection refused or reset, timeout) without changing its message.
type unreachableError struct{ error }

func (e unreachableError) Unwrap() error { return e.error }

// isUnreachable reports that err is a failure to get any answer.
func isUnreachable(err error) bool {
	var ue unreachableError
	return errors.As(err, &ue)
}

// looksLikeModelError reports a server message about the model: OpenAI's
// "The model `x` does not exist", vLLM's "The model `x` does not exist.",
// LM Studio's "Model not found", LocalAI's "could not load model".
func looksLikeModelError(msg string) bool {
	m := strings.ToLower(msg)
	return strings.Contains(m, "model") && (strings.Contains(m, "not found") || strings.Contains(m, "does not exist") ||
		strings.Contains(m, "not exist") || strings.Contains(m, "no such") || strings.Contains(m, "could not load") ||
		strings.Contains(m, "unknown") || strings.Contains(m, "not loaded"))
}
