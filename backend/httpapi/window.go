package httpapi

import (
	"context"
	"errors"
	"net/http"
)

// WindowResult is what POST /api/window/show answers.
type WindowResult struct {
	// Shown: the desktop app was asked to bring its window forward.
	Shown bool `json:"shown"`
}

// windowRoutes registers POST /api/window/show: a second launch of the
// desktop app asks the running one to show its window through it where
// the platform's single-instance signal cannot reach it (outside Linux,
// or without a session bus), instead of failing on the data dir's lock.
// A headless daemon (no Options.ShowWindow) answers 404.
func (h *Handler) windowRoutes() {
	h.mux.HandleFunc("POST /api/window/show", func(w http.ResponseWriter, r *http.Request) {
		if h.opts.ShowWindow == nil {
			writeError(w, http.StatusNotFound, errors.New("this memtray has no window: it runs headless (memtray serve)"))
			return
		}
		h.opts.ShowWindow()
		writeJSON(w, http.StatusOK, WindowResult{Shown: true})
	})
}

// ShowWindow asks the daemon's desktop app to bring its window forward.
func (c *Client) ShowWindow(ctx context.Context) (WindowResult, error) {
	var out WindowResult
	err := c.do(ctx, http.MethodPost, "/api/window/show", nil, &out)
	return out, err
}
