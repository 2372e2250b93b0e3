package daemon

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

// TestOpenRemovesTemporaryFiles: a daemon killed while it wrote its
// runtime file (or the token, or a state file) leaves the temporary file
// of that write in the data dir; the next Open removes it.
func TestOpenRemovesTemporaryFiles(t *testing.T) {
	cfg := testConfig(t)
	left := []string{".daemon.json.tmp3070651831", ".token.tmp42", ".capture.json.tmp7"}
	for _, name := range append([]string{"keep.txt"}, left...) {
		if err := os.WriteFile(filepath.Join(cfg.DataDir, name), []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	d, err := Open(context.Background(), Options{Config: cfg, Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	for _, name := range left {
		if _, err := os.Stat(filepath.Join(cfg.DataDir, name)); !os.IsNotExist(err) {
			t.Errorf("%s is still there (%v)", name, err)
		}
	}
	if _, err := os.Stat(filepath.Join(cfg.DataDir, "keep.txt")); err != nil {
		t.Errorf("another file went: %v", err)
	}
}
