package httpapi

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"path/filepath"
	"time"
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

var (
	// ErrStalePreview: an apply or undo whose preview no longer matches the
	// files (changed since, or the change would now differ). It answers
	// 409 with the code "stale_preview": preview again.
	ErrStalePreview = errors.New("the config files changed since the preview")
	// ErrSetupConflict: the files are in a state setup will not work on (a
	// malformed config, nothing to undo). It answers 409 "setup_conflict".
	ErrSetupConflict = errors.New("setup cannot proceed")
)

// SetupList is what GET /api/setup returns.
type SetupList struct {
	Clients []SetupClient `json:"clients"`
	// Binary is the memtray the agents' configs run (this program).
	Binary string `json:"binary"`
	// Proxy is the proxy base URL setup writes.
	Proxy string `json:"proxy"`
	// Home is the home directory whose configs setup changes.
	Home string `json:"home"`
}

// SetupClient is one agent and how it stands.
type SetupClient struct {
	// Name is the agent's name in routes and on the command line.
	Name  string `json:"name"`
	Label string `json:"label"`
	// Hooks and Proxy say whether setup installs recall hooks and the
	// proxy base URL for this agent (else only the MCP server).
	Hooks bool `json:"hooks"`
	Proxy bool `json:"proxy"`
	// Detected says the agent is installed (its config directory exists).
	Detected bool `json:"detected"`
	// Configured says memtray set the agent up and it was not undone.
	Configured bool `json:"configured"`
	// Updated is when setup last changed its files.
	Updated time.Time         `json:"updated,omitzero"`
	Files   []SetupFileStatus `json:"files"`
	// Problem says why the record of setup cannot be read.
	Problem string `json:"problem,omitempty"`
	// NeedReview lists memtray's hooks (by the agent's event name) the
	// agent will not run until the user trusts them (Codex's hook review);
	// ReviewHint says how.
	NeedReview []string `json:"need_review,omitempty"`
	ReviewHint string   `json:"review_hint,omitempty"`
}

// SetupFileStatus is one config file of an agent.
type SetupFileStatus struct {
	Path   string `json:"path"`
	Exists bool   `json:"exists"`
	// Backup is the copy setup kept of the file as it was before.
	Backup string `json:"backup,omitempty"`
}

// SetupOptions is what POST /api/setup/{client}/preview takes.
type SetupOptions struct {
	// NoProxy leaves the agent's API base URL alone.
	NoProxy bool `json:"no_proxy,omitempty"`
	// NoHooks installs no hooks.
	NoHooks bool `json:"no_hooks,omitempty"`
}

// SetupPreview is a planned setup or undo: the exact change to each file.
type SetupPreview struct {
	Client string `json:"client"`
	// Undo says it takes memtray out.
	Undo bool `json:"undo"`
	// Options are the preview's options (a setup's): apply with the same.
	Options SetupOptions `json:"options"`
	Files   []SetupFile  `json:"files"`
	// Notes are what the agent cannot do, and caveats.
	Notes []string `json:"notes"`
	// Changes counts the files the apply would write or remove.
	Changes int `json:"changes"`
}

// SetupFile is one file of a preview.
type SetupFile struct {
	Path string `json:"path"`
	// Existed says whether the file is there now.
	Existed bool `json:"existed"`
	// Changed says whether the apply writes or removes it; Remove that it
	// removes it.
	Changed bool `json:"changed"`
	Remove  bool `json:"remove,omitempty"`
	// State is how the file stands ("to change", "up to date", or the
	// undo's "unchanged since setup: restore …").
	State string `json:"state"`
	// What lists the changes, one line each.
	What []string `json:"what"`
	// Diff is the change as a unified diff ("" when unchanged).
	Diff string `json:"diff"`
	// SHA256 and AfterSHA256 are the hex SHA-256 of the file now and of
	// what the apply writes ("" for no file): send them back with the
	// apply.
	SHA256      string `json:"sha256"`
	AfterSHA256 string `json:"after_sha256"`
}

// SetupFileHash is a file of the preview an apply carries out.
type SetupFileHash struct {
	Path        string `json:"path"`
	SHA256      string `json:"sha256"`
	AfterSHA256 string `json:"after_sha256"`
}

// SetupApplyRequest is what POST /api/setup/{client}/apply takes: the
// preview's options and files.
type SetupApplyRequest struct {
	NoProxy bool            `json:"no_proxy,omitempty"`
	NoHooks bool            `json:"no_hooks,omitempty"`
	Files   []SetupFileHash `json:"files"`
}

// SetupUndoRequest is what POST /api/setup/{client}/undo takes: the undo
// preview's files.
type SetupUndoRequest struct {
	Files []SetupFileHash `json:"files"`
}

// SetupResult is what an apply or undo did.
type SetupResult struct {
	Client string `json:"client"`
	// Changed lists the files written or removed.
	Changed []string `json:"changed"`
	// Backups are the copies of the files as they were before setup (after
	// an undo: the ones kept).
	Backups []string `json:"backups"`
	// Message is the report `memtray setup` prints.
	Message string `json:"message"`
	// Status is how the agent stands now.
	Status SetupClient `json:"status"`
}

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

// Hashes is the preview's files as an apply sends them back.
func (p SetupPreview) Hashes() []SetupFileHash {
	out := make([]SetupFileHash, len(p.Files))
	for i, f := range p.Files {
		out[i] = SetupFileHash{Path: f.Path, SHA256: f.SHA256, AfterSHA256: f.AfterSHA256}
	}
	return out
}
