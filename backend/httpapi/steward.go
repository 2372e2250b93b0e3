package httpapi

import (
	"context"
	"fmt"
	"net/http"

	"github.com/memtray/memtray/backend/memory"
	"github.com/memtray/memtray/backend/steward"
	"github.com/memtray/memtray/backend/store"
)

// Steward is the part of Services that runs consolidation: plans first,
// applies on request, undoes the last runs, keeps a trash.
type Steward interface {
	// StewardPlan makes a dry-run plan and keeps it for StewardApply.
	StewardPlan(ctx context.Context, opts steward.PlanOptions) (*steward.Plan, error)
	// StewardApply applies a plan StewardPlan made (ops narrows it; empty
	// applies every operation of the plan).
	StewardApply(ctx context.Context, req ApplyRequest) (steward.Result, error)
	// StewardUndo reverts an applied run: req.RunID, or the last run
	// when it is empty.
	StewardUndo(ctx context.Context, req UndoRequest) (steward.Result, error)
	// StewardRuns lists the applied runs that can be undone, newest first.
	StewardRuns(ctx context.Context) ([]steward.Run, error)
	// Trash lists pruned and merged-away memories, restorable until purged.
	Trash(ctx context.Context) ([]store.TrashedMemory, error)
	// Restore brings memories back from the trash.
	Restore(ctx context.Context, ids []string) error
	// PurgeTrash deletes memories from the trash for good: the ones
	// req.IDs names, or all of them with req.All.
	PurgeTrash(ctx context.Context, req TrashPurgeRequest) (TrashPurgeResult, error)
}

// ApplyRequest is what POST /api/steward/apply takes (package steward's).
type ApplyRequest = steward.ApplyRequest

// UndoRequest is what POST /api/steward/undo takes; an empty body undoes
// the last run (package steward's).
type UndoRequest = steward.UndoRequest

// maxRunID bounds an UndoRequest's RunID.
const maxRunID = 128

// RestoreRequest is what POST /api/trash/restore takes.
type RestoreRequest struct {
	IDs []string `json:"ids"`
}

// TrashPurgeRequest is what POST /api/trash/purge takes (package
// steward's PurgeRequest).
type TrashPurgeRequest = steward.PurgeRequest

// TrashPurgeResult is what POST /api/trash/purge answers.
type TrashPurgeResult = steward.PurgeResult

// stewardRoutes registers the steward's routes.
func (h *Handler) stewardRoutes() {
	h.mux.HandleFunc("POST /api/steward/plan", withJSON(func(r *http.Request, o steward.PlanOptions) (*steward.Plan, error) {
		return h.s.Steward.StewardPlan(r.Context(), o)
	}))
	h.mux.HandleFunc("POST /api/steward/apply", withJSON(func(r *http.Request, req ApplyRequest) (steward.Result, error) {
		return h.s.Steward.StewardApply(r.Context(), req)
	}))
	h.mux.HandleFunc("POST /api/steward/undo", func(w http.ResponseWriter, r *http.Request) {
		var req UndoRequest
		if r.ContentLength != 0 {
			if err := readJSON(w, r, &req); err != nil {
				writeErr(w, err)
				return
			}
		}
		if len(req.RunID) > maxRunID {
			writeErr(w, fmt.Errorf("%w: run_id longer than %d bytes", memory.ErrInvalid, maxRunID))
			return
		}
		out, err := h.s.Steward.StewardUndo(r.Context(), req)
		if err != nil {
			writeErr(w, err)
			return
		}
		writeJSON(w, http.StatusOK, out)
	})
	h.mux.HandleFunc("GET /api/steward/runs", withoutBody(func(r *http.Request) ([]steward.Run, error) {
		return h.s.Steward.StewardRuns(r.Context())
	}))
	h.mux.HandleFunc("GET /api/trash", withoutBody(func(r *http.Request) ([]store.TrashedMemory, error) {
		return h.s.Steward.Trash(r.Context())
	}))
	h.mux.HandleFunc("POST /api/trash/restore", withJSON(func(r *http.Request, req RestoreRequest) (map[string]int, error) {
		return map[string]int{"restored": len(req.IDs)}, h.s.Steward.Restore(r.Context(), req.IDs)
	}))
	h.mux.HandleFunc("POST /api/trash/purge", withJSON(func(r *http.Request, req TrashPurgeRequest) (TrashPurgeResult, error) {
		return h.s.Steward.PurgeTrash(r.Context(), req)
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

// StewardUndo undoes an applied run (req.RunID, or the last one).
func (c *Client) StewardUndo(ctx context.Context, req UndoRequest) (steward.Result, error) {
	var out steward.Result
	err := c.do(ctx, http.MethodPost, "/api/steward/undo", req, &out)
	return out, err
}

// StewardRuns lists the applied runs that can be undone, newest first.
func (c *Client) StewardRuns(ctx context.Context) ([]steward.Run, error) {
	var out []steward.Run
	err := c.do(ctx, http.MethodGet, "/api/steward/runs", nil, &out)
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

// PurgeTrash deletes memories from the trash for good.
func (c *Client) PurgeTrash(ctx context.Context, req TrashPurgeRequest) (TrashPurgeResult, error) {
	var out TrashPurgeResult
	err := c.do(ctx, http.MethodPost, "/api/trash/purge", req, &out)
	return out, err
}
