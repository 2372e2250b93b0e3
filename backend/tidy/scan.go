package tidy

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"
)

// Report is the classification of a plans directory.
type Report struct {
	// Dir is the plans directory, absolute.
	Dir   string    `json:"dir"`
	Now   time.Time `json:"now"`
	Plans []Plan    `json:"plans"`
	// Summary counts Plans.
	Summary Summary `json:"summary"`
}

// Scan classifies the *.md files directly in dir (no recursion: archive/,
// .trash/ and other folders are left alone). Symlinks are reported and
// never followed; files over MaxFileBytes are reported and not read.
// opts.Current may be a file name or a path to a file in dir. When a
// destination in archive/ or .trash/ is taken already, the plan's Dest gets
// a free name "<stem>.N.md".
func Scan(dir string, opts Options) (Report, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return Report{}, fmt.Errorf("plans dir %s: %w", dir, err)
	}
	entries, err := os.ReadDir(abs)
	if err != nil {
		return Report{}, fmt.Errorf("read plans dir: %w", err)
	}
	var cur os.FileInfo
	if strings.ContainsAny(opts.Current, `/\`) {
		if fi, err := os.Stat(opts.Current); err == nil {
			cur = fi
		}
		opts.Current = ""
	}
	var files []File
	for _, e := range entries {
		name := e.Name()
		if !strings.HasSuffix(name, ".md") || name == ".md" {
			continue
		}
		fi, err := e.Info()
		if errors.Is(err, fs.ErrNotExist) {
			continue // gone since ReadDir
		}
		if err != nil {
			return Report{}, fmt.Errorf("stat %s: %w", name, err)
		}
		if fi.IsDir() {
			continue
		}
		if cur != nil && os.SameFile(cur, fi) {
			opts.Current = name
		}
		f, err := readFile(abs, name, fi)
		if err != nil {
			return Report{}, err
		}
		files = append(files, f)
	}
	plans := Classify(files, opts)
	for i := range plans {
		if plans[i].Dest != "" {
			plans[i].Dest = freeName(abs, plans[i].Dest, plans)
		}
	}
	return Report{Dir: abs, Now: opts.Now, Plans: plans, Summary: Summarize(plans)}, nil
}

// readFile reads one regular plan file, or describes why it is skipped.
func readFile(dir, name string, fi os.FileInfo) (File, error) {
	f := File{Name: name, Size: fi.Size(), ModTime: fi.ModTime()}
	switch {
	case fi.Mode()&fs.ModeSymlink != 0:
		f.Skip = "symlink: reported, never followed or moved"
		return f, nil
	case !fi.Mode().IsRegular():
		f.Skip = "not a regular file"
		return f, nil
	case fi.Size() > MaxFileBytes:
		f.Skip = fmt.Sprintf("larger than %d MiB: skipped", MaxFileBytes>>20)
		return f, nil
	}
	fh, err := os.Open(filepath.Join(dir, name))
	if err != nil {
		return f, fmt.Errorf("open %s: %w", name, err)
	}
	defer fh.Close()
	// The file must still be the one Lstat saw (not swapped for a symlink).
	if now, err := fh.Stat(); err != nil || !os.SameFile(now, fi) {
		f.Skip = "changed while scanning: skipped"
		return f, nil
	}
	f.Content, err = io.ReadAll(io.LimitReader(fh, MaxFileBytes+1))
	if err != nil {
		return f, fmt.Errorf("read %s: %w", name, err)
	}
	if len(f.Content) > MaxFileBytes {
		f.Content, f.Skip = nil, fmt.Sprintf("larger than %d MiB: skipped", MaxFileBytes>>20)
	}
	return f, nil
}

// freeName returns dest, or "<stem>.N.md" in the same folder when dest
// exists on disk already (a name no other plan goes to).
func freeName(dir, dest string, plans []Plan) string {
	exists := func(d string) bool {
		_, err := os.Lstat(filepath.Join(dir, filepath.FromSlash(d)))
		return err == nil
	}
	if !exists(dest) {
		return dest
	}
	folder, base := path.Split(dest)
	stem := strings.TrimSuffix(base, ".md")
	for n := 2; ; n++ {
		d := path.Join(folder, fmt.Sprintf("%s.%d.md", stem, n))
		if !exists(d) && !destOf(plans, d) {
			return d
		}
	}
}

func destOf(plans []Plan, d string) bool {
	for _, p := range plans {
		if p.Dest == d {
			return true
		}
	}
	return false
}
