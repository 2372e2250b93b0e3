package project

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzParse feeds the parsers of git's files arbitrary bytes: they must
// not panic, and what they return must be sound.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"gitdir: /a/.git/worktrees/x\n",
		"gitdir: ../.git/modules/lib\r\n",
		"[core]\n\tbare = true\n[remote \"origin\"]\n\turl = git@example.com:me/x.git\n",
		"[core] worktree = \"../a\\\"b\" # c\n",
		"[a.b]\nk\n[",
		"",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if p, ok := ParseGitFile(data); ok && (p == "" || strings.ContainsAny(p, "\n\x00")) {
			t.Fatalf("ParseGitFile(%q) = %q", data, p)
		}
		cfg := ParseConfig(data)
		for k := range cfg {
			if strings.Count(k, "\x00") < 2 {
				t.Fatalf("key %q", k)
			}
		}
		name := RemoteName(cfg.get("remote", "origin", "url"))
		if strings.ContainsAny(name, `/\:`) {
			t.Fatalf("remoteName gave %q", name)
		}
		if utf8.Valid(data) && len(data) <= MaxPathBytes && !strings.Contains(string(data), "..") {
			// Any string as a directory below one that does not exist: no
			// panic, an error or a name by the path rule.
			r := NewResolver(Options{TTL: -1, Home: "/nonexistent"})
			if info, err := r.Resolve("/nonexistent-memtray-fuzz/" + string(data)); err == nil && info.Source != FromPath {
				t.Fatalf("Resolve of a missing path: %+v", info)
			}
		}
	})
}
