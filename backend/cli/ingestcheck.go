package cli

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/memtray/memtray/backend/ingest"
	"github.com/memtray/memtray/backend/transcript"
)

// validateInputs reads and parses every input as the ingest will (load),
// keeping nothing, before anything is sent: a malformed or unreadable
// input stops the run with nothing stored, and the error names the file,
// the line where it can be told, and what to do. Each input is let go
// before the next is read, so the check takes the memory of the largest
// input, as the ingest does; the cost is a second read and parse of every
// file, small beside the ingest's (every turn distilled, embedded and
// deduplicated).
func validateInputs(inputs []ingestInput, project string, opts transcript.Options) error {
	for i := range inputs {
		in := inputs[i] // a copy: load notes a warning on its input
		if _, _, _, _, err := in.load(io.Discard, project, opts); err != nil {
			return &invalidInputError{name: in.name, err: err, inputs: len(inputs)}
		}
	}
	return nil
}

// invalidInputError is validateInputs' error: an input that cannot be
// ingested, found before anything was sent.
type invalidInputError struct {
	name   string
	err    error
	inputs int
}

func (e *invalidInputError) Error() string {
	what := "it"
	if e.inputs > 1 {
		what = fmt.Sprintf("any of the %d inputs", e.inputs)
	}
	msg := e.err.Error()
	if !strings.Contains(msg, e.name) {
		msg = e.name + ": " + msg
	}
	return fmt.Sprintf("%s\nnothing was ingested: every input is read before %s is sent; fix %s (or leave it out) and run the command again", msg, what, e.name)
}

func (e *invalidInputError) Unwrap() error { return e.err }

// partialIngest is the error of an ingest that failed (err) after the
// inputs done were ingested whole: it names them and says that running the
// same command again stores nothing twice (a turn of a session decided
// before is skipped by its turn marks, a text already stored is a
// duplicate of it, a document already stored too), so the user need not
// pick out what is left. flags are the --data-dir and --config of the
// store (flagsForHint).
func partialIngest(err error, done []ingestInput, flags string) error {
	again := fmt.Sprintf("once the cause is fixed, run the same command again: what is stored already is not stored twice (`memtray decisions%s` shows what was decided)", flags)
	if len(done) == 0 {
		return fmt.Errorf("%w\nwhat was sent of it before the failure is stored; %s", err, again)
	}
	names := make([]string, len(done))
	for i, in := range done {
		names[i] = in.name
	}
	return fmt.Errorf("%w\nthe %s before it %s ingested whole (%s), and what was sent of it is stored; %s",
		err, nOf(len(done), "input"), wasWere(len(done)), strings.Join(names, ", "), again)
}

// wasWere is "was" for one, "were" for more.
func wasWere(n int) string {
	if n == 1 {
		return "was"
	}
	return "were"
}

// documentError says why data cannot be a document input (name): larger
// than ingest.MaxTextBytes, or not text (a byte that is not UTF-8, or
// NUL), naming the line and column of the first such byte; nil when it
// can.
func documentError(name string, data []byte) error {
	if len(data) > ingest.MaxTextBytes {
		return fmt.Errorf("%s: a document must be at most 1 MiB of UTF-8 text; it holds %d bytes (cut it into parts, or give an agent's session file as it is)", name, len(data))
	}
	if line, col := notTextAt(data); line > 0 {
		return fmt.Errorf("%s: line %d, column %d: not UTF-8 text (a document must be at most 1 MiB of UTF-8 text: convert it, e.g. with iconv)", name, line, col)
	}
	return nil
}

// notTextAt is the line (from 1) and column (byte, from 1) of the first
// byte of data that is not UTF-8 or is NUL (memory.ValidUTF8); 0, 0 when
// there is none.
func notTextAt(data []byte) (line, col int) {
	for off := 0; off < len(data); {
		r, n := utf8.DecodeRune(data[off:])
		if (r == utf8.RuneError && n <= 1) || r == 0 {
			start := bytes.LastIndexByte(data[:off], '\n') + 1
			return bytes.Count(data[:off], []byte{'\n'}) + 1, off - start + 1
		}
		off += n
	}
	return 0, 0
}
