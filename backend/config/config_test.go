package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestDefaultIsValid(t *testing.T) {
	c := Default()
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
}

func TestValidateNamesEveryBadField(t *testing.T) {
	cases := []struct {
		name  string
		edit  func(*Config)
		field string
	}{
		{"empty data dir", func(c *Config) { c.DataDir = "" }, "data_dir"},
		{"public listen", func(c *Config) { c.Listen = "0.0.0.0:7432" }, "listen"},
		{"lan listen", func(c *Config) { c.Listen = "192.168.1.4:7432" }, "listen"},
		{"no port", func(c *Config) { c.Listen = "127.0.0.1" }, "listen"},
		{"provider", func(c *Config) { c.Embedder.Provider = "magic" }, "embedder.provider"},
		{"model", func(c *Config) { c.Embedder.OllamaModel = "" }, "embedder.ollama_model"},
		{"timeout", func(c *Config) { c.Embedder.Timeout = 0 }, "embedder.timeout"},
		{"batch", func(c *Config) { c.Embedder.BatchSize = 0 }, "embedder.batch_size"},
		{"k", func(c *Config) { c.Search.K = 0 }, "search.k"},
		{"rrf", func(c *Config) { c.Search.RRFK = -1 }, "search.rrf_k"},
		{"mmr", func(c *Config) { c.Search.MMRLambda = 1.5 }, "search.mmr_lambda"},
		{"floor", func(c *Config) { c.Search.RelativeFloor = -0.1 }, "search.relative_floor"},
		{"decay", func(c *Config) { c.Search.DecayPerDay["user"] = 2 }, "search.decay_per_day.user"},
		{"boost", func(c *Config) { c.Search.KindBoost["decision"] = 0 }, "search.kind_boost.decision"},
		{"project boost", func(c *Config) { c.Search.ProjectBoost = 0.5 }, "search.project_boost"},
		{"vector weight", func(c *Config) { c.Search.VectorWeight = -1 }, "search.vector_weight"},
		{"vector floor", func(c *Config) { c.Search.VectorFloor = 2 }, "search.vector_floor"},
		{"candidates", func(c *Config) { c.Search.Candidates = -1 }, "search.candidates"},
		{"log level", func(c *Config) { c.LogLevel = "loud" }, "log_level"},
		{"idle exit short", func(c *Config) { c.IdleExit = Duration(time.Millisecond) }, "idle_exit"},
		{"idle exit negative", func(c *Config) { c.IdleExit = Duration(-time.Second) }, "idle_exit"},
		{"idle exit long", func(c *Config) { c.IdleExit = Duration(8 * 24 * time.Hour) }, "idle_exit"},
		{"headless idle", func(c *Config) { c.Ingest.HeadlessIdle = 0 }, "ingest.headless_idle"},
		{"headless hold turns", func(c *Config) { c.Ingest.HeadlessHoldTurns = 0 }, "ingest.headless_hold_turns"},
		{"headless hold total", func(c *Config) { c.Ingest.HeadlessHoldTotal = 100001 }, "ingest.headless_hold_total"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := Default()
			tc.edit(&c)
			err := c.Validate()
			var fe Errors
			if !errors.As(err, &fe) || len(fe) != 1 || fe[0].Field != tc.field {
				t.Fatalf("Validate = %v, want exactly one error on %s", err, tc.field)
			}
		})
	}
	c := Default()
	c.Listen, c.LogLevel = "", ""
	var fe Errors
	if err := c.Validate(); !errors.As(err, &fe) || len(fe) != 2 {
		t.Fatalf("two bad fields gave %v", err)
	}
}

func TestLoad(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	cases := []struct {
		name, body, wantErr string
		check               func(Config) bool
	}{
		{"partial", `{"listen":"127.0.0.1:9000","embedder":{"timeout":"5s"}}`, "",
			func(c Config) bool {
				return c.Listen == "127.0.0.1:9000" && time.Duration(c.Embedder.Timeout) == 5*time.Second && c.Search.K == 5
			}},
		{"seconds as number", `{"embedder":{"timeout":2.5}}`, "",
			func(c Config) bool { return time.Duration(c.Embedder.Timeout) == 2500*time.Millisecond }},
		{"localhost", `{"listen":"localhost:7000"}`, "", func(c Config) bool { return c.Listen == "localhost:7000" }},
		{"ipv6 loopback", `{"listen":"[::1]:7000"}`, "", func(c Config) bool { return c.Listen == "[::1]:7000" }},
		{"malformed", `{"listen":`, "parse", nil},
		{"unknown field", `{"lisen":"127.0.0.1:1"}`, "unknown field", nil},
		{"trailing", `{} {}`, "trailing", nil},
		{"bad duration", `{"embedder":{"timeout":"soon"}}`, "duration", nil},
		{"invalid value", `{"search":{"k":0}}`, "search.k", nil},
		{"not an object", `[1,2]`, "parse", nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, err := Load(write(tc.name+".json", tc.body))
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("Load = %v, want error containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil || !tc.check(c) {
				t.Fatalf("Load = %+v, %v", c, err)
			}
		})
	}
	if c, err := Load(filepath.Join(dir, "missing.json")); err != nil || c.Listen != Default().Listen {
		t.Fatalf("missing file: %v", err)
	}
	big := write("big.json", `{"log_level":"info"`+strings.Repeat(" ", MaxFileBytes)+`}`)
	if _, err := Load(big); err == nil || !strings.Contains(err.Error(), "larger") {
		t.Fatalf("huge file: %v", err)
	}
}

func TestSaveRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sub", "config.json")
	c := Default()
	c.Listen = "127.0.0.1:9999"
	c.Embedder.Timeout = Duration(7 * time.Second)
	if err := Save(path, c); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("mode %v, %v", fi.Mode(), err)
	}
	got, err := Load(path)
	if err != nil || got.Listen != c.Listen || got.Embedder.Timeout != c.Embedder.Timeout {
		t.Fatalf("round trip: %+v, %v", got, err)
	}
	bad := Default()
	bad.Listen = "8.8.8.8:1"
	if err := Save(path, bad); err == nil {
		t.Fatal("saved an invalid config")
	}
	if got, _ := Load(path); got.Listen != c.Listen {
		t.Fatal("a refused save changed the file")
	}
}

func TestDataDirFromXDG(t *testing.T) {
	t.Setenv("XDG_DATA_HOME", "/tmp/xdg-test")
	if d := DefaultDataDir(); d != "/tmp/xdg-test/memtray" {
		t.Fatalf("DefaultDataDir = %s", d)
	}
	t.Setenv("XDG_DATA_HOME", "relative/path")
	if d := DefaultDataDir(); strings.HasPrefix(d, "relative") {
		t.Fatalf("relative XDG_DATA_HOME used: %s", d)
	}
}

func FuzzDecode(f *testing.F) {
	f.Add([]byte(`{"listen":"127.0.0.1:7432","embedder":{"timeout":"3s"}}`))
	f.Add([]byte(`{"search":{"decay_per_day":{"user":0.1}}}`))
	f.Add([]byte(`{"embedder":{"timeout":1e308}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		c := Default()
		if err := Decode(data, &c); err != nil {
			return
		}
		_ = c.Validate() // must not panic whatever was decoded
	})
}

// TestLoadBadInput: a config file that is too large, not UTF-8, or 100,000
// arrays deep gives an error naming the file and the problem, and the
// defaults.
func TestLoadBadInput(t *testing.T) {
	dir := t.TempDir()
	cases := map[string]struct {
		data []byte
		want string
	}{
		"40 MB":           {bytes.Repeat([]byte(" "), 40<<20), "larger than"},
		"invalid UTF-8":   {[]byte("{\"capture\":{\"exclude_projects\":[\"caf\xe9\"]}}"), "not valid UTF-8"},
		"nested":          {[]byte(`{"search":` + strings.Repeat("[", 100000) + strings.Repeat("]", 100000) + `}`), "exceeded max depth"},
		"nested, in type": {[]byte(`{"listen":` + strings.Repeat("[", 100000) + strings.Repeat("]", 100000) + `}`), "exceeded max depth"},
	}
	for name, tc := range cases {
		path := filepath.Join(dir, strings.ReplaceAll(name, " ", "_")+".json")
		if err := os.WriteFile(path, tc.data, 0o600); err != nil {
			t.Fatal(err)
		}
		c, err := Load(path)
		if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v; want an error naming %s and saying %q", name, err, path, tc.want)
		}
		if c.Listen != Default().Listen {
			t.Errorf("%s: not the defaults", name)
		}
	}
}

func TestExecutable(t *testing.T) {
	exe, _ := os.Executable()
	exe, _ = filepath.EvalSymlinks(exe)
	img := filepath.Join(t.TempDir(), "memtray-x86_64.AppImage")
	os.WriteFile(img, []byte("x"), 0o755)
	for _, tt := range []struct{ appimage, want string }{
		{"", exe},
		{img, img},
		{"relative.AppImage", exe},
		{filepath.Join(t.TempDir(), "gone.AppImage"), exe},
	} {
		t.Setenv("APPIMAGE", tt.appimage)
		if got, err := Executable(); err != nil || got != tt.want {
			t.Errorf("APPIMAGE=%q: %q, %v; want %q", tt.appimage, got, err, tt.want)
		}
	}
}

func TestIdleExitZeroMeansNever(t *testing.T) {
	c := Default()
	if time.Duration(c.IdleExit) != 10*time.Minute {
		t.Fatalf("default idle_exit = %s, want 10m", time.Duration(c.IdleExit))
	}
	c.IdleExit = 0
	if err := c.Validate(); err != nil {
		t.Fatalf("idle_exit 0: %v", err)
	}
}

// TestLoadReportsEveryProblem: a config file's every problem is reported,
// each with its field path: unknown fields and values of the wrong type
// anywhere in the file, and what Validate finds in the rest. Only the
// first unknown field or wrong type was, and Validate's problems not at
// all then.
func TestLoadReportsEveryProblem(t *testing.T) {
	for _, tc := range []struct {
		name, body string
		want       []string // fields, in order
	}{
		{"unknown fields", `{"lisen":"127.0.0.1:1","search":{"k":5,"bogus":1},"nope":true}`,
			[]string{"lisen", "search.bogus", "nope"}},
		{"wrong types", `{"search":{"k":"five"},"recall":{"max_tokens":"many"},"capture":{"exclude_projects":"web"},"embedder":{"timeout":"soon"}}`,
			[]string{"search.k", "recall.max_tokens", "capture.exclude_projects", "embedder.timeout"}},
		{"nested and map", `{"steward":{"types":{"project":{"bogus":1}}},"search":{"kind_boost":{"fact":"high"}}}`,
			[]string{"steward.types.project.bogus", "search.kind_boost.fact", "steward.types.project"}}, // a map value is replaced whole: {} is not a valid type
		{"with invalid values", `{"listen":"0.0.0.0:80","search":{"k":0,"bogus":1},"data_dir":""}`,
			[]string{"search.bogus", "data_dir", "listen", "search.k"}},
		{"section not an object", `{"search":3,"listen":"0.0.0.0:80"}`, []string{"search", "listen"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "config.json")
			if err := os.WriteFile(path, []byte(tc.body), 0o600); err != nil {
				t.Fatal(err)
			}
			c, err := Load(path)
			var errs Errors
			if !errors.As(err, &errs) || !strings.Contains(err.Error(), path) {
				t.Fatalf("Load = %v, want Errors naming %s", err, path)
			}
			var got []string
			for _, fe := range errs {
				got = append(got, fe.Field)
			}
			if !slices.Equal(got, tc.want) {
				t.Fatalf("fields %q, want %q\n%v", got, tc.want, err)
			}
			if c.Listen != Default().Listen {
				t.Error("a bad file did not give the defaults")
			}
		})
	}
}

// TestDecodeKeepsTheRest: Decode with bad fields sets every good one and
// names the bad ones (as the Settings' PATCH reports them).
func TestDecodeKeepsTheRest(t *testing.T) {
	c := Default()
	err := Decode([]byte(`{"search":{"k":"x","mmr_lambda":0.5},"log_level":"debug"}`), &c)
	var errs Errors
	if !errors.As(err, &errs) || len(errs) != 1 || errs[0].Field != "search.k" || !strings.Contains(errs[0].Problem, "whole number") {
		t.Fatalf("Decode = %v", err)
	}
	if c.Search.MMRLambda != 0.5 || c.LogLevel != "debug" || c.Search.K != Default().Search.K {
		t.Fatalf("Decode kept %+v %q", c.Search, c.LogLevel)
	}
}

// FuzzDecodeFieldProblems: Decode never panics on a file with bad fields,
// and what it keeps of one (every good field) decodes again from its own
// JSON.
func FuzzDecodeFieldProblems(f *testing.F) {
	for _, s := range []string{`{}`, `{"listen":"127.0.0.1:1"}`, `{"search":{"k":"x","bogus":[1]},"nope":null}`,
		`{"steward":{"types":{"a":{"b":1}}}}`, `[1]`, `{"search":3}`, `{"embedder":{"timeout":"soon"}}`, `{"a":1,"a":2}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		c := Default()
		err := Decode(data, &c)
		var errs Errors
		if err != nil && !errors.As(err, &errs) {
			return
		}
		_ = c.Validate()
		out, merr := json.Marshal(c)
		if merr != nil {
			t.Fatal(merr)
		}
		again := Default()
		if err := Decode(out, &again); err != nil {
			t.Fatalf("Decode of its own output: %v\n%s", err, out)
		}
	})
}

// TestDocSaysNoGoIdentifiers: the field docs (docs/configuration.md, which
// Settings shows) speak to users: "Empty means DefaultOpenAIURL" named a Go
// constant instead of the URL.
func TestDocSaysNoGoIdentifiers(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "configuration.md"))
	if err != nil {
		t.Fatal(err)
	}
	goName := regexp.MustCompile(`\b(?:[a-z]+\.)?(?:Default|Builtin|Max|Min)[A-Z][A-Za-z]*\b`)
	if found := goName.FindAllString(string(doc), -1); len(found) > 0 {
		t.Errorf("docs/configuration.md names Go identifiers: %v (say the value)", found)
	}
}
