package config

import (
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"

	"github.com/memtray/memtray/backend/memory"
)

// DefaultOllamaHost is where Ollama listens unless OLLAMA_HOST or the
// configuration says otherwise.
const DefaultOllamaHost = "http://127.0.0.1:11434"

// ParseOllamaHost turns an OLLAMA_HOST-style value into a URL, following
// Ollama's own conventions: empty means 127.0.0.1:11434; "host", "host:port",
// "http://host[:port]" and "https://host[:port]" are accepted; a missing port
// is 11434 without a scheme, 80 for http and 443 for https.
func ParseOllamaHost(s string) (*url.URL, error) {
	s = strings.TrimSpace(s)
	if len(s) > 2048 {
		return nil, fmt.Errorf("ollama host is longer than 2048 bytes: %w", memory.ErrInvalid)
	}
	defaultPort := "11434"
	scheme, hostport, ok := strings.Cut(s, "://")
	switch {
	case !ok:
		scheme, hostport = "http", s
	case scheme == "http":
		defaultPort = "80"
	case scheme == "https":
		defaultPort = "443"
	default:
		return nil, fmt.Errorf("ollama host %q: scheme must be http or https: %w", s, memory.ErrInvalid)
	}
	hostport, path, _ := strings.Cut(hostport, "/")
	host, port, err := net.SplitHostPort(hostport)
	if err != nil {
		host, port = "127.0.0.1", defaultPort
		if ip := net.ParseIP(strings.Trim(hostport, "[]")); ip != nil {
			host = ip.String()
		} else if hostport != "" {
			host = hostport
		}
	}
	if host == "" {
		host = "127.0.0.1"
	}
	if !validHostName(host) {
		return nil, fmt.Errorf("ollama host %q: bad host name: %w", s, memory.ErrInvalid)
	}
	n, err := strconv.Atoi(port)
	if err != nil || n < 1 || n > 65535 {
		return nil, fmt.Errorf("ollama host %q: port must be within 1..65535: %w", s, memory.ErrInvalid)
	}
	u := &url.URL{Scheme: scheme, Host: net.JoinHostPort(host, port)}
	if path != "" {
		for _, r := range path {
			if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("/._~-", r)) {
				return nil, fmt.Errorf("ollama host %q: path may hold only letters, digits and /._~-: %w", s, memory.ErrInvalid)
			}
		}
		u.Path = "/" + path
	}
	if _, err := url.Parse(u.String()); err != nil {
		return nil, fmt.Errorf("ollama host %q: %w: %v", s, memory.ErrInvalid, err)
	}
	return u, nil
}

// validHostName accepts host names and IP literals: letters, digits and
// ".-_:" only.
func validHostName(h string) bool {
	if h == "" || len(h) > 253 {
		return false
	}
	for _, r := range h {
		ok := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '-' || r == '_' || r == ':'
		if !ok {
			return false
		}
	}
	return true
}
