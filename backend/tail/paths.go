package tail

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/memtray/memtray/backend/memory"
)

// DefaultRoots are the agents' session folders under home.
func DefaultRoots(home string) map[string][]string {
	return map[string][]string{
		AgentClaudeCode: {filepath.Join(home, ".claude", "projects")},
		AgentCodex:      {filepath.Join(home, ".codex", "sessions")},
	}
}

// check validates a path given for agent: absolute, a regular .jsonl file
// (symbolic links resolved) inside one of the agent's session folders. It
// returns the resolved path, the file's name for cursors.
func (t *Tailer) check(agent, path string) (string, error) {
	if _, ok := formats[agent]; !ok {
		return "", fmt.Errorf("%w: unknown agent %q (want %s or %s)", memory.ErrInvalid, agent, AgentClaudeCode, AgentCodex)
	}
	if path == "" || len(path) > 4096 || !memory.ValidUTF8(path) || strings.ContainsRune(path, 0) {
		return "", fmt.Errorf("%w: path must be an absolute file path of at most 4096 bytes", memory.ErrInvalid)
	}
	if !filepath.IsAbs(path) {
		return "", fmt.Errorf("%w: path %q is not absolute", memory.ErrInvalid, path)
	}
	if filepath.Ext(path) != ".jsonl" {
		return "", fmt.Errorf("%w: %s is not a session file (.jsonl)", memory.ErrInvalid, path)
	}
	real, err := filepath.EvalSymlinks(path)
	if errors.Is(err, os.ErrNotExist) {
		return "", fmt.Errorf("%w: %s does not exist", memory.ErrNotFound, path)
	}
	if err != nil {
		return "", fmt.Errorf("%w: %s: %v", memory.ErrInvalid, path, err)
	}
	fi, err := os.Stat(real)
	if err != nil {
		return "", fmt.Errorf("%w: %s: %v", memory.ErrInvalid, path, err)
	}
	if !fi.Mode().IsRegular() {
		return "", fmt.Errorf("%w: %s is not a regular file", memory.ErrInvalid, path)
	}
	roots := t.opts.Roots[agent]
	for _, root := range roots {
		if r, err := filepath.EvalSymlinks(root); err == nil && within(r, real) {
			return real, nil
		}
	}
	return "", fmt.Errorf("%w: %s is outside %s's session folders (%s); add its folder to capture.transcripts.%s_dirs",
		memory.ErrInvalid, path, agent, strings.Join(roots, ", "), strings.ReplaceAll(agent, "-", "_"))
}

// within reports whether path lies below dir.
func within(dir, path string) bool {
	rel, err := filepath.Rel(dir, path)
	return err == nil && rel != "." && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}
