package noise

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/memtray/memtray/backend/memory"
)

// Sources of buffer entries: the only verdicts that train the scorer.
const (
	SourceJudge = "judge" // the judge answered SKIP
	SourceUser  = "user"  // a user marked a stored memory as noise
)

// MaxEntryBytes bounds one buffered text; longer texts are cut (at a rune
// boundary): the start of a reply says what kind of reply it is.
const MaxEntryBytes = 8 << 10

// maxLineBytes bounds one line of the buffer file.
const maxLineBytes = 64 << 10

// Entry is one rejected text in the ring buffer.
type Entry struct {
	At     time.Time `json:"at"`
	Source string    `json:"source"`
	Text   string    `json:"text"`
}

// Buffer is the rejection ring buffer: the newest Size entries, persisted
// as JSON Lines (oldest first). Adding appends a line; when the file holds
// twice Size lines it is rewritten (atomically) with the newest Size.
// Safe for concurrent use.
type Buffer struct {
	path string
	size int

	mu      sync.Mutex
	entries []Entry // oldest first, at most size
	lines   int     // lines in the file
}

// OpenBuffer reads the ring buffer at path (created on the first Add; ""
// keeps it in memory). A malformed line is an error naming it, so a damaged
// file is never silently replaced; an unfinished last line (no newline
// after it) is an append a kill cut short, and is dropped, as are the
// temporary files of rewrites a kill cut short.
func OpenBuffer(path string, size int) (*Buffer, error) {
	if size <= 0 {
		return nil, errors.New("noise: buffer size must be positive")
	}
	b := &Buffer{path: path, size: size}
	if path == "" {
		return b, nil
	}
	// Temporary files of rewrites a kill cut short.
	tmps, _ := filepath.Glob(filepath.Join(filepath.Dir(path), rewritePattern))
	for _, t := range tmps {
		_ = os.Remove(t)
	}
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return b, nil
	}
	if err != nil {
		return nil, fmt.Errorf("noise: read buffer: %w", err)
	}
	if data, err = finishLastLine(path, data); err != nil {
		return nil, err
	}
	entries, err := parseBuffer(data)
	if err != nil {
		return nil, fmt.Errorf("noise: buffer %s: %w", path, err)
	}
	b.lines = len(entries)
	if len(entries) > size {
		entries = entries[len(entries)-size:]
	}
	b.entries = entries
	return b, nil
}

// finishLastLine handles a last line with no newline after it: an append
// that never finished (the process was killed, the disk filled up) when it
// does not parse, so it is dropped and the file cut back to its last whole
// line; a whole entry when it does, so the newline is added (the next
// append would run into it). It returns the data to parse.
func finishLastLine(path string, data []byte) ([]byte, error) {
	n := len(data)
	if n == 0 || data[n-1] == '\n' {
		return data, nil
	}
	whole := data[:bytes.LastIndexByte(data, '\n')+1]
	if _, err := parseBuffer(data[len(whole):]); err != nil {
		if err := os.Truncate(path, int64(len(whole))); err != nil {
			return nil, fmt.Errorf("noise: buffer %s: cut its unfinished last line: %w", path, err)
		}
		return whole, nil
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0o600)
	if err == nil {
		_, err = f.Write([]byte{'\n'})
		err = errors.Join(err, f.Close())
	}
	if err != nil {
		return nil, fmt.Errorf("noise: buffer %s: end its last line: %w", path, err)
	}
	return data, nil
}

// parseBuffer reads JSONL entries; blank lines are skipped.
func parseBuffer(data []byte) ([]Entry, error) {
	var out []Entry
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 4096), maxLineBytes)
	n := 0
	for sc.Scan() {
		n++
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		var e Entry
		if err := json.Unmarshal(line, &e); err != nil {
			return nil, fmt.Errorf("line %d: %w", n, err)
		}
		if err := e.validate(); err != nil {
			return nil, fmt.Errorf("line %d: %w", n, err)
		}
		out = append(out, e)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("line %d: %w", n+1, err)
	}
	return out, nil
}

func (e *Entry) validate() error {
	switch {
	case e.Source != SourceJudge && e.Source != SourceUser:
		return fmt.Errorf("source %q is not judge or user", e.Source)
	case strings.TrimSpace(e.Text) == "":
		return errors.New("empty text")
	case len(e.Text) > MaxEntryBytes || !memory.ValidUTF8(e.Text):
		return errors.New("text longer than 8 KiB or not UTF-8")
	}
	return nil
}

// Add appends e, dropping the oldest entry when full.
func (b *Buffer) Add(e Entry) error {
	e.Text = truncate(strings.TrimSpace(e.Text), MaxEntryBytes)
	if err := e.validate(); err != nil {
		return fmt.Errorf("noise: buffer entry: %w", err)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.path != "" {
		if b.lines+1 >= 2*b.size {
			next := append(append([]Entry(nil), b.entries...), e)
			if len(next) > b.size {
				next = next[len(next)-b.size:]
			}
			if err := b.rewrite(next); err != nil {
				return err
			}
		} else if err := b.append(e); err != nil {
			return err
		}
	}
	b.entries = append(b.entries, e)
	if len(b.entries) > b.size {
		b.entries = append(b.entries[:0], b.entries[len(b.entries)-b.size:]...)
	}
	return nil
}

// Remove drops every entry whose text equals text (white space folded) and
// reports whether there was one.
func (b *Buffer) Remove(text string) (bool, error) {
	want := memory.NormalizeSpace(truncate(strings.TrimSpace(text), MaxEntryBytes))
	b.mu.Lock()
	defer b.mu.Unlock()
	keep := make([]Entry, 0, len(b.entries))
	for _, e := range b.entries {
		if memory.NormalizeSpace(e.Text) != want {
			keep = append(keep, e)
		}
	}
	if len(keep) == len(b.entries) {
		return false, nil
	}
	if b.path != "" {
		if err := b.rewrite(keep); err != nil {
			return false, err
		}
	}
	b.entries = keep
	return true, nil
}

// Newest returns up to n of the newest entries, oldest first.
func (b *Buffer) Newest(n int) []Entry {
	b.mu.Lock()
	defer b.mu.Unlock()
	if n > len(b.entries) {
		n = len(b.entries)
	}
	return append([]Entry(nil), b.entries[len(b.entries)-n:]...)
}

// Len is the number of entries.
func (b *Buffer) Len() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.entries)
}

func (b *Buffer) append(e Entry) error {
	line, err := json.Marshal(e)
	if err != nil {
		return fmt.Errorf("noise: encode entry: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(b.path), 0o700); err != nil {
		return fmt.Errorf("noise: buffer dir: %w", err)
	}
	f, err := os.OpenFile(b.path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("noise: open buffer: %w", err)
	}
	_, werr := f.Write(append(line, '\n'))
	cerr := f.Close()
	if err := errors.Join(werr, cerr); err != nil {
		return fmt.Errorf("noise: append to buffer: %w", err)
	}
	b.lines++
	return nil
}

// rewritePattern names rewrite's temporary files.
const rewritePattern = ".rejections-*.tmp"

// rewrite replaces the file with entries, atomically (temp file + rename).
func (b *Buffer) rewrite(entries []Entry) error {
	var buf bytes.Buffer
	for _, e := range entries {
		line, err := json.Marshal(e)
		if err != nil {
			return fmt.Errorf("noise: encode entry: %w", err)
		}
		buf.Write(line)
		buf.WriteByte('\n')
	}
	if err := os.MkdirAll(filepath.Dir(b.path), 0o700); err != nil {
		return fmt.Errorf("noise: buffer dir: %w", err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(b.path), rewritePattern)
	if err != nil {
		return fmt.Errorf("noise: rewrite buffer: %w", err)
	}
	_, werr := tmp.Write(buf.Bytes())
	serr := tmp.Sync()
	cerr := tmp.Close()
	if err := errors.Join(werr, serr, cerr); err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("noise: rewrite buffer: %w", err)
	}
	if err := os.Chmod(tmp.Name(), 0o600); err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("noise: rewrite buffer: %w", err)
	}
	if err := os.Rename(tmp.Name(), b.path); err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("noise: rewrite buffer: %w", err)
	}
	b.lines = len(entries)
	return nil
}

// truncate cuts s to at most n bytes at a rune boundary.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n]
}
