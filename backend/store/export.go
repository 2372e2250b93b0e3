package store

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"
	"unicode/utf8"

	"github.com/memtray/memtray/backend/memory"
	bolt "go.etcd.io/bbolt"
)

// Export stream format: one JSON value per line.
//
//	{"format":"memtray-export","version":1,"embedding_model":M,"dim":D,"count":N,"exported_at":T}
//	{memory.Memory with its embedding}   N lines
//	{"end":true,"count":N}
//
// Version 2 is the same with, in the header, "without_vector":K (K > 0),
// and K of the record lines without "embedding" and with
// "embedding_damaged":true: records whose stored vector was damaged (NaN
// or Inf, or not D numbers: JSON cannot spell the first and the second
// is no vector of the model), written without it so that a backup never
// fails for one record. Import embeds their text anew. Export writes
// version 1 when every record has its vector, so that a build that reads
// only version 1 reads it; such a build refuses a version 2 file as a
// newer format rather than misreading it.
const (
	ExportFormat = "memtray-export"
	// ExportVersion is the newest export version this build reads and
	// writes (see exportVersionAllVectors).
	ExportVersion = 2
	// exportVersionAllVectors is the version of an export whose every
	// record has its vector.
	exportVersionAllVectors = 1
	// MaxExportLine bounds one line of an export stream.
	MaxExportLine = 1 << 20
	// importBatch is the number of records Import writes per transaction.
	importBatch = 256
	// reembedBatch is the number of texts per Embed call in Import and Reembed.
	reembedBatch = 64
)

// ExportHeader is the first line of an export stream.
type ExportHeader struct {
	Format         string    `json:"format"`
	Version        int       `json:"version"`
	EmbeddingModel string    `json:"embedding_model"`
	Dim            int       `json:"dim"`
	Count          int       `json:"count"`
	ExportedAt     time.Time `json:"exported_at"`
	// WithoutVector counts the records written without their vector
	// (version 2: see the format).
	WithoutVector int `json:"without_vector,omitempty"`
}

// exportRecord is a record line written without its damaged vector.
type exportRecord struct {
	*memory.Memory
	EmbeddingDamaged bool `json:"embedding_damaged"`
}

// exportTrailer is the last line: it tells a complete stream from a truncated one.
type exportTrailer struct {
	End   bool `json:"end"`
	Count int  `json:"count"`
}

// Export writes every memory, in insertion order and with its embedding,
// as one versioned JSONL stream (see ExportFormat), from one consistent
// snapshot of the store. A record whose stored vector is damaged is
// written without it, marked, and counted in the header (version 2): one
// damaged record never fails a backup.
// Records in the trash (see Trash) are not exported. Like Get, it
// returns once every write its snapshot saw is published (viewPublished):
// a record in the stream is in the text and vector indexes by then.
func (s *Store) Export(ctx context.Context, w io.Writer) error {
	if err := s.checkOpen(); err != nil {
		return err
	}
	bw := bufio.NewWriterSize(w, 256<<10)
	err := s.viewPublished(func(tx *bolt.Tx) error {
		meta, recs, order := tx.Bucket(bucketMeta), tx.Bucket(bucketRecs), tx.Bucket(bucketOrder)
		count := recs.Stats().KeyN - s.unreadableIn(recs)
		dim := int(getU64(meta.Get(keyDim)))
		hdr := ExportHeader{Format: ExportFormat, Version: exportVersionAllVectors, EmbeddingModel: string(meta.Get(keyModel)),
			Dim: dim, Count: count, ExportedAt: s.now().UTC()}
		damaged, err := s.countDamagedVectors(ctx, recs, dim)
		if err != nil {
			return err
		}
		if damaged > 0 {
			hdr.Version, hdr.WithoutVector = ExportVersion, damaged
		}
		if err := writeJSONLine(bw, hdr); err != nil {
			return err
		}
		n := 0
		c := order.Cursor()
		for k, id := c.First(); k != nil; k, id = c.Next() {
			if n%1024 == 0 {
				if err := ctx.Err(); err != nil {
					return err
				}
			}
			v := recs.Get(id)
			if v == nil {
				continue
			}
			_, m, err := decodeRecord(v)
			if s.skipUnreadable(id, err) {
				continue // skipped at Open: not in the stream nor its count
			}
			if err != nil {
				return fmt.Errorf("record %s: %w", id, err)
			}
			var line any = &m
			if checkVector(m.Embedding, dim) != nil {
				m.Embedding = nil
				line = exportRecord{Memory: &m, EmbeddingDamaged: true}
			}
			if err := writeJSONLine(bw, line); err != nil {
				return fmt.Errorf("record %s: %w", id, err)
			}
			n++
		}
		if n != count {
			return fmt.Errorf("store index inconsistent: %d records, %d in order", count, n)
		}
		return writeJSONLine(bw, exportTrailer{End: true, Count: n})
	})
	if err != nil {
		return fmt.Errorf("export: %w", err)
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("export: %w", err)
	}
	return nil
}

// unreadableIn counts the records Open found unreadable that recs still
// holds: Export leaves them out.
func (s *Store) unreadableIn(recs *bolt.Bucket) int {
	n := 0
	for id := range s.unreadableSet() {
		if recs.Get([]byte(id)) != nil {
			n++
		}
	}
	return n
}

// countDamagedVectors counts the records of recs whose packed vector is
// damaged for dimension dim (see packedState), without decoding them
// (those Open found unreadable left out, as Export leaves them out).
func (s *Store) countDamagedVectors(ctx context.Context, recs *bolt.Bucket, dim int) (int, error) {
	n, i := 0, 0
	err := recs.ForEach(func(k, v []byte) error {
		if i++; i%4096 == 0 && ctx.Err() != nil {
			return ctx.Err()
		}
		if _, bad := s.unreadableSet()[string(k)]; bad {
			return nil
		}
		_, _, packed, err := splitRecord(v, nil)
		if err != nil {
			return fmt.Errorf("record %s: %w", k, err)
		}
		if packedState(packed, dim) == vecDamaged {
			n++
		}
		return nil
	})
	return n, err
}

func writeJSONLine(w *bufio.Writer, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	if _, err := w.Write(b); err != nil {
		return err
	}
	return w.WriteByte('\n')
}

// ExportHeaderTap passes an export stream through to W and keeps its
// first line, the header, for a caller that streams an export and then
// reports on it (ExportHeader.WithoutVector).
type ExportHeaderTap struct {
	W    io.Writer
	head []byte
	done bool // the first line ended (or outgrew MaxExportLine)
}

// Write writes p to W, keeping what belongs to the first line.
func (t *ExportHeaderTap) Write(p []byte) (int, error) {
	if !t.done {
		line := p
		if i := bytes.IndexByte(p, '\n'); i >= 0 {
			line, t.done = p[:i], true
		}
		if len(t.head)+len(line) > MaxExportLine {
			t.head, t.done = nil, true
		} else {
			t.head = append(t.head, line...)
		}
	}
	return t.W.Write(p)
}

// Header is the header of the stream written through t; false until a
// whole one has been.
func (t *ExportHeaderTap) Header() (ExportHeader, bool) {
	var h ExportHeader
	if !t.done || json.Unmarshal(t.head, &h) != nil || h.Format != ExportFormat {
		return ExportHeader{}, false
	}
	return h, true
}

// ExportFile is a parsed and fully validated export stream.
type ExportFile struct {
	Header  ExportHeader
	Records []memory.Memory
}

// recLine is one line after the header: a record, or the trailer.
type recLine struct {
	memory.Memory
	EmbeddingDamaged bool  `json:"embedding_damaged"`
	End              *bool `json:"end"`
	Count            *int  `json:"count"`
}

func lineErr(n int, format string, args ...any) error {
	return fmt.Errorf("line %d: %s: %w", n, fmt.Sprintf(format, args...), memory.ErrInvalid)
}

// ParseExport reads and validates a whole export stream without touching
// any store: the header (format, version: newer gives memory.ErrNewerFormat),
// every line (at most MaxExportLine bytes, valid UTF-8, a valid record whose
// embedding has the header's dimension and model, whose content hash (if
// given) matches its text, ids unique), and the trailer (present, last, its
// count equal to the header's and to the number of records). Errors name
// the line and wrap memory.ErrInvalid. A record written without its
// vector (version 2, "embedding_damaged") is returned without one: its
// text is to be embedded anew; the header's without_vector must count
// them.
func ParseExport(r io.Reader) (*ExportFile, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), MaxExportLine)
	var f ExportFile
	line := 0
	ids := make(map[string]bool)
	ended := false
	without := 0 // records without their vector
	for sc.Scan() {
		line++
		b := sc.Bytes()
		if !utf8.Valid(b) {
			return nil, lineErr(line, "not valid UTF-8")
		}
		if len(bytes.TrimSpace(b)) == 0 {
			return nil, lineErr(line, "empty line")
		}
		if ended {
			return nil, lineErr(line, "data after the trailer")
		}
		if line == 1 {
			if err := json.Unmarshal(b, &f.Header); err != nil {
				return nil, lineErr(line, "header is not valid JSON: %v", err)
			}
			if err := checkHeader(&f.Header); err != nil {
				return nil, fmt.Errorf("line 1: %w", err)
			}
			f.Records = make([]memory.Memory, 0, min(f.Header.Count, 1<<16))
			continue
		}
		var rl recLine
		if err := json.Unmarshal(b, &rl); err != nil {
			return nil, lineErr(line, "not valid JSON: %v", err)
		}
		if rl.End != nil {
			if !*rl.End || rl.Count == nil {
				return nil, lineErr(line, `trailer must be {"end":true,"count":N}`)
			}
			if *rl.Count != len(f.Records) || *rl.Count != f.Header.Count {
				return nil, lineErr(line, "trailer counts %d records, header %d, found %d", *rl.Count, f.Header.Count, len(f.Records))
			}
			if without != f.Header.WithoutVector {
				return nil, lineErr(line, "%d records without their vector, the header counts %d", without, f.Header.WithoutVector)
			}
			ended = true
			continue
		}
		m := rl.Memory
		if err := checkImported(&m, &f.Header, rl.EmbeddingDamaged); err != nil {
			return nil, fmt.Errorf("line %d: %w", line, err)
		}
		if rl.EmbeddingDamaged {
			without++
		}
		if m.ID != "" {
			if ids[m.ID] {
				return nil, lineErr(line, "id %q appears twice", m.ID)
			}
			ids[m.ID] = true
		}
		if len(f.Records) >= f.Header.Count {
			return nil, lineErr(line, "more records than the header's count %d", f.Header.Count)
		}
		f.Records = append(f.Records, m)
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return nil, lineErr(line+1, "longer than %d bytes", MaxExportLine)
		}
		return nil, fmt.Errorf("read export: %w", err)
	}
	if line == 0 {
		return nil, fmt.Errorf("export stream is empty: %w", memory.ErrInvalid)
	}
	if !ended {
		return nil, fmt.Errorf("export stream is truncated: no trailer after %d of %d records: %w",
			len(f.Records), f.Header.Count, memory.ErrInvalid)
	}
	return &f, nil
}

func checkHeader(h *ExportHeader) error {
	if h.Format != ExportFormat {
		return fmt.Errorf("not a memtray export (format %q): %w", h.Format, memory.ErrInvalid)
	}
	if h.Version > ExportVersion {
		return fmt.Errorf("export version %d: %w (this build reads up to %d)", h.Version, memory.ErrNewerFormat, ExportVersion)
	}
	if h.Version < 1 {
		return fmt.Errorf("export version %d is invalid: %w", h.Version, memory.ErrInvalid)
	}
	if h.EmbeddingModel == "" || len(h.EmbeddingModel) > maxModel || !memory.ValidUTF8(h.EmbeddingModel) {
		return fmt.Errorf("header embedding_model is missing or invalid: %w", memory.ErrInvalid)
	}
	if h.Dim < 1 || h.Dim > maxDim {
		return fmt.Errorf("header dim %d is out of range 1..%d: %w", h.Dim, maxDim, memory.ErrInvalid)
	}
	if h.Count < 0 {
		return fmt.Errorf("header count %d is negative: %w", h.Count, memory.ErrInvalid)
	}
	if h.WithoutVector < 0 || h.WithoutVector > h.Count || (h.WithoutVector > 0 && h.Version < 2) {
		return fmt.Errorf("header without_vector %d is out of range 0..%d (and 0 before version 2): %w", h.WithoutVector, h.Count, memory.ErrInvalid)
	}
	return nil
}

// checkImported validates one record of an export stream against its
// header. noVector says the line is marked as written without its
// (damaged) vector: it must then have none, and everything else is
// checked.
func checkImported(m *memory.Memory, h *ExportHeader, noVector bool) error {
	if m.ID != "" && !ValidID(m.ID) {
		return fmt.Errorf("id %q is invalid: %w", m.ID, memory.ErrInvalid)
	}
	if m.Kind == "" {
		m.Kind = memory.KindFact
	}
	if m.Type == "" {
		m.Type = memory.TypeProject
	}
	// checkFields needs only the model and dimension of a store.
	probe := Store{model: h.EmbeddingModel, dim: h.Dim}
	check := probe.checkFields
	if noVector {
		if h.Version < 2 || len(m.Embedding) > 0 {
			return fmt.Errorf("embedding_damaged needs version 2 and no embedding: %w", memory.ErrInvalid)
		}
		check = probe.checkAllButVector
	}
	if err := check(m); err != nil {
		return err
	}
	if m.ContentHash != "" && m.ContentHash != memory.ContentHash(m.Text) {
		return fmt.Errorf("content_hash does not match the text: %w", memory.ErrInvalid)
	}
	return nil
}

// Import validates the whole export stream r (see ParseExport) before it
// changes anything, then stores its records in batches: records whose
// content hash is already stored (or appeared earlier in the stream) are
// skipped as duplicates; ids, counters and timestamps are kept (an id
// already used by a different record gets a new id, and links to it are
// rewritten); a stream of another embedding model is re-embedded with
// opts.Embedder, which must produce the store's model, and so is a record
// whose text opts.Rewrite changed. When the store switches models while
// the import runs (Reembed finishing) and opts.Embedder has switched too,
// the rest is embedded for the new model. A record the file holds
// without its vector (exported when its stored vector was damaged) is
// embedded with opts.Embedder too; without one, or when it fails on such
// records, they are stored without a vector, as a damaged one
// (ImportReport.KeptWithoutVector). If writing fails midway, the
// records written so far stay and the report counts them.
func (s *Store) Import(ctx context.Context, r io.Reader, opts ImportOptions) (ImportReport, error) {
	if err := s.checkOpen(); err != nil {
		return ImportReport{}, err
	}
	f, err := ParseExport(r)
	if err != nil {
		return ImportReport{}, fmt.Errorf("import: %w", err)
	}
	ir := &importRun{s: s, opts: opts, hdr: f.Header, recs: f.Records, noVector: make([]bool, len(f.Records))}
	for i := range ir.recs {
		// ParseExport lets a record have no vector only when it is
		// marked as written without its damaged one.
		if len(ir.recs[i].Embedding) == 0 {
			ir.noVector[i] = true
			ir.noVectors++
		}
	}
	ir.rep.Total = len(ir.recs)
	for _, step := range []func() error{ir.rewrite, ir.checkEmbedder, ir.planDuplicates} {
		if err := step(); err != nil {
			return ir.rep, fmt.Errorf("import: %w", err)
		}
	}
	ir.relink()
	for start := 0; start < len(ir.recs); start += importBatch {
		end := min(start+importBatch, len(ir.recs))
		if err := ir.writeBatch(ctx, start, end); err != nil {
			return ir.rep, fmt.Errorf("import: %w", err)
		}
		if opts.Progress != nil {
			opts.Progress(end, len(ir.recs))
		}
	}
	return ir.rep, nil
}

// importRun is one Import: its records and what it decided about each.
type importRun struct {
	s    *Store
	opts ImportOptions
	hdr  ExportHeader
	recs []memory.Memory
	// rewritten marks the records whose text opts.Rewrite changed; skip
	// the duplicates; noVector the records the file holds without their
	// vector (noVectors counts them); remap the ids that change (old id
	// -> new id).
	rewritten, skip, noVector []bool
	noVectors                 int
	remap                     map[string]string
	// reembed says the stream's vectors are not of the store's model.
	reembed bool
	// switches counts the store's model switches the run followed.
	switches int
	rep      ImportReport
}

// modelDim is the store's embedding model and dimension now.
func (s *Store) modelDim() (string, int) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.model, s.dim
}

// rewrite applies opts.Rewrite to every text (see rewriteImported).
func (ir *importRun) rewrite() error {
	model, dim := ir.s.modelDim()
	ir.reembed = ir.hdr.EmbeddingModel != model || ir.hdr.Dim != dim
	var err error
	if ir.rewritten, err = rewriteImported(ir.recs, ir.opts.Rewrite); err != nil {
		return err
	}
	for _, r := range ir.rewritten {
		if r {
			ir.rep.Rewritten++
		}
	}
	return nil
}

// checkEmbedder makes sure records that need new vectors (another model's,
// or rewritten) can get them from opts.Embedder, for the store's model.
func (ir *importRun) checkEmbedder() error {
	model, dim := ir.s.modelDim()
	emb := ir.opts.Embedder
	rewritten := 0 // records with a vector that the rewrite changed: they need a new one
	for i, r := range ir.rewritten {
		if r && !ir.noVector[i] {
			rewritten++
		}
	}
	if rewritten > 0 && !ir.reembed && emb == nil {
		return fmt.Errorf("%d records changed by the rewrite need new vectors and no embedder was given: %w", rewritten, memory.ErrModelMismatch)
	}
	if !ir.reembed && rewritten == 0 && (ir.noVectors == 0 || emb == nil) {
		// Records the file holds without their vector are kept without
		// one when no embedder is given (prepare).
		return nil
	}
	if emb == nil {
		return fmt.Errorf("the file holds vectors of model %q (%d dims), the store uses %q (%d dims) and no embedder was given: %w",
			ir.hdr.EmbeddingModel, ir.hdr.Dim, model, dim, memory.ErrModelMismatch)
	}
	if emb.Model() != model || emb.Dim() != dim {
		return fmt.Errorf("the embedder produces %q (%d dims), the store uses %q (%d dims): %w",
			emb.Model(), emb.Dim(), model, dim, memory.ErrModelMismatch)
	}
	return nil
}

// planDuplicates decides duplicates and id collisions up front, so links
// can be rewritten: a record whose text is stored already in its project,
// or appeared earlier in the stream in its project, is skipped (its id now names the stored one); a
// record without an id, or whose id is taken, gets a new one.
func (ir *importRun) planDuplicates() error {
	ir.skip = make([]bool, len(ir.recs))
	ir.remap = make(map[string]string)
	return ir.s.view(func(tx *bolt.Tx) error {
		stored := tx.Bucket(bucketRecs)
		seen := make(map[string]string) // projectHash -> id, within the stream
		for i := range ir.recs {
			m := &ir.recs[i]
			h := memory.ContentHash(m.Text)
			key := projectHash(m.Project, h)
			if id, ok := seen[key]; ok {
				ir.skip[i] = true
				if m.ID != "" {
					ir.remap[m.ID] = id
				}
				continue
			}
			held, ok, err := holderOf(tx, h, m.Project, "")
			if err != nil {
				return fmt.Errorf("import: %w", err)
			}
			if ok {
				ir.skip[i] = true
				if m.ID != "" {
					ir.remap[m.ID] = held.ID
				}
				seen[key] = held.ID
				continue
			}
			if m.ID == "" || stored.Get([]byte(m.ID)) != nil {
				id := ir.s.NewID()
				if m.ID != "" {
					ir.remap[m.ID] = id
				}
				m.ID = id
			}
			seen[key] = m.ID
		}
		return nil
	})
}

// relink points the link fields of every record at the ids planDuplicates
// changed.
func (ir *importRun) relink() {
	for i := range ir.recs {
		m := &ir.recs[i]
		for _, p := range []*string{&m.Supersedes, &m.SupersededBy, &m.ExtendsSource} {
			if to, ok := ir.remap[*p]; ok {
				*p = to
			}
		}
	}
}

// writeBatch writes recs[start:end] in one transaction (duplicates left
// out), following the store to a new model if it switched meanwhile.
func (ir *importRun) writeBatch(ctx context.Context, start, end int) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	for i := start; i < end; i++ {
		if ir.skip[i] {
			ir.rep.Duplicates++
		}
	}
	var res []Inserted
	var noVec, bare []bool
	var err error
	for {
		var batch []memory.Memory
		batch, noVec, bare, err = ir.prepare(ctx, start, end)
		if err == nil {
			res, err = ir.s.importBatch(ctx, batch, bare)
		}
		if !ir.followSwitch(err) {
			break
		}
	}
	for k, r := range res {
		switch {
		case r.Existed:
			ir.rep.Duplicates++
			continue
		case bare[k]:
			ir.rep.WithoutVector++
			ir.rep.KeptWithoutVector++
			ir.rep.Imported++
			continue
		case noVec[k]:
			ir.rep.WithoutVector++
			if !ir.reembed {
				ir.rep.Reembedded++
			}
		}
		ir.rep.Imported++
		if ir.reembed {
			ir.rep.Reembedded++
		}
	}
	if err != nil && !errors.Is(err, ErrIndexPending) {
		return err
	}
	return nil
}

// prepare makes the batch of recs[start:end] to write: duplicates left
// out, and embedded with opts.Embedder where the store's model (now) or a
// rewrite asks for it, or the file does not hold the vector. noVec marks
// the records of the batch the file held without their vector; bare
// those of them stored without one: when no embedder is given, or it
// fails on them, such a record is kept as Open and a salvage keep a
// record whose vector is damaged (readable, found by text, out of the
// vector index, on the list RepairVectors embeds: the daemon does while
// it runs and at its next start, and `memtray reindex`), not refused.
func (ir *importRun) prepare(ctx context.Context, start, end int) (batch []memory.Memory, noVec, bare []bool, err error) {
	var fresh, repair []int // indexes into batch of the records to embed, and of those the file holds without a vector
	for i := start; i < end; i++ {
		if ir.skip[i] {
			continue
		}
		switch {
		case ir.reembed || (ir.rewritten[i] && !ir.noVector[i]):
			fresh = append(fresh, len(batch))
		case ir.noVector[i]:
			repair = append(repair, len(batch))
		}
		batch = append(batch, ir.recs[i])
		noVec = append(noVec, ir.noVector[i])
	}
	bare = make([]bool, len(batch))
	if err := embedBatch(ctx, ir.opts.Embedder, batch, fresh); err != nil {
		return nil, nil, nil, err
	}
	if len(repair) > 0 {
		err := errors.New("no embedder")
		if ir.opts.Embedder != nil {
			err = embedBatch(ctx, ir.opts.Embedder, batch, repair)
		}
		if ctxErr := ctx.Err(); ctxErr != nil {
			return nil, nil, nil, ctxErr
		}
		if err != nil {
			for _, j := range repair {
				bare[j] = true
			}
		}
	}
	return batch, noVec, bare, nil
}

// embedBatch embeds the records of batch at the indexes idx with emb.
func embedBatch(ctx context.Context, emb memory.Embedder, batch []memory.Memory, idx []int) error {
	if len(idx) == 0 {
		return nil
	}
	sub := make([]memory.Memory, len(idx))
	for k, j := range idx {
		sub[k] = batch[j]
	}
	if err := EmbedInto(ctx, emb, sub); err != nil {
		return err
	}
	for k, j := range idx {
		batch[j] = sub[k]
	}
	return nil
}

// followSwitch says whether a batch that failed with err is worth trying
// again: the store switched models while the import ran (a re-embedding
// finished, and the daemon's embedder with it), so this batch and the
// rest are embedded for the new model. At most two switches are followed.
func (ir *importRun) followSwitch(err error) bool {
	if !errors.Is(err, memory.ErrModelMismatch) || ir.opts.Embedder == nil || ir.switches == 2 {
		return false
	}
	model, dim := ir.s.modelDim()
	if ir.opts.Embedder.Model() != model || ir.opts.Embedder.Dim() != dim {
		return false
	}
	ir.switches++
	ir.reembed = ir.hdr.EmbeddingModel != model || ir.hdr.Dim != dim
	return true
}

// importBatch writes one batch through InsertBatch: a text stored
// meanwhile comes back as existed (a duplicate), an id taken meanwhile
// gets a new one (the store may have changed since the plan). The results
// are batch's, in its order.
func (s *Store) importBatch(ctx context.Context, batch []memory.Memory, bare []bool) ([]Inserted, error) {
	ins := make([]Insert, len(batch))
	for i, m := range batch {
		ins[i] = Insert{Memory: m, Unique: true, Restore: true, withoutVector: bare[i]}
	}
	return s.InsertBatch(ctx, ins)
}

// rewriteImported applies rewrite to the text of each record and says
// which it changed; a changed text must still be a valid memory text.
func rewriteImported(recs []memory.Memory, rewrite func(string) (string, bool)) ([]bool, error) {
	changed := make([]bool, len(recs))
	if rewrite == nil {
		return changed, nil
	}
	for i := range recs {
		m := &recs[i]
		text, ok := rewrite(m.Text)
		if !ok || text == m.Text {
			continue
		}
		next := *m
		next.Text, next.ContentHash = text, memory.ContentHash(text)
		if err := next.Validate(); err != nil {
			return nil, fmt.Errorf("record %d (%s): its text after rewriting: %w", i+1, m.ID, err)
		}
		*m, changed[i] = next, true
	}
	return changed, nil
}

// EmbedInto replaces the embeddings of ms with emb's vectors of their texts
// (and their embedding model with emb's), in batches, each vector checked
// against emb's dimension.
func EmbedInto(ctx context.Context, emb memory.Embedder, ms []memory.Memory) error {
	for start := 0; start < len(ms); start += reembedBatch {
		end := min(start+reembedBatch, len(ms))
		texts := make([]string, 0, end-start)
		for i := start; i < end; i++ {
			texts = append(texts, ms[i].Text)
		}
		vecs, err := embedChecked(ctx, emb, texts)
		if err != nil {
			return err
		}
		for i := start; i < end; i++ {
			ms[i].Embedding = vecs[i-start]
			ms[i].EmbeddingModel = emb.Model()
		}
	}
	return nil
}

// embedChecked calls emb and checks its answer's shape.
func embedChecked(ctx context.Context, emb memory.Embedder, texts []string) ([][]float32, error) {
	vecs, err := emb.Embed(ctx, texts)
	if err != nil {
		return nil, fmt.Errorf("embed with %s: %w", emb.Model(), err)
	}
	if len(vecs) != len(texts) {
		return nil, fmt.Errorf("embed with %s: %d vectors for %d texts", emb.Model(), len(vecs), len(texts))
	}
	for _, v := range vecs {
		if err := checkVector(v, emb.Dim()); err != nil {
			return nil, fmt.Errorf("embed with %s: %w", emb.Model(), err)
		}
	}
	return vecs, nil
}
