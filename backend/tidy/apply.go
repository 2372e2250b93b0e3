package tidy

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"time"

	"github.com/memtray/memtray/backend/config"
)

// ErrNothingToUndo is returned by Undo when the directory has no journal.
var ErrNothingToUndo = errors.New("nothing to undo")

// Journal records the moves of the last applied run, so Undo can reverse them.
type Journal struct {
	Version   int       `json:"version"`
	Dir       string    `json:"dir"`
	AppliedAt time.Time `json:"applied_at"`
	Moves     []Move    `json:"moves"`
	// CreatedDirs are the folders the run created (relative, parents first);
	// Undo removes them again when they are empty.
	CreatedDirs []string `json:"created_dirs,omitempty"`
}

// Move is one file moved by Apply. Paths are slash-separated and relative to
// the plans directory.
type Move struct {
	From    string    `json:"from"`
	To      string    `json:"to"`
	Class   Class     `json:"class"`
	Size    int64     `json:"size"`
	ModTime time.Time `json:"mtime"`
	SHA256  string    `json:"sha256"`
}

const journalVersion = 1

// Apply performs the moves of rep (Archive and Trash plans): it checks every
// source is still the file that was scanned and every destination is free,
// writes the undo journal (replacing the previous run's), then renames.
// Nothing is moved when a check fails. With no moves, it writes no journal
// and returns an empty one.
func Apply(rep Report, now time.Time) (Journal, error) {
	dir := rep.Dir
	j := Journal{Version: journalVersion, Dir: dir, AppliedAt: now}
	created := map[string]bool{}
	for _, p := range rep.Plans {
		if p.Action != Archive && p.Action != Trash {
			continue
		}
		src := filepath.Join(dir, p.Name)
		fi, err := os.Lstat(src)
		if err != nil {
			return Journal{}, fmt.Errorf("%s: %w (nothing moved)", p.Name, err)
		}
		if !fi.Mode().IsRegular() || fi.Size() != p.Size || !fi.ModTime().Equal(p.ModTime) {
			return Journal{}, fmt.Errorf("%s changed since it was classified: run again (nothing moved)", p.Name)
		}
		sum, err := hashFile(src)
		if err != nil {
			return Journal{}, fmt.Errorf("%w (nothing moved)", err)
		}
		for _, d := range parents(path.Dir(p.Dest)) {
			if created[d] {
				continue
			}
			fi, err := os.Lstat(filepath.Join(dir, filepath.FromSlash(d)))
			switch {
			case errors.Is(err, fs.ErrNotExist):
				created[d] = true
				j.CreatedDirs = append(j.CreatedDirs, d)
			case err != nil:
				return Journal{}, fmt.Errorf("%s: %w (nothing moved)", d, err)
			case !fi.IsDir():
				return Journal{}, fmt.Errorf("%s is not a folder (a symlink or a file): move it away (nothing moved)", d)
			}
		}
		if _, err := os.Lstat(filepath.Join(dir, filepath.FromSlash(p.Dest))); err == nil {
			return Journal{}, fmt.Errorf("%s: destination %s is taken: run again (nothing moved)", p.Name, p.Dest)
		} else if !errors.Is(err, fs.ErrNotExist) {
			return Journal{}, fmt.Errorf("%s: destination %s: %w (nothing moved)", p.Name, p.Dest, err)
		}
		j.Moves = append(j.Moves, Move{From: p.Name, To: p.Dest, Class: p.Class, Size: p.Size, ModTime: p.ModTime, SHA256: sum})
	}
	if len(j.Moves) == 0 {
		return j, nil
	}
	if err := writeJournal(dir, j); err != nil {
		return Journal{}, fmt.Errorf("%w (nothing moved)", err)
	}
	for i, m := range j.Moves {
		to := filepath.Join(dir, filepath.FromSlash(m.To))
		err := os.MkdirAll(filepath.Dir(to), 0o700)
		if err == nil {
			err = os.Rename(filepath.Join(dir, m.From), to)
		}
		if err != nil {
			done := j
			done.Moves = j.Moves[:i]
			if werr := writeJournal(dir, done); werr != nil {
				return done, fmt.Errorf("move %s: %w; and the journal: %v", m.From, err, werr)
			}
			return done, fmt.Errorf("move %s: %w (moved %d of %d; --undo puts those back)", m.From, err, i, len(j.Moves))
		}
	}
	return j, nil
}

// parents returns "a", "a/b", "a/b/c" for "a/b/c".
func parents(p string) []string {
	if p == "." || p == "" {
		return nil
	}
	return append(parents(path.Dir(p)), p)
}

// UndoResult says what Undo did.
type UndoResult struct {
	// Restored lists the files moved back, with their original names.
	Restored []Move `json:"restored"`
	// Changed lists restored files whose content changed after they were
	// moved: they keep their new content and modification time.
	Changed []string `json:"changed,omitempty"`
	// NotMoved lists journal entries found still in place (never moved).
	NotMoved []string `json:"not_moved,omitempty"`
}

// Undo reverses the last applied run in dir: every file goes back to its
// original name with its modification time, the folders the run created are
// removed when empty, and so is the journal. It refuses, changing nothing,
// when an original name is taken again or a moved file is gone. With no
// journal it returns an error wrapping ErrNothingToUndo.
func Undo(dir string) (UndoResult, error) {
	var res UndoResult
	abs, err := filepath.Abs(dir)
	if err != nil {
		return res, fmt.Errorf("plans dir %s: %w", dir, err)
	}
	jpath := filepath.Join(abs, JournalName)
	data, err := os.ReadFile(jpath)
	if errors.Is(err, fs.ErrNotExist) {
		return res, fmt.Errorf("%w: no journal %s (no applied run, or it was undone already)", ErrNothingToUndo, jpath)
	}
	if err != nil {
		return res, fmt.Errorf("read journal: %w", err)
	}
	var j Journal
	if err := json.Unmarshal(data, &j); err != nil {
		return res, fmt.Errorf("read journal %s: %w", jpath, err)
	}
	if j.Version != journalVersion {
		return res, fmt.Errorf("journal %s: unknown version %d", jpath, j.Version)
	}
	// Check everything first: refuse without changing anything.
	var problems []error
	todo := make([]Move, 0, len(j.Moves))
	for _, m := range j.Moves {
		if !local(m.From) || !local(m.To) {
			problems = append(problems, fmt.Errorf("journal entry %s -> %s leaves the plans dir", m.From, m.To))
			continue
		}
		from, to := filepath.Join(abs, filepath.FromSlash(m.From)), filepath.Join(abs, filepath.FromSlash(m.To))
		_, ferr := os.Lstat(from)
		ti, terr := os.Lstat(to)
		switch {
		case errors.Is(terr, fs.ErrNotExist) && ferr == nil:
			res.NotMoved = append(res.NotMoved, m.From)
		case terr != nil:
			problems = append(problems, fmt.Errorf("%s: %w", m.To, terr))
		case !ti.Mode().IsRegular():
			problems = append(problems, fmt.Errorf("%s is no longer a regular file", m.To))
		case ferr == nil:
			problems = append(problems, fmt.Errorf("%s is taken again: move it away first", m.From))
		case !errors.Is(ferr, fs.ErrNotExist):
			problems = append(problems, fmt.Errorf("%s: %w", m.From, ferr))
		default:
			todo = append(todo, m)
		}
	}
	if len(problems) > 0 {
		return UndoResult{}, fmt.Errorf("undo refused, nothing changed: %w", errors.Join(problems...))
	}
	for i, m := range todo {
		from, to := filepath.Join(abs, filepath.FromSlash(m.From)), filepath.Join(abs, filepath.FromSlash(m.To))
		same := false
		if sum, err := hashFile(to); err == nil {
			same = sum == m.SHA256
		}
		if err := os.Rename(to, from); err != nil {
			left := j
			left.Moves = todo[i:]
			if werr := writeJournal(abs, left); werr != nil {
				return res, fmt.Errorf("move %s back: %w; and the journal: %v", m.To, err, werr)
			}
			return res, fmt.Errorf("move %s back: %w (restored %d of %d; --undo again for the rest)", m.To, err, i, len(todo))
		}
		if same {
			if err := os.Chtimes(from, time.Time{}, m.ModTime); err != nil {
				return res, fmt.Errorf("restore the modification time of %s: %w", m.From, err)
			}
		} else {
			res.Changed = append(res.Changed, m.From)
		}
		res.Restored = append(res.Restored, m)
	}
	for i := len(j.CreatedDirs) - 1; i >= 0; i-- {
		if d := j.CreatedDirs[i]; local(d) {
			os.Remove(filepath.Join(abs, filepath.FromSlash(d))) // only when empty
		}
	}
	if err := os.Remove(jpath); err != nil {
		return res, fmt.Errorf("remove journal: %w", err)
	}
	return res, nil
}

// local reports whether p is a relative path that stays inside the plans dir.
func local(p string) bool {
	return p != "" && filepath.IsLocal(filepath.FromSlash(p))
}

func writeJournal(dir string, j Journal) error {
	data, err := json.MarshalIndent(j, "", "  ")
	if err != nil {
		return fmt.Errorf("encode journal: %w", err)
	}
	if err := config.WriteFileAtomic(filepath.Join(dir, JournalName), append(data, '\n'), 0o600); err != nil {
		return fmt.Errorf("write journal: %w", err)
	}
	return nil
}

func hashFile(p string) (string, error) {
	data, err := os.ReadFile(p)
	if err != nil {
		return "", fmt.Errorf("read %s: %w", filepath.Base(p), err)
	}
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:]), nil
}
