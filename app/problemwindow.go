//go:build desktop

package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/signal"
	"syscall"

	"github.com/wailsapp/wails/v2"
	"github.com/wailsapp/wails/v2/pkg/logger"
	"github.com/wailsapp/wails/v2/pkg/options"
	"github.com/wailsapp/wails/v2/pkg/options/assetserver"
	"github.com/wailsapp/wails/v2/pkg/options/linux"
	wruntime "github.com/wailsapp/wails/v2/pkg/runtime"

	"github.com/memtray/memtray/assets"
)

// showProblem tells the user why the app could not start: on stderr, and
// in a small window of its own (a launch from the desktop's menu or at
// login has no terminal). The window offers the running daemon's UI in the
// browser when one answers. It returns the exit code: 1.
func showProblem(p startProblem, stderr io.Writer) int {
	fmt.Fprintf(stderr, "memtray app: %s\n", p)
	var ctx context.Context
	mux := http.NewServeMux()
	mux.HandleFunc("/{$}", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'")
		w.Write(p.page())
	})
	mux.HandleFunc("/open", func(w http.ResponseWriter, r *http.Request) {
		if ctx != nil && p.OpenURL != "" {
			wruntime.BrowserOpenURL(ctx, p.OpenURL)
		}
		http.Redirect(w, r, "/", http.StatusSeeOther)
	})
	mux.HandleFunc("/close", func(w http.ResponseWriter, r *http.Request) {
		if ctx != nil {
			wruntime.Quit(ctx)
		}
		w.WriteHeader(http.StatusNoContent)
	})
	sigCtx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	err := wails.Run(&options.App{
		Title:         p.Title,
		Width:         560,
		Height:        300,
		DisableResize: false,
		AssetServer:   &assetserver.Options{Handler: mux},
		OnStartup: func(c context.Context) {
			ctx = c
			go func() {
				<-sigCtx.Done()
				if c.Err() == nil {
					wruntime.Quit(c)
				}
			}()
		},
		Linux:              &linux.Options{ProgramName: "memtray", Icon: assets.AppIcon},
		LogLevel:           logger.WARNING,
		LogLevelProduction: logger.ERROR,
	})
	if err != nil {
		fmt.Fprintf(stderr, "memtray app: the window saying why could not open either: %v\n", err)
	}
	return 1
}
