package steward

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"
)

// Files in Options.Dir.
const (
	runsDir    = "runs"        // the undo journals of the last applied runs (journals.go)
	ledgerFile = "ledger.json" // when a rate-limited operation last touched each memory

	// An older version's single journal and the one before it, moved into
	// runsDir when found.
	legacyJournal     = "undo.json"
	legacyJournalPrev = "undo.prev.json"
)

// writeFileAtomic writes data to path durably: a temporary file in the same
// directory, fsync, rename over path, fsync of the directory.
func writeFileAtomic(path string, data []byte) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, tempPrefix+filepath.Base(path)+"-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	fail := func(err error) error {
		_ = f.Close()
		_ = os.Remove(tmp)
		return err
	}
	if err := f.Chmod(0o600); err != nil {
		return fail(err)
	}
	if _, err := f.Write(data); err != nil {
		return fail(err)
	}
	if err := f.Sync(); err != nil {
		return fail(err)
	}
	if err := f.Close(); err != nil {
		_ = os.Remove(tmp)
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		_ = os.Remove(tmp)
		return err
	}
	return syncDir(dir)
}

// tempPrefix starts the names of writeFileAtomic's temporary files.
const tempPrefix = ".tmp-"

// removeTemps deletes the temporary files of writes a kill cut short.
func removeTemps(dir string) {
	tmps, _ := filepath.Glob(filepath.Join(dir, tempPrefix+"*"))
	for _, t := range tmps {
		_ = os.Remove(t)
	}
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// ledger records when each rate-limited operation last touched each memory
// (op -> id -> time). Entries older than the interval block nothing and
// are dropped when it is saved, so it holds only recent work.
type ledger struct {
	Version int                             `json:"version"`
	Ops     map[string]map[string]time.Time `json:"ops"`
	// Merge holds, per plan scope, the last merge scan (see mergeMark).
	Merge map[string]mergeMark `json:"merge,omitempty"`
}

// mergeMark records a merge scan: when it started and the store's write
// sequence number then, at which similarity and embedding model, the
// merges it proposed and the near-duplicates it refused. The next plan of
// the same scope searches neighbours only for memories written since (by
// the sequence number: a pair of memories both unchanged since was judged
// then) and re-checks the proposed merges, which may not have been
// applied, and the refused pairs, so Plan.Refused lists them again while
// they stand. A mark without Seq (written before it existed) makes the
// next scan a full one.
type mergeMark struct {
	At         time.Time   `json:"at"`
	Seq        uint64      `json:"seq,omitempty"`
	Model      string      `json:"model,omitempty"`
	Similarity float64     `json:"similarity"`
	Pending    [][2]string `json:"pending,omitempty"`
	Refused    [][2]string `json:"refused,omitempty"`
}

func (l *ledger) recent(op, id string, now time.Time, interval time.Duration) bool {
	if l == nil {
		return false
	}
	t, ok := l.Ops[op][id]
	return ok && now.Sub(t) < interval
}

func (l *ledger) get(op, id string) (time.Time, bool) {
	t, ok := l.Ops[op][id]
	return t, ok
}

func (l *ledger) set(op, id string, t time.Time) {
	if l.Ops == nil {
		l.Ops = map[string]map[string]time.Time{}
	}
	if l.Ops[op] == nil {
		l.Ops[op] = map[string]time.Time{}
	}
	l.Ops[op][id] = t
}

func (l *ledger) unset(op, id string) {
	delete(l.Ops[op], id)
}

// loadLedger reads the ledger in dir; a missing one is empty.
func loadLedger(dir string) (*ledger, error) {
	l := &ledger{Version: 1, Ops: map[string]map[string]time.Time{}}
	if dir == "" {
		return l, nil
	}
	b, err := os.ReadFile(filepath.Join(dir, ledgerFile))
	if errors.Is(err, fs.ErrNotExist) {
		return l, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read steward ledger: %w", err)
	}
	if err := json.Unmarshal(b, l); err != nil {
		return nil, fmt.Errorf("read steward ledger %s: %w", filepath.Join(dir, ledgerFile), err)
	}
	if l.Ops == nil {
		l.Ops = map[string]map[string]time.Time{}
	}
	return l, nil
}

// save writes the ledger, dropping entries older than interval at now.
func (l *ledger) save(dir string, now time.Time, interval time.Duration) error {
	for scope, mk := range l.Merge {
		if now.Sub(mk.At) >= interval {
			delete(l.Merge, scope)
		}
	}
	for op, ids := range l.Ops {
		for id, t := range ids {
			if now.Sub(t) >= interval {
				delete(ids, id)
			}
		}
		if len(ids) == 0 {
			delete(l.Ops, op)
		}
	}
	b, err := json.Marshal(l)
	if err != nil {
		return err
	}
	if err := writeFileAtomic(filepath.Join(dir, ledgerFile), b); err != nil {
		return fmt.Errorf("write steward ledger: %w", err)
	}
	return nil
}
