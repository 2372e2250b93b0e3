package settings

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/memtray/memtray/backend/config"
	"github.com/memtray/memtray/backend/memory"
)

// open returns a service over a temporary data dir and config file.
func open(t *testing.T) (*Service, string) {
	t.Helper()
	cfg := config.Default()
	cfg.DataDir = t.TempDir()
	path := filepath.Join(t.TempDir(), "config.json")
	s, err := New(Options{Config: cfg, Built: cfg, ConfigPath: path, DataDir: cfg.DataDir,
		Clock: memory.FixedClock{T: time.Date(2026, 5, 6, 7, 8, 9, 0, time.UTC)}})
	if err != nil {
		t.Fatal(err)
	}
	return s, path
}

func TestSetConfig(t *testing.T) {
	tests := []struct {
		name         string
		patch        string
		wantErr      error
		applied      []string
		needsRestart []string
	}{
		{name: "not an object", patch: `[1]`, wantErr: memory.ErrInvalid},
		{name: "nothing", patch: `{}`, wantErr: memory.ErrInvalid},
		{name: "not a runtime field", patch: `{"data_dir":"/x"}`, wantErr: memory.ErrInvalid},
		// The team section is read at start (the store's outbox policy and
		// the sync loop are built with it): refused here, saying to restart.
		{name: "team is read at start", patch: `{"team":{"projects":["shop"],"share":true}}`, wantErr: memory.ErrInvalid},
		{name: "invalid value", patch: `{"recall":{"k":-1}}`, wantErr: memory.ErrInvalid},
		{name: "live field", patch: `{"steward":{"every":"2h"}}`, applied: []string{"steward.every"}},
		{name: "k lowered", patch: `{"recall":{"k":2}}`, applied: []string{"recall.k"}},
		{name: "k raised", patch: `{"recall":{"k":9}}`, needsRestart: []string{"recall.k"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, path := open(t)
			up, err := s.SetConfig(context.Background(), json.RawMessage(tt.patch))
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("err = %v, want %v", err, tt.wantErr)
				}
				if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
					t.Fatalf("a refused change wrote the config file: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if strings.Join(up.Applied, ",") != strings.Join(tt.applied, ",") || strings.Join(up.NeedsRestart, ",") != strings.Join(tt.needsRestart, ",") || !up.Saved {
				t.Fatalf("update: %+v", up)
			}
			data, err := os.ReadFile(path)
			if err != nil || !json.Valid(data) {
				t.Fatalf("config file: %v %s", err, data)
			}
			if got, _ := s.Config(context.Background()); got.Path != path {
				t.Fatalf("view path %q", got.Path)
			}
		})
	}
}

func TestConfigMasksKey(t *testing.T) {
	cfg := config.Default()
	cfg.DataDir = t.TempDir()
	cfg.Judge.AnthropicKey = "sk-secret"
	s, err := New(Options{Config: cfg, Built: cfg, DataDir: cfg.DataDir})
	if err != nil {
		t.Fatal(err)
	}
	v, _ := s.Config(context.Background())
	if v.Config.Judge.AnthropicKey != maskedKey || s.Live().Judge.AnthropicKey != "sk-secret" {
		t.Fatalf("view key %q, live key %q", v.Config.Judge.AnthropicKey, s.Live().Judge.AnthropicKey)
	}
}

func TestSetCapture(t *testing.T) {
	day := config.Duration(24 * time.Hour)
	tooLong := config.Duration(MaxPause + time.Hour)
	on := true
	tests := []struct {
		name    string
		u       CaptureUpdate
		wantErr bool
		enabled bool
		paused  bool
		exclude []string
	}{
		{name: "pause", u: CaptureUpdate{PauseFor: &day}, enabled: false, paused: true, exclude: []string{}},
		{name: "pause too long", u: CaptureUpdate{PauseFor: &tooLong}, wantErr: true},
		{name: "pause with enabled", u: CaptureUpdate{PauseFor: &day, Enabled: &on}, wantErr: true},
		{name: "exclude", u: CaptureUpdate{Exclude: []string{"a", "b"}, Include: []string{"b"}}, enabled: true, exclude: []string{"a"}},
		{name: "empty exclusion", u: CaptureUpdate{Exclude: []string{" "}}, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, _ := open(t)
			var published []CaptureState
			s.o.OnCapture = func(cs CaptureState) { published = append(published, cs) }
			cs, err := s.SetCapture(context.Background(), tt.u)
			if tt.wantErr {
				if err == nil || len(published) != 0 {
					t.Fatalf("err = %v, published %d", err, len(published))
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if cs.Enabled != tt.enabled || (cs.PausedUntil != nil) != tt.paused || strings.Join(cs.ExcludeProjects, ",") != strings.Join(tt.exclude, ",") || len(published) != 1 {
				t.Fatalf("state %+v, published %d", cs, len(published))
			}
			if s.AllowTurn("a", "") == tt.enabled && len(tt.exclude) > 0 {
				t.Fatalf("an excluded project's turn is allowed")
			}
			// A new service over the same data dir starts with this state.
			again, err := New(s.o)
			if err != nil {
				t.Fatal(err)
			}
			if got, _ := again.Capture(context.Background()); got.Enabled != cs.Enabled || strings.Join(got.ExcludeProjects, ",") != strings.Join(cs.ExcludeProjects, ",") {
				t.Fatalf("after a restart: %+v, want %+v", got, cs)
			}
		})
	}
}

func TestRotateToken(t *testing.T) {
	s, _ := open(t)
	if _, err := s.RotateToken(context.Background()); err == nil {
		t.Fatal("rotating without a token: no error")
	}
	var set string
	s.o.NewToken = func() (string, error) { return "new", nil }
	s.o.SetToken = func(tok string) { set = tok }
	if tok, err := s.RotateToken(context.Background()); err != nil || tok != "new" || set != "new" {
		t.Fatalf("RotateToken = %q, %v; set %q", tok, err, set)
	}
}

func TestLeafPaths(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{`{"a":1}`, "a"},
		{`{"a":{"b":1,"c":[1]},"d":{}}`, "a.b,a.c,d"},
	} {
		var m map[string]any
		if err := json.Unmarshal([]byte(tt.in), &m); err != nil {
			t.Fatal(err)
		}
		if got := strings.Join(leafPaths("", m), ","); got != tt.want {
			t.Errorf("leafPaths(%s) = %s, want %s", tt.in, got, tt.want)
		}
	}
}
