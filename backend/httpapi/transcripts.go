package httpapi

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/memtray/memtray/backend/memory"
)

// TranscriptPath is the route hooks send a session file's path to.
const TranscriptPath = "/api/capture/transcript"

// TranscriptRequest is what a hook sends when an agent's turn or session
// ends: the session file and what the agent said about it.
type TranscriptRequest struct {
	Path      string `json:"path"`
	SessionID string `json:"session_id,omitempty"`
	CWD       string `json:"cwd,omitempty"`
	// Event is stop, session-end or pre-compact; Agent is claude-code
	// (the default) or codex.
	Event string `json:"event"`
	Agent string `json:"agent,omitempty"`
}

// TranscriptAccepted answers a TranscriptRequest at once: Queued is false
// when the queue was full and the request was dropped (counted; the
// watcher reads the file later).
type TranscriptAccepted struct {
	Queued bool `json:"queued"`
}

// TranscriptStats describe capture from session files for `memtray stats`.
type TranscriptStats struct {
	Enabled bool `json:"enabled"`
	// Since is when it was first enabled (older files are history, for
	// `memtray ingest`).
	Since time.Time `json:"since,omitzero"`
	// Files tracked, Pending of them with a turn not ended yet.
	Files   int `json:"files"`
	Pending int `json:"pending"`
	// Turns and Exchanges stored; Duplicates turns skipped as stored
	// already (by the proxy, or read again); ProxyDuplicates proxy
	// exchanges skipped as stored from a transcript.
	Turns           int `json:"turns"`
	Exchanges       int `json:"exchanges"`
	Duplicates      int `json:"duplicates"`
	ProxyDuplicates int `json:"proxy_duplicates"`
	// NotAllowed turns were passed over (capture paused or project
	// excluded); Dropped hook requests found the queue full; Refused named
	// a path outside the session folders; Errors failed.
	NotAllowed int    `json:"not_allowed"`
	Dropped    int    `json:"dropped"`
	Refused    int    `json:"refused"`
	Resets     int    `json:"resets"`
	Errors     int    `json:"errors"`
	LastError  string `json:"last_error,omitempty"`
	// SkippedExchanges counts the exchanges of stored turns left out
	// because they failed validation (the rest of their turn was stored).
	SkippedExchanges int `json:"skipped_exchanges"`
}

// TranscriptBackend takes hooks' session files.
type TranscriptBackend interface {
	// CaptureTranscript validates req and queues the file; it never waits
	// for the file to be read.
	CaptureTranscript(ctx context.Context, req TranscriptRequest) (TranscriptAccepted, error)
}

// TranscriptHandler serves POST TranscriptPath over b, behind the API's
// checks (Host, Origin, token): 202 with TranscriptAccepted, 400 for a
// bad body or a path outside the agent's session folders, 404 for a
// missing file. Mount it beside the handler on the same listener.
func (h *Handler) TranscriptHandler(b TranscriptBackend) http.Handler {
	return h.Guard(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			w.Header().Set("Allow", http.MethodPost)
			writeError(w, http.StatusMethodNotAllowed, fmt.Errorf("%s takes POST", TranscriptPath))
			return
		}
		var req TranscriptRequest
		if err := readJSONLimit(w, r, &req, 64<<10); err != nil {
			writeErr(w, err)
			return
		}
		if req.Path == "" || req.Event == "" {
			writeErr(w, fmt.Errorf("%w: path and event are required", memory.ErrInvalid))
			return
		}
		out, err := b.CaptureTranscript(r.Context(), req)
		if err != nil {
			writeErr(w, err)
			return
		}
		writeJSON(w, http.StatusAccepted, out)
	}), true)
}

// CaptureTranscript hands a session file to the daemon (POST
// TranscriptPath).
func (c *Client) CaptureTranscript(ctx context.Context, req TranscriptRequest) (TranscriptAccepted, error) {
	var out TranscriptAccepted
	err := c.do(ctx, http.MethodPost, TranscriptPath, req, &out)
	return out, err
}
