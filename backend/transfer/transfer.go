// Package transfer moves a whole store in and out as files, as background
// jobs (package jobs): an export written to a new file (complete under its
// final name, or not there), and an import whose upload waits sealed in
// the data dir (spool.go) while the job checks and adds it.
package transfer

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/memtray/memtray/backend/jobs"
	"github.com/memtray/memtray/backend/memory"
	"github.com/memtray/memtray/backend/store"
)

// The job kinds and units of a Service's jobs.
const (
	// KindExport writes the store to a file (ExportFile).
	KindExport = "export"
	// KindImport adds an uploaded export stream (ImportJob).
	KindImport = "import"
)

// ExportFileRequest asks for an export to a file.
type ExportFileRequest struct {
	// Dir is an existing absolute directory; empty: the user's download
	// folder ($XDG_DOWNLOAD_DIR, ~/Downloads), else the home directory.
	Dir string `json:"dir,omitempty"`
}

// Stream is the store's whole-stream export and import.
type Stream interface {
	Export(ctx context.Context, w io.Writer) error
	Import(ctx context.Context, r io.Reader) (store.ImportReport, error)
}

// Options configures New.
type Options struct {
	// DataDir is where uploads wait (sealed) for their import job.
	DataDir string
	// Stream exports and imports; Count is the number of memories (an
	// export's total).
	Stream Stream
	Count  func() int
	// Jobs runs the exports and imports.
	Jobs *jobs.Runner
	// Clock names export files; nil: the wall clock.
	Clock memory.Clock
	// Logger records what was exported and imported; nil discards it.
	Logger *slog.Logger
}

// Service exports to files and imports uploads, as jobs. It is safe for
// concurrent use.
type Service struct {
	o Options
}

// New returns the service over o.
func New(o Options) *Service {
	if o.Clock == nil {
		o.Clock = memory.SystemClock{}
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return &Service{o: o}
}

// ExportFile writes every memory to a new file in req.Dir (or the user's
// download folder) as a background job: the file appears under its final
// name only when it is complete.
func (s *Service) ExportFile(_ context.Context, req ExportFileRequest) (jobs.Job, error) {
	if j, ok := s.o.Jobs.Running(KindExport); ok {
		return j, jobs.Busy(j)
	}
	dir := req.Dir
	if dir == "" {
		dir = downloadDir()
	}
	if !filepath.IsAbs(dir) || !memory.ValidUTF8(dir) || len(dir) > 4096 {
		return jobs.Job{}, &memory.FieldErrors{Message: "invalid export", Fields: map[string]string{"dir": "must be an absolute path"}}
	}
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return jobs.Job{}, &memory.FieldErrors{Message: "invalid export", Fields: map[string]string{"dir": "must be an existing directory"}}
	}
	path := freeName(dir, "memtray-export-"+s.o.Clock.Now().Format("20060102-150405"), ".jsonl")
	return s.o.Jobs.Start(KindExport, path, jobs.UnitMemories, func(ctx context.Context, j *jobs.Task) (string, error) {
		total := int64(s.o.Count())
		j.Progress("writing", 0, total)
		var tap *store.ExportHeaderTap
		n, err := writeExport(ctx, path, func(w io.Writer) error {
			// The stream is a header line, a line per memory, a trailer line.
			tap = &store.ExportHeaderTap{W: &lineCounter{w: w, line: func(n int64) { j.Progress("writing", min(max(n-1, 0), total), total) }}}
			return s.o.Stream.Export(ctx, tap)
		})
		if err != nil {
			return "", err
		}
		n -= 2
		j.Progress("written", n, n)
		msg := fmt.Sprintf("%d memories written to %s", n, path)
		h, _ := tap.Header()
		if h.WithoutVector > 0 {
			// One damaged record never fails a backup (store.Export): the
			// user is told which part of it an import embeds anew.
			msg += fmt.Sprintf(", %d of them without their vector, which is damaged here (an import embeds their text anew)", h.WithoutVector)
		}
		s.o.Logger.Info("exported", "file", path, "memories", n, "without_vector", h.WithoutVector)
		return msg, nil
	})
}

// writeExport writes path through a .part file created exclusively, then
// renames it into place; it returns the number of lines written.
func writeExport(ctx context.Context, path string, write func(io.Writer) error) (int64, error) {
	part := path + ".part"
	f, err := os.OpenFile(part, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return 0, fmt.Errorf("export: %w", err)
	}
	lc := &lineCounter{w: f}
	bw := bufio.NewWriterSize(lc, 256<<10)
	err = write(bw)
	if err == nil {
		err = bw.Flush()
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = ctx.Err()
	}
	if err == nil {
		if _, serr := os.Lstat(path); serr == nil {
			err = fmt.Errorf("%s appeared meanwhile: %w", path, fs.ErrExist)
		} else {
			err = os.Rename(part, path)
		}
	}
	if err != nil {
		os.Remove(part)
		return 0, fmt.Errorf("export to %s: %w", path, err)
	}
	return lc.lines, nil
}

// lineCounter counts the newlines written through it.
type lineCounter struct {
	w     io.Writer
	lines int64
	line  func(lines int64)
}

func (c *lineCounter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	if k := int64(bytes.Count(p[:n], []byte{'\n'})); k > 0 {
		c.lines += k
		if c.line != nil {
			c.line(c.lines)
		}
	}
	return n, err
}

// freeName is dir/base+ext, or dir/base-2+ext, … whichever does not exist.
func freeName(dir, base, ext string) string {
	p := filepath.Join(dir, base+ext)
	for i := 2; i < 1000; i++ {
		_, err1 := os.Lstat(p)
		_, err2 := os.Lstat(p + ".part")
		if errors.Is(err1, fs.ErrNotExist) && errors.Is(err2, fs.ErrNotExist) {
			break
		}
		p = filepath.Join(dir, base+"-"+strconv.Itoa(i)+ext)
	}
	return p
}

// downloadDir is $XDG_DOWNLOAD_DIR (from the environment or
// ~/.config/user-dirs.dirs), else ~/Downloads when it exists, else home.
func downloadDir() string {
	home, _ := os.UserHomeDir()
	cand := os.Getenv("XDG_DOWNLOAD_DIR")
	if cand == "" && home != "" {
		cfg := os.Getenv("XDG_CONFIG_HOME")
		if cfg == "" {
			cfg = filepath.Join(home, ".config")
		}
		cand = userDirsDownload(filepath.Join(cfg, "user-dirs.dirs"), home)
	}
	for _, p := range []string{cand, filepath.Join(home, "Downloads")} {
		if fi, err := os.Stat(p); p != "" && filepath.IsAbs(p) && err == nil && fi.IsDir() {
			return p
		}
	}
	return home
}

// userDirsDownload reads XDG_DOWNLOAD_DIR="$HOME/…" from a user-dirs.dirs file.
func userDirsDownload(path, home string) string {
	data, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	for _, line := range strings.Split(string(data), "\n") {
		v, ok := strings.CutPrefix(strings.TrimSpace(line), "XDG_DOWNLOAD_DIR=")
		if !ok {
			continue
		}
		v = strings.Trim(v, `"`)
		if rest, ok := strings.CutPrefix(v, "$HOME"); ok {
			v = home + rest
		}
		return v
	}
	return ""
}

// ImportJob spools an export stream into the data dir (up to
// the API's MaxImportBody; sealed, see writeSpool), then imports it as a
// background job counting the bytes read; the spool file is removed when
// the job ends.
func (s *Service) ImportJob(ctx context.Context, r io.Reader) (jobs.Job, error) {
	if j, ok := s.o.Jobs.Running(KindImport); ok {
		return j, jobs.Busy(j)
	}
	sp, err := writeSpool(s.o.DataDir, r)
	if err != nil {
		return jobs.Job{}, fmt.Errorf("import: spool the upload: %w", err)
	}
	if sp.size == 0 {
		sp.remove()
		return jobs.Job{}, fmt.Errorf("import: %w: the import is empty", memory.ErrInvalid)
	}
	size := sp.size
	j, err := s.o.Jobs.Start(KindImport, "upload", jobs.UnitBytes, func(ctx context.Context, j *jobs.Task) (string, error) {
		defer sp.remove()
		in, err := sp.open()
		if err != nil {
			return "", fmt.Errorf("import: %w", err)
		}
		defer in.Close()
		j.Progress("checking", 0, size)
		pr := &readCounter{r: in, read: func(n int64) {
			status := "checking"
			if n >= size {
				status = "adding memories"
			}
			j.Progress(status, n, size)
		}}
		start := time.Now()
		rep, err := s.o.Stream.Import(ctx, pr)
		if err != nil {
			return "", err
		}
		s.o.Logger.Info("imported", "memories", rep.Imported, "of", rep.Total, "took", time.Since(start))
		return importSummary(rep), nil
	})
	if err != nil {
		sp.remove()
	}
	return j, err
}

// importSummary is the sentence an import job ends with.
func importSummary(rep store.ImportReport) string {
	s := fmt.Sprintf("imported %d of %d memories (%d already there", rep.Imported, rep.Total, rep.Duplicates)
	if rep.Reembedded > 0 {
		s += fmt.Sprintf(", %d re-embedded", rep.Reembedded)
	}
	if rep.Rewritten > 0 {
		s += fmt.Sprintf(", %d with secrets masked", rep.Rewritten)
	}
	return s + ")"
}

// readCounter reports the bytes read through it.
type readCounter struct {
	r    io.Reader
	n    int64
	read func(n int64)
}

func (c *readCounter) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	c.read(c.n)
	return n, err
}
