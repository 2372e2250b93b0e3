package tail

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/memtray/memtray/backend/config"
)

// HeadBytes is how much of a file's beginning its identity hashes.
const HeadBytes = 1024

// Cursor is how far one transcript file has been captured. It is saved
// after every step (write temp, fsync, rename), so a crash loses at most
// the step in flight, which is then done again (its turns are skipped by
// their fingerprints).
type Cursor struct {
	// Path is the transcript file; Agent the agent that writes it.
	Path  string `json:"path"`
	Agent string `json:"agent"`
	// SessionID, Project and Headless are fixed by the first read, so
	// later reads (which start mid-file) label their exchanges the way a
	// read of the whole file would.
	SessionID string `json:"session_id,omitempty"`
	Project   string `json:"project,omitempty"`
	Headless  bool   `json:"headless,omitempty"`
	// CWD is the directory the session was started in.
	CWD string `json:"cwd,omitempty"`
	// Offset is where the next read starts: the first line of the turn
	// not yet captured. LineEnd is the end of the last complete line read.
	Offset  int64 `json:"offset"`
	LineEnd int64 `json:"line_end"`
	// Size and ModTime are the file's when it was last read.
	Size    int64     `json:"size"`
	ModTime time.Time `json:"mod_time"`
	// Identity: the device and inode (0 where the system has none) and
	// the SHA-256 of the first HeadLen bytes (at most HeadBytes). A file
	// that shrank below LineEnd, another inode, or another head is read
	// again from the start.
	Dev      uint64 `json:"dev,omitempty"`
	Ino      uint64 `json:"ino,omitempty"`
	HeadLen  int    `json:"head_len"`
	HeadHash string `json:"head_hash"`
	// Exchanges and UserTurns count what lies before Offset, so the turn
	// numbers of later reads go on from there.
	Exchanges int `json:"exchanges"`
	UserTurns int `json:"user_turns"`
	// IdleDone is the modification time of the file when its idle
	// timer last ran (a prompt not answered yet stays pending: the
	// timer runs once per quiet spell, not at every poll).
	IdleDone time.Time `json:"idle_done,omitzero"`
	// Resets counts the times the file was found truncated or replaced.
	Resets int `json:"resets,omitempty"`
	// Seen counts, by Fingerprint, the turns before Offset: a turn that
	// begins as an earlier one of the file did (the user's "yes" twice,
	// answered the same way at first) is its next occurrence
	// (occurrenceKey), not that turn read again.
	Seen map[string]int `json:"seen,omitempty"`

	// parsed is the stretch read last in the step under way, not yet
	// counted in Exchanges and UserTurns.
	parsed *region
	// The complete lines from noBoundaryFrom (Offset when it was set) to
	// noBoundaryTo hold no line after the first that may begin a turn:
	// the next read from the same Offset looks only at the lines after
	// them. Not saved: a restart looks at every line once again.
	noBoundaryFrom, noBoundaryTo int64
}

// pending reports whether complete lines past Offset wait for their turn
// to end.
func (c *Cursor) pending() bool { return c.LineEnd > c.Offset }

// identity is what a file is now: device, inode and head hash.
type identity struct {
	dev, ino uint64
	headLen  int
	headHash string
}

// readIdentity hashes the first min(size, HeadBytes) bytes of f.
func readIdentity(f *os.File, fi os.FileInfo) (identity, error) {
	id := identity{}
	id.dev, id.ino = fileKey(fi)
	n := min(fi.Size(), HeadBytes)
	buf := make([]byte, n)
	if _, err := f.ReadAt(buf, 0); err != nil && !errors.Is(err, io.EOF) {
		return id, fmt.Errorf("read the head of %s: %w", f.Name(), err)
	}
	id.headLen, id.headHash = int(n), hashHex(buf)
	return id, nil
}

// sameFile reports whether the file now (id, of size) is the one c was
// read from: same inode, the head c hashed unchanged, not shorter than
// what was read.
func (c *Cursor) sameFile(f *os.File, id identity, size int64) (bool, error) {
	if c.HeadHash == "" {
		return false, nil
	}
	if size < c.LineEnd || size < int64(c.HeadLen) {
		return false, nil
	}
	if (c.Ino != 0 || c.Dev != 0) && (c.Ino != id.ino || c.Dev != id.dev) {
		return false, nil
	}
	if c.HeadLen == id.headLen {
		return c.HeadHash == id.headHash, nil
	}
	// The file has grown past the head c hashed: hash that much again.
	buf := make([]byte, c.HeadLen)
	if _, err := f.ReadAt(buf, 0); err != nil && !errors.Is(err, io.EOF) {
		return false, fmt.Errorf("read the head of %s: %w", f.Name(), err)
	}
	return hashHex(buf) == c.HeadHash, nil
}

func hashHex(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// cursorStore keeps one JSON file per transcript under dir, named by a
// hash of the transcript's path.
type cursorStore struct{ dir string }

func (s cursorStore) file(path string) string {
	return filepath.Join(s.dir, hashHex([]byte(path))[:32]+".json")
}

// save writes c atomically.
func (s cursorStore) save(c *Cursor) error {
	data, err := json.Marshal(c)
	if err != nil {
		return fmt.Errorf("encode cursor of %s: %w", c.Path, err)
	}
	if err := config.WriteFileAtomic(s.file(c.Path), data, 0o600); err != nil {
		return fmt.Errorf("save cursor of %s: %w", c.Path, err)
	}
	return nil
}

// loadAll reads every cursor; a file that does not decode (which an
// atomic write cannot leave, but a disk can) is reported and skipped, so
// its transcript is read again from the start.
func (s cursorStore) loadAll() (map[string]*Cursor, []error) {
	out := map[string]*Cursor{}
	entries, err := os.ReadDir(s.dir)
	if errors.Is(err, os.ErrNotExist) {
		return out, nil
	}
	if err != nil {
		return out, []error{fmt.Errorf("read cursors: %w", err)}
	}
	var errs []error
	for _, e := range entries {
		name := e.Name()
		if !e.Type().IsRegular() || strings.HasPrefix(name, ".") || !strings.HasSuffix(name, ".json") {
			continue
		}
		data, err := os.ReadFile(filepath.Join(s.dir, name))
		if err != nil {
			errs = append(errs, fmt.Errorf("read cursor %s: %w", name, err))
			continue
		}
		var c Cursor
		if err := json.Unmarshal(data, &c); err != nil || c.Path == "" || c.Offset < 0 || c.LineEnd < c.Offset {
			errs = append(errs, fmt.Errorf("cursor %s is damaged: ignored", name))
			continue
		}
		out[c.Path] = &c
	}
	return out, errs
}
