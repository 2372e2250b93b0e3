package config

import (
	"errors"
	"testing"

	"github.com/memtray/memtray/backend/memory"
)

func TestParseOllamaHost(t *testing.T) {
	cases := []struct {
		in, want string
		bad      bool
	}{
		{"", "http://127.0.0.1:11434", false},
		{"127.0.0.1", "http://127.0.0.1:11434", false},
		{"0.0.0.0:11435", "http://0.0.0.0:11435", false},
		{"localhost", "http://localhost:11434", false},
		{"http://example.com", "http://example.com:80", false},
		{"https://example.com", "https://example.com:443", false},
		{"http://10.0.0.2:8080/ollama", "http://10.0.0.2:8080/ollama", false},
		{"[::1]:11434", "http://[::1]:11434", false},
		{"::1", "http://[::1]:11434", false},
		{"  http://127.0.0.1:9  ", "http://127.0.0.1:9", false},
		{"ftp://x", "", true},
		{"http://x:0", "", true},
		{"http://x:99999", "", true},
		{"http://x:abc", "", true},
		{"http://a b:1", "", true},
	}
	for _, c := range cases {
		u, err := ParseOllamaHost(c.in)
		if c.bad {
			if err == nil || !errors.Is(err, memory.ErrInvalid) {
				t.Errorf("ParseOllamaHost(%q) = %v, %v; want ErrInvalid", c.in, u, err)
			}
			continue
		}
		if err != nil || u.String() != c.want {
			t.Errorf("ParseOllamaHost(%q) = %v, %v; want %s", c.in, u, err, c.want)
		}
	}
}

// FuzzParseOllamaHost: never panics; whatever it accepts is a URL with a
// valid port that parses back to itself.
func FuzzParseOllamaHost(f *testing.F) {
	for _, s := range []string{"", "127.0.0.1", "http://x:1/p", "https://[::1]:443", "ollama.com", "a:b:c", "http://%zz"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		u, err := ParseOllamaHost(s)
		if err != nil {
			return
		}
		if u.Scheme != "http" && u.Scheme != "https" || u.Port() == "" {
			t.Fatalf("ParseOllamaHost(%q) = %v", s, u)
		}
		u2, err := ParseOllamaHost(u.String())
		if err != nil || u2.String() != u.String() {
			t.Fatalf("ParseOllamaHost(%q) = %v, reparsed %v, %v", s, u, u2, err)
		}
	})
}
