package httpapi

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/memtray/memtray/backend/config"
	"github.com/memtray/memtray/backend/memory"
)

// DefaultHeartbeat is how often GET /api/events sends a ping when
// Options.Heartbeat is zero.
const DefaultHeartbeat = 15 * time.Second

// feedBuffer is each SSE client's event buffer; a client that falls
// further behind loses events and gets a reset.
const feedBuffer = 1024

// FieldErrors is invalid input with a problem per field; it matches
// memory.ErrInvalid and answers 400 with the fields in ErrorBody.
type FieldErrors = memory.FieldErrors

// fieldsOf returns the per-field problems err carries, if any.
func fieldsOf(err error) map[string]string {
	var fe *FieldErrors
	if errors.As(err, &fe) {
		return fe.Fields
	}
	var ce config.Errors
	if errors.As(err, &ce) {
		m := make(map[string]string, len(ce))
		for _, f := range ce {
			m[f.Field] = f.Problem
		}
		return m
	}
	return nil
}

// uiRoutes registers the routes of UI.
func (h *Handler) uiRoutes() {
	h.mux.HandleFunc("GET /api/events", h.events)
	h.mux.HandleFunc("PATCH /api/memories/{id}", withJSON(func(r *http.Request, p MemoryPatch) (EditResult, error) {
		return h.s.Memories.Edit(r.Context(), r.PathValue("id"), p)
	}))
	h.mux.HandleFunc("GET /api/memories/{id}/history", withoutBody(func(r *http.Request) (MemoryHistory, error) {
		return h.s.Memories.History(r.Context(), r.PathValue("id"))
	}))
	h.mux.HandleFunc("GET /api/overview", withoutBody(func(r *http.Request) (Overview, error) {
		return h.s.Status.Overview(r.Context())
	}))
	h.mux.HandleFunc("GET /api/config", withoutBody(func(r *http.Request) (ConfigView, error) {
		return h.s.Settings.Config(r.Context())
	}))
	h.mux.HandleFunc("PUT /api/config", withJSON(func(r *http.Request, patch json.RawMessage) (ConfigUpdate, error) {
		return h.s.Settings.SetConfig(r.Context(), patch)
	}))
	h.mux.HandleFunc("POST /api/config/preview-threshold", withJSON(func(r *http.Request, req ThresholdPreviewRequest) (ThresholdPreview, error) {
		return h.s.Feed.PreviewThreshold(r.Context(), req)
	}))
	h.mux.HandleFunc("GET /api/noise/projection", withoutBody(func(r *http.Request) (NoiseProjection, error) {
		return h.s.Feed.NoiseProjection(r.Context())
	}))
}

// events serves the live feed as one SSE stream: "id: N", "event: <type>",
// "data: <json>" per event, a "ping" every Options.Heartbeat, and a
// "reset" when the client missed events (resumed too late with
// Last-Event-ID, or fell behind). Wails' ResponseWriter is no http.Flusher
// and its request context is not cancelled when the page goes away, so
// flushing goes through http.ResponseController (ErrNotSupported ignored)
// and a failed write ends the stream as well as the context.
func (h *Handler) events(w http.ResponseWriter, r *http.Request) {
	last := r.Header.Get("Last-Event-ID")
	if last == "" {
		last = r.URL.Query().Get("last_event_id")
	}
	sub, reset, err := h.s.Status.Subscribe(last, feedBuffer)
	if err != nil {
		writeErr(w, err)
		return
	}
	defer sub.Close()
	hd := w.Header()
	hd.Set("Content-Type", "text/event-stream")
	hd.Set("Cache-Control", "no-store")
	hd.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	flush := func() error {
		if err := rc.Flush(); err != nil && !errors.Is(err, http.ErrNotSupported) {
			return err
		}
		return nil
	}
	if _, err := io.WriteString(w, "retry: 2000\n\n"); err != nil {
		return
	}
	if reset {
		if writeSSE(w, 0, EventReset, ResetEvent{Reason: "the events since your last one are no longer kept: reload"}) != nil {
			return
		}
	}
	if flush() != nil {
		return
	}
	every := h.opts.Heartbeat
	if every <= 0 {
		every = DefaultHeartbeat
	}
	tick := time.NewTicker(every)
	defer tick.Stop()
	var dropped int64
	for {
		select {
		case <-r.Context().Done():
			return
		case <-tick.C:
			if writeSSE(w, 0, EventPing, PingEvent{At: time.Now().UTC()}) != nil || flush() != nil {
				return
			}
		case e, ok := <-sub.C():
			if !ok {
				return
			}
			// Write what is queued, then flush once.
			for more := true; more; {
				if writeSSE(w, e.ID, e.Type, e.Data) != nil {
					return
				}
				select {
				case e, more = <-sub.C():
				default:
					more = false
				}
			}
			if n := sub.Dropped(); n > dropped {
				msg := fmt.Sprintf("%d events were dropped while this feed fell behind: reload", n-dropped)
				dropped = n
				if writeSSE(w, 0, EventReset, ResetEvent{Reason: msg}) != nil {
					return
				}
			}
			if flush() != nil {
				return
			}
		}
	}
}

// writeSSE writes one event; id 0 writes none (pings and resets do not
// move the client's Last-Event-ID).
func writeSSE(w io.Writer, id uint64, typ string, data any) error {
	b, err := json.Marshal(data)
	if err != nil {
		b, _ = json.Marshal(map[string]string{"error": err.Error()})
	}
	var sb strings.Builder
	if id != 0 {
		sb.WriteString("id: ")
		sb.WriteString(strconv.FormatUint(id, 10))
		sb.WriteByte('\n')
	}
	sb.WriteString("event: ")
	sb.WriteString(typ)
	sb.WriteString("\ndata: ")
	sb.Write(b)
	sb.WriteString("\n\n")
	_, err = io.WriteString(w, sb.String())
	return err
}

// ParseEventID parses an SSE Last-Event-ID: "" gives ok false.
func ParseEventID(s string) (id uint64, ok bool, err error) {
	if s == "" {
		return 0, false, nil
	}
	id, err = strconv.ParseUint(strings.TrimSpace(s), 10, 64)
	if err != nil {
		return 0, false, fmt.Errorf("%w: Last-Event-ID %q is not a number", memory.ErrInvalid, s)
	}
	return id, true, nil
}
