package transfer

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/memtray/memtray/backend/jobs"
	"github.com/memtray/memtray/backend/store"
)

func TestDownloadDir(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_DOWNLOAD_DIR", "")
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, "cfg"))
	if got := downloadDir(); got != home {
		t.Errorf("no Downloads: %s, want home", got)
	}
	os.Mkdir(filepath.Join(home, "Downloads"), 0o700)
	if got := downloadDir(); got != filepath.Join(home, "Downloads") {
		t.Errorf("~/Downloads: %s", got)
	}
	os.MkdirAll(filepath.Join(home, "cfg"), 0o700)
	os.Mkdir(filepath.Join(home, "Téléchargements"), 0o700)
	os.WriteFile(filepath.Join(home, "cfg", "user-dirs.dirs"), []byte("# comment\nXDG_DOWNLOAD_DIR=\"$HOME/Téléchargements\"\n"), 0o600)
	if got := downloadDir(); got != filepath.Join(home, "Téléchargements") {
		t.Errorf("user-dirs.dirs: %s", got)
	}
}

// damagedStream exports a store of three memories, one of them written
// without its damaged vector (a version 2 header counts it).
type damagedStream struct{}

func (damagedStream) Export(_ context.Context, w io.Writer) error {
	_, err := io.WriteString(w, `{"format":"memtray-export","version":2,"embedding_model":"m","dim":2,"count":3,"exported_at":"2026-11-28T12:00:00Z","without_vector":1}`+"\n"+
		`{"id":"a","text":"one","embedding":[1,0]}`+"\n"+`{"id":"b","text":"two","embedding_damaged":true}`+"\n"+
		`{"id":"c","text":"three","embedding":[0,1]}`+"\n"+`{"end":true,"count":3}`+"\n")
	return err
}

func (damagedStream) Import(context.Context, io.Reader) (store.ImportReport, error) {
	return store.ImportReport{}, nil
}

// TestExportFileSaysWithoutVector: the export job's result says how many
// memories the file holds without their vector (an export no longer fails
// on a damaged one, so the user is told what an import embeds anew).
func TestExportFileSaysWithoutVector(t *testing.T) {
	runner := jobs.New(nil)
	defer runner.Close()
	s := New(Options{DataDir: t.TempDir(), Stream: damagedStream{}, Count: func() int { return 3 }, Jobs: runner})
	j, err := s.ExportFile(context.Background(), ExportFileRequest{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	for !j.Finished() {
		time.Sleep(10 * time.Millisecond)
		if j, err = runner.Job(context.Background(), j.ID); err != nil {
			t.Fatal(err)
		}
	}
	if j.State != jobs.Done || !strings.Contains(j.Result, "3 memories written to") || !strings.Contains(j.Result, "1 of them without their vector") {
		t.Errorf("export job %s: %q, want it done, saying 1 of 3 without their vector", j.State, j.Result)
	}
}
