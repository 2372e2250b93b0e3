// Package setup holds the use cases that connect memtray to its
// surroundings: setting agents up (a plan of package agentsetup,
// previewed, then applied exactly as previewed, and its undo), starting
// at login (package autostart) and the first-run guide. The daemon builds
// one Service; the API, the window and the CLI reach it through their own
// small interfaces (see docs/architecture.md).
package setup

import (
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/memtray/memtray/backend/agentsetup"
	"github.com/memtray/memtray/backend/memory"
)

// Options configures New.
type Options struct {
	// DataDir is the daemon's data dir; ConfigPath the config file it was
	// started with ("" when none).
	DataDir, ConfigPath string
	// Listen is the address agents are to reach, asked at each use (the
	// daemon learns its bound address only when it serves).
	Listen func() string
	// HookTimeout is the recall hook's deadline now (a runtime setting).
	HookTimeout func() time.Duration
	// Binary names the memtray the agents' configs are to run, with notes
	// on it; nil: agentsetup.Binary("").
	Binary func() (string, []string, error)
	// Memories counts the memories of the store, for the first-run guide.
	Memories func() int
	// Clock dates the first-run guide's end; nil: the wall clock.
	Clock memory.Clock
	// Logger records what setup changed; nil discards it.
	Logger *slog.Logger
	// Desktop: the daemon runs inside the desktop app (tray and window).
	// False (`memtray serve`): starting memtray at login does not apply
	// to it (autostart.State.Headless says so; the UI hides the switch).
	Desktop bool
}

// Service connects agents, starts memtray at login and keeps the first-run
// guide's state. It is safe for concurrent use.
type Service struct {
	o Options
}

// New returns the service over o.
func New(o Options) *Service {
	if o.Binary == nil {
		o.Binary = func() (string, []string, error) { return agentsetup.Binary("") }
	}
	if o.Listen == nil {
		o.Listen = func() string { return "" }
	}
	if o.HookTimeout == nil {
		o.HookTimeout = func() time.Duration { return 0 }
	}
	if o.Memories == nil {
		o.Memories = func() int { return 0 }
	}
	if o.Clock == nil {
		o.Clock = memory.SystemClock{}
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return &Service{o: o}
}

// filesMu makes each setup's check and write one step: the files are the
// user's, shared by every daemon of the process.
var filesMu sync.Mutex

// env is agentsetup's Env for this daemon: the user's home, this program
// (by the CLI's rule), the address the daemon was started on and its data
// dir (the records are the CLI's: `memtray setup --undo` takes out what the
// window put in, and the other way round), and the flags that name that
// data dir and config in what setup writes.
func (s *Service) env(withBinary bool) (agentsetup.Env, error) {
	home, err := os.UserHomeDir()
	if err != nil {
		return agentsetup.Env{}, fmt.Errorf("find the home directory: %w", err)
	}
	if home, err = filepath.Abs(home); err != nil {
		return agentsetup.Env{}, fmt.Errorf("home: %w", err)
	}
	e := agentsetup.Env{Home: home, Listen: s.o.Listen(), DataDir: s.o.DataDir,
		HookTimeout: agentsetup.HookTimeout(s.o.HookTimeout())}
	// The agents are to reach this daemon's data dir, with its config.
	if e.Flags, err = agentsetup.Flags(s.o.DataDir, s.o.ConfigPath); err != nil {
		return e, err
	}
	if withBinary {
		if e.Binary, e.Notes, err = s.o.Binary(); err != nil {
			return e, err
		}
	}
	return e, nil
}
