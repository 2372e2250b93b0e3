package httpapi

import (
	"context"
	"net/http"

	"github.com/memtray/memtray/backend/steward"
	"github.com/memtray/memtray/backend/store"
)

// Steward is the part of Backend that runs consolidation: plans first,
// applies on request, undoes the last run, keeps a trash.
type Steward interface {
	// StewardPlan makes a dry-run plan and keeps it for StewardApply.
	StewardPlan(ctx context.Context, opts steward.PlanOptions) (*steward.Plan, error)
	// StewardApply applies a plan StewardPlan made (ops narrows it; empty
	// applies every operation of the plan).
	StewardApply(ctx context.Context, req ApplyRequest) (steward.Result, error)
	// StewardUndo restores the state before the last applied run.
	StewardUndo(ctx context.Context) (steward.Result, error)
	// Trash lists pruned and merged-away memories, restorable until purged.
	Trash(ctx context.Context) ([]store.TrashedMemory, error)
	// Restore brings memories back from the trash.
	Restore(ctx context.Context, ids []string) error
}

// ApplyRequest is what POST /api/steward/apply takes.
type ApplyRequest struct {
	PlanID string   `json:"plan_id"`
	Ops    []string `json:"ops,omitempty"`
}

// RestoreRequest is what POST /api/trash/restore takes.
type RestoreRequest struct {
	IDs []string `json:"ids"`
}

// stewardRoutes registers the steward's routes.
func (h *Handler) stewardRoutes() {
	h.mux.HandleFunc("POST /api/steward/plan", withJSON(func(r *http.Request, o steward.PlanOptions) (*steward.Plan, error) {
		return h.b.StewardPlan(r.Context(), o)
	}))
	h.mux.HandleFunc("POST /api/steward/apply", withJSON(func(r *http.Request, req ApplyRequest) (steward.Result, error) {
		return h.b.StewardApply(r.Context(), req)
	}))
	h.mux.HandleFunc("POST /api/steward/undo", withoutBody(func(r *http.Request) (steward.Result, error) {
		return h.b.StewardUndo(r.Context())
	}))
	h.mux.HandleFunc("GET /api/trash", withoutBody(func(r *http.Request) ([]store.TrashedMemory, error) {
		return h.b.Trash(r.Context())
	}))
	h.mux.HandleFunc("POST /api/trash/restore", withJSON(func(r *http.Request, req RestoreRequest) (map[string]int, error) {
		return map[string]int{"restored": len(req.IDs)}, h.b.Restore(r.Context(), req.IDs)
	}))
}

// StewardPlan asks the daemon for a plan.
func (c *Client) StewardPlan(ctx context.Context, o steward.PlanOptions) (*steward.Plan, error) {
	var out steward.Plan
	err := c.do(ctx, http.MethodPost, "/api/steward/plan", o, &out)
	return &out, err
}

// StewardApply applies a plan the daemon made.
func (c *Client) StewardApply(ctx context.Context, req ApplyRequest) (steward.Result, error) {
	var out steward.Result
	err := c.do(ctx, http.MethodPost, "/api/steward/apply", req, &out)
	return out, err
}

// StewardUndo undoes the last applied run.
func (c *Client) StewardUndo(ctx context.Context) (steward.Result, error) {
	var out steward.Result
	err := c.do(ctx, http.MethodPost, "/api/steward/undo", nil, &out)
	return out, err
}

// Trash lists the trash.
func (c *Client) Trash(ctx context.Context) ([]store.TrashedMemory, error) {
	var out []store.TrashedMemory
	err := c.do(ctx, http.MethodGet, "/api/trash", nil, &out)
	return out, err
}

// Restore brings memories back from the trash.
func (c *Client) Restore(ctx context.Context, ids []string) error {
	return c.do(ctx, http.MethodPost, "/api/trash/restore", RestoreRequest{IDs: ids}, nil)
}
