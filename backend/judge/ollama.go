package judge

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync/atomic"
	"time"

	"github.com/ollama/ollama/api"

	"github.com/memtray/memtray/backend/config"
	"github.com/memtray/memtray/backend/memory"
)

// DefaultOllamaHost is where Ollama listens unless $OLLAMA_HOST or the
// configuration says otherwise.
const DefaultOllamaHost = config.DefaultOllamaHost

// OllamaOptions configures NewOllama.
type OllamaOptions struct {
	// Host is Ollama's URL ("http://host:port", "host:port" or "host");
	// empty means $OLLAMA_HOST, else DefaultOllamaHost.
	Host string
	// Model is the chat model, e.g. "llama3.2"; required.
	Model string
	// Timeout bounds one call; 0 means DefaultTimeout.
	Timeout time.Duration
	// MaxTokens bounds the answer (Ollama's num_predict); 0 means
	// DefaultMaxTokens.
	MaxTokens int
	// HTTPClient replaces the HTTP client; nil means one with a 5 s dial
	// timeout. Its transport is wrapped to bound the response size.
	HTTPClient *http.Client
}

// maxOllamaResponseBytes bounds an Ollama response; below the Ollama
// client's 512 kB line buffer, so that an over-long line is reported as too
// large rather than cut quietly.
const maxOllamaResponseBytes = 256 << 10

// Ollama judges exchanges with a chat model served by Ollama's /api/chat.
// It is safe for concurrent use.
type Ollama struct {
	client    *api.Client
	base      *url.URL
	model     string
	timeout   time.Duration
	maxTokens int
}

// NewOllama checks the options and returns an Ollama judge. It does not
// contact Ollama.
func NewOllama(opts OllamaOptions) (*Ollama, error) {
	host := strings.TrimSpace(opts.Host)
	if host == "" {
		host = os.Getenv("OLLAMA_HOST")
	}
	base, err := parseOllamaHost(host)
	if err != nil {
		return nil, fmt.Errorf("judge: %w", err)
	}
	model := strings.TrimSpace(opts.Model)
	if model == "" || len(model) > 256 || !memory.ValidUTF8(model) || strings.ContainsAny(model, " \t\r\n\"'\\") {
		return nil, fmt.Errorf("judge: ollama model name %q: %w", model, memory.ErrInvalid)
	}
	if opts.Timeout < 0 || opts.MaxTokens < 0 {
		return nil, fmt.Errorf("judge: ollama timeout %s or max tokens %d negative: %w", opts.Timeout, opts.MaxTokens, memory.ErrInvalid)
	}
	o := &Ollama{base: base, model: model, timeout: opts.Timeout, maxTokens: opts.MaxTokens}
	if o.timeout == 0 {
		o.timeout = DefaultTimeout
	}
	if o.maxTokens == 0 {
		o.maxTokens = DefaultMaxTokens
	}
	o.client = api.NewClient(base, limitedClient(opts.HTTPClient, maxOllamaResponseBytes))
	return o, nil
}

// Name returns "ollama:<model>".
func (o *Ollama) Name() string { return "ollama:" + o.model }

// Host returns Ollama's base URL.
func (o *Ollama) Host() string { return o.base.String() }

// Judge asks the model about ex. The verdict carries Ollama's token counts
// (prompt_eval_count, eval_count), also when the answer cannot be parsed
// (the error then wraps ErrBadAnswer). An exchange without text is a skip
// without a call. Errors: *APIError for HTTP errors (404 is
// ErrModelNotFound: `ollama pull` the model), memory.ErrUnavailable when
// Ollama does not answer or the call times out, ErrTooLarge for a response
// over 256 KiB, ErrBadAnswer for an answer cut short or not understood.
func (o *Ollama) Judge(ctx context.Context, ex memory.Exchange) (memory.JudgeVerdict, error) {
	if emptyExchange(ex) {
		return memory.JudgeVerdict{Skip: true}, nil
	}
	text, in, out, err := o.chat(ctx, SystemPrompt, Prompt(ex), nil, o.maxTokens)
	v := memory.JudgeVerdict{InputTokens: in, OutputTokens: out}
	if err != nil {
		return v, err
	}
	got, err := ParseAnswer(text)
	if err != nil {
		return v, fmt.Errorf("judge %s: %w", o.Name(), err)
	}
	got.InputTokens, got.OutputTokens = v.InputTokens, v.OutputTokens
	return got, nil
}

// JudgeTurn asks the model, in one call, which memories the turn holds
// (TurnPrompt), with the answer's JSON schema as Ollama's format so that
// the model's decoding keeps to it. The verdict carries Ollama's token
// counts, also when the answer cannot be parsed (ParseTurnAnswer; the error
// then wraps ErrBadAnswer). A turn without text is an empty verdict
// without a call. Errors are Judge's.
func (o *Ollama) JudgeTurn(ctx context.Context, in memory.TurnInput) (memory.TurnVerdict, error) {
	if emptyTurn(in) {
		return memory.TurnVerdict{}, nil
	}
	text, inTok, outTok, err := o.chat(ctx, TurnSystemPrompt, TurnPrompt(in), turnSchema, max(o.maxTokens, DefaultTurnMaxTokens))
	v := memory.TurnVerdict{InputTokens: inTok, OutputTokens: outTok}
	if err != nil {
		return v, err
	}
	got, err := ParseTurnAnswer(text, len(in.Candidates))
	if err != nil {
		return v, fmt.Errorf("judge %s: %w", o.Name(), err)
	}
	got.InputTokens, got.OutputTokens = v.InputTokens, v.OutputTokens
	return got, nil
}

// chat makes one non-streaming /api/chat call and returns the answer's
// text and token counts (prompt_eval_count, eval_count; known also when
// the error is about the answer). format, when not nil, is sent as the
// request's format (a JSON schema).
func (o *Ollama) chat(ctx context.Context, system, user string, format json.RawMessage, maxTokens int) (string, int, int, error) {
	ctx, cancel := callContext(ctx, o.timeout)
	defer cancel()
	// The Ollama client stops quietly when a body is cut short; the
	// transport's flag tells a cut for size from a normal end.
	st := new(callState)
	ctx = context.WithValue(ctx, callStateKey{}, st)
	stream := false
	req := &api.ChatRequest{
		Model: o.model,
		Messages: []api.Message{
			{Role: "system", Content: system},
			{Role: "user", Content: user},
		},
		Stream: &stream,
		Format: format,
		// A thinking model would spend the answer's tokens thinking.
		Think: &api.ThinkValue{Value: false},
		Options: map[string]any{
			"temperature": 0,
			"num_predict": maxTokens,
		},
	}
	var (
		text          strings.Builder
		inTok, outTok int
		done          bool
	)
	// Ollama answers one object for stream:false; a server that streams
	// anyway is accumulated the same way.
	err := o.client.Chat(ctx, req, func(r api.ChatResponse) error {
		if text.Len()+len(r.Message.Content) > maxOllamaResponseBytes {
			return fmt.Errorf("answer longer than %d bytes: %w", maxOllamaResponseBytes, ErrTooLarge)
		}
		text.WriteString(r.Message.Content)
		if r.Done {
			done = true
			inTok, outTok = r.PromptEvalCount, r.EvalCount
		}
		return nil
	})
	if st.over.Load() && (err == nil || !errors.Is(err, ErrTooLarge)) {
		err = fmt.Errorf("response body over %d bytes: %w", maxOllamaResponseBytes, ErrTooLarge)
	}
	var se api.StatusError
	var ae api.AuthorizationError
	if code := int(st.status.Load()); code >= 400 && !errors.As(err, &se) && !errors.As(err, &ae) && !errors.Is(err, ErrTooLarge) {
		// An error status whose body was empty or not Ollama's JSON.
		err = api.StatusError{StatusCode: code, ErrorMessage: "(no error message)"}
	}
	if err != nil {
		return "", inTok, outTok, o.callError(ctx, err)
	}
	if !done {
		return "", inTok, outTok, fmt.Errorf("judge %s at %s: %w: the response ended before its done object (%d bytes of answer)", o.Name(), o.Host(), ErrBadAnswer, text.Len())
	}
	return text.String(), inTok, outTok, nil
}

// callError maps an error of api.Client.Chat.
func (o *Ollama) callError(ctx context.Context, err error) error {
	name := o.Name() + " at " + o.Host()
	var se api.StatusError
	var ae api.AuthorizationError
	switch {
	case errors.As(err, &se):
		return fmt.Errorf("judge %s: %w", name, &APIError{Provider: "ollama", StatusCode: se.StatusCode, Message: truncateMessage(se.ErrorMessage)})
	case errors.As(err, &ae):
		return fmt.Errorf("judge %s: %w", name, &APIError{Provider: "ollama", StatusCode: ae.StatusCode, Message: "unauthorized"})
	case errors.Is(err, ErrTooLarge), ctx.Err() != nil, errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return transportError(name, ctx, o.timeout, err)
	}
	var ue *url.Error
	var ne net.Error
	if errors.As(err, &ue) || errors.As(err, &ne) {
		return transportError(name, ctx, o.timeout, err)
	}
	msg := truncateMessage(err.Error())
	if strings.HasPrefix(msg, "unmarshal:") {
		// A line that is not JSON.
		return fmt.Errorf("judge %s: %w: %s", name, ErrBadAnswer, msg)
	}
	// A mid-stream {"error": "..."}: the model failed while answering.
	return fmt.Errorf("judge %s: %w (%w): %s", name, ErrServer, memory.ErrUnavailable, msg)
}

// limitedClient returns hc (or a default client) with a transport that
// bounds every response body to max bytes and refuses redirects.
func limitedClient(hc *http.Client, max int64) *http.Client {
	var c http.Client
	if hc != nil {
		c = *hc
	}
	base := c.Transport
	if base == nil {
		base = &http.Transport{
			Proxy:               http.ProxyFromEnvironment,
			DialContext:         (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
			TLSHandshakeTimeout: 10 * time.Second,
			MaxIdleConnsPerHost: 4,
			IdleConnTimeout:     90 * time.Second,
		}
	}
	c.Transport = limitTransport{base: base, max: max}
	// A redirect would carry the request (and an API key header) elsewhere.
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	return &c
}

// limitTransport bounds response bodies: reading past max fails with
// ErrTooLarge.
type limitTransport struct {
	base http.RoundTripper
	max  int64
}

// RoundTrip implements http.RoundTripper.
func (t limitTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := t.base.RoundTrip(r)
	if err != nil {
		return nil, err
	}
	st, _ := r.Context().Value(callStateKey{}).(*callState)
	var over *atomic.Bool
	if st != nil {
		st.status.Store(int32(resp.StatusCode))
		over = &st.over
	}
	resp.Body = &limitedBody{rc: resp.Body, left: t.max, max: t.max, over: over}
	return resp, nil
}

// callStateKey keys the request context's *callState.
type callStateKey struct{}

// callState is what the transport saw of one call's response: its status
// and whether limitedBody cut it.
type callState struct {
	status atomic.Int32
	over   atomic.Bool
}

// limitedBody is a response body that fails once more than its bound is read.
type limitedBody struct {
	rc   io.ReadCloser
	left int64
	max  int64
	over *atomic.Bool
}

// Read reads at most the bound, then fails with ErrTooLarge.
func (b *limitedBody) Read(p []byte) (int, error) {
	if b.left < 0 {
		return 0, b.tooLarge()
	}
	if int64(len(p)) > b.left+1 {
		p = p[:b.left+1]
	}
	n, err := b.rc.Read(p)
	b.left -= int64(n)
	if b.left < 0 {
		return n, b.tooLarge()
	}
	return n, err
}

func (b *limitedBody) tooLarge() error {
	if b.over != nil {
		b.over.Store(true)
	}
	return fmt.Errorf("response body over %d bytes: %w", b.max, ErrTooLarge)
}

// Close closes the underlying body.
func (b *limitedBody) Close() error { return b.rc.Close() }

// parseOllamaHost is config.ParseOllamaHost for a client: an empty value is
// DefaultOllamaHost, and the bind-all address 0.0.0.0 (a server's
// OLLAMA_HOST) means this machine.
func parseOllamaHost(s string) (*url.URL, error) {
	u, err := config.ParseOllamaHost(s)
	if err != nil {
		return nil, err
	}
	if u.Hostname() == "0.0.0.0" {
		u.Host = net.JoinHostPort("127.0.0.1", u.Port())
	}
	return u, nil
}
