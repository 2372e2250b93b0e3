package httpapi

import (
	"context"
	"net/http"

	"github.com/memtray/memtray/backend/store"
)

// Doctor is the part of Services that checks the store a running daemon
// holds (`memtray doctor` asks it when the store's lock is held): the
// same checks as the doctor makes of a closed store, changing nothing.
type Doctor interface {
	// Check reads the store and says what is damaged (store.Store.Check).
	Check(ctx context.Context) (*store.CheckReport, error)
}

// doctorRoutes registers GET /api/doctor.
func (h *Handler) doctorRoutes() {
	h.mux.HandleFunc("GET /api/doctor", withoutBody(func(r *http.Request) (*store.CheckReport, error) {
		return h.s.Doctor.Check(r.Context())
	}))
}

// Check asks the daemon to check its store (GET /api/doctor).
func (c *Client) Check(ctx context.Context) (*store.CheckReport, error) {
	var out store.CheckReport
	if err := c.do(ctx, http.MethodGet, "/api/doctor", nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}
