package wordvec

import (
	_ "embed"
	"fmt"
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
	// The thesaurus is not compressed either: ParseThesaurus validates it
	// and searches its sorted lines in place, where decompressing it and
	// parsing it into a map cost every first search 0.25 s of CPU (1 s
	// under the race detector; see docs/benchmarks.md, exp-speed).
	//
	//go:embed model/thesaurus.txt
	thesaurusTxt string
)

var (
	builtinVectors   = sync.OnceValues(func() (*Model, error) { return loadBuiltin(vectorsBin) })
	builtinThesaurus = sync.OnceValues(func() (*Thesaurus, error) { return loadBuiltinThesaurus(thesaurusTxt) })
)

// Builtin returns the word vectors shipped in the binary. The first call
// loads them (their words into a map; the vectors are used in place);
// later calls return the same model.
func Builtin() (*Model, error) { return builtinVectors() }

// BuiltinThesaurus returns the WordNet thesaurus shipped in the binary,
// loaded on first use like Builtin (validated and indexed; its entries are
// read in place).
func BuiltinThesaurus() (*Thesaurus, error) { return builtinThesaurus() }

func loadBuiltin(bin []byte) (*Model, error) {
	m, err := LoadBytes(bin)
	if err != nil {
		return nil, fmt.Errorf("wordvec: built-in data: %w", err)
	}
	return m, nil
}

func loadBuiltinThesaurus(txt string) (*Thesaurus, error) {
	t, err := ParseThesaurus(txt)
	if err != nil {
		return nil, fmt.Errorf("wordvec: built-in data: %w", err)
	}
	return t, nil
}
