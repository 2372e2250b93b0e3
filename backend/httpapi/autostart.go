package httpapi

import (
	"context"
	"net/http"

	"github.com/memtray/memtray/backend/autostart"
	"github.com/memtray/memtray/backend/setup"
)

// Autostarter is the part of Services that starts memtray at login.
type Autostarter interface {
	// Autostart says whether memtray starts at login, and how.
	Autostart(ctx context.Context) (autostart.State, error)
	// SetAutostart switches starting at login on or off.
	SetAutostart(ctx context.Context, req AutostartRequest) (autostart.State, error)
}

// AutostartRequest is what PUT /api/autostart takes.
type AutostartRequest = setup.AutostartRequest

// autostartRoutes registers GET and PUT /api/autostart.
func (h *Handler) autostartRoutes() {
	h.mux.HandleFunc("GET /api/autostart", withoutBody(func(r *http.Request) (autostart.State, error) {
		return h.s.Autostarter.Autostart(r.Context())
	}))
	h.mux.HandleFunc("PUT /api/autostart", withJSON(func(r *http.Request, req AutostartRequest) (autostart.State, error) {
		return h.s.Autostarter.SetAutostart(r.Context(), req)
	}))
}

// Autostart asks the daemon whether memtray starts at login.
func (c *Client) Autostart(ctx context.Context) (autostart.State, error) {
	var out autostart.State
	err := c.do(ctx, http.MethodGet, "/api/autostart", nil, &out)
	return out, err
}

// SetAutostart switches starting at login.
func (c *Client) SetAutostart(ctx context.Context, req AutostartRequest) (autostart.State, error) {
	var out autostart.State
	err := c.do(ctx, http.MethodPut, "/api/autostart", req, &out)
	return out, err
}
