package daemon

import (
	"context"
	"sync"

	"github.com/memtray/memtray/backend/httpapi"
	"github.com/memtray/memtray/backend/memory"
	"github.com/memtray/memtray/backend/settings"
)

// CaptureStateFile, in the data dir, keeps the runtime capture switch and
// the excluded projects across restarts (package settings').
const CaptureStateFile = settings.CaptureStateFile

// openCapture builds the settings service, which builds the proxy with
// the capture state the user last chose at runtime, if any.
func (d *Daemon) openCapture() error {
	var err error
	d.settings, err = settings.New(settings.Options{Config: d.initial, Built: d.cfg, ConfigPath: d.configPath, DataDir: d.cfg.DataDir,
		Clock: d.clock, Logger: d.log, OnCapture: func(cs settings.CaptureState) { d.publish(httpapi.EventCapture, cs) },
		NewToken: func() (string, error) { return RotateToken(d.cfg.DataDir) }, SetToken: d.cred.Set})
	if err != nil {
		return err
	}
	d.proxy = d.settings.Proxy()
	if d.turn, err = openLive(d.cfg.DataDir); err != nil {
		d.log.Warn("captured turns left by an earlier run partly unreadable; the rest is kept", "err", err)
	}
	return nil
}

// runCapture feeds captured exchanges to the write pipeline, a whole
// user turn at a time (liveturns.go), until ctx ends. One worker keeps a
// session's exchanges in order.
func (d *Daemon) runCapture(ctx context.Context) {
	var wg sync.WaitGroup
	wg.Go(func() { d.runLive(ctx) })
	d.proxy.Run(ctx, 1, d.takeProxyExchange)
	wg.Wait()
}

// takeProxyExchange is the proxy's handler, in this order: an exchange of
// a turn stored from the session file already is skipped; the rest is
// saved to its live turn or decided (captureExchange); only then is its
// turn recorded as the proxy's, so the transcript's copy is skipped (in
// between, the transcript's copy waits; when the exchange is not kept, it
// is stored). A kill between the last two steps leaves both copies (the
// turn may be stored twice, never lost); recorded first, a kill lost it
// from both.
func (d *Daemon) takeProxyExchange(ctx context.Context, ex memory.Exchange) error {
	if d.skipProxyExchange(ex) { // stored from the session file already (transcripts.go)
		return nil
	}
	took := false
	defer func() {
		if !took {
			d.proxyDropped(ex) // also on a panic, which the proxy recovers
		}
	}()
	if err := d.captureExchange(ctx, ex); err != nil {
		return err
	}
	took = true
	d.proxyTook(ex)
	return nil
}

// TrayBackend is what the tray's menu reaches in-process: the settings'
// capture switch and the feed's recent decisions.
type TrayBackend struct {
	httpapi.Settings
	httpapi.Feed
}

// Tray is the in-process backend of the tray (app/tray's Backend).
func (d *Daemon) Tray() TrayBackend {
	svc := d.Services()
	return TrayBackend{Settings: svc.Settings, Feed: svc.Feed}
}
