package store

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/memtray/memtray/backend/memory"
	bolt "go.etcd.io/bbolt"
	bolterrors "go.etcd.io/bbolt/errors"
)

// SalvageReport says what Salvage saved, what it lost and where the
// damaged file went.
type SalvageReport struct {
	// Saved counts the records the new store holds; Duplicates the
	// readable records left out because another with the same text was
	// saved; Lost the records found but unreadable.
	Saved      int `json:"saved"`
	Duplicates int `json:"duplicates"`
	Lost       int `json:"lost"`
	// Pages lists the pages that could not be read: the records they
	// held are lost without being counted.
	Pages []string `json:"unreadable_pages"`
	// KeptAs is where the damaged records file is now; TrashLeft counts
	// trashed memories not carried over (unreadable, or a saved record
	// has their id: Kept.Dropped says which).
	KeptAs    string `json:"kept_as"`
	TrashLeft int    `json:"trash_left"`
	// Kept is what was carried over besides the records (the trash, the
	// team outbox, the recall log, ...), and what was left out and why.
	Kept SalvageKept `json:"kept_buckets"`
	// Counted is the number of records the damaged file's meta counted
	// (0: unknown): those it names beyond Saved, Duplicates and Lost were
	// on pages that could not be read.
	Counted int `json:"counted"`
	// Reembedded counts the saved records whose vector was damaged and
	// made anew; NoVector those saved without a vector for want of an
	// embedder of the store's model (counted in Saved too): as a record
	// Open finds with a damaged vector, each is found by its words only
	// until the daemon (or `memtray doctor --reembed-damaged`) embeds it.
	Reembedded int `json:"reembedded"`
	NoVector   int `json:"no_vector"`
	// Scanned counts the saved records found by reading every leaf page
	// (the tree above them could not be read); each is the newest version
	// found, which may be older than the one the unreadable page held.
	Scanned int    `json:"scanned"`
	Model   string `json:"model"`
	Dim     int    `json:"dim"`
}

// EmbedderFor gives the embedder of a model (embed.ForModel with the
// user's config).
type EmbedderFor func(ctx context.Context, model string) (memory.Embedder, error)

// salvageTimeFormat stamps the names of what Salvage and RebuildTextIndex
// move aside.
const salvageTimeFormat = "20060102T150405"

// Salvage copies every record of dir's records file that can still be
// read into a new store that takes its place. The records are read page
// by page from the newest meta page that leads to a readable root
// (walkRecordsFile), without bbolt, so it works on a file bbolt refuses
// or faults on; each record must decode and validate. The new store is
// built beside the old one by Import (ids, timestamps, counters and
// vectors kept), then the damaged file is kept under a new name
// (memtray.db.damaged-TIME: a hard link where the file system has them,
// else a copy) and the new file renamed over memtray.db, so that there is
// never a moment without a records file, which the next start would
// take for a new, empty store. The text index is rebuilt. The store must
// be closed: quit memtray first.
//
// A record whose text is readable but whose vector is not (or is of
// another model) is embedded anew with the embedder embedFor gives for
// the store's model; when there is none (embedFor nil, or an error: the
// embedder's server is down) it is saved without a vector, which the new
// store treats as Open treats a damaged one: out of the vector index,
// named by the warning, embedded anew by the daemon.
//
// Every other bucket's entries that can be read, are valid and are still
// true of the new store are carried over (carryOver: the trash, the team
// outbox, bases and machine name, the recall log, the calibrations, the
// decision log, the turn marks); the team's cursor only when nothing was
// lost (the next pull reads the team anew otherwise). A salvage loses
// what the damaged pages held.
func Salvage(ctx context.Context, dir string, embedFor EmbedderFor) (SalvageReport, error) {
	var rep SalvageReport
	dir, err := filepath.Abs(dir)
	if err != nil {
		return rep, fmt.Errorf("salvage: %w", err)
	}
	path := filepath.Join(dir, dbFile)
	if _, err := os.Stat(path); err != nil {
		return rep, fmt.Errorf("salvage %s: %w", dir, err)
	}
	if err := ensureUnlocked(dir); err != nil {
		return rep, fmt.Errorf("salvage: %w", err)
	}
	w, err := walkRecordsFile(path)
	if err != nil {
		return rep, fmt.Errorf("salvage %s: nothing can be read: %w", path, err)
	}
	good, noVec, lost, strays := salvageable(w)
	rep.Scanned = strays
	rep.Lost, rep.Pages = lost, w.bad
	rep.Model, rep.Dim = salvageModel(w, good)
	rep.Counted = salvageCount(w)
	if rep.Model == "" || rep.Dim <= 0 {
		return rep, fmt.Errorf("salvage %s: neither the meta nor any record names the embedding model: nothing to build a store with", path)
	}
	var kept []memory.Memory
	for _, m := range good {
		if m.EmbeddingModel == rep.Model && len(m.Embedding) == rep.Dim {
			kept = append(kept, m)
		} else {
			noVec = append(noVec, m)
		}
	}
	if len(noVec) > 0 {
		var emb memory.Embedder
		if embedFor != nil {
			emb, _ = embedFor(ctx, rep.Model)
		}
		if emb == nil || emb.Model() != rep.Model || emb.Dim() != rep.Dim {
			rep.NoVector = len(noVec)
		} else if err := EmbedInto(ctx, emb, noVec); err != nil {
			return rep, fmt.Errorf("salvage: embed the %d records whose vector was damaged: %w", len(noVec), err)
		} else {
			rep.Reembedded = len(noVec)
			kept, noVec = append(kept, noVec...), nil
		}
	}
	stamp := time.Now().UTC().Format(salvageTimeFormat)
	tmp := filepath.Join(dir, ".salvage-"+stamp)
	defer os.RemoveAll(tmp)
	if err := buildSalvaged(ctx, tmp, w, &rep, kept, noVec); err != nil {
		return rep, fmt.Errorf("salvage %s: %w", path, err)
	}
	rep.KeptAs = path + ".damaged-" + stamp
	if err := keepAside(path, rep.KeptAs); err != nil {
		return rep, fmt.Errorf("salvage: keep the damaged file: %w", err)
	}
	if err := os.Rename(filepath.Join(tmp, dbFile), path); err != nil {
		return rep, fmt.Errorf("salvage: put the new records file in place (the damaged one is kept as %s): %w", rep.KeptAs, err)
	}
	// The old text index describes the damaged file: the next Open (here)
	// builds one from the new records.
	if err := os.RemoveAll(filepath.Join(dir, textDir)); err != nil {
		return rep, fmt.Errorf("salvage: remove the old text index: %w", err)
	}
	s, err := Open(ctx, Options{Dir: dir})
	if err != nil {
		return rep, fmt.Errorf("salvage: open the new store: %w", err)
	}
	return rep, s.Close()
}

// salvageable decodes and validates the records a walk found: good have
// a valid vector, noVec a valid text whose vector cannot be used (NaN,
// zero, garbled); bad counts the rest. When the walk scanned stray leaf
// pages (some of the tree could not be read), a stray record is taken
// when the tree did not give its id and the insertion order or the
// content hashes name it as stored (a stale version on a freed page of
// a record the tree holds, or one deleted, is not), its newest version
// when several are found; strays counts those taken. When neither
// bucket could be read, every stray record is taken but those a stray
// tombstone at least as new marks deleted: a record deleted long ago
// (its tombstone dropped) whose freed page survived comes back then.
func salvageable(w *walkedFile) (good, noVec []memory.Memory, bad, strays int) {
	take := func(m memory.Memory) {
		probe := Store{model: m.EmbeddingModel, dim: len(m.Embedding)}
		if probe.checkFields(&m) == nil {
			good = append(good, m)
			return
		}
		m.Embedding = nil
		if m.Validate() == nil {
			noVec = append(noVec, m)
			return
		}
		bad++
	}
	seen := map[string]bool{}
	for _, e := range w.buckets[string(bucketRecs)] {
		seen[string(e.k)] = true
		_, m, err := decodeRecord(e.v)
		if err != nil || m.ID != string(e.k) {
			bad++
			continue
		}
		take(m)
	}
	if len(w.stray) == 0 {
		return good, noVec, bad, 0
	}
	live := liveIDs(w)
	// Without the order and hash buckets (the tree's root is lost too),
	// the tombstones found on the same pages are what tells a deleted
	// record: one at least as new as the record's last write.
	dels := map[string]uint64{}
	if len(live) == 0 {
		for _, e := range w.stray {
			if len(e.v) == 8 && ValidID(string(e.k)) {
				dels[string(e.k)] = max(dels[string(e.k)], getU64(e.v))
			}
		}
	}
	type version struct {
		seq uint64
		m   memory.Memory
	}
	newest := map[string]version{}
	for _, e := range w.stray {
		id := string(e.k)
		if seen[id] || (len(live) > 0 && !live[id]) {
			continue
		}
		h, m, err := decodeRecord(e.v)
		if err != nil || m.ID != id {
			continue
		}
		if del, ok := dels[id]; ok && del >= h.seq {
			continue
		}
		if v, ok := newest[id]; !ok || h.seq > v.seq {
			newest[id] = version{h.seq, m}
		}
	}
	for _, v := range newest {
		take(v.m)
	}
	return good, noVec, bad, len(newest)
}

// liveIDs is the ids the walked order and hash buckets name: the records
// stored when the file was last written.
func liveIDs(w *walkedFile) map[string]bool {
	live := map[string]bool{}
	for _, e := range w.buckets[string(bucketOrder)] {
		live[string(e.v)] = true
	}
	for _, e := range w.buckets[string(bucketHash)] {
		if len(e.k) > 64 {
			live[string(e.k[64:])] = true
		}
	}
	return live
}

// salvageModel is the model and dimension the meta records, or, when the
// meta cannot be read, those of most of the records.
func salvageModel(w *walkedFile, good []memory.Memory) (string, int) {
	var model string
	var dim int
	for _, e := range w.buckets[string(bucketMeta)] {
		switch string(e.k) {
		case string(keyModel):
			model = string(e.v)
		case string(keyDim):
			dim = int(getU64(e.v))
		}
	}
	return modelByVotes(model, dim, good)
}

// salvageCount is the record count the walked meta bucket holds (0 when
// it cannot be read).
func salvageCount(w *walkedFile) int {
	for _, e := range w.buckets[string(bucketMeta)] {
		if string(e.k) == string(keyCount) {
			return int(getU64(e.v))
		}
	}
	return 0
}

// modelByVotes is the model and dimension of most of good, unless the
// meta's (model, dim) are valid.
func modelByVotes(model string, dim int, good []memory.Memory) (string, int) {
	if model != "" && dim > 0 && dim <= maxDim {
		return model, dim
	}
	type md struct {
		model string
		dim   int
	}
	votes := map[md]int{}
	var best md
	for _, m := range good {
		k := md{m.EmbeddingModel, len(m.Embedding)}
		if votes[k]++; votes[k] > votes[best] {
			best = k
		}
	}
	return best.model, best.dim
}

// buildSalvaged creates a store of rep's model and dimension in tmp,
// imports ms (each of that model and dimension) and noVec (without a
// vector) into it, and carries over the other buckets of w (carryOver);
// it sets rep's Saved, Duplicates, Kept and TrashLeft.
func buildSalvaged(ctx context.Context, tmp string, w *walkedFile, rep *SalvageReport, ms, noVec []memory.Memory) (err error) {
	s, err := Open(ctx, Options{Dir: tmp, Model: rep.Model, Dim: rep.Dim})
	if err != nil {
		return fmt.Errorf("create the new store: %w", err)
	}
	defer func() {
		if cerr := s.Close(); err == nil && cerr != nil {
			err = cerr
		}
	}()
	stream := filepath.Join(tmp, "salvage.jsonl")
	if err := writeExport(stream, rep.Model, rep.Dim, ms); err != nil {
		return err
	}
	f, err := os.Open(stream)
	if err != nil {
		return err
	}
	defer f.Close()
	ir, err := s.Import(ctx, f, ImportOptions{})
	if err != nil {
		return fmt.Errorf("write the records into the new store: %w", err)
	}
	n, d, err := s.insertWithoutVector(ctx, noVec)
	if err != nil {
		return fmt.Errorf("write the records whose vector was damaged into the new store: %w", err)
	}
	rep.Saved, rep.Duplicates = ir.Imported+n, ir.Duplicates+d
	if rep.Kept, err = s.carryOver(w, salvageLostAny(rep)); err != nil {
		return err
	}
	rep.TrashLeft = len(w.buckets[string(bucketTrash)]) - rep.Kept.Trash
	rep.Kept.Dropped = append(rep.Kept.Dropped, "never carried over: "+salvageDroppedAlways)
	return nil
}

// insertWithoutVector stores ms as Import stores records (ids, counters
// and timestamps kept, a text already stored skipped and counted in dups)
// but without their vector: each is on the store's list of damaged
// vectors, for RepairVectors.
func (s *Store) insertWithoutVector(ctx context.Context, ms []memory.Memory) (saved, dups int, err error) {
	for start := 0; start < len(ms); start += importBatch {
		end := min(start+importBatch, len(ms))
		ins := make([]Insert, 0, end-start)
		for _, m := range ms[start:end] {
			ins = append(ins, Insert{Memory: m, Unique: true, Restore: true, withoutVector: true})
		}
		res, err := s.InsertBatch(ctx, ins)
		if err != nil && !errors.Is(err, ErrIndexPending) {
			return saved, dups, err
		}
		for _, r := range res {
			if r.Existed {
				dups++
			} else {
				saved++
			}
		}
	}
	return saved, dups, nil
}

// writeExport writes ms as an export stream (see Export) to path.
func writeExport(path, model string, dim int, ms []memory.Memory) error {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	bw := bufio.NewWriterSize(f, 256<<10)
	err = writeJSONLine(bw, ExportHeader{Format: ExportFormat, Version: ExportVersion, EmbeddingModel: model, Dim: dim,
		Count: len(ms), ExportedAt: time.Now().UTC()})
	for i := 0; err == nil && i < len(ms); i++ {
		err = writeJSONLine(bw, &ms[i])
	}
	if err == nil {
		err = writeJSONLine(bw, exportTrailer{End: true, Count: len(ms)})
	}
	if err == nil {
		err = bw.Flush()
	}
	return errors.Join(err, f.Close())
}

// keepAside gives the file at path a second name, kept, without a moment
// when path is missing: a hard link, or a copy where links are refused.
func keepAside(path, kept string) error {
	if err := os.Link(path, kept); err == nil {
		return nil
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	f, err := os.OpenFile(kept, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	_, err = f.Write(b)
	if err == nil {
		err = f.Sync()
	}
	return errors.Join(err, f.Close())
}

// ensureUnlocked fails with memory.ErrLocked when another process holds
// the store in dir: bbolt takes its file lock before it reads a page, so
// an open that times out is one that another holder blocks, whatever the
// damage (which makes the open fail after the lock, releasing it).
func ensureUnlocked(dir string) error {
	path := filepath.Join(dir, dbFile)
	db, err := openBolt(path, &bolt.Options{Timeout: time.Second, ReadOnly: true})
	if errors.Is(err, bolterrors.ErrTimeout) {
		return fmt.Errorf("%w: quit memtray (the app, `memtray serve`) first", lockedError(dir))
	}
	if db != nil {
		_ = db.Close()
	}
	return nil
}

// RebuildTextIndex moves dir's text index aside, builds a new one from
// the records (what Open does when the index is missing) and then removes
// the old one: it is derived from the records and holds nothing else. It
// returns the number of records indexed. The store must be closed.
func RebuildTextIndex(ctx context.Context, dir string) (int, error) {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return 0, fmt.Errorf("rebuild text index: %w", err)
	}
	if _, err := os.Stat(filepath.Join(dir, dbFile)); err != nil {
		return 0, fmt.Errorf("rebuild text index %s: %w", dir, err)
	}
	path := filepath.Join(dir, textDir)
	aside := path + ".old-" + time.Now().UTC().Format(salvageTimeFormat)
	if err := os.Rename(path, aside); err != nil && !errors.Is(err, os.ErrNotExist) {
		return 0, fmt.Errorf("rebuild text index: move the old one aside: %w", err)
	}
	s, err := Open(ctx, Options{Dir: dir})
	if err != nil {
		// Put the old index back: nothing was rebuilt.
		if _, serr := os.Stat(path); errors.Is(serr, os.ErrNotExist) {
			_ = os.Rename(aside, path)
		}
		return 0, fmt.Errorf("rebuild text index: %w", err)
	}
	n, err := s.text.DocCount()
	if cerr := s.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return 0, fmt.Errorf("rebuild text index: %w", err)
	}
	return int(n), os.RemoveAll(aside)
}
