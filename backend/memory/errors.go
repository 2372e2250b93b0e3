package memory

import (
	"errors"
	"slices"
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

// FieldErrors is invalid input with a problem per field (the API answers
// it with 400 and the fields); it matches ErrInvalid.
type FieldErrors struct {
	Message string
	Fields  map[string]string
	// Whole says Message already lists the fields (an error read off the
	// wire).
	Whole bool
}

// Error lists the fields' problems.
func (e *FieldErrors) Error() string {
	if e.Whole {
		return e.Message
	}
	keys := make([]string, 0, len(e.Fields))
	for k := range e.Fields {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + ": " + e.Fields[k]
	}
	msg := e.Message
	if msg == "" {
		msg = "invalid input"
	}
	if len(parts) == 0 {
		return msg
	}
	return msg + ": " + strings.Join(parts, "; ")
}

// Is makes errors.Is(err, ErrInvalid) true.
func (e *FieldErrors) Is(target error) bool { return target == ErrInvalid }
