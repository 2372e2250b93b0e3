package config

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
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
