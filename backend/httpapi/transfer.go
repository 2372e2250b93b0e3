package httpapi

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"

	"github.com/memtray/memtray/backend/transfer"
)

// Job kinds of Transfer.
const (
	// JobExport writes the store to a file (ExportFile).
	JobExport = transfer.KindExport
	// JobImport adds the memories of an uploaded export (ImportJob).
	JobImport = transfer.KindImport
)

// Transfer is the part of Services that exports to a file and imports as
// background jobs with progress, for the window (a webview cannot save a
// download) and for large stores.
type Transfer interface {
	// ExportFile writes every memory to a new file in req.Dir as a job
	// counting memories; the job's Target is the file.
	ExportFile(ctx context.Context, req ExportFileRequest) (Job, error)
	// ImportJob takes an export stream (read to its end before it returns)
	// and adds its memories as a job counting bytes; the job's Result
	// summarises the ImportReport.
	ImportJob(ctx context.Context, r io.Reader) (Job, error)
}

// Importer is the part of Services that imports what people keep for
// their agents elsewhere.
type Importer interface {
	// ImportClaude imports Claude Code's file memories and CLAUDE.md
	// files, idempotently; a dry run writes nothing.
	ImportClaude(ctx context.Context, req ImportClaudeRequest) (ImportClaudeReport, error)
}

// ExportFileRequest is what POST /api/export/file takes (package
// transfer's).
type ExportFileRequest = transfer.ExportFileRequest

// transferRoutes registers POST /api/export/file and POST /api/import/job.
func (h *Handler) transferRoutes() {
	h.mux.HandleFunc("POST /api/export/file", withJSON(func(r *http.Request, req ExportFileRequest) (Job, error) {
		return h.s.Transfer.ExportFile(r.Context(), req)
	}))
	h.mux.HandleFunc("POST /api/import/job", func(w http.ResponseWriter, r *http.Request) {
		j, err := h.s.Transfer.ImportJob(r.Context(), http.MaxBytesReader(w, r.Body, MaxImportBody))
		if err != nil {
			writeErr(w, err)
			return
		}
		writeJSON(w, http.StatusAccepted, j)
	})
}

// ExportFile runs POST /api/export/file.
func (c *Client) ExportFile(ctx context.Context, req ExportFileRequest) (Job, error) {
	var out Job
	err := c.do(ctx, http.MethodPost, "/api/export/file", req, &out)
	return out, err
}

// ImportJob runs POST /api/import/job.
func (c *Client) ImportJob(ctx context.Context, r io.Reader) (Job, error) {
	var out Job
	resp, err := c.send(ctx, http.MethodPost, "/api/import/job", r, "application/x-ndjson")
	if err != nil {
		return out, err
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		return out, fmt.Errorf("import: reading the answer: %w", err)
	}
	return out, nil
}
