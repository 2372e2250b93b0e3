// Package judge asks a language model whether an exchange of a coding agent
// is worth remembering: the write pipeline's optional judge stage.
//
// A judge answers SKIP or a distilled memory with its kind. Two providers
// exist: a local Ollama chat model (Ollama) and the Anthropic Messages API
// (Anthropic). Both share one prompt (SystemPrompt, Prompt) and one answer
// format (ParseAnswer). Both also judge a whole user turn in one call
// (memory.TurnJudge: TurnSystemPrompt, TurnPrompt, and a fixed JSON answer
// read by ParseTurnAnswer). Budgeted caps the calls per rolling hour and day and
// keeps the statistics the UI shows. New builds the configured judge.
//
// The package never logs: every failure is a returned error, wrapped with
// context, that errors.Is matches against the sentinels below (and against
// memory.ErrUnavailable for the transient ones). API keys never appear in
// errors.
package judge

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/memtray/memtray/backend/config"
	"github.com/memtray/memtray/backend/memory"
)

// Sentinel errors; test with errors.Is.
var (
	// ErrBudget: the call would exceed max_per_hour or max_per_day; the
	// model was not called.
	ErrBudget = errors.New("judge budget exhausted")
	// ErrBadAnswer: the model answered, but not in the SKIP / KIND: memory
	// format (or it answered nothing).
	ErrBadAnswer = errors.New("judge answer not understood")
	// ErrAuth: the provider refused the credentials (HTTP 401 or 403).
	ErrAuth = errors.New("judge provider refused the credentials")
	// ErrNoKey: the Anthropic judge has no API key (neither in the
	// configuration nor in $ANTHROPIC_API_KEY).
	ErrNoKey = errors.New("no Anthropic API key: set judge.anthropic_key or $ANTHROPIC_API_KEY")
	// ErrRateLimited: the provider rate-limits us (HTTP 429), or Budgeted
	// waits out a retry-after it was told. Also matches memory.ErrUnavailable.
	ErrRateLimited = errors.New("judge provider rate limit")
	// ErrOverloaded: the provider is overloaded (Anthropic 529, Ollama 503).
	// Also matches memory.ErrUnavailable.
	ErrOverloaded = errors.New("judge provider overloaded")
	// ErrServer: the provider failed (HTTP 5xx). Also matches
	// memory.ErrUnavailable.
	ErrServer = errors.New("judge provider server error")
	// ErrModelNotFound: the provider does not know the model (HTTP 404).
	ErrModelNotFound = errors.New("judge model not found")
	// ErrTooLarge: the provider's response exceeded the size bound.
	ErrTooLarge = errors.New("judge response too large")
)

// Defaults used when options leave a field zero.
const (
	// DefaultTimeout bounds one judge call.
	DefaultTimeout = 20 * time.Second
	// DefaultMaxTokens bounds the model's answer, in tokens.
	DefaultMaxTokens = 400
	// maxResponseBytes bounds the bytes read from a provider per call.
	maxResponseBytes = 1 << 20
	// maxErrorMessage bounds the provider's error message kept in an error.
	maxErrorMessage = 500
)

// APIError is an error answer of a provider's HTTP API. It matches, with
// errors.Is, ErrAuth (401, 403), ErrModelNotFound (404), ErrRateLimited
// (429), ErrOverloaded (529, Ollama's 503, Anthropic's overloaded_error) or
// ErrServer (other 5xx); the last three also match memory.ErrUnavailable.
type APIError struct {
	// Provider is "anthropic" or "ollama".
	Provider string
	// StatusCode is the HTTP status.
	StatusCode int
	// Type is Anthropic's error.type (e.g. "rate_limit_error"); empty for Ollama.
	Type string
	// Message is the provider's error message, bounded in length.
	Message string
	// RequestID is Anthropic's request id, for support; empty if unknown.
	RequestID string
	// RetryAfter is the provider's retry-after, 0 if it sent none.
	RetryAfter time.Duration
}

// Error describes the failure without any credential.
func (e *APIError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: HTTP %d", e.Provider, e.StatusCode)
	if e.Type != "" {
		b.WriteString(" " + e.Type)
	} else if t := http.StatusText(e.StatusCode); t != "" {
		b.WriteString(" " + t)
	}
	if e.Message != "" {
		b.WriteString(": " + e.Message)
	}
	var extra []string
	if e.RequestID != "" {
		extra = append(extra, "request "+e.RequestID)
	}
	if e.RetryAfter > 0 {
		extra = append(extra, "retry after "+e.RetryAfter.String())
	}
	if len(extra) > 0 {
		b.WriteString(" (" + strings.Join(extra, "; ") + ")")
	}
	return b.String()
}

// Unwrap returns the sentinels the error matches.
func (e *APIError) Unwrap() []error {
	switch {
	case e.StatusCode == http.StatusUnauthorized || e.StatusCode == http.StatusForbidden:
		return []error{ErrAuth}
	case e.StatusCode == http.StatusNotFound:
		return []error{ErrModelNotFound}
	case e.StatusCode == http.StatusTooManyRequests:
		return []error{ErrRateLimited, memory.ErrUnavailable}
	case e.StatusCode == 529 || e.Type == "overloaded_error" ||
		(e.Provider == "ollama" && e.StatusCode == http.StatusServiceUnavailable):
		return []error{ErrOverloaded, memory.ErrUnavailable}
	case e.StatusCode >= 500:
		return []error{ErrServer, memory.ErrUnavailable}
	}
	return nil
}

// New builds the judge cfg describes, wrapped in a Budgeted with cfg's caps
// and cfg.Timeout as the bound of every call. For provider "off" (or empty)
// it returns a nil Judge and a nil error: the pipeline then lets its gates
// decide alone. Otherwise the returned Judge is a *Budgeted (type-assert it
// for Stats). clock nil means the wall clock.
//
// For Ollama an empty cfg.OllamaHost means $OLLAMA_HOST, else
// http://127.0.0.1:11434; the caller fills in the embedder's host first if
// it wants that as the default. For Anthropic an empty cfg.AnthropicKey
// means $ANTHROPIC_API_KEY; with neither, New fails with ErrNoKey. New does
// not contact the provider.
func New(cfg config.Judge, clock memory.Clock) (memory.Judge, error) {
	timeout := time.Duration(cfg.Timeout)
	if timeout < 0 {
		return nil, fmt.Errorf("judge: timeout %s: %w", timeout, memory.ErrInvalid)
	}
	var inner memory.Judge
	switch strings.TrimSpace(cfg.Provider) {
	case "", "off":
		return nil, nil
	case "ollama":
		o, err := NewOllama(OllamaOptions{Host: cfg.OllamaHost, Model: cfg.OllamaModel, Timeout: timeout})
		if err != nil {
			return nil, err
		}
		inner = o
	case "anthropic":
		a, err := NewAnthropic(AnthropicOptions{BaseURL: cfg.AnthropicURL, Key: cfg.AnthropicKey, Model: cfg.AnthropicModel, Timeout: timeout})
		if err != nil {
			return nil, err
		}
		inner = a
	default:
		return nil, fmt.Errorf("judge: provider %q must be off, ollama or anthropic: %w", cfg.Provider, memory.ErrInvalid)
	}
	return NewBudgeted(inner, cfg.MaxPerHour, cfg.MaxPerDay, clock)
}

// callContext bounds one call by timeout (DefaultTimeout when 0).
func callContext(ctx context.Context, timeout time.Duration) (context.Context, context.CancelFunc) {
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	return context.WithTimeout(ctx, timeout)
}

// transportError wraps a failed HTTP round trip: a timeout of the call's own
// deadline, the caller's cancellation, or the provider not answering
// (memory.ErrUnavailable).
func transportError(name string, ctx context.Context, timeout time.Duration, err error) error {
	switch {
	case errors.Is(err, ErrTooLarge):
		return fmt.Errorf("judge %s: %w", name, err)
	case ctx.Err() == context.DeadlineExceeded || errors.Is(err, context.DeadlineExceeded):
		if timeout <= 0 {
			timeout = DefaultTimeout
		}
		return fmt.Errorf("judge %s: no answer within %s: %w (%w)", name, timeout, context.DeadlineExceeded, memory.ErrUnavailable)
	case errors.Is(err, context.Canceled):
		return fmt.Errorf("judge %s: %w", name, err)
	}
	return fmt.Errorf("judge %s: %w: %w", name, memory.ErrUnavailable, err)
}

// emptyExchange reports whether ex holds no text to judge.
func emptyExchange(ex memory.Exchange) bool {
	return strings.TrimSpace(ex.User) == "" && strings.TrimSpace(ex.Assistant) == ""
}

// emptyTurn reports whether in holds no text to judge.
func emptyTurn(in memory.TurnInput) bool {
	for _, u := range in.User {
		if strings.TrimSpace(u) != "" {
			return false
		}
	}
	for _, s := range in.Steps {
		if strings.TrimSpace(s.Text) != "" {
			return false
		}
	}
	return true
}

// truncateMessage bounds a provider's message and removes control characters.
func truncateMessage(s string) string {
	s = strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return ' '
		}
		return r
	}, strings.ToValidUTF8(s, "\uFFFD"))
	s = strings.TrimSpace(s)
	return truncateRunes(s, maxErrorMessage)
}

// truncateRunes cuts s to at most n runes, adding "…" when it cut.
func truncateRunes(s string, n int) string {
	i := 0
	for pos := range s {
		if i == n {
			return s[:pos] + "…"
		}
		i++
	}
	return s
}
