package daemon

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/memtray/memtray/backend/httpapi"
	"github.com/memtray/memtray/backend/memory"
	"github.com/memtray/memtray/backend/redact"
	"github.com/memtray/memtray/backend/search"
	"github.com/memtray/memtray/backend/store"
)

// MaxSnoozeDays bounds a snooze.
const MaxSnoozeDays = 3650

// MaxRateIDs bounds the memories one rating covers.
const MaxRateIDs = 100

// Recall hands an agent the memories that matter for this turn (see
// search.Recaller): the hooks, MCP and the API all come here.
func (d *Daemon) Recall(ctx context.Context, req search.RecallRequest) (search.Recalled, error) {
	// recall.k and recall.max_chars changed at runtime bound every
	// request (the Recaller takes the lower of a request's and its own).
	if live := d.live.Load(); live != nil && req.Event != search.EventSearch {
		if live.Recall.K != d.cfg.Recall.K && req.K >= 0 {
			req.K = lowerBound(req.K, live.Recall.K)
		}
		if live.Recall.MaxChars != d.cfg.Recall.MaxChars && req.MaxChars >= 0 {
			req.MaxChars = lowerBound(req.MaxChars, live.Recall.MaxChars)
		}
	}
	gen := d.emb.Generation()
	out, err := d.recaller.Recall(ctx, req)
	if err != nil && d.emb.Generation() != gen {
		return d.recaller.Recall(ctx, req) // the embedding model switched during the recall
	}
	return out, err
}

// ResetSession forgets what a session was given (compaction, /clear).
func (d *Daemon) ResetSession(_ context.Context, sessionID string) error {
	if strings.TrimSpace(sessionID) == "" || len(sessionID) > search.MaxSessionIDLen {
		return fmt.Errorf("%w: a session id of 1..%d bytes is required", memory.ErrInvalid, search.MaxSessionIDLen)
	}
	d.recaller.Reset(sessionID)
	return nil
}

// Reinforce records that a memory proved useful: reinforced_count++ and the
// decay clock restarts.
func (d *Daemon) Reinforce(ctx context.Context, id string) (memory.Memory, error) {
	now := d.clock.Now().UTC()
	return d.updated(httpapi.MemoryReinforced)(d.update(ctx, id, func(m *memory.Memory) error {
		m.Reinforce(now)
		return nil
	}))
}

// Rate records the agent's or the user's verdict on memories it was given:
// +1 helped, -1 misled or was irrelevant. It feeds the composite score's
// feedback factor. Every id is checked before any is changed.
func (d *Daemon) Rate(ctx context.Context, ids []string, score int, reason string) ([]memory.Memory, error) {
	if score != 1 && score != -1 {
		return nil, fmt.Errorf("%w: score must be +1 or -1, not %d", memory.ErrInvalid, score)
	}
	if len(ids) == 0 || len(ids) > MaxRateIDs {
		return nil, fmt.Errorf("%w: rate 1..%d memory ids", memory.ErrInvalid, MaxRateIDs)
	}
	if len(reason) > 2000 || !memory.ValidUTF8(reason) {
		return nil, fmt.Errorf("%w: reason must be at most 2000 bytes of UTF-8", memory.ErrInvalid)
	}
	for _, id := range ids {
		if _, err := d.store.Get(ctx, id); err != nil {
			return nil, err
		}
	}
	out := make([]memory.Memory, 0, len(ids))
	for _, id := range ids {
		m, err := d.update(ctx, id, func(m *memory.Memory) error {
			m.FeedbackSum += float64(score)
			m.FeedbackN++
			return nil
		})
		if err != nil {
			return out, err
		}
		out = append(out, m)
	}
	d.publishMemory(httpapi.MemoryRated, ids, nil)
	if reason != "" {
		masked, _ := redact.Redact(reason)
		d.log.Debug("memories rated", "ids", ids, "score", score, "reason", masked)
	}
	return out, nil
}

// Snooze keeps a memory out of recall for days (0 wakes it up again).
func (d *Daemon) Snooze(ctx context.Context, id string, days float64) (memory.Memory, error) {
	if !(days >= 0 && days <= MaxSnoozeDays) || math.IsNaN(days) {
		return memory.Memory{}, fmt.Errorf("%w: days must be within 0..%d", memory.ErrInvalid, MaxSnoozeDays)
	}
	until := time.Time{}
	if days > 0 {
		until = d.clock.Now().UTC().Add(time.Duration(days * 24 * float64(time.Hour)))
	}
	return d.updated(httpapi.MemorySnoozed)(d.update(ctx, id, func(m *memory.Memory) error {
		m.CooldownUntil = until
		return nil
	}))
}

// Pin marks a memory the steward never prunes, decays or merges; a pinned
// memory does not decay in recall either.
func (d *Daemon) Pin(ctx context.Context, id string, pinned bool) (memory.Memory, error) {
	return d.updated(httpapi.MemoryPinned)(d.update(ctx, id, func(m *memory.Memory) error {
		m.Pinned = pinned
		return nil
	}))
}

// Remember stores a memory stated on purpose (MCP memory_store) through the
// write pipeline's redaction, chunking and dedup; the Decision says stored,
// updated, merged or skipped-duplicate. It joins the decision log.
func (d *Daemon) Remember(ctx context.Context, m memory.Memory) (memory.Decision, error) {
	if m.Source == "" {
		m.Source = memory.SourceMCP
	}
	dec, err := d.pipeline.Remember(ctx, m)
	if err != nil {
		return dec, d.indexLag(err)
	}
	d.decisions.add(dec, memory.Exchange{Assistant: m.Text, Project: m.Project, Source: m.Source})
	return dec, nil
}

// IngestDocument stores a document as source memories "ingest:<name>".
func (d *Daemon) IngestDocument(ctx context.Context, name, project, text string) (memory.Decision, error) {
	if !memory.ValidUTF8(text) || len(text) > maxDocumentBytes {
		return memory.Decision{}, fmt.Errorf("%w: at most %d bytes of UTF-8 text", memory.ErrInvalid, maxDocumentBytes)
	}
	dec, err := d.pipeline.Document(ctx, name, project, text)
	if err != nil {
		return dec, d.indexLag(err)
	}
	d.decisions.add(dec, memory.Exchange{Assistant: text, Project: project, Source: "ingest:" + name})
	return dec, nil
}

const maxDocumentBytes = 1 << 20

// updated returns a pass-through of update's result that announces a
// successful change as op.
func (d *Daemon) updated(op string) func(memory.Memory, error) (memory.Memory, error) {
	return func(m memory.Memory, err error) (memory.Memory, error) {
		if err == nil {
			d.publishMemory(op, []string{m.ID}, &m)
		}
		return m, err
	}
}

// update changes one memory; a lagging text index is not a failure.
func (d *Daemon) update(ctx context.Context, id string, fn func(*memory.Memory) error) (memory.Memory, error) {
	m, err := d.store.Update(ctx, id, fn)
	if errors.Is(err, store.ErrIndexPending) {
		d.log.Warn("text index lags behind the records; it catches up at the next write or start", "err", err)
		err = nil
	}
	m.Embedding = nil
	return m, err
}

// lowerBound is req bounded by limit, where 0 means unset.
func lowerBound(req, limit int) int {
	if req <= 0 || (limit > 0 && limit < req) {
		return limit
	}
	return req
}
