package mcp

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf8"
)

// document checks memory_ingest's arguments and returns the document's
// name and text: the file at Path, or Text under Name.
func (a *IngestArgs) document() (name, text string, err error) {
	hasPath, hasText := a.Path != "", a.Text != ""
	var errs []string
	switch {
	case hasPath && hasText:
		errs = append(errs, "give either path or text, not both")
	case !hasPath && !hasText:
		errs = append(errs, "give path (a local file) or text (with a name) to ingest")
	case hasText && strings.TrimSpace(a.Text) == "":
		errs = append(errs, "text is empty")
	case hasText && strings.TrimSpace(a.Name) == "":
		errs = append(errs, "name is required with text: say what the document is (e.g. \"ADR-12 caching\")")
	case hasText && len(a.Text) > MaxFileBytes:
		errs = append(errs, fmt.Sprintf("text is longer than %d bytes", MaxFileBytes))
	}
	if len(a.Name) > 200 {
		errs = append(errs, "name is longer than 200 bytes")
	}
	errs = append(errs, checkProject(a.Project)...)
	errs = append(errs, checkUTF8("text", a.Text)...)
	errs = append(errs, checkUTF8("name", a.Name)...)
	if err := joined(errs); err != nil {
		return "", "", err
	}
	if hasText {
		return strings.TrimSpace(a.Name), a.Text, nil
	}
	text, err = readDocument(a.Path)
	if err != nil {
		return "", "", err
	}
	name = strings.TrimSpace(a.Name)
	if name == "" {
		name = filepath.Base(a.Path)
	}
	return name, text, nil
}

// readDocument reads a regular UTF-8 text file of at most MaxFileBytes.
// The path must be absolute: memtray's daemon reads it, and its working
// directory is not the agent's.
func readDocument(path string) (string, error) {
	if !utf8.ValidString(path) || strings.ContainsRune(path, 0) {
		return "", badArgs("path is not a valid file name")
	}
	if !filepath.IsAbs(path) {
		return "", badArgs("path %q is relative: give an absolute path (memtray does not share your working directory)", path)
	}
	fi, err := os.Stat(path)
	if err != nil {
		return "", pathError(path, err)
	}
	if !fi.Mode().IsRegular() {
		return "", fmt.Errorf("path %q is not a regular file (%s)", path, describeMode(fi.Mode()))
	}
	if fi.Size() > MaxFileBytes {
		return "", fmt.Errorf("file %q is %d bytes: at most %d (1 MiB) can be ingested; split it or pass the relevant part as text", path, fi.Size(), MaxFileBytes)
	}
	f, err := os.Open(path)
	if err != nil {
		return "", pathError(path, err)
	}
	defer f.Close()
	// The file may have changed between Stat and Open: check what was opened.
	if fi2, err := f.Stat(); err != nil || !fi2.Mode().IsRegular() || !os.SameFile(fi, fi2) {
		return "", fmt.Errorf("file %q changed while it was being opened; try again", path)
	}
	data, err := io.ReadAll(io.LimitReader(f, MaxFileBytes+1))
	if err != nil {
		return "", fmt.Errorf("read %q: %w", path, err)
	}
	if len(data) > MaxFileBytes {
		return "", fmt.Errorf("file %q is larger than %d bytes (1 MiB)", path, MaxFileBytes)
	}
	if !utf8.Valid(data) || strings.ContainsRune(string(data), 0) {
		return "", fmt.Errorf("file %q is not UTF-8 text", path)
	}
	if strings.TrimSpace(string(data)) == "" {
		return "", fmt.Errorf("file %q is empty", path)
	}
	return string(data), nil
}

func pathError(path string, err error) error {
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("no file at %q", path)
	case errors.Is(err, fs.ErrPermission):
		return fmt.Errorf("memtray may not read %q (permission denied)", path)
	}
	return fmt.Errorf("open %q: %w", path, err)
}

func describeMode(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeDevice != 0:
		return "a device"
	}
	return "mode " + m.String()
}
