//go:build desktop

package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"

	"github.com/wailsapp/wails/v2"
	"github.com/wailsapp/wails/v2/pkg/logger"
	"github.com/wailsapp/wails/v2/pkg/options"
	"github.com/wailsapp/wails/v2/pkg/options/assetserver"
	"github.com/wailsapp/wails/v2/pkg/options/linux"
	wruntime "github.com/wailsapp/wails/v2/pkg/runtime"

	"github.com/memtray/memtray/app/tray"
	"github.com/memtray/memtray/assets"
	"github.com/memtray/memtray/backend/cli"
	"github.com/memtray/memtray/backend/daemon"
	"github.com/memtray/memtray/backend/memory"
)

// desktopBuilt says whether this build has the window and the tray.
const desktopBuilt = true

// desktop is the running app: the daemon in-process, the window, the tray.
type desktop struct {
	d      *daemon.Daemon
	log    *slog.Logger
	ctx    context.Context // Wails' context, set at startup
	tray   *tray.Tray
	addr   string
	stderr io.Writer
	hidden bool // start in the tray, the window hidden (--hidden)

	mu       sync.Mutex
	serveErr error
}

// runApp opens the desktop app: the daemon serving on the configured
// loopback address (proxy, MCP and API for agents), the window on the same
// handler in-process, and the tray. It returns when the app quits.
func runApp(args []string, stdout, stderr io.Writer) int {
	cfg, af, err := parseAppFlags(args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		fmt.Fprintf(stderr, "memtray app: %v\n", err)
		return 2
	}
	if !hasDisplay() {
		fmt.Fprintln(stderr, "memtray app: no display ($DISPLAY and $WAYLAND_DISPLAY are unset): run `memtray serve` and open the UI address it prints in a browser")
		return 1
	}
	dataDir, _ := filepath.Abs(cfg.DataDir)
	uid := instanceID(dataDir)
	if focusRunning(uid) {
		fmt.Fprintln(stdout, "memtray is already running on this data dir: its window is in front now")
		return 0
	}

	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: logLevel(cfg.LogLevel)}))
	sigCtx, stopSignals := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stopSignals()
	var shown atomic.Pointer[desktop] // set once the window can be shown
	d, err := daemon.Open(sigCtx, daemon.Options{Config: cfg, Version: cli.Version, Build: cli.Build(), Logger: log, Desktop: true,
		ShowWindow: func() {
			if a := shown.Load(); a != nil {
				a.show()
			}
		}})
	if err != nil {
		r := findRunning(dataDir)
		if errors.Is(err, memory.ErrLocked) && showRunning(r) {
			// Another desktop app the single-instance signal did not reach
			// (outside Linux, no session bus): it showed its window.
			fmt.Fprintln(stdout, "memtray is already running on this data dir: its window is in front now")
			return 0
		}
		// Most often `memtray serve` holds the data dir: say so in a window.
		return showProblem(explainStart(err, dataDir, cfg.Listen, r), stderr)
	}
	defer d.Close()
	app := &desktop{d: d, log: log, stderr: stderr, hidden: af.hidden}
	shown.Store(app)

	// The daemon listens before the window opens, so a taken port is an
	// error on the terminal rather than a window without a daemon.
	serveCtx, stopServe := context.WithCancel(context.Background())
	defer stopServe()
	ready, served := make(chan string, 1), make(chan error, 1)
	go func() { served <- d.Serve(serveCtx, func(addr string) { ready <- addr }) }()
	select {
	case app.addr = <-ready:
	case err := <-served:
		d.Close() // before the window, which waits for the user
		return showProblem(explainStart(err, dataDir, cfg.Listen, running{}), stderr)
	}
	go func() {
		err := <-served
		app.mu.Lock()
		app.serveErr = err
		app.mu.Unlock()
		if err != nil {
			log.Error("the daemon stopped serving", "err", err)
		}
		served <- err // for the shutdown below
	}()
	fmt.Fprintf(stdout, "memtray %s: the window is open; agents reach the daemon at http://%s (proxy, MCP at /mcp).\n"+
		"In a browser: http://%s/login?token=%s\n", cli.Version, app.addr, app.addr, d.Token())

	err = wails.Run(app.options(uid, sigCtx))
	if app.tray != nil {
		app.tray.Stop()
	}
	stopServe()
	serveErr := <-served
	if err != nil {
		fmt.Fprintf(stderr, "memtray app: window: %v\n", err)
		return 1
	}
	if serveErr != nil {
		fmt.Fprintf(stderr, "memtray app: %v\n", serveErr)
		return 1
	}
	log.Info("memtray stopped")
	return 0
}

// options is the Wails configuration of the window.
func (a *desktop) options(uid string, sigCtx context.Context) *options.App {
	// Every request goes to the daemon's handler, in-process (no token, no
	// Host check): it serves the built UI (frontend.Dist(), with its CSP and
	// the SPA fallback) and the API, so the window and a browser get the
	// same responses. Until the UI is built it serves a page saying how.
	var handler http.Handler = a.d.Handler("")
	return &options.App{
		Title:             "memtray",
		Width:             1280,
		Height:            800,
		MinWidth:          1024,
		MinHeight:         700,
		HideWindowOnClose: true, // closing the window leaves memtray in the tray
		StartHidden:       a.hidden,
		AssetServer: &assetserver.Options{
			Handler:    handler,
			Middleware: selftestMiddleware(os.Getenv(selftestEnv)),
		},
		OnStartup: func(ctx context.Context) {
			a.ctx = ctx
			a.tray = tray.Start(tray.Options{
				Backend: a.d.Tray(),
				Open:    a.show,
				Quit:    func() { wruntime.Quit(ctx) },
				Health:  a.health,
				Logger:  a.log,
			})
			go func() {
				<-sigCtx.Done() // Ctrl-C or SIGTERM: quit as the tray's Quit does
				if ctx.Err() == nil {
					wruntime.Quit(ctx)
				}
			}()
		},
		OnDomReady: func(ctx context.Context) {
			if os.Getenv(selftestEnv) != "" {
				wruntime.WindowExecJS(ctx, selftestJS)
			}
		},
		SingleInstanceLock: &options.SingleInstanceLock{
			UniqueId:               uid,
			OnSecondInstanceLaunch: func(options.SecondInstanceData) { a.show() },
		},
		Linux: &linux.Options{
			ProgramName: "memtray",
			Icon:        assets.AppIcon,
		},
		LogLevel:           logger.WARNING,
		LogLevelProduction: logger.ERROR,
	}
}

// show brings the window back (from the tray, or a second launch).
func (a *desktop) show() {
	if a.ctx == nil {
		return
	}
	wruntime.Show(a.ctx)
	wruntime.WindowUnminimise(a.ctx)
	wruntime.WindowShow(a.ctx)
}

// health reports a daemon that stopped serving (the tray's error icon).
func (a *desktop) health() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.serveErr != nil {
		return fmt.Errorf("the daemon stopped: %w", a.serveErr)
	}
	return nil
}

// instanceID names the single-instance lock: one app per data dir (the
// daemon's store allows one process anyway), so a second launch on the same
// data dir focuses the running one, and a test on a temporary data dir
// never finds the user's app.
func instanceID(dataDir string) string {
	sum := sha256.Sum256([]byte(dataDir))
	return "io.memtray.app." + hex.EncodeToString(sum[:8])
}

func logLevel(s string) slog.Level {
	var l slog.Level
	l.UnmarshalText([]byte(s))
	return l
}
