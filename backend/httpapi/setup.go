package httpapi

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/url"
	"path/filepath"

	"github.com/memtray/memtray/backend/setup"
)

// Setup is the part of Services that connects agents (memtray setup): it
// lists the agents, previews the change to their config files, applies
// exactly the previewed change, and previews and applies its undo.
type Setup interface {
	// SetupClients lists every agent memtray can set up and how each
	// stands.
	SetupClients(ctx context.Context) (SetupList, error)
	// SetupPreview plans the setup of client, writing nothing.
	SetupPreview(ctx context.Context, client string, o SetupOptions) (SetupPreview, error)
	// SetupApply carries out the setup of client the request's preview
	// showed; ErrStalePreview when the files or the change differ now.
	SetupApply(ctx context.Context, client string, req SetupApplyRequest) (SetupResult, error)
	// SetupUndoPreview plans taking memtray out of client's files.
	SetupUndoPreview(ctx context.Context, client string) (SetupPreview, error)
	// SetupUndo carries out the undo the request's preview showed;
	// ErrStalePreview when it differs now.
	SetupUndo(ctx context.Context, client string, req SetupUndoRequest) (SetupResult, error)
}

// The errors and types of Setup are package setup's, under the names the
// API has always used.
var (
	// ErrStalePreview: an apply or undo whose preview no longer matches the
	// files (changed since, or the change would now differ). It answers
	// 409 with the code "stale_preview": preview again.
	ErrStalePreview = setup.ErrStalePreview
	// ErrSetupConflict: the files are in a state setup will not work on (a
	// malformed config, nothing to undo). It answers 409 "setup_conflict".
	ErrSetupConflict = setup.ErrConflict
)

type (
	// SetupList is what GET /api/setup returns.
	SetupList = setup.List
	// SetupClient is one agent and how it stands.
	SetupClient = setup.Agent
	// SetupFileStatus is one config file of an agent.
	SetupFileStatus = setup.FileStatus
	// SetupOptions is what POST /api/setup/{client}/preview takes.
	SetupOptions = setup.PlanOptions
	// SetupPreview is a planned setup or undo: the exact change to each file.
	SetupPreview = setup.Preview
	// SetupFile is one file of a preview.
	SetupFile = setup.File
	// SetupFileHash is a file of the preview an apply carries out.
	SetupFileHash = setup.FileHash
	// SetupApplyRequest is what POST /api/setup/{client}/apply takes.
	SetupApplyRequest = setup.ApplyRequest
	// SetupUndoRequest is what POST /api/setup/{client}/undo takes.
	SetupUndoRequest = setup.UndoRequest
	// SetupResult is what an apply or undo did.
	SetupResult = setup.Result
)

// setupRoutes registers the routes of Setup.
func (h *Handler) setupRoutes() {
	h.mux.HandleFunc("GET /api/setup", withoutBody(func(r *http.Request) (SetupList, error) {
		return h.s.Setup.SetupClients(r.Context())
	}))
	h.mux.HandleFunc("POST /api/setup/{client}/preview", withJSON(func(r *http.Request, o SetupOptions) (SetupPreview, error) {
		return h.s.Setup.SetupPreview(r.Context(), r.PathValue("client"), o)
	}))
	h.mux.HandleFunc("POST /api/setup/{client}/apply", withJSON(func(r *http.Request, req SetupApplyRequest) (SetupResult, error) {
		if err := checkHashes(req.Files); err != nil {
			return SetupResult{}, err
		}
		return h.s.Setup.SetupApply(r.Context(), r.PathValue("client"), req)
	}))
	h.mux.HandleFunc("POST /api/setup/{client}/undo/preview", withoutBody(func(r *http.Request) (SetupPreview, error) {
		return h.s.Setup.SetupUndoPreview(r.Context(), r.PathValue("client"))
	}))
	h.mux.HandleFunc("POST /api/setup/{client}/undo", withJSON(func(r *http.Request, req SetupUndoRequest) (SetupResult, error) {
		if err := checkHashes(req.Files); err != nil {
			return SetupResult{}, err
		}
		return h.s.Setup.SetupUndo(r.Context(), r.PathValue("client"), req)
	}))
}

// checkHashes validates the files an apply sends back: the preview's, each
// with a path and SHA-256 hashes in hex ("" for no file).
func checkHashes(files []SetupFileHash) error {
	fields := map[string]string{}
	if len(files) == 0 {
		fields["files"] = "send the preview's files (path, sha256, after_sha256): the apply carries out exactly the change previewed"
	}
	hex64 := func(s string) bool {
		if len(s) != sha256.Size*2 {
			return false
		}
		_, err := hex.DecodeString(s)
		return err == nil
	}
	for i, f := range files {
		at := fmt.Sprintf("files[%d]", i)
		if f.Path == "" || !filepath.IsAbs(f.Path) {
			fields[at+".path"] = "must be an absolute path"
		}
		if f.SHA256 != "" && !hex64(f.SHA256) {
			fields[at+".sha256"] = "must be a hex SHA-256 or empty"
		}
		if f.AfterSHA256 != "" && !hex64(f.AfterSHA256) {
			fields[at+".after_sha256"] = "must be a hex SHA-256 or empty"
		}
	}
	if len(fields) > 0 {
		return &FieldErrors{Message: "invalid setup request", Fields: fields}
	}
	return nil
}

// SetupClients lists the agents through the daemon.
func (c *Client) SetupClients(ctx context.Context) (SetupList, error) {
	var out SetupList
	return out, c.do(ctx, http.MethodGet, "/api/setup", nil, &out)
}

// SetupPreview previews a setup through the daemon.
func (c *Client) SetupPreview(ctx context.Context, client string, o SetupOptions) (SetupPreview, error) {
	var out SetupPreview
	return out, c.do(ctx, http.MethodPost, "/api/setup/"+url.PathEscape(client)+"/preview", o, &out)
}

// SetupApply applies a previewed setup through the daemon.
func (c *Client) SetupApply(ctx context.Context, client string, req SetupApplyRequest) (SetupResult, error) {
	var out SetupResult
	return out, c.do(ctx, http.MethodPost, "/api/setup/"+url.PathEscape(client)+"/apply", req, &out)
}

// SetupUndoPreview previews an undo through the daemon.
func (c *Client) SetupUndoPreview(ctx context.Context, client string) (SetupPreview, error) {
	var out SetupPreview
	return out, c.do(ctx, http.MethodPost, "/api/setup/"+url.PathEscape(client)+"/undo/preview", nil, &out)
}

// SetupUndo applies a previewed undo through the daemon.
func (c *Client) SetupUndo(ctx context.Context, client string, req SetupUndoRequest) (SetupResult, error) {
	var out SetupResult
	return out, c.do(ctx, http.MethodPost, "/api/setup/"+url.PathEscape(client)+"/undo", req, &out)
}
