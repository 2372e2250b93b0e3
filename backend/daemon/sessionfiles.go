package daemon

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// The headless hold and the live turns keep one JSON Lines file per
// session under a directory of the data dir, named by holdFileName of the
// session id. These helpers read such files back at start.

// holdFileName names the file of a session: a hash of its id, so any id
// makes a safe file name.
func holdFileName(session string) string {
	sum := sha256.Sum256([]byte(session))
	return hex.EncodeToString(sum[:16]) + ".jsonl"
}

// readSessionFiles reads every session file of dir: parse decodes a
// file's valid lines (and counts the others), session names the session a
// decoded line belongs to. A file whose name is not its session's is
// skipped. Unreadable files and lines are reported in the joined error,
// labelled what; everything readable is returned, by session. A missing
// dir holds nothing.
func readSessionFiles[T any](dir, what string, parse func([]byte) ([]T, int), session func(T) string) (map[string][]T, error) {
	out := map[string][]T{}
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return out, nil
	}
	if err != nil {
		return out, fmt.Errorf("read %s: %w", what, err)
	}
	var errs []error
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".jsonl") {
			continue
		}
		data, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			errs = append(errs, fmt.Errorf("read %s: %w", what, err))
			continue
		}
		lines, bad := parse(data)
		if bad > 0 {
			errs = append(errs, fmt.Errorf("%s %s: %d unreadable lines skipped", what, e.Name(), bad))
		}
		if len(lines) == 0 {
			continue
		}
		id := session(lines[0])
		if holdFileName(id) != e.Name() {
			errs = append(errs, fmt.Errorf("%s: %s does not hold the session its name says; skipped", what, e.Name()))
			continue
		}
		out[id] = lines
	}
	return out, errors.Join(errs...)
}

// parseSessionLines decodes the JSON lines of a session file: valid is
// asked about each decoded line, with the first valid one (nil before
// there is one). It returns the valid lines and how many were not; a line
// longer than maxHoldLine loses the rest of the file, counted once.
func parseSessionLines[T any](data []byte, valid func(t T, first *T) bool) (out []T, bad int) {
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 64<<10), maxHoldLine)
	for sc.Scan() {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		var t T
		var first *T
		if len(out) > 0 {
			first = &out[0]
		}
		if err := json.Unmarshal(line, &t); err != nil || !valid(t, first) {
			bad++
			continue
		}
		out = append(out, t)
	}
	if sc.Err() != nil {
		bad++
	}
	return out, bad
}
