package main

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/memtray/memtray/backend/config"
	"github.com/memtray/memtray/backend/daemon"
)

func problemConfig(t *testing.T, dataDir, listen string) config.Config {
	t.Helper()
	cfg := config.Default()
	cfg.DataDir = dataDir
	cfg.Listen = listen
	cfg.Embedder.Provider = "builtin"
	cfg.Capture.Transcripts.ClaudeCodeDirs = []string{t.TempDir()}
	cfg.Capture.Transcripts.CodexDirs = []string{t.TempDir()}
	return cfg
}

// serveDaemon opens a daemon with opts on a new data dir (problemConfig's,
// on a free loopback port) and serves it until the test ends; it returns
// the data dir and the address it serves on.
func serveDaemon(t *testing.T, opts daemon.Options) (dir, addr string) {
	t.Helper()
	dir = t.TempDir()
	opts.Config = problemConfig(t, dir, "127.0.0.1:0")
	d, err := daemon.Open(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	ctx, stop := context.WithCancel(context.Background())
	ready, done := make(chan string, 1), make(chan error, 1)
	go func() { done <- d.Serve(ctx, func(a string) { ready <- a }) }()
	t.Cleanup(func() { stop(); <-done })
	return dir, <-ready
}

// TestExplainStart: the reasons the app cannot start, as its dialog says
// them, from real daemons on real data dirs (issue 21 bug 14: a launch
// while `memtray serve` held the data dir exited 1 with the reason on
// stderr only).
func TestExplainStart(t *testing.T) {
	ctx := context.Background()

	// A serving daemon holds the data dir: already running, with its UI.
	served, addr := serveDaemon(t, daemon.Options{})

	// A data dir held by a process that serves nothing.
	quiet := t.TempDir()
	q, err := daemon.Open(ctx, daemon.Options{Config: problemConfig(t, quiet, "127.0.0.1:0")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { q.Close() })

	// An address another program listens on.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	taken := l.Addr().String()

	// A data dir whose records file was cut short.
	damaged := t.TempDir()
	dd, err := daemon.Open(ctx, daemon.Options{Config: problemConfig(t, damaged, "127.0.0.1:0")})
	if err != nil {
		t.Fatal(err)
	}
	dd.Close()
	if err := os.Truncate(filepath.Join(damaged, daemon.StoreDir, "memtray.db"), 100); err != nil {
		t.Fatal(err)
	}

	openErr := func(dir, listen string) error {
		t.Helper()
		d2, err := daemon.Open(ctx, daemon.Options{Config: problemConfig(t, dir, listen)})
		if err != nil {
			return err
		}
		defer d2.Close()
		return d2.Serve(ctx, nil)
	}
	for _, tc := range []struct {
		name, dir, listen string
		wantTitle         string
		wantDetail        []string
		wantURL           bool
	}{
		{"serve holds the data dir", served, "127.0.0.1:0", "memtray is already running", []string{addr, "memtray serve", "kill"}, true},
		{"a silent process holds it", quiet, "127.0.0.1:0", "memtray's data dir is in use", []string{quiet}, false},
		{"the address is taken", t.TempDir(), taken, "memtray cannot listen on " + taken, []string{"--listen"}, false},
		{"the store is damaged", damaged, "127.0.0.1:0", "memtray's store is damaged", []string{"`memtray doctor`", "`memtray doctor --salvage`", "kept"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := openErr(tc.dir, tc.listen)
			if err == nil {
				t.Fatal("the second start succeeded")
			}
			p := explainStart(err, tc.dir, tc.listen, findRunning(tc.dir))
			if p.Title != tc.wantTitle || p.Reason != err.Error() {
				t.Fatalf("explainStart(%v) = %+v, want title %q", err, p, tc.wantTitle)
			}
			for _, w := range tc.wantDetail {
				if !strings.Contains(p.Detail, w) {
					t.Errorf("detail %q lacks %q", p.Detail, w)
				}
			}
			if (p.OpenURL != "") != tc.wantURL || (tc.wantURL && !strings.HasPrefix(p.OpenURL, "http://"+addr+"/login?token=")) {
				t.Errorf("OpenURL = %q", p.OpenURL)
			}
			page := string(p.page())
			if !strings.Contains(page, `id="close"`) || strings.Contains(page, "<script") || strings.Contains(page, `id="open"`) != tc.wantURL {
				t.Errorf("page: %s", page)
			}
		})
	}

	// Anything else is said as it is, escaped in the page.
	p := explainStart(errors.New(`config: <bad> "value"`), "/d", "127.0.0.1:1", running{})
	if p.Title != "memtray could not start" || !strings.Contains(string(p.page()), "config: &lt;bad&gt; &#34;value&#34;") {
		t.Errorf("other error: %+v\n%s", p, p.page())
	}
}

func TestCodeSpans(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"run `memtray serve` now", "run <code>memtray serve</code> now"},
		{"no code", "no code"},
		{"one ` tick", "one ` tick"},
		{"`a` and `b`", "<code>a</code> and <code>b</code>"},
	} {
		if got := codeSpans(tc.in); got != tc.want {
			t.Errorf("codeSpans(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// TestShowRunning: a second launch asks a running desktop app (a daemon
// with a window) to show it over its loopback API; a headless serve has
// none to show.
func TestShowRunning(t *testing.T) {
	var shown atomic.Int32
	for _, tc := range []struct {
		name       string
		show       func()
		wantWindow bool
	}{
		{"the desktop app", func() { shown.Add(1) }, true},
		{"memtray serve", nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			shown.Store(0)
			dir, _ := serveDaemon(t, daemon.Options{Desktop: tc.show != nil, ShowWindow: tc.show})
			r := findRunning(dir)
			if !r.ok || r.window != tc.wantWindow {
				t.Fatalf("findRunning = %+v, want ok and window %v", r, tc.wantWindow)
			}
			if got := showRunning(r); got != tc.wantWindow || (shown.Load() == 1) != tc.wantWindow {
				t.Fatalf("showRunning = %v (shown %d), want %v", got, shown.Load(), tc.wantWindow)
			}
		})
	}
	if showRunning(running{}) {
		t.Fatal("showRunning with nothing running")
	}
}
