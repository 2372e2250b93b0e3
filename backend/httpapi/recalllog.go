package httpapi

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"unicode/utf8"

	"github.com/memtray/memtray/backend/memory"
	"github.com/memtray/memtray/backend/store"
)

// RecallLog is the part of Services that reads the recall log: what each
// recall gave an agent, withheld and why, and what the agent said of it.
type RecallLog interface {
	// RecallLog lists logged recalls, newest first.
	RecallLog(ctx context.Context, q store.RecallLogQuery) ([]store.RecallEntry, error)
	// RecallLogStats summarises the last days of the log (0: the default).
	RecallLogStats(ctx context.Context, days int) (store.RecallLogStats, error)
	// ClearRecallLog deletes every logged recall and returns how many.
	ClearRecallLog(ctx context.Context) (int, error)
}

// RecallLogCleared answers DELETE /api/recall/log.
type RecallLogCleared struct {
	// Cleared is how many logged recalls were deleted.
	Cleared int `json:"cleared"`
}

// maxStatsDays bounds GET /api/recall/stats?days= (the log keeps 30).
const maxStatsDays = 30

// recallLogRoutes registers the recall log's routes.
func (h *Handler) recallLogRoutes() {
	h.mux.HandleFunc("GET /api/recall/log", withoutBody(func(r *http.Request) ([]store.RecallEntry, error) {
		q, err := parseRecallLogQuery(r.URL.Query())
		if err != nil {
			return nil, err
		}
		return h.s.RecallLog.RecallLog(r.Context(), q)
	}))
	h.mux.HandleFunc("GET /api/recall/stats", withoutBody(func(r *http.Request) (store.RecallLogStats, error) {
		days, err := intParam(r.URL.Query(), "days", 0, 1, maxStatsDays)
		if err != nil {
			return store.RecallLogStats{}, err
		}
		return h.s.RecallLog.RecallLogStats(r.Context(), days)
	}))
	h.mux.HandleFunc("DELETE /api/recall/log", withoutBody(func(r *http.Request) (RecallLogCleared, error) {
		n, err := h.s.RecallLog.ClearRecallLog(r.Context())
		return RecallLogCleared{Cleared: n}, err
	}))
}

// parseRecallLogQuery reads GET /api/recall/log's session, limit and
// before.
func parseRecallLogQuery(v url.Values) (store.RecallLogQuery, error) {
	q := store.RecallLogQuery{SessionID: v.Get("session")}
	if len(q.SessionID) > 256 || !utf8.ValidString(q.SessionID) {
		return q, fmt.Errorf("%w: session must be UTF-8 of at most 256 bytes", memory.ErrInvalid)
	}
	var err error
	if q.Limit, err = intParam(v, "limit", 50, 1, store.MaxRecallLogLimit); err != nil {
		return q, err
	}
	if s := v.Get("before"); s != "" {
		if q.Before, err = strconv.ParseUint(s, 10, 64); err != nil || q.Before == 0 {
			return q, fmt.Errorf("%w: before must be a positive entry seq", memory.ErrInvalid)
		}
	}
	return q, nil
}

// RecallLog runs GET /api/recall/log.
func (c *Client) RecallLog(ctx context.Context, q store.RecallLogQuery) ([]store.RecallEntry, error) {
	v := url.Values{}
	if q.SessionID != "" {
		v.Set("session", q.SessionID)
	}
	if q.Limit != 0 {
		v.Set("limit", strconv.Itoa(q.Limit))
	}
	if q.Before != 0 {
		v.Set("before", strconv.FormatUint(q.Before, 10))
	}
	var out []store.RecallEntry
	err := c.do(ctx, http.MethodGet, "/api/recall/log?"+v.Encode(), nil, &out)
	return out, err
}

// RecallLogStats runs GET /api/recall/stats.
func (c *Client) RecallLogStats(ctx context.Context, days int) (store.RecallLogStats, error) {
	path := "/api/recall/stats"
	if days != 0 {
		path += "?days=" + strconv.Itoa(days)
	}
	var out store.RecallLogStats
	err := c.do(ctx, http.MethodGet, path, nil, &out)
	return out, err
}

// ClearRecallLog runs DELETE /api/recall/log.
func (c *Client) ClearRecallLog(ctx context.Context) (int, error) {
	var out RecallLogCleared
	err := c.do(ctx, http.MethodDelete, "/api/recall/log", nil, &out)
	return out.Cleared, err
}
