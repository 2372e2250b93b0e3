package daemon

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/memtray/memtray/backend/httpapi"
	"github.com/memtray/memtray/backend/memory"
)

// TestExportFileAndImportJob exports a store to a file as a job, imports
// that file into a fresh daemon as a job, and checks the same memories
// arrive; a broken upload fails its job and changes nothing.
func TestExportFileAndImportJob(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	d1, addr1 := serve(t, testConfig(t))
	c1 := httpapi.NewClient(addr1, d1.Token())
	for i := range 25 {
		if _, err := c1.Add(ctx, httpapi.AddRequest{Text: fmt.Sprintf("Service %d listens on port %d and logs to /var/log/svc%d.log; restart it with systemctl restart svc%d.", i, 8000+i, i, i)}); err != nil {
			t.Fatal(err)
		}
	}
	dir := t.TempDir()
	j, err := c1.ExportFile(ctx, httpapi.ExportFileRequest{Dir: dir})
	if err != nil || j.Kind != httpapi.JobExport || !strings.HasPrefix(j.Target, dir) {
		t.Fatalf("export job = %+v, %v", j, err)
	}
	var seen []httpapi.Job
	j, err = c1.WaitJob(ctx, j.ID, 20*time.Millisecond, func(j httpapi.Job) { seen = append(seen, j) })
	if err != nil || j.State != httpapi.JobDone || j.Done != 25 || j.Total != 25 || !strings.Contains(j.Result, "25 memories written to "+j.Target) {
		t.Fatalf("export finished = %+v, %v (seen %d states)", j, err, len(seen))
	}
	fi, err := os.Stat(j.Target)
	if err != nil || fi.Mode().Perm() != 0o600 || !strings.HasSuffix(j.Target, ".jsonl") {
		t.Fatalf("export file %s: %v %v", j.Target, fi, err)
	}
	if parts, _ := filepath.Glob(filepath.Join(dir, "*.part")); len(parts) > 0 {
		t.Errorf("left a partial file: %v", parts)
	}
	// A second export the same second gets its own name.
	j2, err := c1.ExportFile(ctx, httpapi.ExportFileRequest{Dir: dir})
	if err == nil {
		j2, err = c1.WaitJob(ctx, j2.ID, 20*time.Millisecond, nil)
	}
	if err != nil || j2.State != httpapi.JobDone || j2.Target == j.Target {
		t.Fatalf("second export = %+v, %v", j2, err)
	}

	d2, addr2 := serve(t, testConfig(t))
	c2 := httpapi.NewClient(addr2, d2.Token())
	data, _ := os.ReadFile(j.Target)
	ij, err := c2.ImportJob(ctx, bytes.NewReader(data))
	if err != nil || ij.Kind != httpapi.JobImport {
		t.Fatalf("import job = %+v, %v", ij, err)
	}
	ij, err = c2.WaitJob(ctx, ij.ID, 20*time.Millisecond, nil)
	if err != nil || ij.State != httpapi.JobDone || ij.Done != int64(len(data)) || ij.Result != "imported 25 of 25 memories (0 already there)" {
		t.Fatalf("import finished = %+v, %v", ij, err)
	}
	if st, _ := c2.Stats(ctx); st.Store.Count != 25 {
		t.Fatalf("after import: %d memories", st.Store.Count)
	}
	// Again: all duplicates.
	ij, _ = c2.ImportJob(ctx, bytes.NewReader(data))
	if ij, err = c2.WaitJob(ctx, ij.ID, 20*time.Millisecond, nil); err != nil || ij.Result != "imported 0 of 25 memories (25 already there)" {
		t.Fatalf("import again = %+v, %v", ij, err)
	}
	// A broken stream: the job fails, saying why; nothing changes.
	broken := append(bytes.Clone(data[:len(data)/2]), []byte("\n{not json\n")...)
	ij, err = c2.ImportJob(ctx, bytes.NewReader(broken))
	if err == nil {
		ij, err = c2.WaitJob(ctx, ij.ID, 20*time.Millisecond, nil)
	}
	if err != nil || ij.State != httpapi.JobFailed || ij.Error == "" {
		t.Fatalf("broken import = %+v, %v", ij, err)
	}
	if st, _ := c2.Stats(ctx); st.Store.Count != 25 {
		t.Fatalf("after a broken import: %d memories", st.Store.Count)
	}
	if spools, _ := filepath.Glob(filepath.Join(d2.cfg.DataDir, ".import-*")); len(spools) > 0 {
		t.Errorf("spool files left: %v", spools)
	}

	// Bad requests.
	if _, err := c2.ImportJob(ctx, strings.NewReader("")); !errors.Is(err, memory.ErrInvalid) {
		t.Errorf("empty import: %v", err)
	}
	for _, bad := range []string{"relative/dir", filepath.Join(dir, "missing")} {
		var fe *httpapi.FieldErrors
		if _, err := c1.ExportFile(ctx, httpapi.ExportFileRequest{Dir: bad}); !errors.As(err, &fe) || fe.Fields["dir"] == "" {
			t.Errorf("export to %q: %v", bad, err)
		}
	}
}
