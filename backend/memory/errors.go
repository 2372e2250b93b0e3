package memory

import (
	"errors"
	"strings"
)

// Sentinel errors shared across packages; wrap them with context and test
// with errors.Is.
var (
	// ErrNotFound: no memory has that id.
	ErrNotFound = errors.New("memory not found")
	// ErrModelMismatch: vectors of another embedding model or dimension.
	ErrModelMismatch = errors.New("embedding model mismatch")
	// ErrLocked: another process owns the store.
	ErrLocked = errors.New("store is locked by another process")
	// ErrInvalid: input failed validation.
	ErrInvalid = errors.New("invalid input")
	// ErrNewerFormat: data written by a newer memtray.
	ErrNewerFormat = errors.New("written by a newer version of memtray")
	// ErrUnavailable: a dependency (Ollama, the daemon) does not answer.
	ErrUnavailable = errors.New("unavailable")
)

// ValidationError lists every problem found in one input.
type ValidationError struct {
	Problems []string
}

// Error joins the problems.
func (e *ValidationError) Error() string {
	return "invalid: " + strings.Join(e.Problems, "; ")
}

// Is makes errors.Is(err, ErrInvalid) true.
func (e *ValidationError) Is(target error) bool { return target == ErrInvalid }
