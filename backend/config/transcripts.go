package config

import (
	"fmt"
	"path/filepath"
	"time"
)

// Transcripts configures capture from the agents' own session files
// (package tail): the daemon reads what is new in Claude Code's
// ~/.claude/projects/<dir>/<session>.jsonl when a hook says a turn ended,
// and a watcher catches the sessions whose hooks did not fire.
type Transcripts struct {
	// Enabled turns it on (the default). Off, hooks' transcript paths are
	// refused and nothing is watched; the proxy is unaffected.
	Enabled bool `json:"enabled"`
	// ClaudeCodeDirs and CodexDirs are the session folders read (empty:
	// ~/.claude/projects and ~/.codex/sessions). Files elsewhere are
	// refused, even when a hook names them.
	ClaudeCodeDirs []string `json:"claude_code_dirs,omitempty"`
	CodexDirs      []string `json:"codex_dirs,omitempty"`
	// Poll is how often the watcher looks at the folders; Idle how long a
	// file stays quiet before its last turn counts as ended.
	Poll Duration `json:"poll"`
	Idle Duration `json:"idle"`
	// QueueSize bounds the files waiting to be read; when it is full a
	// hook's request is dropped and counted (the watcher catches it).
	QueueSize int `json:"queue_size"`
	// MaxChunk bounds the bytes read from a file at once.
	MaxChunk int `json:"max_chunk"`
}

// DefaultTranscripts is the default of Capture.Transcripts.
func DefaultTranscripts() Transcripts {
	return Transcripts{Enabled: true, Poll: Duration(30 * time.Second), Idle: Duration(10 * time.Minute),
		QueueSize: 256, MaxChunk: 32 << 20}
}

// validate names every invalid field of t (prefix "capture.transcripts.").
func (t Transcripts) validate(bad func(field, format string, args ...any)) {
	const p = "capture.transcripts."
	if t.Poll < Duration(time.Second) || t.Poll > Duration(time.Hour) {
		bad(p+"poll", "must be within 1s..1h")
	}
	if t.Idle < Duration(10*time.Second) || t.Idle > Duration(24*time.Hour) {
		bad(p+"idle", "must be within 10s..24h")
	}
	if t.QueueSize < 1 || t.QueueSize > 100000 {
		bad(p+"queue_size", "must be within 1..100000")
	}
	if t.MaxChunk < 64<<10 || t.MaxChunk > 1<<30 {
		bad(p+"max_chunk", "must be within 64 KiB..1 GiB")
	}
	for name, dirs := range map[string][]string{"claude_code_dirs": t.ClaudeCodeDirs, "codex_dirs": t.CodexDirs} {
		for i, d := range dirs {
			if !filepath.IsAbs(d) {
				bad(fmt.Sprintf("%s%s[%d]", p, name, i), "must be an absolute path")
			}
		}
	}
}
