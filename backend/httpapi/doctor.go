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
	// RebuildIndex starts a job (JobRebuildIndex) that rebuilds the text
	// index from the records while the daemon serves
	// (store.Store.RebuildText): its progress counts the memories indexed,
	// its result says how many documents the new index holds.
	RebuildIndex(ctx context.Context) (Job, error)
}

// JobRebuildIndex is the kind of the job of POST
// /api/doctor/rebuild-index (`memtray doctor --rebuild-index` while the
// daemon runs).
const JobRebuildIndex = "rebuild-index"

// doctorRoutes registers GET /api/doctor and POST
// /api/doctor/rebuild-index.
func (h *Handler) doctorRoutes() {
	h.mux.HandleFunc("GET /api/doctor", withoutBody(func(r *http.Request) (*store.CheckReport, error) {
		return h.s.Doctor.Check(r.Context())
	}))
	h.mux.HandleFunc("POST /api/doctor/rebuild-index", withoutBody(func(r *http.Request) (Job, error) {
		return h.s.Doctor.RebuildIndex(r.Context())
	}))
}

// RebuildIndex asks the daemon to rebuild its text index (POST
// /api/doctor/rebuild-index); WaitJob follows the job it returns.
func (c *Client) RebuildIndex(ctx context.Context) (Job, error) {
	var out Job
	err := c.do(ctx, http.MethodPost, "/api/doctor/rebuild-index", nil, &out)
	return out, err
}

// Check asks the daemon to check its store (GET /api/doctor).
func (c *Client) Check(ctx context.Context) (*store.CheckReport, error) {
	var out store.CheckReport
	if err := c.do(ctx, http.MethodGet, "/api/doctor", nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}
