package daemon

import (
	"context"
	"net"
	"net/http"
	"strings"
	"sync"
)

// endStreamsOnShutdown wraps h so the long-lived streams it serves end
// when srv begins to shut down: the UI's /api/events and an MCP client's
// GET stream would otherwise hold http.Server.Shutdown, which waits for
// every connection to go idle and never cancels a request, until its
// deadline (and a restart right after found the store still locked). A
// stream is a GET that accepts text/event-stream, or any GET of
// /api/events or /mcp; other requests finish as they would.
func endStreamsOnShutdown(srv *http.Server, h http.Handler) http.Handler {
	stop := make(chan struct{})
	srv.RegisterOnShutdown(func() { close(stop) })
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !isStream(r) {
			h.ServeHTTP(w, r)
			return
		}
		ctx, cancel := context.WithCancel(r.Context())
		defer cancel()
		go func() {
			select {
			case <-stop:
				cancel()
			case <-ctx.Done():
			}
		}()
		h.ServeHTTP(w, r.WithContext(ctx))
	})
}

// isStream reports whether r opens a long-lived stream.
func isStream(r *http.Request) bool {
	if r.Method != http.MethodGet {
		return false
	}
	return strings.Contains(r.Header.Get("Accept"), "text/event-stream") ||
		r.URL.Path == "/api/events" || r.URL.Path == "/mcp"
}

// closeNewConnsOnShutdown makes srv close, when it begins to shut down,
// the connections on which no request has arrived yet. http.Server.Shutdown
// counts such a connection as busy until it is 5 s old, and clients open
// them as a matter of course (an HTTP client dials a spare connection when
// two requests race for one), so a daemon stopping within 5 s of a burst of
// requests waited out its deadline and ended with "context deadline
// exceeded". A connection that has sent nothing has nothing to lose.
func closeNewConnsOnShutdown(srv *http.Server) {
	var (
		mu    sync.Mutex
		fresh = map[net.Conn]bool{}
	)
	prev := srv.ConnState
	srv.ConnState = func(c net.Conn, st http.ConnState) {
		mu.Lock()
		if st == http.StateNew {
			fresh[c] = true
		} else {
			delete(fresh, c)
		}
		mu.Unlock()
		if prev != nil {
			prev(c, st)
		}
	}
	srv.RegisterOnShutdown(func() {
		mu.Lock()
		defer mu.Unlock()
		for c := range fresh {
			c.Close()
			delete(fresh, c)
		}
	})
}
