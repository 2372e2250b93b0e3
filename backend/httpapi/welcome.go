package httpapi

import (
	"context"
	"net/http"

	"github.com/memtray/memtray/backend/setup"
)

// Welcome is the part of Services behind the first-run guide: whether the
// user has been through it (or skipped it), and where things are.
type Welcome interface {
	// Welcome says whether the first-run guide is done.
	Welcome(ctx context.Context) (WelcomeState, error)
	// FinishWelcome records that the guide is done (finished or skipped).
	FinishWelcome(ctx context.Context) (WelcomeState, error)
}

// WelcomeState is what GET /api/welcome answers.
type WelcomeState = setup.WelcomeState

// welcomeRoutes registers GET /api/welcome and POST /api/welcome/done.
func (h *Handler) welcomeRoutes() {
	h.mux.HandleFunc("GET /api/welcome", withoutBody(func(r *http.Request) (WelcomeState, error) {
		return h.s.Welcome.Welcome(r.Context())
	}))
	h.mux.HandleFunc("POST /api/welcome/done", withoutBody(func(r *http.Request) (WelcomeState, error) {
		return h.s.Welcome.FinishWelcome(r.Context())
	}))
}

// Welcome runs GET /api/welcome.
func (c *Client) Welcome(ctx context.Context) (WelcomeState, error) {
	var out WelcomeState
	err := c.do(ctx, http.MethodGet, "/api/welcome", nil, &out)
	return out, err
}

// FinishWelcome runs POST /api/welcome/done.
func (c *Client) FinishWelcome(ctx context.Context) (WelcomeState, error) {
	var out WelcomeState
	err := c.do(ctx, http.MethodPost, "/api/welcome/done", nil, &out)
	return out, err
}
