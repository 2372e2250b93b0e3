// Package memories is the memories service: adding, searching, reading,
// listing, editing and deleting memories, their history, the store as a
// stream (export and import), and the writes MCP makes on purpose
// (Remember, IngestDocument). Every write goes through the write pipeline
// (package ingest); each change is announced on the live feed.
package memories

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"time"

	"github.com/memtray/memtray/backend/config"
	"github.com/memtray/memtray/backend/embed"
	"github.com/memtray/memtray/backend/ingest"
	"github.com/memtray/memtray/backend/memory"
	"github.com/memtray/memtray/backend/search"
	"github.com/memtray/memtray/backend/store"
)

// MaxDocumentBytes bounds a document IngestDocument takes.
const MaxDocumentBytes = 1 << 20

// Options configures New. Store, Pipeline, Search and Embedder are required.
type Options struct {
	Store    *store.Store
	Pipeline *ingest.Pipeline
	Search   *search.Engine
	// Embedder is the swappable embedder: its generation tells a search
	// that the model switched under it; a snapshot embeds imports.
	Embedder *embed.Swappable
	// Steward is the steward's config, for the stickiness column.
	Steward config.Steward
	Clock   memory.Clock
	Logger  *slog.Logger
	// Publish announces a change of memories on the live feed (nil: none).
	Publish func(op string, ids []string, m *memory.Memory)
	// IndexLag turns "stored, but the text index lags" into success (and
	// a warning) and returns any other error (nil: errors are returned).
	IndexLag func(error) error
	// EmbedderFailed and EmbedderRecovered note an Add's embedder failing
	// or working again (nil: not noted).
	EmbedderFailed    func(error)
	EmbedderRecovered func()
	// Decided records a decision of Remember or IngestDocument in the
	// decision log (nil: not recorded).
	Decided func(memory.Decision, memory.Exchange)
	// VectorsKept notes that an Import stored memories without their
	// vector (store.ImportReport.KeptWithoutVector: the embedder did not
	// answer), so that they are embedded once it does (nil: not noted).
	VectorsKept func()
}

// Service is the memories service.
type Service struct {
	o Options
}

// New returns the service over o.
func New(o Options) (*Service, error) {
	if o.Store == nil || o.Pipeline == nil || o.Search == nil || o.Embedder == nil {
		return nil, errors.New("memories: store, pipeline, search and embedder are required")
	}
	if o.Clock == nil {
		o.Clock = memory.SystemClock{}
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Publish == nil {
		o.Publish = func(string, []string, *memory.Memory) {}
	}
	if o.IndexLag == nil {
		o.IndexLag = func(err error) error { return err }
	}
	if o.EmbedderFailed == nil {
		o.EmbedderFailed = func(error) {}
	}
	if o.EmbedderRecovered == nil {
		o.EmbedderRecovered = func() {}
	}
	if o.Decided == nil {
		o.Decided = func(memory.Decision, memory.Exchange) {}
	}
	if o.VectorsKept == nil {
		o.VectorsKept = func() {}
	}
	return &Service{o: o}, nil
}

// Add stores a memory through the write pipeline's Write (ingest): its
// secrets masked (package redact), validated, embedded, deduplicated (the
// same text, or a near duplicate, reinforces the stored memory, which Add
// returns; a near duplicate adding load-bearing tokens supersedes it) and
// stored.
func (s *Service) Add(ctx context.Context, req AddRequest) (memory.Memory, error) {
	m := memory.Memory{Text: req.Text, Kind: memory.Kind(req.Kind), Type: memory.Type(req.Type),
		Project: req.Project, Source: req.Source, Importance: req.Importance}
	if m.Source == "" {
		m.Source = memory.SourceCLI
	}
	res, err := s.o.Pipeline.Write(ctx, ingest.WriteRequest{Memory: m})
	if errors.Is(err, memory.ErrUnavailable) {
		s.o.EmbedderFailed(err)
		return memory.Memory{}, err
	}
	if res.Memory.ID == "" {
		return memory.Memory{}, err
	}
	s.o.EmbedderRecovered()
	if err = s.o.IndexLag(err); err != nil {
		return memory.Memory{}, err
	}
	switch res.Decision.Verdict {
	case memory.VerdictStored, memory.VerdictUpdated:
		s.o.Publish(OpAdded, []string{res.Memory.ID}, &res.Memory)
	}
	return res.Memory, nil
}

// Search runs the read pipeline.
func (s *Service) Search(ctx context.Context, req SearchRequest) ([]memory.Hit, error) {
	// A query's secrets are masked before it is embedded or analysed, as a
	// memory's are before it is stored.
	text, _ := ingest.Redact(req.Query)
	q := search.Query{Text: text, Project: req.Project, K: req.K, Mode: search.Mode(req.Mode)}
	if q.Mode == "" {
		q.Mode = search.ModeHybrid
	}
	switch q.Mode {
	case search.ModeHybrid, search.ModeBM25, search.ModeVector:
	default:
		return nil, fmt.Errorf("%w: mode must be hybrid, bm25 or vector", memory.ErrInvalid)
	}
	for _, k := range req.Kinds {
		if !memory.Kind(k).Valid() {
			return nil, fmt.Errorf("%w: unknown kind %q", memory.ErrInvalid, k)
		}
		q.Filter.Kinds = append(q.Filter.Kinds, memory.Kind(k))
	}
	gen := s.o.Embedder.Generation()
	hits, err := s.o.Search.Search(ctx, q)
	if err != nil && s.o.Embedder.Generation() != gen {
		// The embedding model switched during the search (a re-embedding
		// finished): the query vector was the old model's.
		return s.o.Search.Search(ctx, q)
	}
	return hits, err
}

// Get returns one memory.
func (s *Service) Get(ctx context.Context, id string) (memory.Memory, error) {
	return s.o.Store.Get(ctx, id)
}

// DeleteReason is the trash reason of a memory a user or an agent deleted.
const DeleteReason = "deleted"

// Delete moves one memory to the trash (store.Batch.Trash), where the
// steward's prunes go: out of recall, search and lists, restorable exactly
// as it was (the steward's Restore: `memtray trash restore ID`, POST
// /api/trash/restore) until the steward purges the trash after its
// trash_days. A team memory leaves the team as with Purge (the store's
// outbox sends the team its tombstone), and a restore brings it back
// there. An unknown id is memory.ErrNotFound.
func (s *Service) Delete(ctx context.Context, id string) error {
	if err := s.Trash(ctx, id, DeleteReason); err != nil {
		return fmt.Errorf("delete %s: %w", id, err)
	}
	return nil
}

// Trash moves one memory to the trash (store.Batch.Trash) with reason
// (DeleteReason, the feed's noise reason, ...), restorable as it was, and
// announces it on the feed as OpDeleted. It is the one way a memory a
// person or an agent removes leaves the live store: Delete and the feed's
// MarkNoise (feed.Options.Trash) both go through it. A lagging text index
// is not a failure; an unknown id is memory.ErrNotFound. The caller wraps
// the error with what it was doing.
func (s *Service) Trash(ctx context.Context, id, reason string) error {
	err := s.o.Store.Apply(ctx, store.Batch{Trash: []store.TrashRequest{{ID: id, Reason: reason}}})
	if err = s.o.IndexLag(err); err != nil {
		return err
	}
	s.o.Publish(OpDeleted, []string{id}, nil)
	return nil
}

// Purge deletes one live memory for good, without the trash.
func (s *Service) Purge(ctx context.Context, id string) error {
	if err := s.o.IndexLag(s.o.Store.Delete(ctx, id)); err != nil {
		return fmt.Errorf("purge %s: %w", id, err)
	}
	s.o.Publish(OpDeleted, []string{id}, nil)
	return nil
}

// Export writes the whole store as a versioned JSONL stream.
func (s *Service) Export(ctx context.Context, w io.Writer) error {
	return s.o.Store.Export(ctx, w)
}

// Import validates a whole export stream, then adds its records with
// their secrets masked (a file from elsewhere may carry them; such records
// are re-embedded), re-embedding them too when they were made by another
// model.
func (s *Service) Import(ctx context.Context, r io.Reader) (store.ImportReport, error) {
	rep, err := s.o.Store.Import(ctx, r, store.ImportOptions{Embedder: embed.Snapshot(s.o.Embedder), Rewrite: ingest.Redact})
	if rep.KeptWithoutVector > 0 {
		s.o.VectorsKept()
	}
	return rep, err
}

// Remember stores a memory stated on purpose (MCP memory_store) through the
// write pipeline's redaction, chunking and dedup; the Decision says stored,
// updated, merged or skipped-duplicate. It joins the decision log.
func (s *Service) Remember(ctx context.Context, m memory.Memory) (memory.Decision, error) {
	if m.Source == "" {
		m.Source = memory.SourceMCP
	}
	dec, err := s.o.Pipeline.Remember(ctx, m)
	if err != nil {
		return dec, s.o.IndexLag(err)
	}
	s.o.Decided(dec, memory.Exchange{Assistant: m.Text, Project: m.Project, Source: m.Source})
	return dec, nil
}

// IngestDocument stores a document as source memories "ingest:<name>".
func (s *Service) IngestDocument(ctx context.Context, name, project, text string) (memory.Decision, error) {
	if !memory.ValidUTF8(text) || len(text) > MaxDocumentBytes {
		return memory.Decision{}, fmt.Errorf("%w: at most %d bytes of UTF-8 text", memory.ErrInvalid, MaxDocumentBytes)
	}
	dec, err := s.o.Pipeline.Document(ctx, name, project, text)
	if err != nil {
		return dec, s.o.IndexLag(err)
	}
	s.o.Decided(dec, memory.Exchange{Assistant: text, Project: project, Source: "ingest:" + name})
	return dec, nil
}

// update changes one memory; a lagging text index is not a failure.
func (s *Service) update(ctx context.Context, id string, fn func(*memory.Memory) error) (memory.Memory, error) {
	m, err := s.o.Store.Update(ctx, id, fn)
	m.Embedding = nil
	return m, s.o.IndexLag(err)
}

// List returns a page of memories, including snoozed ones and, when
// req.Superseded is include, the old versions newer ones superseded (by
// default only the current versions, what recall reads), filtered and
// sorted as req says (newest first
// by default; ties by id), each with its computed columns. The store
// selects, sorts and pages from its in-memory columns (store.List, every
// filter included) and only the page's records are read: a page of ~100k
// memories takes a few milliseconds (BenchmarkListPage). Facets, when
// asked, count the whole store from the same columns (store.Facets), also
// without reading a record. A worktrees filter keeps the projects the
// store's counts show as the project's worktrees (WorktreeOf) when the
// request came. A memory deleted between the steps is left out of the page.
func (s *Service) List(ctx context.Context, req ListRequest) (ListResponse, error) {
	if err := req.Validate(); err != nil {
		return ListResponse{}, err
	}
	now := s.o.Clock.Now()
	q := store.ListQuery{Project: req.Project, IncludeSuperseded: req.Superseded == "include", Text: req.Q, Now: now,
		Source: req.Source, Sort: store.ListSort(req.Sort), Desc: req.Order != "asc",
		StickyMinAccess: s.o.Steward.StickyMinAccess, Offset: req.Offset, Limit: req.Limit}
	if req.Kind != "" {
		q.Kinds = []memory.Kind{memory.Kind(req.Kind)}
	}
	if req.Type != "" {
		q.Types = []memory.Type{memory.Type(req.Type)}
	}
	if req.Scope != "" {
		q.Scopes = []memory.Scope{scopeOf(req.Scope)}
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
	var all *store.Facets // the whole store's counts, when needed
	if req.Facets || (req.Worktrees && req.Project != "") {
		f, err := s.o.Store.Facets(ctx, store.ListQuery{IncludeSuperseded: q.IncludeSuperseded, Now: now})
		if err != nil {
			return ListResponse{}, fmt.Errorf("list facets: %w", err)
		}
		all = &f
	}
	if req.Worktrees && req.Project != "" {
		q.Projects = []string{req.Project}
		for p := range all.Projects {
			if WorktreeOf(p, req.Project) {
				q.Projects = append(q.Projects, p)
			}
		}
		q.Project = ""
	}
	res, err := s.listPage(ctx, q, now)
	if err != nil {
		return ListResponse{}, err
	}
	if req.Facets {
		f := listFacets(all)
		res.Facets = &f
	}
	return res, nil
}

// listPage is the page the store selects.
func (s *Service) listPage(ctx context.Context, q store.ListQuery, now time.Time) (ListResponse, error) {
	ids, total, err := s.o.Store.List(ctx, q)
	if err != nil {
		return ListResponse{}, fmt.Errorf("list memories: %w", err)
	}
	ms, err := s.o.Store.GetMany(ctx, ids)
	if err != nil {
		return ListResponse{}, fmt.Errorf("list memories: %w", err)
	}
	res := ListResponse{Total: total, Memories: make([]ListedMemory, 0, len(ids))}
	for _, id := range ids {
		if m, ok := ms[id]; ok {
			res.Memories = append(res.Memories, s.Listed(m, now))
		}
	}
	return res, nil
}

// listFacets is the store's counts as ListFacets: kinds, types and scopes
// by name, sources by family (SourceFamily), worktrees grouped.
func listFacets(sf *store.Facets) ListFacets {
	f := ListFacets{Projects: sf.Projects, Kinds: map[string]int{}, Types: map[string]int{},
		Sources: map[string]int{}, Scopes: map[string]int{}}
	for k, n := range sf.Kinds {
		f.Kinds[string(k)] += n
	}
	for t, n := range sf.Types {
		f.Types[string(t)] += n
	}
	for src, n := range sf.Sources {
		f.Sources[SourceFamily(src)] += n
	}
	for sc, n := range sf.Scopes {
		f.Scopes[scopeName(sc)] += n
	}
	f.Worktrees = groupWorktrees(f.Projects)
	return f
}

// Listed is m as List shows it at now: without its embedding, with the
// computed columns.
func (s *Service) Listed(m memory.Memory, now time.Time) ListedMemory {
	m.Embedding = nil
	return ListedMemory{Memory: m, Stickiness: memory.Stickiness(m.AccessCount, m.ReinforcedCount, s.o.Steward.StickyMinAccess),
		AgeDays: max(0, now.Sub(m.CreatedAt).Hours()/24), Snoozed: m.Snoozed(now)}
}

// Edit changes a memory. A new text makes a new version through
// store.Supersede: the edited memory keeps its counters, pin, snooze and
// creation time under a new id, and the old version stays as history
// (superseded, hidden from recall), so an edit is never a silent loss and
// the history view can show what it was. The text is redacted and
// re-embedded. Kind, type, project and importance change in place.
func (s *Service) Edit(ctx context.Context, id string, p MemoryPatch) (EditResult, error) {
	fields := map[string]string{}
	if p.Text == nil && p.Kind == nil && p.Type == nil && p.Project == nil && p.Importance == nil {
		return EditResult{}, fmt.Errorf("%w: give at least one of text, kind, type, project, importance", memory.ErrInvalid)
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
		return EditResult{}, &memory.FieldErrors{Message: "invalid edit", Fields: fields}
	}
	old, err := s.o.Store.Get(ctx, id)
	if err != nil {
		return EditResult{}, err
	}
	if old.Superseded() {
		return EditResult{}, fmt.Errorf("%w: memory %s is an old version, superseded by %s: edit the newest one", memory.ErrInvalid, id, old.SupersededBy)
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
	now := s.o.Clock.Now()
	var text string
	if p.Text != nil {
		text, _ = ingest.Redact(*p.Text)
	}
	if p.Text == nil || memory.ContentHash(text) == old.ContentHash {
		m, err := s.update(ctx, id, func(m *memory.Memory) error { apply(m); return nil })
		if err != nil {
			return EditResult{}, err
		}
		s.o.Publish(OpUpdated, []string{m.ID}, &m)
		return EditResult{Memory: s.Listed(m, now)}, nil
	}
	next := old
	next.ID, next.Text, next.Supersedes, next.SupersededBy, next.ContentHash = "", text, "", "", ""
	next.Embedding, next.EmbeddingModel, next.UpdatedAt = nil, "", now.UTC()
	apply(&next)
	res, err := s.o.Pipeline.Write(ctx, ingest.WriteRequest{Memory: next, Replaces: id})
	if err == nil && res.Decision.Verdict == memory.VerdictDuplicate {
		return EditResult{}, &memory.FieldErrors{Message: "invalid edit",
			Fields: map[string]string{"text": "the same text is already stored as memory " + res.Memory.ID}}
	}
	stored := res.Memory
	if err = s.o.IndexLag(err); err != nil {
		return EditResult{}, fmt.Errorf("edit %s: %w", id, err)
	}
	s.o.Publish(OpUpdated, []string{id, stored.ID}, &stored)
	return EditResult{Memory: s.Listed(stored, now), Previous: id}, nil
}

// History walks a memory's supersession chain both ways (at most
// MaxHistory versions each way) and finds what the steward merged into any
// version (merged-away memories wait in the trash, their reason "merged
// into <id>").
func (s *Service) History(ctx context.Context, id string) (MemoryHistory, error) {
	cur, err := s.o.Store.Get(ctx, id)
	if err != nil {
		return MemoryHistory{}, err
	}
	cur.Embedding = nil
	h := MemoryHistory{ID: id, Versions: []memory.Memory{cur}, Merged: []store.TrashedMemory{}}
	seen := map[string]bool{id: true}
	walk := func(next func(memory.Memory) string, prepend bool) error {
		m := cur
		for n := 0; ; n++ {
			nid := next(m)
			if nid == "" || seen[nid] {
				return nil
			}
			if n == MaxHistory {
				h.Truncated = true
				return nil
			}
			nm, err := s.o.Store.Get(ctx, nid)
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
	trash, err := s.o.Store.Trash(ctx)
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
