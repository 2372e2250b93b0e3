package config

import (
	"fmt"
	"net"
	"net/url"
	"strings"

	"github.com/memtray/memtray/backend/memory"
)

// DefaultOpenAIURL is where an OpenAI-compatible embeddings server is
// looked for unless embedder.openai_url says otherwise: llama.cpp's
// llama-server on its default port.
const DefaultOpenAIURL = "http://127.0.0.1:8080/v1"

// MaxDimensions bounds embedder.dimensions.
const MaxDimensions = 65536

// ParseOpenAIURL checks the base URL of an OpenAI-compatible server (empty
// means DefaultOpenAIURL): http or https, a host, an optional path (e.g.
// "/v1"), no user name, query or fragment. The answer has no trailing
// slash, so "{url}/embeddings" is the embeddings route.
func ParseOpenAIURL(s string) (*url.URL, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		s = DefaultOpenAIURL
	}
	if len(s) > 2048 {
		return nil, fmt.Errorf("openai url is longer than 2048 bytes: %w", memory.ErrInvalid)
	}
	u, err := url.Parse(s)
	if err != nil {
		return nil, fmt.Errorf("openai url %q: %w: %v", s, memory.ErrInvalid, err)
	}
	switch {
	case u.Scheme != "http" && u.Scheme != "https":
		return nil, fmt.Errorf("openai url %q: must start with http:// or https://: %w", s, memory.ErrInvalid)
	case u.User != nil:
		return nil, fmt.Errorf("openai url %q: must not hold a user name or password (put the key in the variable embedder.openai_key_env names): %w", s, memory.ErrInvalid)
	case u.RawQuery != "" || u.ForceQuery || u.Fragment != "":
		return nil, fmt.Errorf("openai url %q: must not have a query or fragment: %w", s, memory.ErrInvalid)
	case u.Hostname() == "" || !validHostName(u.Hostname()):
		return nil, fmt.Errorf("openai url %q: bad host name: %w", s, memory.ErrInvalid)
	}
	if p := u.Port(); p != "" {
		if _, err := net.LookupPort("tcp", p); err != nil || strings.TrimLeft(p, "0123456789") != "" {
			return nil, fmt.Errorf("openai url %q: bad port: %w", s, memory.ErrInvalid)
		}
	}
	u.Path = strings.TrimRight(u.Path, "/")
	u.RawPath = ""
	return u, nil
}

// IsLoopbackHost reports whether host (a URL's Hostname) names this
// machine: "localhost" or a loopback IP.
func IsLoopbackHost(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// ValidEnvName reports whether s can name an environment variable:
// a letter or underscore, then letters, digits or underscores, at most
// 128 bytes.
func ValidEnvName(s string) bool {
	if s == "" || len(s) > 128 {
		return false
	}
	for i, r := range s {
		ok := r == '_' || r >= 'A' && r <= 'Z' || r >= 'a' && r <= 'z' || i > 0 && r >= '0' && r <= '9'
		if !ok {
			return false
		}
	}
	return true
}

// CheckOpenAIEmbedder checks the OpenAI-compatible fields of e: the URL,
// the key variable's name, the dimensions and that a key is never sent
// unencrypted beyond this machine.
func CheckOpenAIEmbedder(e Embedder) Errors {
	var errs Errors
	bad := func(field, format string, args ...any) {
		errs = append(errs, FieldError{field, fmt.Sprintf(format, args...)})
	}
	u, err := ParseOpenAIURL(e.OpenAIURL)
	if err != nil {
		bad("embedder.openai_url", "%v", err)
	}
	if m := e.OpenAIModel; len(m) > 256 || !memory.ValidUTF8(m) || strings.ContainsAny(m, "\t\r\n\"\\#") || m != strings.TrimSpace(m) {
		bad("embedder.openai_model", "must be a model name (no quotes, backslashes, #, line breaks or surrounding spaces; at most 256 bytes)")
	}
	if e.OpenAIKeyEnv != "" {
		if !ValidEnvName(e.OpenAIKeyEnv) {
			bad("embedder.openai_key_env", "%q is not an environment variable's name (letters, digits, _; the key itself never goes in the config)", e.OpenAIKeyEnv)
		} else if u != nil && u.Scheme == "http" && !IsLoopbackHost(u.Hostname()) {
			bad("embedder.openai_key_env", "the key would travel unencrypted to %s: use an https:// openai_url", u.Host)
		}
	}
	if e.Dimensions < 0 || e.Dimensions > MaxDimensions {
		bad("embedder.dimensions", "must be within 0..%d (0: the model's own)", MaxDimensions)
	}
	return errs
}
