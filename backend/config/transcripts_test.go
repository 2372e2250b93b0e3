package config

import (
	"strings"
	"testing"
	"time"
)

func TestTranscriptsValidate(t *testing.T) {
	if d := Default().Capture.Transcripts; !d.Enabled || time.Duration(d.Poll) != 30*time.Second {
		t.Errorf("default %+v: want on, polled every 30s", d)
	}
	for _, tc := range []struct {
		field string
		set   func(*Transcripts)
	}{
		{"capture.transcripts.poll", func(t *Transcripts) { t.Poll = Duration(time.Millisecond) }},
		{"capture.transcripts.poll", func(t *Transcripts) { t.Poll = Duration(2 * time.Hour) }},
		{"capture.transcripts.idle", func(t *Transcripts) { t.Idle = 0 }},
		{"capture.transcripts.queue_size", func(t *Transcripts) { t.QueueSize = 0 }},
		{"capture.transcripts.max_chunk", func(t *Transcripts) { t.MaxChunk = 10 }},
		{"capture.transcripts.claude_code_dirs[0]", func(t *Transcripts) { t.ClaudeCodeDirs = []string{"rel/dir"} }},
		{"capture.transcripts.codex_dirs[1]", func(t *Transcripts) { t.CodexDirs = []string{"/abs", ""} }},
	} {
		c := Default()
		c.DataDir = "/tmp/x"
		tc.set(&c.Capture.Transcripts)
		err := c.Validate()
		if err == nil || !strings.Contains(err.Error(), tc.field) {
			t.Errorf("%s: %v", tc.field, err)
		}
	}
	c := Default()
	c.DataDir = "/tmp/x"
	c.Capture.Transcripts.Enabled = false
	c.Capture.Transcripts.ClaudeCodeDirs = []string{"/home/me/other-claude/projects"}
	if err := c.Validate(); err != nil {
		t.Errorf("off with a folder: %v", err)
	}
}
