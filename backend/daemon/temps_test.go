package daemon

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestOpenRemovesTemporaryFiles: a daemon killed while it wrote its
// runtime file (or the token, or a state file) leaves the temporary file
// of that write in the data dir, or beside the config file after a model
// switch; the next Open removes them (beside the config file, those older
// than a minute: another process may be writing it).
func TestOpenRemovesTemporaryFiles(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t)
	cfg.File = filepath.Join(t.TempDir(), "config.json")
	oldTmp, newTmp := filepath.Join(filepath.Dir(cfg.File), ".config.json.tmp11"), filepath.Join(filepath.Dir(cfg.File), ".config.json.tmp12")
	for _, p := range []string{oldTmp, newTmp} {
		if err := os.WriteFile(p, []byte("{"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	long := time.Now().Add(-time.Hour)
	if err := os.Chtimes(oldTmp, long, long); err != nil {
		t.Fatal(err)
	}
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
	if _, err := os.Stat(oldTmp); !os.IsNotExist(err) {
		t.Errorf("the config file's old temporary file is still there (%v)", err)
	}
	if _, err := os.Stat(newTmp); err != nil {
		t.Errorf("the config file's new temporary file went: %v", err)
	}
}
