package steward

import (
	"bufio"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/memtray/memtray/backend/memory"
)

// JournalDepth is how many applied runs keep their undo journal
// (Options.Dir/runs): the newest ones, so a scheduled run does not take
// the undo of a run the user applied by hand away.
const JournalDepth = 20

// Run is an applied run that can still be undone (see Runs); a journal
// begins with it.
type Run struct {
	RunID  string    `json:"run_id"`
	PlanID string    `json:"plan_id,omitempty"`
	At     time.Time `json:"at"`
	// Ops are the operations the run applied; Counts its actions per
	// operation (empty for a journal written by an older version).
	Ops    []string       `json:"ops,omitempty"`
	Counts map[string]int `json:"counts"`
	// Memories is the number of memories the run changed or trashed.
	Memories int `json:"memories"`
	// Scheduled: the daemon's scheduled sweep applied the run, not a user.
	Scheduled bool `json:"scheduled,omitempty"`
}

// journalRef is one journal file: runs/<seq>-<run id>.json, seq counting
// up with every applied run.
type journalRef struct {
	seq   uint64
	runID string
	path  string
}

// readJournalHead reads the Run a journal begins with, without its
// records: a decoder reads the fields up to "records" (written after
// them), so listing runs costs the same for a journal of a million
// memories as for one of a few. A journal without "memories" (written
// before it was) has its records counted.
func readJournalHead(path string) (Run, error) {
	var h Run
	f, err := os.Open(path)
	if err != nil {
		return h, err
	}
	defer f.Close()
	dec := json.NewDecoder(bufio.NewReader(f))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return h, fmt.Errorf("undo journal %s: not a JSON object", path)
	}
	fields := map[string]any{"run_id": &h.RunID, "plan_id": &h.PlanID, "at": &h.At, "ops": &h.Ops, "counts": &h.Counts, "scheduled": &h.Scheduled, "memories": &h.Memories}
	hasCount := false
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return h, fmt.Errorf("undo journal %s: %w", path, err)
		}
		key, _ := t.(string)
		switch {
		case key == "records" && hasCount:
			return h, nil
		case key == "records":
			var recs []json.RawMessage
			if err := dec.Decode(&recs); err != nil {
				return h, fmt.Errorf("undo journal %s: %w", path, err)
			}
			h.Memories = len(recs)
			hasCount = true
		case fields[key] != nil:
			if err := dec.Decode(fields[key]); err != nil {
				return h, fmt.Errorf("undo journal %s: %s: %w", path, key, err)
			}
			hasCount = hasCount || key == "memories"
		default:
			var skip json.RawMessage
			if err := dec.Decode(&skip); err != nil {
				return h, fmt.Errorf("undo journal %s: %w", path, err)
			}
		}
	}
	return h, nil
}

// journals lists the journal files, oldest first, after moving the
// single journal of an older version (undo.json, and undo.prev.json a
// kill left behind) into runs/.
func (s *Steward) journals() ([]journalRef, error) {
	if s.opts.Dir == "" {
		return nil, nil
	}
	if err := s.migrateJournals(); err != nil {
		return nil, err
	}
	ents, err := os.ReadDir(filepath.Join(s.opts.Dir, runsDir))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("undo journals: %w", err)
	}
	var out []journalRef
	for _, e := range ents {
		name := e.Name()
		if e.IsDir() || !strings.HasSuffix(name, ".json") || strings.HasPrefix(name, tempPrefix) {
			continue
		}
		seqs, id, ok := strings.Cut(strings.TrimSuffix(name, ".json"), "-")
		seq, err := strconv.ParseUint(seqs, 10, 64)
		if !ok || err != nil || id == "" {
			continue // not a journal: left alone
		}
		out = append(out, journalRef{seq: seq, runID: id, path: filepath.Join(s.opts.Dir, runsDir, name)})
	}
	slices.SortFunc(out, func(a, b journalRef) int { return cmp.Compare(a.seq, b.seq) })
	return out, nil
}

// migrateJournals moves an older version's journals into runs/: the run
// before (undo.prev.json, kept while a run was applied) first.
func (s *Steward) migrateJournals() error {
	for i, name := range []string{legacyJournalPrev, legacyJournal} {
		old := filepath.Join(s.opts.Dir, name)
		b, err := os.ReadFile(old)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return fmt.Errorf("undo journal: %w", err)
		}
		var h Run
		if err := json.Unmarshal(b, &h); err != nil || h.RunID == "" || strings.ContainsAny(h.RunID, `/\`) {
			return fmt.Errorf("undo journal %s: not a journal (%v): move it away to go on", old, err)
		}
		if err := os.MkdirAll(filepath.Join(s.opts.Dir, runsDir), 0o700); err != nil {
			return fmt.Errorf("undo journals: %w", err)
		}
		dst := filepath.Join(s.opts.Dir, runsDir, journalName(uint64(i), h.RunID))
		if err := os.Rename(old, dst); err != nil {
			return fmt.Errorf("undo journal: %w", err)
		}
		_ = syncDir(filepath.Join(s.opts.Dir, runsDir))
		_ = syncDir(s.opts.Dir)
	}
	return nil
}

func journalName(seq uint64, runID string) string {
	return fmt.Sprintf("%08d-%s.json", seq, runID)
}

// writeJournal writes j durably as the newest journal and returns a
// function that removes it again (when the run's batch failed).
func (s *Steward) writeJournal(j *journal) (remove func(), err error) {
	refs, err := s.journals()
	if err != nil {
		return nil, err
	}
	var seq uint64 = 2 // above the migrated ones
	if n := len(refs); n > 0 {
		seq = max(seq, refs[n-1].seq+1)
	}
	b, err := json.Marshal(j)
	if err != nil {
		return nil, fmt.Errorf("encode undo journal: %w", err)
	}
	path := filepath.Join(s.opts.Dir, runsDir, journalName(seq, j.RunID))
	if err := writeFileAtomic(path, b); err != nil {
		return nil, fmt.Errorf("write undo journal: %w", err)
	}
	return func() {
		_ = os.Remove(path)
		_ = syncDir(filepath.Dir(path))
	}, nil
}

// journalBytes bounds the journals' total size: the oldest go first when
// the newest JournalDepth together are larger (the newest always stays).
// A journal holds about 1 KB a memory its run touched, so this keeps a
// full decay of a 100k store and plenty of hourly runs.
var journalBytes int64 = 256 << 20

// pruneJournals removes the journals beyond the newest JournalDepth, and
// the oldest of those while they hold more than journalBytes together.
func (s *Steward) pruneJournals() {
	refs, err := s.journals()
	if err != nil {
		s.log.Warn("steward: old undo journals not pruned", "err", err)
		return
	}
	var total int64
	keep := 0
	for i := len(refs) - 1; i >= 0 && keep < JournalDepth; i-- {
		fi, err := os.Stat(refs[i].path)
		if err != nil {
			break
		}
		if keep > 0 && total+fi.Size() > journalBytes {
			break
		}
		total += fi.Size()
		keep++
	}
	for _, r := range refs[:len(refs)-keep] {
		if err := os.Remove(r.path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			s.log.Warn("steward: old undo journal not pruned", "path", r.path, "err", err)
		}
	}
}

// readJournal reads the journal of run runID, or of the newest run when
// runID is ""; ErrNothingToUndo when there is none, memory.ErrNotFound
// when runID names no kept run.
func (s *Steward) readJournal(runID string) (*journal, journalRef, error) {
	refs, err := s.journals()
	if err != nil {
		return nil, journalRef{}, err
	}
	if len(refs) == 0 {
		return nil, journalRef{}, ErrNothingToUndo
	}
	ref := refs[len(refs)-1]
	if runID != "" {
		i := slices.IndexFunc(refs, func(r journalRef) bool { return r.runID == runID })
		if i < 0 {
			return nil, journalRef{}, fmt.Errorf("%w: no undoable steward run %q (the last %d runs can be undone)", memory.ErrNotFound, runID, JournalDepth)
		}
		ref = refs[i]
	}
	j, err := loadJournal(ref)
	return j, ref, err
}

// loadJournal reads the journal file of ref.
func loadJournal(ref journalRef) (*journal, error) {
	b, err := os.ReadFile(ref.path)
	if err != nil {
		return nil, fmt.Errorf("read undo journal: %w", err)
	}
	var j journal
	if err := json.Unmarshal(b, &j); err != nil {
		return nil, fmt.Errorf("read undo journal %s: %w", ref.path, err)
	}
	if j.Version < 1 || j.Version > journalVersion {
		return nil, fmt.Errorf("undo journal version %d: %w", j.Version, memory.ErrNewerFormat)
	}
	return &j, nil
}

// checkJournals runs dropPhantomJournal once, with s.mu held.
func (s *Steward) checkJournals(ctx context.Context) {
	if !s.checked {
		s.checked = true
		s.dropPhantomJournal(ctx)
	}
}

// dropPhantomJournal removes the newest journal when its run is not in
// the store: a kill between the journal's write and the run's batch, or
// between an undo's batch and the journal's removal, leaves it behind.
// Such a run's memories are all as they were before it (their UpdatedAt
// is the journal's before) and none of those it trashed is in the trash,
// so undoing it would change nothing; listing it as a run would only hide
// the one before. Its ledger entries are put back first, as its undo
// would (the killed undo may not have). Errors leave the journal.
func (s *Steward) dropPhantomJournal(ctx context.Context) {
	refs, err := s.journals()
	if err != nil || len(refs) == 0 {
		return
	}
	ref := refs[len(refs)-1]
	j, err := loadJournal(ref)
	if err != nil || len(j.Records) == 0 {
		return
	}
	ids := make([]string, len(j.Records))
	for i, r := range j.Records {
		ids[i] = r.Before.ID
	}
	cur, err := s.st.GetMany(ctx, ids)
	if err != nil {
		return
	}
	inTrash, err := s.st.TrashGet(ctx, ids)
	if err != nil {
		return
	}
	for _, r := range j.Records {
		c, live := cur[r.Before.ID]
		if !live || !c.UpdatedAt.Equal(r.Before.UpdatedAt) || inTrash[r.Before.ID].Memory.ID != "" {
			return // the run happened (or more happened since): keep it
		}
	}
	if err := s.restoreLedger(j, s.clock.Now().UTC()); err != nil {
		s.log.Warn("steward: ledger not restored for an undo journal left by a kill", "run", ref.runID, "err", err)
		return
	}
	if err := os.Remove(ref.path); err == nil {
		_ = syncDir(filepath.Dir(ref.path))
		s.log.Info("steward: removed the undo journal of a run not in the store (a kill cut its apply or undo short)", "run", ref.runID)
	}
}

// Runs lists the applied runs that can be undone, newest first.
func (s *Steward) Runs() ([]Run, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.checkJournals(context.Background())
	refs, err := s.journals()
	if err != nil {
		return nil, fmt.Errorf("steward runs: %w", err)
	}
	out := make([]Run, 0, len(refs))
	for i := len(refs) - 1; i >= 0; i-- {
		r, err := readJournalHead(refs[i].path)
		if err != nil {
			return nil, fmt.Errorf("steward runs: %w", err)
		}
		if r.Counts == nil {
			r.Counts = map[string]int{}
		}
		out = append(out, r)
	}
	return out, nil
}
