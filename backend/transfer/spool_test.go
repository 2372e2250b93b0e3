package transfer

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSpoolSealed: an upload spool holds none of the upload's bytes in the
// clear, and reads back whole.
func TestSpoolSealed(t *testing.T) {
	secret := "AKIAZ7Q3EXAMPLEKEY42 password=hunter2-correct-horse"
	upload := strings.Repeat(`{"text":"deploy with `+secret+`"}`+"\n", 200)
	dir := t.TempDir()
	sp, err := writeSpool(dir, strings.NewReader(upload))
	if err != nil {
		t.Fatal(err)
	}
	if sp.size != int64(len(upload)) || filepath.Dir(sp.path) != dir {
		t.Fatalf("spool %+v", sp)
	}
	raw, err := os.ReadFile(sp.path)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"AKIAZ7Q3EXAMPLEKEY42", "hunter2", "deploy with", `{"text"`} {
		if bytes.Contains(raw, []byte(s)) {
			t.Errorf("the spool file holds %q in the clear", s)
		}
	}
	if fi, err := os.Stat(sp.path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("spool mode %v, %v", fi.Mode(), err)
	}
	for range 2 { // read twice: each open starts at the beginning
		r, err := sp.open()
		if err != nil {
			t.Fatal(err)
		}
		got, err := io.ReadAll(r)
		r.Close()
		if err != nil || string(got) != upload {
			t.Fatalf("read back %d bytes (%v), want %d", len(got), err, len(upload))
		}
	}
	sp.remove()
	if _, err := os.Stat(sp.path); !os.IsNotExist(err) {
		t.Fatalf("spool not removed: %v", err)
	}
}
