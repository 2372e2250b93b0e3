package store

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/memtray/memtray/backend/memory"
	bolt "go.etcd.io/bbolt"
)

// A staged vector (bucket stage, key id) is the record's content hash (64
// hex bytes) followed by the new packed embedding.
const hashLen = 64

type todo struct{ id, text, hash string }

// Reembed switches the store to emb's model: it embeds every record's text
// with emb (calling progress(done, total) as it goes), then, in one
// transaction, replaces every embedding, records the new model and
// dimension, and rebuilds the vector index. New vectors are staged in bbolt
// first, so a crash leaves the old model fully usable and a later Reembed
// with the same model resumes where it stopped. Writes may continue while
// texts are embedded; they are caught up before the switch.
func (s *Store) Reembed(ctx context.Context, emb memory.Embedder, progress func(done, total int)) error {
	return s.ReembedWith(ctx, emb, ReembedOptions{Progress: progress})
}

// ReembedOptions are the callbacks of ReembedWith.
type ReembedOptions struct {
	// Progress, if set, is called with the records embedded so far and the
	// total, as they are embedded.
	Progress func(done, total int)
	// Switched, if set, is called once the store has switched to the new
	// model, with the store's write lock still held, so no write reaches
	// the store between the switch and Switched's return. A running
	// process switches the embedder its writers use there: a write of a
	// vector embedded before fails with memory.ErrModelMismatch (when it
	// names its model, see Put) and is embedded again. Switched must not
	// write to the store, nor search it with a Filter.Model (a search of
	// another model waits for Switched to return).
	Switched func()
}

// ReembedWith is Reembed with callbacks.
func (s *Store) ReembedWith(ctx context.Context, emb memory.Embedder, opts ReembedOptions) error {
	progress := opts.Progress
	if err := s.checkOpen(); err != nil {
		return err
	}
	if emb == nil {
		return fmt.Errorf("reembed: no embedder: %w", memory.ErrInvalid)
	}
	model, dim := emb.Model(), emb.Dim()
	if model == "" || len(model) > maxModel || !memory.ValidUTF8(model) || dim < 1 || dim > maxDim {
		return fmt.Errorf("reembed: embedder model %q / dimension %d is invalid: %w", model, dim, memory.ErrInvalid)
	}
	s.reembedMu.Lock()
	defer s.reembedMu.Unlock()

	// Record the intent; a stage for another model is discarded.
	err := s.update(func(tx *bolt.Tx) error {
		meta := tx.Bucket(bucketMeta)
		if string(meta.Get(keyStageModel)) != model || int(getU64(meta.Get(keyStageDim))) != dim {
			if err := tx.DeleteBucket(bucketStage); err != nil {
				return err
			}
			if _, err := tx.CreateBucket(bucketStage); err != nil {
				return err
			}
		}
		if err := meta.Put(keyStageModel, []byte(model)); err != nil {
			return err
		}
		return meta.Put(keyStageDim, u64(uint64(dim)))
	})
	if err != nil {
		return fmt.Errorf("reembed: %w", err)
	}

	total := s.Count()
	// Embed without holding the write lock; repeat until nothing is left
	// (or a few rounds), then finish under the lock.
	for round := 0; round < 3; round++ {
		todos, staged, err := s.stageTodo(dim)
		if err != nil {
			return fmt.Errorf("reembed: %w", err)
		}
		if len(todos) == 0 {
			break
		}
		total = staged + len(todos)
		if err := s.stageEmbed(ctx, emb, todos, staged, total, progress); err != nil {
			return fmt.Errorf("reembed: %w", err)
		}
	}

	s.wmu.Lock()
	defer s.wmu.Unlock()
	if err := s.checkOpen(); err != nil {
		return err
	}
	todos, staged, err := s.stageTodo(dim)
	if err != nil {
		return fmt.Errorf("reembed: %w", err)
	}
	if err := s.stageEmbed(ctx, emb, todos, staged, staged+len(todos), progress); err != nil {
		return fmt.Errorf("reembed: %w", err)
	}
	if err := s.swapStaged(model, dim); err != nil {
		return fmt.Errorf("reembed: %w", err)
	}
	if opts.Switched != nil {
		opts.Switched()
	}
	return nil
}

// stageTodo lists the records whose staged vector is missing or stale.
func (s *Store) stageTodo(dim int) ([]todo, int, error) {
	var todos []todo
	staged := 0
	err := s.view(func(tx *bolt.Tx) error {
		stage := tx.Bucket(bucketStage)
		return tx.Bucket(bucketRecs).ForEach(func(k, v []byte) error {
			_, m, err := decodeRecord(v)
			if errors.Is(err, errCorrupt) {
				return nil // unreadable (Open skipped it): left as it is, for a salvage
			}
			if err != nil {
				return fmt.Errorf("record %s: %w", k, err)
			}
			if sv := stage.Get(k); len(sv) == hashLen+4*dim && string(sv[:hashLen]) == m.ContentHash {
				staged++
				return nil
			}
			todos = append(todos, todo{id: string(k), text: m.Text, hash: m.ContentHash})
			return nil
		})
	})
	return todos, staged, err
}

// stageEmbed embeds todos in batches and stores the vectors in the stage bucket.
func (s *Store) stageEmbed(ctx context.Context, emb memory.Embedder, todos []todo, done, total int, progress func(int, int)) error {
	for start := 0; start < len(todos); start += reembedBatch {
		if err := ctx.Err(); err != nil {
			return err
		}
		end := min(start+reembedBatch, len(todos))
		texts := make([]string, 0, end-start)
		for _, t := range todos[start:end] {
			texts = append(texts, t.text)
		}
		vecs, err := embedChecked(ctx, emb, texts)
		if err != nil {
			return err
		}
		err = s.update(func(tx *bolt.Tx) error {
			stage := tx.Bucket(bucketStage)
			for i, t := range todos[start:end] {
				v := make([]byte, 0, hashLen+4*len(vecs[i]))
				v = append(v, t.hash...)
				for _, f := range vecs[i] {
					v = binary.LittleEndian.AppendUint32(v, math.Float32bits(f))
				}
				if err := stage.Put([]byte(t.id), v); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return fmt.Errorf("stage vectors: %w", err)
		}
		done += end - start
		if progress != nil {
			progress(done, total)
		}
	}
	return nil
}

var errStageMissing = errors.New("a record has no staged vector")

// swapStaged replaces every record's embedding with its staged one and
// switches the store's model, in one transaction; then it rebuilds the
// vector index. Called with s.wmu held and every record staged.
func (s *Store) swapStaged(model string, dim int) error {
	err := s.update(func(tx *bolt.Tx) error {
		recs, stage, meta := tx.Bucket(bucketRecs), tx.Bucket(bucketStage), tx.Bucket(bucketMeta)
		type upd struct {
			k []byte
			v []byte
		}
		var ups []upd
		err := recs.ForEach(func(k, v []byte) error {
			h, m, err := decodeRecord(v)
			if errors.Is(err, errCorrupt) {
				return nil // unreadable: stageTodo staged nothing for it, and it stays as it is
			}
			if err != nil {
				return fmt.Errorf("record %s: %w", k, err)
			}
			sv := stage.Get(k)
			if len(sv) != hashLen+4*dim || string(sv[:hashLen]) != m.ContentHash {
				return fmt.Errorf("%w: %s", errStageMissing, k)
			}
			m.Embedding = unpackVector(sv[hashLen:])
			m.EmbeddingModel = model
			nv, err := encodeRecord(h, &m)
			if err != nil {
				return err
			}
			ups = append(ups, upd{k: append([]byte(nil), k...), v: nv})
			return nil
		})
		if err != nil {
			return err
		}
		for _, u := range ups {
			if err := recs.Put(u.k, u.v); err != nil {
				return err
			}
		}
		if err := tx.DeleteBucket(bucketStage); err != nil {
			return err
		}
		if _, err := tx.CreateBucket(bucketStage); err != nil {
			return err
		}
		_ = meta.Delete(keyStageModel)
		_ = meta.Delete(keyStageDim)
		if err := meta.Put(keyModel, []byte(model)); err != nil {
			return err
		}
		return meta.Put(keyDim, u64(uint64(dim)))
	})
	if err != nil {
		return err
	}
	vec, err := newVectorIndex(dim)
	if err != nil {
		return err
	}
	s.mu.RLock()
	entries := s.entries
	s.mu.RUnlock()
	var damaged []string
	err = s.view(func(tx *bolt.Tx) error {
		vec.grow(len(entries))
		return tx.Bucket(bucketRecs).ForEach(func(k, v []byte) error {
			_, _, emb, err := splitRecord(v, nil)
			if err != nil {
				return nil
			}
			if e, ok := entries[string(k)]; ok && vec.addPacked(string(k), emb, e) == vecDamaged {
				damaged = append(damaged, string(k))
			}
			return nil
		})
	})
	if err != nil {
		return err
	}
	s.mu.Lock()
	s.model, s.dim, s.vec = model, dim, vec
	// Every vector is new: Open's count of damaged ones is stale.
	s.warnings = dropStageWarnings(s.warnings)
	if w := damagedVectorWarning(damaged, dim); w != "" {
		s.warnings = append(s.warnings, w)
	}
	s.damaged = damaged
	s.mu.Unlock()
	return nil
}

// dropStageWarnings drops the warnings a finished re-embedding answers:
// the unfinished stage's and the damaged vectors'.
func dropStageWarnings(ws []string) []string {
	out := ws[:0]
	for _, w := range ws {
		if !strings.HasPrefix(w, stageWarningPrefix) && !strings.Contains(w, damagedVectorMarker) {
			out = append(out, w)
		}
	}
	return out
}

const stageWarningPrefix = "unfinished re-embedding"

// RepairVectors embeds anew, with emb, the text of every record whose
// stored vector Open found damaged (a NaN or Inf component, or a length
// other than the store's dimension: see packedState), stores the new
// vectors and indexes them, and takes them off Open's warning. It returns
// how many it repaired. emb must be of the store's model and dimension
// (memory.ErrModelMismatch otherwise). A vector is derived from the text:
// the records keep their timestamps and nothing goes to the team outbox
// (the team's copy carries no vector of this machine's: a push never
// copies a damaged one, and every other member embedded the text
// itself), but the repair is a write of the store like any other: it
// takes a new store sequence number, which the repaired records carry
// (ChangedSince finds them: the steward's incremental merge scan searches
// the neighbours of a memory that has just entered the vector index), and
// it is published as every write is (publish.go). The text index is not
// touched (the text is the same). The embedder is called without the write lock, so
// writes go on while it is slow or does not answer (the daemon retries a
// failed repair while it runs); a record deleted, rewritten with a new
// vector or given another text meanwhile is left alone.
func (s *Store) RepairVectors(ctx context.Context, emb memory.Embedder) (int, error) {
	if err := s.checkOpen(); err != nil {
		return 0, err
	}
	s.mu.RLock()
	damaged, model, dim := s.damaged, s.model, s.dim
	s.mu.RUnlock()
	if len(damaged) == 0 {
		return 0, nil
	}
	if emb == nil || emb.Model() != model || emb.Dim() != dim {
		return 0, fmt.Errorf("repair vectors: the embedder is not of the store's model %q (%d dims): %w", model, dim, memory.ErrModelMismatch)
	}
	ids, texts, err := s.damagedTexts(damaged, dim)
	if err != nil {
		return 0, fmt.Errorf("repair vectors: %w", err)
	}
	if len(ids) == 0 {
		return 0, nil
	}
	vecs, err := embedChecked(ctx, emb, texts)
	if err != nil {
		return 0, fmt.Errorf("repair vectors: %w", err)
	}
	s.wmu.Lock()
	defer s.wmu.Unlock()
	if err := s.checkOpen(); err != nil {
		return 0, err
	}
	if m, d := s.modelDim(); m != model || d != dim {
		// A re-embedding switched models meanwhile (under s.wmu): every
		// record has a vector of the new model, and its list stands.
		return 0, fmt.Errorf("repair vectors: the store switched to model %q meanwhile: %w", m, memory.ErrModelMismatch)
	}
	type repaired struct {
		h recHeader
		m memory.Memory
	}
	var done []repaired
	seq := s.seq + 1
	err = s.update(func(tx *bolt.Tx) error {
		done = done[:0]
		recs := tx.Bucket(bucketRecs)
		for i, id := range ids {
			v := recs.Get([]byte(id))
			if v == nil {
				continue // deleted meanwhile
			}
			h, m, err := decodeRecord(v)
			if err != nil {
				return fmt.Errorf("record %s: %w", id, err)
			}
			if m.Text != texts[i] || checkVector(m.Embedding, dim) == nil {
				continue // rewritten meanwhile: it brought its own vector
			}
			m.Embedding, h.seq = vecs[i], seq
			if v, err = encodeRecord(h, &m); err != nil {
				return fmt.Errorf("record %s: %w", id, err)
			}
			if err := recs.Put([]byte(id), v); err != nil {
				return err
			}
			done = append(done, repaired{h, m})
		}
		if len(done) == 0 {
			return errNothingWritten
		}
		return putSeqCount(tx, seq, 0)
	})
	if errors.Is(err, errNothingWritten) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("repair vectors: %w", err)
	}
	s.committed()
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, r := range done {
		if _, ok := s.entries[r.m.ID]; ok {
			e := entryFromMemory(r.h, &r.m, s.intern)
			s.setEntry(r.m.ID, e)
			s.indexVector(r.m.ID, r.m.Embedding, e)
		} else {
			s.markDamaged(r.m.ID, false)
		}
	}
	s.setSeq(seq)
	return len(done), nil
}

// damagedTexts reads the texts of the records of ids whose stored vector
// is damaged for a store of dimension dim (one read transaction).
func (s *Store) damagedTexts(ids []string, dim int) (damaged, texts []string, err error) {
	err = s.view(func(tx *bolt.Tx) error {
		recs := tx.Bucket(bucketRecs)
		for _, id := range ids {
			v := recs.Get([]byte(id))
			if v == nil {
				continue
			}
			if _, _, packed, err := splitRecord(v, nil); err != nil || packedState(packed, dim) != vecDamaged {
				continue
			}
			if _, m, err := decodeRecord(v); err == nil {
				damaged, texts = append(damaged, id), append(texts, m.Text)
			}
		}
		return nil
	})
	return damaged, texts, err
}

// RepairDamagedVectors opens the closed store in dir and embeds anew,
// with the embedder embedFor gives for the store's model, exactly the
// records whose stored vector is damaged (RepairVectors: what the daemon
// does at start), for `memtray doctor --reembed-damaged`. It returns how
// many it repaired and the store's model. Open's own repairs run as at
// any start.
func RepairDamagedVectors(ctx context.Context, dir string, embedFor EmbedderFor) (n int, model string, err error) {
	s, err := Open(ctx, Options{Dir: dir})
	if err != nil {
		return 0, "", fmt.Errorf("re-embed damaged vectors: %w", err)
	}
	defer func() {
		if cerr := s.Close(); err == nil && cerr != nil {
			err = fmt.Errorf("re-embed damaged vectors: %w", cerr)
		}
	}()
	s.mu.RLock()
	damaged, model := len(s.damaged), s.model
	s.mu.RUnlock()
	if damaged == 0 {
		return 0, model, nil
	}
	emb, err := embedFor(ctx, model)
	if err != nil {
		return 0, model, fmt.Errorf("re-embed damaged vectors: an embedder of model %s: %w", model, err)
	}
	n, err = s.RepairVectors(ctx, emb)
	return n, model, err
}
