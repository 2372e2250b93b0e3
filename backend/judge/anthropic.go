package judge

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/memtray/memtray/backend/anthropic"
	"github.com/memtray/memtray/backend/memory"
)

// Anthropic Messages API constants.
const (
	// DefaultAnthropicURL is the Messages API's base URL.
	DefaultAnthropicURL = "https://api.anthropic.com"
	// AnthropicVersion is the anthropic-version header sent.
	AnthropicVersion = "2023-06-01"
	// AnthropicKeyEnv names the environment variable read for the key when
	// the configuration has none.
	AnthropicKeyEnv = "ANTHROPIC_API_KEY"
)

// AnthropicOptions configures NewAnthropic.
type AnthropicOptions struct {
	// BaseURL is the API's base URL; the judge POSTs to BaseURL/v1/messages.
	// Empty means DefaultAnthropicURL. Plain http is accepted only for a
	// loopback host, so that the key never crosses a network in clear.
	BaseURL string
	// Key is the API key; empty means $ANTHROPIC_API_KEY.
	Key string
	// Model is the model, e.g. "claude-haiku-4-5"; required.
	Model string
	// Timeout bounds one call; 0 means DefaultTimeout.
	Timeout time.Duration
	// MaxTokens is the request's max_tokens; 0 means DefaultMaxTokens.
	MaxTokens int
	// HTTPClient replaces the HTTP client; nil means one with a 5 s dial
	// timeout. Its transport is wrapped to bound the response size, and
	// redirects are not followed.
	HTTPClient *http.Client
}

// Anthropic judges exchanges with the Anthropic Messages API (non-streaming).
// It is safe for concurrent use. The key is sent only in the x-api-key
// header and never appears in errors.
type Anthropic struct {
	hc        *http.Client
	endpoint  string
	model     string
	key       string
	timeout   time.Duration
	maxTokens int
}

// NewAnthropic checks the options and returns an Anthropic judge; a missing
// key is ErrNoKey. It does not contact the API.
func NewAnthropic(opts AnthropicOptions) (*Anthropic, error) {
	key := strings.TrimSpace(opts.Key)
	if key == "" {
		key = strings.TrimSpace(os.Getenv(AnthropicKeyEnv))
	}
	if key == "" {
		return nil, fmt.Errorf("judge: %w", ErrNoKey)
	}
	if len(key) > 1024 || strings.ContainsFunc(key, func(r rune) bool { return r <= ' ' || r >= 0x7f }) {
		return nil, fmt.Errorf("judge: the Anthropic API key holds characters an HTTP header cannot carry: %w", memory.ErrInvalid)
	}
	model := strings.TrimSpace(opts.Model)
	if model == "" || len(model) > 256 || !memory.ValidUTF8(model) {
		return nil, fmt.Errorf("judge: anthropic model name %q: %w", model, memory.ErrInvalid)
	}
	if opts.Timeout < 0 || opts.MaxTokens < 0 {
		return nil, fmt.Errorf("judge: anthropic timeout %s or max tokens %d negative: %w", opts.Timeout, opts.MaxTokens, memory.ErrInvalid)
	}
	endpoint, err := messagesURL(opts.BaseURL)
	if err != nil {
		return nil, fmt.Errorf("judge: %w", err)
	}
	a := &Anthropic{
		hc:        limitedClient(opts.HTTPClient, maxResponseBytes),
		endpoint:  endpoint,
		model:     model,
		key:       key,
		timeout:   opts.Timeout,
		maxTokens: opts.MaxTokens,
	}
	if a.timeout == 0 {
		a.timeout = DefaultTimeout
	}
	if a.maxTokens == 0 {
		a.maxTokens = DefaultMaxTokens
	}
	return a, nil
}

// messagesURL checks base and returns base/v1/messages.
func messagesURL(base string) (string, error) {
	base = strings.TrimSpace(base)
	if base == "" {
		base = DefaultAnthropicURL
	}
	u, err := url.Parse(base)
	if err != nil || u.Host == "" || u.User != nil || u.RawQuery != "" || u.Fragment != "" {
		return "", fmt.Errorf("anthropic_url %q must be http(s)://host[:port][/path]: %w", base, memory.ErrInvalid)
	}
	switch u.Scheme {
	case "https":
	case "http":
		if !loopbackHost(u.Hostname()) {
			return "", fmt.Errorf("anthropic_url %q: plain http only to a loopback host (the API key would travel in clear): %w", base, memory.ErrInvalid)
		}
	default:
		return "", fmt.Errorf("anthropic_url %q: scheme must be https: %w", base, memory.ErrInvalid)
	}
	return u.JoinPath("v1", "messages").String(), nil
}

// loopbackHost reports whether h is localhost or a loopback IP.
func loopbackHost(h string) bool {
	if strings.EqualFold(h, "localhost") {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}

// Name returns "anthropic:<model>".
func (a *Anthropic) Name() string { return "anthropic:" + a.model }

// Endpoint returns the URL the judge POSTs to.
func (a *Anthropic) Endpoint() string { return a.endpoint }

// anthropicRequest is the Messages API request body.
type anthropicRequest struct {
	Model       string             `json:"model"`
	MaxTokens   int                `json:"max_tokens"`
	System      string             `json:"system"`
	Messages    []anthropicMessage `json:"messages"`
	Temperature float64            `json:"temperature"`
}

type anthropicMessage struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

// anthropicResponse is the part of a Messages API answer the judge reads:
// a message object, or an error object.
type anthropicResponse struct {
	anthropic.Response
	Error *struct {
		Type    string `json:"type"`
		Message string `json:"message"`
	} `json:"error"`
	RequestID string `json:"request_id"`
}

// Judge asks the model about ex. The verdict carries the usage's token
// counts (input tokens include cache reads and writes), also when the answer
// cannot be parsed (the error then wraps ErrBadAnswer). An exchange without
// text is a skip without a call. Errors: *APIError for HTTP errors (401 and
// 403 are ErrAuth, 429 ErrRateLimited with RetryAfter, 529 ErrOverloaded,
// 5xx ErrServer), memory.ErrUnavailable when the API does not answer in
// time, ErrTooLarge for a response over 1 MiB, ErrBadAnswer for a response
// that is not a message with text.
func (a *Anthropic) Judge(ctx context.Context, ex memory.Exchange) (memory.JudgeVerdict, error) {
	if emptyExchange(ex) {
		return memory.JudgeVerdict{Skip: true}, nil
	}
	text, in, out, err := a.complete(ctx, SystemPrompt, Prompt(ex), a.maxTokens)
	v := memory.JudgeVerdict{InputTokens: in, OutputTokens: out}
	if err != nil {
		return v, err
	}
	got, err := ParseAnswer(text)
	if err != nil {
		return v, fmt.Errorf("judge %s: %w", a.Name(), err)
	}
	got.InputTokens, got.OutputTokens = v.InputTokens, v.OutputTokens
	return got, nil
}

// JudgeTurn asks the model, in one call, which memories the turn holds
// (TurnPrompt); the answer is the JSON object of the message's text
// (ParseTurnAnswer), no tool use. The verdict carries the usage's token
// counts, also when the answer cannot be parsed (the error then wraps
// ErrBadAnswer). A turn without text is an empty verdict without a call.
// Errors are Judge's.
func (a *Anthropic) JudgeTurn(ctx context.Context, in memory.TurnInput) (memory.TurnVerdict, error) {
	if emptyTurn(in) {
		return memory.TurnVerdict{}, nil
	}
	text, inTok, outTok, err := a.complete(ctx, TurnSystemPrompt, TurnPrompt(in), max(a.maxTokens, DefaultTurnMaxTokens))
	v := memory.TurnVerdict{InputTokens: inTok, OutputTokens: outTok}
	if err != nil {
		return v, err
	}
	got, err := ParseTurnAnswer(text, len(in.Candidates))
	if err != nil {
		return v, fmt.Errorf("judge %s: %w", a.Name(), err)
	}
	got.InputTokens, got.OutputTokens = v.InputTokens, v.OutputTokens
	return got, nil
}

// complete makes one Messages API call and returns the text of the
// message's text blocks and the usage's token counts (input tokens include
// cache reads and writes; known also when the error is about the answer).
func (a *Anthropic) complete(ctx context.Context, system, user string, maxTokens int) (string, int, int, error) {
	body, err := json.Marshal(anthropicRequest{
		Model:     a.model,
		MaxTokens: maxTokens,
		System:    system,
		Messages:  []anthropicMessage{{Role: "user", Content: user}},
	})
	if err != nil {
		return "", 0, 0, fmt.Errorf("judge %s: encode request: %w", a.Name(), err)
	}
	ctx, cancel := callContext(ctx, a.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, a.endpoint, bytes.NewReader(body))
	if err != nil {
		return "", 0, 0, fmt.Errorf("judge %s: %w", a.Name(), err)
	}
	req.Header.Set("x-api-key", a.key)
	req.Header.Set("anthropic-version", AnthropicVersion)
	req.Header.Set("content-type", "application/json")
	req.Header.Set("accept", "application/json")
	req.Header.Set("user-agent", "memtray-judge")
	resp, err := a.hc.Do(req)
	if err != nil {
		return "", 0, 0, a.scrub(transportError(a.Name(), ctx, a.timeout, err))
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return "", 0, 0, a.scrub(transportError(a.Name(), ctx, a.timeout, err))
	}
	var r anthropicResponse
	jsonErr := json.Unmarshal(raw, &r)
	if resp.StatusCode < 200 || resp.StatusCode > 299 || (jsonErr == nil && r.Type == "error") {
		return "", 0, 0, fmt.Errorf("judge %s: %w", a.Name(), a.apiError(resp, &r, jsonErr))
	}
	if jsonErr != nil {
		return "", 0, 0, fmt.Errorf("judge %s: %w: response is not JSON: %v", a.Name(), ErrBadAnswer, jsonErr)
	}
	if r.Type != "message" {
		return "", 0, 0, fmt.Errorf("judge %s: %w: response type %q, want \"message\"", a.Name(), ErrBadAnswer, truncateMessage(r.Type))
	}
	u := r.Usage.Memory()
	in := u.InputTokens + u.CacheCreationInputTokens + u.CacheReadInputTokens
	out := u.OutputTokens
	var text strings.Builder
	for _, c := range r.Content {
		if c.Type == "text" {
			text.WriteString(c.Text)
		}
	}
	if r.StopReason == "refusal" {
		return "", in, out, fmt.Errorf("judge %s: %w: the model refused (stop_reason refusal)", a.Name(), ErrBadAnswer)
	}
	if strings.TrimSpace(text.String()) == "" {
		return "", in, out, fmt.Errorf("judge %s: %w: no text in the message (stop_reason %q)", a.Name(), ErrBadAnswer, truncateMessage(r.StopReason))
	}
	return text.String(), in, out, nil
}

// apiError builds the APIError of an error response.
func (a *Anthropic) apiError(resp *http.Response, r *anthropicResponse, jsonErr error) *APIError {
	e := &APIError{Provider: "anthropic", StatusCode: resp.StatusCode, RequestID: truncateMessage(resp.Header.Get("request-id"))}
	if jsonErr == nil && r.Error != nil {
		e.Type = truncateMessage(r.Error.Type)
		e.Message = a.scrubString(truncateMessage(r.Error.Message))
		if r.RequestID != "" {
			e.RequestID = truncateMessage(r.RequestID)
		}
	} else {
		e.Message = "error body is not the API's error JSON"
	}
	if e.StatusCode >= 200 && e.StatusCode <= 299 {
		// An error object with a success status: classify it by its type.
		e.StatusCode = statusOfType(e.Type)
	}
	e.RetryAfter = retryAfter(resp.Header.Get("retry-after"), time.Now())
	return e
}

// statusOfType maps an Anthropic error type to its documented HTTP status.
func statusOfType(t string) int {
	switch t {
	case "invalid_request_error":
		return http.StatusBadRequest
	case "authentication_error":
		return http.StatusUnauthorized
	case "permission_error":
		return http.StatusForbidden
	case "not_found_error":
		return http.StatusNotFound
	case "request_too_large":
		return http.StatusRequestEntityTooLarge
	case "rate_limit_error":
		return http.StatusTooManyRequests
	case "overloaded_error":
		return 529
	}
	return http.StatusInternalServerError
}

// retryAfter parses a retry-after header: seconds, or an HTTP date.
func retryAfter(h string, now time.Time) time.Duration {
	h = strings.TrimSpace(h)
	if h == "" {
		return 0
	}
	if s, err := strconv.ParseFloat(h, 64); err == nil {
		if s <= 0 || s > 86400 {
			return 0
		}
		return time.Duration(s * float64(time.Second))
	}
	if t, err := http.ParseTime(h); err == nil {
		if d := t.Sub(now); d > 0 && d <= 24*time.Hour {
			return d
		}
	}
	return 0
}

// scrub removes the key from an error's text, should any layer have put it there.
func (a *Anthropic) scrub(err error) error {
	if err == nil || !strings.Contains(err.Error(), a.key) {
		return err
	}
	return &scrubbedError{msg: a.scrubString(err.Error()), err: err}
}

func (a *Anthropic) scrubString(s string) string {
	if a.key == "" {
		return s
	}
	return strings.ReplaceAll(s, a.key, "[REDACTED]")
}

// scrubbedError keeps the chain of err (for errors.Is) with a scrubbed text.
type scrubbedError struct {
	msg string
	err error
}

func (e *scrubbedError) Error() string { return e.msg }
func (e *scrubbedError) Unwrap() error { return e.err }

// Compile-time checks.
var (
	_ memory.Judge     = (*Anthropic)(nil)
	_ memory.Judge     = (*Ollama)(nil)
	_ memory.TurnJudge = (*Anthropic)(nil)
	_ memory.TurnJudge = (*Ollama)(nil)
	_ error            = (*APIError)(nil)
)
