package store

import (
	"context"
	"errors"
	"io"

	"github.com/memtray/memtray/backend/memory"
)

// Store is an open memtray memory store. It is safe for concurrent use.
type Store struct {
	opts Options
}

var errTODO = errors.New("store: not implemented yet")

// Open opens (creating if needed) the store in opts.Dir.
func Open(ctx context.Context, opts Options) (*Store, error) { return nil, errTODO }

// Close releases the store's files and lock.
func (s *Store) Close() error { return nil }

// Info describes the open store.
func (s *Store) Info() Info { return Info{} }

// Put stores a new memory and returns the stored record.
func (s *Store) Put(ctx context.Context, m memory.Memory) (memory.Memory, error) {
	return memory.Memory{}, errTODO
}

// PutBatch stores several memories in one transaction: all or nothing.
func (s *Store) PutBatch(ctx context.Context, ms []memory.Memory) ([]memory.Memory, error) {
	return nil, errTODO
}

// Get returns the memory with id, or an error wrapping memory.ErrNotFound.
func (s *Store) Get(ctx context.Context, id string) (memory.Memory, error) {
	return memory.Memory{}, errTODO
}

// GetMany returns the memories found among ids; missing ids are absent.
func (s *Store) GetMany(ctx context.Context, ids []string) (map[string]memory.Memory, error) {
	return nil, errTODO
}

// Update reads, modifies with fn and writes the memory id in one transaction.
func (s *Store) Update(ctx context.Context, id string, fn func(*memory.Memory) error) (memory.Memory, error) {
	return memory.Memory{}, errTODO
}

// Delete removes the memory id.
func (s *Store) Delete(ctx context.Context, id string) error { return errTODO }

// Iterate calls fn for each memory matching f, in stable order.
func (s *Store) Iterate(ctx context.Context, f Filter, fn func(memory.Memory) error) error {
	return errTODO
}

// FindByHash returns the memory with the given content hash.
func (s *Store) FindByHash(ctx context.Context, hash string) (memory.Memory, bool, error) {
	return memory.Memory{}, false, errTODO
}

// Count returns the number of stored memories.
func (s *Store) Count() int { return 0 }

// VectorSearch returns the n memories matching f nearest to vec by cosine.
func (s *Store) VectorSearch(ctx context.Context, vec []float32, n int, f Filter) ([]Scored, error) {
	return nil, errTODO
}

// TextSearch returns the n best BM25 matches for the free-text query.
func (s *Store) TextSearch(ctx context.Context, query string, n int, f Filter) ([]Scored, error) {
	return nil, errTODO
}

// DocFreq returns the document frequency of each analysed term.
func (s *Store) DocFreq(ctx context.Context, terms []string) (map[string]int, error) {
	return nil, errTODO
}

// Analyze returns the terms the text index makes of text.
func (s *Store) Analyze(text string) []string { return nil }

// Export writes the whole store as a versioned JSONL stream.
func (s *Store) Export(ctx context.Context, w io.Writer) error { return errTODO }

// Import validates a whole export stream, then stores its records.
func (s *Store) Import(ctx context.Context, r io.Reader, opts ImportOptions) (ImportReport, error) {
	return ImportReport{}, errTODO
}

// Reembed re-embeds every record with emb and switches the store to its model.
func (s *Store) Reembed(ctx context.Context, emb memory.Embedder, progress func(done, total int)) error {
	return errTODO
}
