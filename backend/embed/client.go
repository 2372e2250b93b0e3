package embed

import (
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/memtray/memtray/backend/memory"
)

// clientLimits bound an embedder that calls a model server over HTTP
// (Ollama, an OpenAI-compatible server): each request's timeout, the
// retries of a failed one and the backoff between them, and the texts sent
// in one request.
type clientLimits struct {
	timeout   time.Duration
	retries   int
	backoff   time.Duration
	batchSize int
}

// normalize checks the limits and fills the ones left at zero with the
// defaults (defaultBatch for the batch size); name opens its errors.
func (l *clientLimits) normalize(name string, defaultBatch int) error {
	switch {
	case l.timeout < 0:
		return fmt.Errorf("%s: timeout %s: %w", name, l.timeout, memory.ErrInvalid)
	case l.timeout == 0:
		l.timeout = DefaultOllamaTimeout
	}
	switch {
	case l.retries < 0:
		l.retries = 0
	case l.retries == 0:
		l.retries = DefaultOllamaRetries
	case l.retries > 20:
		return fmt.Errorf("%s: %d retries is more than 20: %w", name, l.retries, memory.ErrInvalid)
	}
	if l.backoff <= 0 {
		l.backoff = DefaultOllamaBackoff
	}
	switch {
	case l.batchSize < 0 || l.batchSize > 4096:
		return fmt.Errorf("%s: batch size %d not within 1..4096: %w", name, l.batchSize, memory.ErrInvalid)
	case l.batchSize == 0:
		l.batchSize = defaultBatch
	}
	return nil
}

// serverClient is the HTTP client of a model server, unless the caller
// gave one: a short dial, a few kept-alive connections, and no timeout of
// its own (per-request contexts bound every call).
func serverClient(hc *http.Client) *http.Client {
	if hc != nil {
		return hc
	}
	return &http.Client{Transport: &http.Transport{
		Proxy:               http.ProxyFromEnvironment,
		DialContext:         (&net.Dialer{Timeout: dialTimeout, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConnsPerHost: 4,
		IdleConnTimeout:     90 * time.Second,
	}}
}
