package wordvec

import (
	"bytes"
	"compress/gzip"
	_ "embed"
	"fmt"
	"io"
	"sync"
)

// The model and thesaurus `make model` trains (cmd/trainvec), shipped in
// the binary; model/manifest.json says what they were made from.
var (
	// The vectors are not compressed: LoadBytes reads them in place, where
	// decompressing them cost every process 0.3 s of CPU (2 s under the race
	// detector) for 6 % less size (see docs/benchmarks.md, exp-wvload).
	//
	//go:embed model/wordvec.bin
	vectorsBin []byte
	//go:embed model/thesaurus.txt.gz
	thesaurusGz []byte
)

var (
	builtinVectors   = sync.OnceValues(func() (*Model, error) { return loadBuiltin(vectorsBin) })
	builtinThesaurus = sync.OnceValues(func() (*Thesaurus, error) { return loadGz(thesaurusGz, LoadThesaurus) })
)

// Builtin returns the word vectors shipped in the binary. The first call
// loads them (their words into a map; the vectors are used in place);
// later calls return the same model.
func Builtin() (*Model, error) { return builtinVectors() }

// BuiltinThesaurus returns the WordNet thesaurus shipped in the binary,
// loaded on first use like Builtin.
func BuiltinThesaurus() (*Thesaurus, error) { return builtinThesaurus() }

func loadBuiltin(bin []byte) (*Model, error) {
	m, err := LoadBytes(bin)
	if err != nil {
		return nil, fmt.Errorf("wordvec: built-in data: %w", err)
	}
	return m, nil
}

func loadGz[T any](gz []byte, load func(io.Reader) (T, error)) (T, error) {
	var zero T
	zr, err := gzip.NewReader(bytes.NewReader(gz))
	if err != nil {
		return zero, fmt.Errorf("wordvec: built-in data: %w", err)
	}
	v, err := load(zr)
	if err != nil {
		return zero, fmt.Errorf("wordvec: built-in data: %w", err)
	}
	return v, nil
}
