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
	//go:embed model/wordvec.bin.gz
	vectorsGz []byte
	//go:embed model/thesaurus.txt.gz
	thesaurusGz []byte
)

var (
	builtinVectors   = sync.OnceValues(func() (*Model, error) { return loadGz(vectorsGz, Load) })
	builtinThesaurus = sync.OnceValues(func() (*Thesaurus, error) { return loadGz(thesaurusGz, LoadThesaurus) })
)

// Builtin returns the word vectors shipped in the binary. The first call
// decompresses and loads them (well under a second); later calls return
// the same model.
func Builtin() (*Model, error) { return builtinVectors() }

// BuiltinThesaurus returns the WordNet thesaurus shipped in the binary,
// loaded on first use like Builtin.
func BuiltinThesaurus() (*Thesaurus, error) { return builtinThesaurus() }

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
