package config

import (
	"errors"
	"strings"
	"testing"

	"github.com/memtray/memtray/backend/memory"
)

func TestParseOpenAIURL(t *testing.T) {
	cases := []struct{ in, want string }{
		{"", "http://127.0.0.1:8080/v1"},
		{"  http://127.0.0.1:1234/v1/ ", "http://127.0.0.1:1234/v1"},
		{"https://api.openai.com/v1", "https://api.openai.com/v1"},
		{"http://localhost:8000/v1", "http://localhost:8000/v1"},
		{"http://[::1]:8080/v1", "http://[::1]:8080/v1"},
		{"http://127.0.0.1:8080", "http://127.0.0.1:8080"},
		{"127.0.0.1:8080", ""},
		{"ftp://127.0.0.1/v1", ""},
		{"http://u:p@127.0.0.1/v1", ""},
		{"http://127.0.0.1/v1?x=1", ""},
		{"http://127.0.0.1/v1#f", ""},
		{"http:///v1", ""},
		{"http://bad host/v1", ""},
		{"http://127.0.0.1:99999/v1", ""},
		{"http://" + strings.Repeat("a", 2100), ""},
	}
	for _, c := range cases {
		u, err := ParseOpenAIURL(c.in)
		if c.want == "" {
			if !errors.Is(err, memory.ErrInvalid) {
				t.Errorf("ParseOpenAIURL(%q) = %v, %v; want ErrInvalid", c.in, u, err)
			}
			continue
		}
		if err != nil || u.String() != c.want {
			t.Errorf("ParseOpenAIURL(%q) = %v, %v; want %s", c.in, u, err, c.want)
		}
	}
}

// FuzzParseOpenAIURL: never panics; whatever it accepts reparses to itself.
func FuzzParseOpenAIURL(f *testing.F) {
	for _, s := range []string{"", "http://127.0.0.1:8080/v1", "https://api.openai.com/v1/", "http://[::1]:1/x", "http://a@b/"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		u, err := ParseOpenAIURL(s)
		if err != nil {
			return
		}
		if u.Scheme != "http" && u.Scheme != "https" || u.User != nil || u.RawQuery != "" || strings.HasSuffix(u.Path, "/") {
			t.Fatalf("ParseOpenAIURL(%q) = %v", s, u)
		}
		u2, err := ParseOpenAIURL(u.String())
		if err != nil || u2.String() != u.String() {
			t.Fatalf("ParseOpenAIURL(%q) = %v, reparsed %v, %v", s, u, u2, err)
		}
	})
}

func TestValidEnvName(t *testing.T) {
	for s, want := range map[string]bool{
		"OPENAI_API_KEY": true, "_K": true, "k1": true, "": false, "1K": false, "MY-KEY": false,
		"KEY=x": false, "sk-abc123": false, strings.Repeat("K", 129): false,
	} {
		if ValidEnvName(s) != want {
			t.Errorf("ValidEnvName(%q) = %v", s, !want)
		}
	}
}

// TestValidateOpenAIEmbedder: the openai fields as Validate checks them.
func TestValidateOpenAIEmbedder(t *testing.T) {
	cases := []struct {
		name  string
		mod   func(e *Embedder)
		field string // "" when valid
	}{
		{"default", func(e *Embedder) {}, ""},
		{"openai", func(e *Embedder) { e.Provider, e.OpenAIModel = "openai", "voyage-4-nano" }, ""},
		{"openai without ollama model", func(e *Embedder) { e.Provider, e.OpenAIModel, e.OllamaModel = "openai", "m", "" }, ""},
		{"openai hosted with key", func(e *Embedder) {
			e.Provider, e.OpenAIModel, e.OpenAIURL, e.OpenAIKeyEnv, e.Dimensions = "openai", "text-embedding-3-small", "https://api.openai.com/v1", "OPENAI_API_KEY", 512
		}, ""},
		{"openai without model", func(e *Embedder) { e.Provider = "openai" }, "embedder.openai_model"},
		{"bad url", func(e *Embedder) { e.OpenAIURL = "localhost:8080" }, "embedder.openai_url"},
		{"key not a name", func(e *Embedder) { e.OpenAIKeyEnv = "sk-live-abc" }, "embedder.openai_key_env"},
		{"key over http beyond loopback", func(e *Embedder) { e.OpenAIURL, e.OpenAIKeyEnv = "http://10.0.0.2:8080/v1", "K" }, "embedder.openai_key_env"},
		{"key over http on loopback", func(e *Embedder) { e.OpenAIURL, e.OpenAIKeyEnv = "http://localhost:8080/v1", "K" }, ""},
		{"negative dimensions", func(e *Embedder) { e.Dimensions = -1 }, "embedder.dimensions"},
		{"huge dimensions", func(e *Embedder) { e.Dimensions = MaxDimensions + 1 }, "embedder.dimensions"},
		{"model with a quote", func(e *Embedder) { e.OpenAIModel = `a"b` }, "embedder.openai_model"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg := Default()
			c.mod(&cfg.Embedder)
			err := cfg.Validate()
			if c.field == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			var errs Errors
			if !errors.As(err, &errs) || len(errs) != 1 || errs[0].Field != c.field {
				t.Fatalf("err = %v, want one error on %s", err, c.field)
			}
		})
	}
}
