package config

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

func TestRemoveTemps(t *testing.T) {
	dir := t.TempDir()
	// A write a kill cut short leaves its temporary file.
	tmp, err := os.CreateTemp(dir, ".daemon.json.tmp*")
	if err != nil {
		t.Fatal(err)
	}
	tmp.Close()
	for _, name := range []string{".token.tmp123", "token", "daemon.json", ".hidden", "notes.tmp1", ".a.tmpx"} {
		if err := os.WriteFile(filepath.Join(dir, name), nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(filepath.Join(dir, ".store.tmp5"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := WriteFileAtomic(filepath.Join(dir, "welcome.json"), []byte("{}"), 0o600); err != nil {
		t.Fatal(err)
	}
	if n := RemoveTemps(dir); n != 2 {
		t.Errorf("removed %d files, want 2", n)
	}
	var left []string
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		left = append(left, e.Name())
	}
	want := []string{".a.tmpx", ".hidden", ".store.tmp5", "daemon.json", "notes.tmp1", "token", "welcome.json"}
	if !slices.Equal(left, want) {
		t.Errorf("left %q, want %q", left, want)
	}
	if n := RemoveTemps(filepath.Join(dir, "absent")); n != 0 {
		t.Errorf("an absent dir: %d", n)
	}
}

func TestRemoveFileTemps(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "config.json")
	old := time.Now().Add(-2 * time.Minute)
	for name, mtime := range map[string]time.Time{
		".config.json.tmp1": old,        // a write killed long ago
		".config.json.tmp2": time.Now(), // perhaps a write going on now
		".other.json.tmp3":  old,        // another file's
		"config.json":       old,
	} {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, nil, 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, mtime, mtime); err != nil {
			t.Fatal(err)
		}
	}
	if n := RemoveFileTemps(cfg, time.Minute); n != 1 {
		t.Errorf("removed %d, want 1", n)
	}
	var left []string
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		left = append(left, e.Name())
	}
	if want := []string{".config.json.tmp2", ".other.json.tmp3", "config.json"}; !slices.Equal(left, want) {
		t.Errorf("left %q, want %q", left, want)
	}
}
