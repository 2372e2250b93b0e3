package daemon

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

// TestOpenRemovesSpools: the upload spools a killed daemon left (and the
// plain ones of older versions) are gone after the next Open; other files
// stay.
func TestOpenRemovesSpools(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t)
	if err := os.MkdirAll(cfg.DataDir, 0o700); err != nil {
		t.Fatal(err)
	}
	left := []string{".import-123.spool", ".import-4567.jsonl"}
	kept := []string{"import-notes.jsonl", ".import-x.txt", "notes.spool"}
	for _, n := range append(left, kept...) {
		if err := os.WriteFile(filepath.Join(cfg.DataDir, n), []byte(`{"text":"sk-live-secret"}`), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	d, err := Open(context.Background(), Options{Config: cfg, Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	for _, n := range left {
		if _, err := os.Stat(filepath.Join(cfg.DataDir, n)); !os.IsNotExist(err) {
			t.Errorf("%s left after Open: %v", n, err)
		}
	}
	for _, n := range kept {
		if _, err := os.Stat(filepath.Join(cfg.DataDir, n)); err != nil {
			t.Errorf("%s removed: %v", n, err)
		}
	}
}
