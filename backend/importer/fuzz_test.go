package importer

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memtray/memtray/backend/memory"
	"github.com/memtray/memtray/backend/redact"
)

// FuzzClaudeFiles writes the input as a Claude Code file memory, as a
// project's CLAUDE.md and as a transcript (read for the project's working
// directory), then scans them as an import would. The scan never fails on
// a file's content and never panics; every item it would store is valid
// UTF-8 without NUL, no longer than a memory may be, carries no secret
// redaction would find, and has a valid kind, type and source.
func FuzzClaudeFiles(f *testing.F) {
	f.Add("---\nname: db\ntype: project\ndescription: which database\n---\nWe use Postgres 16 on port 5433.\n")
	f.Add("---\ntype: user\n---\n")
	f.Add("---\nname: x\n")
	f.Add("# Title\n\n## Build\n\nRun `make`.\n\n## Build\n\n```\n## not a heading\n```\n\n##\n")
	f.Add("## Secrets\n\npassword=hunter2hunter2 and AKIA" + "J7QXM2ZP4KVN8RTW\n")
	f.Add("<memtray-context>injected</memtray-context>\n")
	f.Add("{\"cwd\":\"/home/dev/src/shop\",\"type\":\"user\"}\n{\"cwd\":\n")
	f.Add("\uFEFF---\r\ntype: feedback\r\n---\r\nAlways run the linter.\r\n")
	f.Add(strings.Repeat("word ", 40000))
	if b, err := os.ReadFile(filepath.Join("testdata", "webshop", "CLAUDE.md")); err == nil {
		f.Add(string(b))
	}
	home := f.TempDir()
	projDir := filepath.Join(home, ".claude", "projects", "-home-dev-src-shop")
	memDir := filepath.Join(projDir, "memory")
	work := filepath.Join(home, "src", "shop")
	for _, d := range []string{memDir, work} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			f.Fatal(err)
		}
	}
	f.Fuzz(func(t *testing.T, data string) {
		for _, p := range []string{filepath.Join(memDir, "note.md"), filepath.Join(work, "CLAUDE.md"), filepath.Join(projDir, "session.jsonl"), filepath.Join(home, ".claude", "CLAUDE.md")} {
			if err := os.WriteFile(p, []byte(data), 0o600); err != nil {
				t.Fatal(err)
			}
		}
		s, err := newScanner(home)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.scan([]string{work}); err != nil {
			t.Fatalf("scan failed on a file's content: %v", err)
		}
		for _, file := range s.files {
			for _, it := range file.items {
				if it.skip != "" {
					continue
				}
				switch {
				case it.text == "" || !memory.ValidUTF8(it.text) || len(it.text) > memory.MaxTextBytes:
					t.Fatalf("%s: item of %d bytes, valid %t", file.path, len(it.text), memory.ValidUTF8(it.text))
				case redact.Contains(it.text):
					t.Fatalf("%s: a secret survived: %q", file.path, it.text)
				case !it.kind.Valid() || !it.typ.Valid():
					t.Fatalf("%s: kind %q type %q", file.path, it.kind, it.typ)
				case !strings.HasPrefix(it.source, SourcePrefix) || len(it.source) > maxSourceBytes:
					t.Fatalf("source %q", it.source)
				case !memory.ValidUTF8(it.project):
					t.Fatalf("project %q", it.project)
				}
			}
		}
	})
}
