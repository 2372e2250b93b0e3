package daemon

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/memtray/memtray/backend/httpapi"
	"github.com/memtray/memtray/backend/ingest"
	"github.com/memtray/memtray/backend/memory"
	"github.com/memtray/memtray/backend/steward"
	"github.com/memtray/memtray/backend/store"
)

// List returns a page of memories, including snoozed and superseded ones (a
// browser shows everything), filtered and sorted as req says (newest first
// by default; ties by id), each with its computed columns. The store
// selects, sorts and pages from its in-memory columns (store.List) and only
// the page's records are read: a page of ~100k memories takes a few
// milliseconds (BenchmarkListPage). A memory deleted between the two steps
// is left out of the page.
func (d *Daemon) List(ctx context.Context, req httpapi.ListRequest) (httpapi.ListResponse, error) {
	if err := req.Validate(); err != nil {
		return httpapi.ListResponse{}, err
	}
	now := d.clock.Now()
	q := store.ListQuery{Project: req.Project, IncludeSuperseded: true, Text: req.Q, Now: now,
		Sort: store.ListSort(req.Sort), Desc: req.Order != "asc",
		StickyMinAccess: d.cfg.Steward.StickyMinAccess, Offset: req.Offset, Limit: req.Limit}
	if req.Kind != "" {
		if !memory.Kind(req.Kind).Valid() {
			return httpapi.ListResponse{}, &httpapi.FieldErrors{Message: "invalid list request",
				Fields: map[string]string{"kind": fmt.Sprintf("unknown kind %q", req.Kind)}}
		}
		q.Kinds = []memory.Kind{memory.Kind(req.Kind)}
	}
	switch req.Snoozed {
	case "exclude":
		q.Snoozed = store.SnoozedExclude
	case "only":
		q.Snoozed = store.SnoozedOnly
	}
	if q.Limit <= 0 {
		q.Limit = 50
	}
	ids, total, err := d.store.List(ctx, q)
	if err != nil {
		return httpapi.ListResponse{}, err
	}
	ms, err := d.store.GetMany(ctx, ids)
	if err != nil {
		return httpapi.ListResponse{}, err
	}
	res := httpapi.ListResponse{Total: total, Memories: make([]httpapi.ListedMemory, 0, len(ids))}
	for _, id := range ids {
		if m, ok := ms[id]; ok {
			res.Memories = append(res.Memories, d.listed(m, now))
		}
	}
	return res, nil
}

// listed adds the computed columns to m.
func (d *Daemon) listed(m memory.Memory, now time.Time) httpapi.ListedMemory {
	m.Embedding = nil
	return httpapi.ListedMemory{Memory: m, Stickiness: steward.Stickiness(&m, d.cfg.Steward),
		AgeDays: max(0, now.Sub(m.CreatedAt).Hours()/24), Snoozed: m.Snoozed(now)}
}

// Edit changes a memory. A new text makes a new version through
// store.Supersede: the edited memory keeps its counters, pin, snooze and
// creation time under a new id, and the old version stays as history
// (superseded, hidden from recall), so an edit is never a silent loss and
// the history view can show what it was. The text is redacted and
// re-embedded. Kind, type, project and importance change in place.
func (d *Daemon) Edit(ctx context.Context, id string, p httpapi.MemoryPatch) (httpapi.EditResult, error) {
	fields := map[string]string{}
	if p.Text == nil && p.Kind == nil && p.Type == nil && p.Project == nil && p.Importance == nil {
		return httpapi.EditResult{}, fmt.Errorf("%w: give at least one of text, kind, type, project, importance", memory.ErrInvalid)
	}
	if p.Text != nil {
		switch {
		case strings.TrimSpace(*p.Text) == "":
			fields["text"] = "must not be empty"
		case len(*p.Text) > memory.MaxTextBytes:
			fields["text"] = "must be at most 64 KiB"
		case !memory.ValidUTF8(*p.Text):
			fields["text"] = "must be valid UTF-8"
		}
	}
	if p.Kind != nil && !memory.Kind(*p.Kind).Valid() {
		fields["kind"] = fmt.Sprintf("unknown kind %q", *p.Kind)
	}
	if p.Type != nil && !memory.Type(*p.Type).Valid() {
		fields["type"] = fmt.Sprintf("unknown type %q", *p.Type)
	}
	if p.Project != nil && (len(*p.Project) > 256 || !memory.ValidUTF8(*p.Project)) {
		fields["project"] = "must be at most 256 bytes of UTF-8"
	}
	if p.Importance != nil && !(*p.Importance >= 0 && *p.Importance <= 1) {
		fields["importance"] = "must be within 0..1"
	}
	if len(fields) > 0 {
		return httpapi.EditResult{}, &httpapi.FieldErrors{Message: "invalid edit", Fields: fields}
	}
	old, err := d.store.Get(ctx, id)
	if err != nil {
		return httpapi.EditResult{}, err
	}
	if old.Superseded() {
		return httpapi.EditResult{}, fmt.Errorf("%w: memory %s is an old version, superseded by %s: edit the newest one", memory.ErrInvalid, id, old.SupersededBy)
	}
	apply := func(m *memory.Memory) {
		if p.Kind != nil {
			m.Kind = memory.Kind(*p.Kind)
		}
		if p.Type != nil {
			m.Type = memory.Type(*p.Type)
		}
		if p.Project != nil {
			m.Project = *p.Project
		}
		if p.Importance != nil {
			m.Importance = *p.Importance
		}
	}
	now := d.clock.Now()
	var text string
	if p.Text != nil {
		text, _ = ingest.Redact(*p.Text)
	}
	if p.Text == nil || memory.ContentHash(text) == old.ContentHash {
		m, err := d.update(ctx, id, func(m *memory.Memory) error { apply(m); return nil })
		if err != nil {
			return httpapi.EditResult{}, err
		}
		d.publishMemory(httpapi.MemoryUpdated, []string{m.ID}, &m)
		return httpapi.EditResult{Memory: d.listed(m, now)}, nil
	}
	next := old
	next.ID, next.Text, next.Supersedes, next.SupersededBy, next.ContentHash = "", text, "", "", ""
	next.Embedding, next.EmbeddingModel, next.UpdatedAt = nil, "", now.UTC()
	apply(&next)
	res, err := d.pipeline.Write(ctx, ingest.WriteRequest{Memory: next, Replaces: id})
	if err == nil && res.Decision.Verdict == memory.VerdictDuplicate {
		return httpapi.EditResult{}, &httpapi.FieldErrors{Message: "invalid edit",
			Fields: map[string]string{"text": "the same text is already stored as memory " + res.Memory.ID}}
	}
	stored := res.Memory
	if err = d.indexLag(err); err != nil {
		return httpapi.EditResult{}, fmt.Errorf("edit %s: %w", id, err)
	}
	d.publishMemory(httpapi.MemoryUpdated, []string{id, stored.ID}, &stored)
	return httpapi.EditResult{Memory: d.listed(stored, now), Previous: id}, nil
}

// History walks a memory's supersession chain both ways (at most
// httpapi.MaxHistory versions each way) and finds what the steward merged
// into any version (merged-away memories wait in the trash, their reason
// "merged into <id>").
func (d *Daemon) History(ctx context.Context, id string) (httpapi.MemoryHistory, error) {
	cur, err := d.store.Get(ctx, id)
	if err != nil {
		return httpapi.MemoryHistory{}, err
	}
	cur.Embedding = nil
	h := httpapi.MemoryHistory{ID: id, Versions: []memory.Memory{cur}, Merged: []store.TrashedMemory{}}
	seen := map[string]bool{id: true}
	walk := func(next func(memory.Memory) string, prepend bool) error {
		m := cur
		for n := 0; ; n++ {
			nid := next(m)
			if nid == "" || seen[nid] {
				return nil
			}
			if n == httpapi.MaxHistory {
				h.Truncated = true
				return nil
			}
			nm, err := d.store.Get(ctx, nid)
			if err != nil {
				if errors.Is(err, memory.ErrNotFound) {
					return nil // deleted since: the chain ends here
				}
				return err
			}
			nm.Embedding = nil
			seen[nid] = true
			if prepend {
				h.Versions = append([]memory.Memory{nm}, h.Versions...)
			} else {
				h.Versions = append(h.Versions, nm)
			}
			m = nm
		}
	}
	if err := walk(func(m memory.Memory) string { return m.Supersedes }, true); err != nil {
		return h, err
	}
	if err := walk(func(m memory.Memory) string { return m.SupersededBy }, false); err != nil {
		return h, err
	}
	trash, err := d.store.Trash(ctx)
	if err != nil {
		return h, err
	}
	for _, t := range trash {
		if into, ok := strings.CutPrefix(t.Reason, "merged into "); ok && seen[into] {
			t.Memory.Embedding = nil
			h.Merged = append(h.Merged, t)
		}
	}
	return h, nil
}
