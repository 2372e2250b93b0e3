package daemon

import (
	"context"
	"net/http"
	"sync/atomic"
	"time"
)

// Idle exit. A daemon that `memtray mcp` started because none answered
// (Options.OnDemand) belongs to no one once its agents are gone: it exits
// by itself after Config.IdleExit (10 minutes) during which no request
// reached it — MCP, hook, API, UI or proxy — and none was in flight (an
// open MCP bridge stream or live feed keeps it). Time is measured on the
// monotonic clock, so a clock change neither ends nor stretches it. The
// user's own daemon (`memtray serve`, the app, the systemd unit) never
// idle-exits.

// idleWatch counts the requests in flight and notes when the last ended.
type idleWatch struct {
	onDemand bool
	inFlight atomic.Int64
	last     atomic.Int64 // monotonic ns since base when the last request ended (or the watch began)
	base     time.Time
}

// track wraps h to note each request.
func (w *idleWatch) track(h http.Handler) http.Handler {
	if !w.onDemand {
		return h
	}
	return http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		w.inFlight.Add(1)
		defer func() {
			w.last.Store(int64(time.Since(w.base)))
			w.inFlight.Add(-1)
		}()
		h.ServeHTTP(rw, r)
	})
}

// idleFor reports how long no request has been in flight (0 while one is).
func (w *idleWatch) idleFor() time.Duration {
	if w.inFlight.Load() > 0 {
		return 0
	}
	return time.Since(w.base) - time.Duration(w.last.Load())
}

// idleCheck is how often an on-demand daemon looks whether it is idle.
func idleCheck(idle time.Duration) time.Duration {
	return min(max(idle/4, 10*time.Millisecond), 30*time.Second)
}

// idleContext returns ctx, ended also when the daemon, started on demand,
// has been idle for Config.IdleExit; stop releases it.
func (d *Daemon) idleContext(ctx context.Context) (_ context.Context, stop func()) {
	limit := time.Duration(d.cfg.IdleExit)
	if !d.idle.onDemand || limit <= 0 {
		return ctx, func() {}
	}
	d.idle.base = time.Now()
	d.idle.last.Store(0)
	ctx, cancel := context.WithCancel(ctx)
	go func() {
		tick := time.NewTicker(idleCheck(limit))
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			if d.idle.idleFor() >= limit {
				d.log.Info("no agent for a while: this daemon, started by `memtray mcp`, exits (idle_exit)", "idle_exit", limit)
				cancel()
				return
			}
		}
	}()
	return ctx, cancel
}
