// Package store is memtray's memory store and the only importer of bleve
// and bbolt. Records and embeddings live in a crash-safe store of record
// (bbolt, one fsync'd transaction per write, <Dir>/memtray.db). The vector
// index is in memory, rebuilt from the records at every Open: one
// contiguous array of normalised vectors scanned exactly, with filter fields
// inline (it replaced chromem-go's collection, 10x slower at 100k records;
// see vectorIndex). bleve on disk (<Dir>/text.bleve) is the BM25 text
// index; it carries a watermark (the store sequence number it reflects)
// and is reconciled with the records at Open, or rebuilt if it cannot be
// opened. A kill -9 at any moment loses at most the write in flight.
//
// One process owns a store (bbolt's file lock; <Dir>/memtray.pid names the
// owner for the error a second process gets).
package store

import (
	"log/slog"
	"time"

	"github.com/memtray/memtray/backend/memory"
)

// Options configures Open.
type Options struct {
	// Dir holds the store's files; created with mode 0700 if missing.
	Dir string
	// Model and Dim name the embedding model the store accepts. A store that
	// already has records of another model refuses to open with
	// memory.ErrModelMismatch unless AllowModelChange is set (reindex does).
	Model string
	Dim   int
	// AllowModelChange opens a store whose recorded model differs, for Reembed.
	AllowModelChange bool
	// Clock tells the time for timestamps and snooze checks; nil is the wall clock.
	Clock memory.Clock
	// LockTimeout bounds the wait for the store's lock; a second process gets
	// memory.ErrLocked naming the owner's pid. Zero means 1s.
	LockTimeout time.Duration
	// Shared, when set, says which memories are team memories (issue 23):
	// every write of one, its delete, and its counters' growth are queued
	// in the store's outbox in the write's own transaction (Outbox,
	// AckOutbox; outbox.go). Nil: no outbox.
	Shared func(m *memory.Memory) bool
	// NewID, when set, names the memories the store names (a memory stored
	// without an id, a restored or imported one whose id is taken) and the
	// ids Store.NewID hands out. It must be safe for concurrent use and
	// return ids ValidID accepts that it never returned before. Nil (every
	// production store): 128 random bits from crypto/rand in lowercase hex.
	// The evaluations set a seeded generator (eval.SeededIDs) so that two
	// runs name the same memories alike and rank ties, broken by id, fall
	// the same way; nothing else should.
	NewID func() string
	// Logger, when set, is told before Open starts what takes long: the
	// text index built again from every record (one of an older mapping
	// version, one that could not be opened, or none), and when that is
	// done. Nil logs nothing.
	Logger *slog.Logger
}

// Filter narrows Iterate, VectorSearch and TextSearchTerms. The zero Filter
// matches every live memory: snoozed and superseded ones are excluded unless
// asked for.
type Filter struct {
	Project string        // exact project; "" matches all
	Kinds   []memory.Kind // any of; empty matches all
	Source  string        // exact source, or a prefix ending in ':' ("ingest:")
	// Projects, when not empty, narrows to the memories of these projects
	// ("" stands for the memories of no project), and PlusTypes widens it
	// again to the memories of these types whatever their project: the
	// prompt hook's recall reaches the current project, the projects the
	// prompt names, the memories of no project and the user's own
	// (memory.TypeUser) this way. PlusTypes needs Projects.
	Projects  []string
	PlusTypes []memory.Type
	// NoProjectBut, with "" in Projects, leaves out of it the memories of
	// no project whose source is one of these (PlusTypes still takes
	// them): the prompt hook's recall inside a project reaches a memory of
	// no project a session made (a project fact whose project was not
	// told) only when it is the user's own, and one written on purpose
	// without a project (MCP, `memtray add`) always.
	NoProjectBut      []string
	Since, Until      time.Time // created_at within [Since, Until); zero bounds are open
	IncludeSnoozed    bool
	IncludeSuperseded bool
	// Model, for VectorSearch and VectorSearchMany only, names the
	// embedding model the query vectors were made with: when it is not the
	// store's model (the store switched models since they were embedded,
	// see ReembedWith) the search fails with memory.ErrModelMismatch
	// rather than compare vectors of two models. "" skips the check (a
	// caller whose vectors cannot be of another model). Iterate and
	// TextSearchTerms ignore it.
	Model string
}

// Scored is one search candidate: a memory id and the leg's own score
// (cosine similarity for vectors, BM25 for text), best first.
type Scored struct {
	ID    string  `json:"id"`
	Score float64 `json:"score"`
}

// Info describes an open store.
type Info struct {
	Dir            string `json:"dir"`
	Model          string `json:"embedding_model"`
	Dim            int    `json:"dim"`
	Count          int    `json:"count"`
	Seq            uint64 `json:"seq"`
	FormatVersion  int    `json:"format_version"`
	RepairedOnOpen int    `json:"repaired_on_open"` // index entries fixed by reconciliation at Open
	// Unreadable counts the records Open could not decode: every read
	// skips them (Warnings names them) and their bytes are kept for
	// `memtray doctor --salvage`. 0 on a healthy store.
	Unreadable int `json:"unreadable,omitempty"`
	// TrashUnreadable counts the trash entries that cannot be read: the
	// trash's list leaves them out (Warnings names them), they cannot be
	// restored, and purging them deletes them. 0 on a healthy store.
	TrashUnreadable int `json:"trash_unreadable,omitempty"`
	// TrashUnreadableIDs are those entries' ids, sorted: what `memtray
	// trash purge ID` and POST /api/trash/purge take (Warnings says the
	// same for a person to read). Empty on a healthy store.
	TrashUnreadableIDs []string `json:"trash_unreadable_ids,omitempty"`
	// Warnings lists what Open found and repaired or skipped: a text index
	// rebuilt after it failed to open, unreadable records, an unfinished
	// re-embedding. Empty on a healthy store.
	Warnings []string `json:"warnings,omitempty"`
}

// ImportOptions configures Import.
type ImportOptions struct {
	// Embedder re-embeds records whose model differs from the store's; it
	// must produce the store's model. Nil makes such a file an error.
	Embedder memory.Embedder
	// Progress, if set, is called as records are written.
	Progress func(done, total int)
	// Rewrite, if set, is applied to each record's text once the whole
	// stream is checked, before duplicates are decided (the daemon masks
	// secrets with it: an imported file may carry them). A record whose
	// text it changes is re-embedded with Embedder, since its vector was
	// made from the old text; the new text must still be valid.
	Rewrite func(text string) (string, bool)
}

// ImportReport counts what Import did.
type ImportReport struct {
	Total      int `json:"total"`
	Imported   int `json:"imported"`
	Duplicates int `json:"duplicates"` // skipped: same content hash already stored
	Reembedded int `json:"reembedded"`
	// WithoutVector counts the imported records the file held without
	// their vector (exported when it was damaged): embedded anew (counted
	// in Reembedded too), or kept without one (KeptWithoutVector).
	WithoutVector int `json:"without_vector,omitempty"`
	// KeptWithoutVector counts those stored without a vector, no embedder
	// being given or answering: as a record whose vector is damaged, they
	// are readable and found by text but not by meaning until
	// RepairVectors embeds them (the daemon does while it runs and at its
	// next start; `memtray reindex` does).
	KeptWithoutVector int `json:"kept_without_vector,omitempty"`
	// Rewritten counts the records whose text ImportOptions.Rewrite
	// changed (secrets masked), re-embedded when imported.
	Rewritten int `json:"rewritten"`
}
