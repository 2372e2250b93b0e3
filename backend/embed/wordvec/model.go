// Package wordvec holds memtray's own word vectors: the training pipeline
// (co-occurrence counts, PPMI, randomized truncated SVD, int8 quantization;
// see Train and cmd/trainvec), the model file format (Model.WriteTo, Load)
// and a SIF sentence encoder over the vectors (Model.Sentence).
//
// The file format, little-endian:
//
//	magic   "MTWV"
//	version uint32 (= 1)
//	words   uint32 (V, 1..MaxWords)
//	dim     uint32 (1..MaxDim)
//	V words, each: length uint8 (1..MaxWordBytes) + UTF-8 bytes, distinct
//	V x float32 unigram probabilities p(w) (finite, 0 < p <= 1)
//	V x float32 row scales (finite, >= 0)
//	V x dim int8 vector components (row-major)
//
// A row's vector is scale x its int8 components; rows are L2-normalised
// before quantization. Words are in descending frequency order.
package wordvec

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"unicode/utf8"
)

// Magic opens every model file.
const Magic = "MTWV"

// Version is the model file format version.
const Version = 1

// Bounds on a model file, checked by Load.
const (
	MaxWords = 1 << 20
	MaxDim   = 4096
)

// DefaultSIF is the SIF smoothing constant a in a/(a+p(w)).
const DefaultSIF = 1e-4

// Model is a set of int8-quantized word vectors with unigram probabilities.
// It is immutable after Load or Train and safe for concurrent use.
type Model struct {
	words  []string
	index  map[string]int32
	prob   []float32
	scales []float32
	// vecs holds the int8 components, two's complement, row-major.
	vecs []byte
	dim  int
	// weight is the SIF weight a/(a+p(w)) x the row scale, per word.
	weight []float32
	a      float64
}

// Dim returns the vector length.
func (m *Model) Dim() int { return m.dim }

// Len returns the vocabulary size.
func (m *Model) Len() int { return len(m.words) }

// Words returns the vocabulary in descending frequency order (the model's
// own slice: do not modify it).
func (m *Model) Words() []string { return m.words }

// Lookup returns the index of word, or -1 when it is not in the vocabulary.
func (m *Model) Lookup(word string) int {
	if i, ok := m.index[word]; ok {
		return int(i)
	}
	return -1
}

// Vector returns the dequantized vector of word i (0 <= i < Len) in dst
// (grown as needed).
func (m *Model) Vector(i int, dst []float32) []float32 {
	dst = append(dst[:0], make([]float32, m.dim)...)
	s := m.scales[i]
	row := m.vecs[i*m.dim : (i+1)*m.dim]
	for k, q := range row {
		dst[k] = s * float32(int8(q))
	}
	return dst
}

// Prob returns the unigram probability of word i.
func (m *Model) Prob(i int) float64 { return float64(m.prob[i]) }

// SetSIF sets the SIF smoothing constant a (> 0; default DefaultSIF). It is
// not safe to call concurrently with Sentence.
func (m *Model) SetSIF(a float64) error {
	if !(a > 0) || math.IsInf(a, 0) {
		return fmt.Errorf("wordvec: SIF constant %v is not positive", a)
	}
	m.a = a
	m.weight = make([]float32, len(m.words))
	for i, p := range m.prob {
		m.weight[i] = float32(a/(a+float64(p))) * m.scales[i]
	}
	return nil
}

// Sentence returns the SIF embedding of text: the average of the (unit)
// vectors of its in-vocabulary tokens (see Tokens), each weighted
// a/(a+p(w)), L2-normalised. Out-of-vocabulary tokens are skipped; a text
// without any known token gives the zero vector.
func (m *Model) Sentence(text string) []float32 {
	acc := make([]float32, m.dim)
	m.accumulate(text, acc)
	normalize(acc)
	return acc
}

// Known reports how many of text's tokens are in the vocabulary, and how
// many tokens it has.
func (m *Model) Known(text string) (known, total int) {
	Tokens(text, func(w string) {
		if w == "" {
			return
		}
		total++
		if _, ok := m.index[w]; ok {
			known++
		}
	})
	return known, total
}

func (m *Model) accumulate(text string, acc []float32) {
	Tokens(text, func(w string) {
		if w == "" {
			return
		}
		i, ok := m.index[w]
		if !ok {
			return
		}
		wt := m.weight[i]
		row := m.vecs[int(i)*m.dim : (int(i)+1)*m.dim]
		for k, q := range row {
			acc[k] += wt * float32(int8(q))
		}
	})
}

func normalize(v []float32) {
	var n float64
	for _, x := range v {
		n += float64(x) * float64(x)
	}
	if n == 0 {
		return
	}
	inv := float32(1 / math.Sqrt(n))
	for k := range v {
		v[k] *= inv
	}
}

// newModel builds the lookup structures of a model whose fields are set.
func (m *Model) init() error {
	m.index = make(map[string]int32, len(m.words))
	for i, w := range m.words {
		if _, dup := m.index[w]; dup {
			return fmt.Errorf("wordvec: word %q is repeated", w)
		}
		m.index[w] = int32(i)
	}
	return m.SetSIF(DefaultSIF)
}

// WriteTo writes the model in the file format described in the package
// documentation.
func (m *Model) WriteTo(w io.Writer) (int64, error) {
	bw := bufio.NewWriterSize(w, 1<<20)
	var n int64
	put := func(b []byte) {
		k, _ := bw.Write(b)
		n += int64(k)
	}
	var u [4]byte
	put([]byte(Magic))
	for _, x := range []uint32{Version, uint32(len(m.words)), uint32(m.dim)} {
		binary.LittleEndian.PutUint32(u[:], x)
		put(u[:])
	}
	for _, wd := range m.words {
		put([]byte{byte(len(wd))})
		put([]byte(wd))
	}
	for _, arr := range [][]float32{m.prob, m.scales} {
		for _, f := range arr {
			binary.LittleEndian.PutUint32(u[:], math.Float32bits(f))
			put(u[:])
		}
	}
	put(m.vecs)
	if err := bw.Flush(); err != nil {
		return n, fmt.Errorf("wordvec: write model: %w", err)
	}
	return n, nil
}

// errFormat marks a malformed model file.
var errFormat = errors.New("wordvec: malformed model file")

// Load reads a model written by WriteTo (see LoadBytes, which validates
// it). Trailing bytes are an error.
func Load(r io.Reader) (*Model, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", errFormat, err)
	}
	return LoadBytes(data)
}

// LoadBytes reads a model written by WriteTo from memory, validating the
// magic, version, sizes, words, probabilities and scales; trailing bytes
// are an error. The model's vectors are data's own bytes, not a copy (the
// shipped model loads without copying or parsing them): data must not be
// modified afterwards.
func LoadBytes(data []byte) (*Model, error) {
	d := modelReader{data: data}
	hdr, err := d.next(16, "header")
	if err != nil {
		return nil, err
	}
	if string(hdr[:4]) != Magic {
		return nil, fmt.Errorf("%w: bad magic %q", errFormat, hdr[:4])
	}
	if v := binary.LittleEndian.Uint32(hdr[4:]); v != Version {
		return nil, fmt.Errorf("%w: version %d, want %d", errFormat, v, Version)
	}
	nw := int(binary.LittleEndian.Uint32(hdr[8:]))
	dim := int(binary.LittleEndian.Uint32(hdr[12:]))
	if nw == 0 || nw > MaxWords {
		return nil, fmt.Errorf("%w: %d words (want 1..%d)", errFormat, nw, MaxWords)
	}
	if dim == 0 || dim > MaxDim {
		return nil, fmt.Errorf("%w: dimension %d (want 1..%d)", errFormat, dim, MaxDim)
	}
	// The rest must hold at least a byte per word and the fixed-size
	// arrays, so a lying header cannot make us allocate more than the input
	// holds.
	if rest := len(data) - d.off; rest < nw*(2+8)+nw*dim {
		return nil, fmt.Errorf("%w: %d bytes after the header cannot hold %d words x %d dims", errFormat, rest, nw, dim)
	}
	m := &Model{dim: dim}
	if m.words, err = d.words(nw); err != nil {
		return nil, err
	}
	if m.prob, err = d.float32s(nw, "probability", func(f float32) bool { return f > 0 && f <= 1 }); err != nil {
		return nil, err
	}
	if m.scales, err = d.float32s(nw, "scale", func(f float32) bool { return f >= 0 && f < 1 }); err != nil {
		return nil, err
	}
	if m.vecs, err = d.next(nw*dim, "vectors"); err != nil {
		return nil, err
	}
	if d.off != len(data) {
		return nil, fmt.Errorf("%w: trailing bytes after the vectors", errFormat)
	}
	if err := m.init(); err != nil {
		return nil, fmt.Errorf("%w: %w", errFormat, err)
	}
	return m, nil
}

// modelReader reads a model file's parts from memory.
type modelReader struct {
	data []byte
	off  int
}

// next returns the next n bytes (data's own), or an error naming what was
// cut short.
func (d *modelReader) next(n int, what string) ([]byte, error) {
	if n > len(d.data)-d.off {
		return nil, fmt.Errorf("%w: %s: %w", errFormat, what, io.ErrUnexpectedEOF)
	}
	b := d.data[d.off : d.off+n : d.off+n]
	d.off += n
	return b, nil
}

// words reads n length-prefixed UTF-8 words.
func (d *modelReader) words(n int) ([]string, error) {
	out := make([]string, 0, n)
	for i := range n {
		if d.off >= len(d.data) {
			return nil, fmt.Errorf("%w: word %d: %w", errFormat, i, io.ErrUnexpectedEOF)
		}
		l := int(d.data[d.off])
		if l == 0 || l > MaxWordBytes {
			return nil, fmt.Errorf("%w: word %d has length %d (want 1..%d)", errFormat, i, l, MaxWordBytes)
		}
		if l > len(d.data)-d.off-1 {
			return nil, fmt.Errorf("%w: word %d: %w", errFormat, i, io.ErrUnexpectedEOF)
		}
		w := d.data[d.off+1 : d.off+1+l]
		if !utf8.Valid(w) {
			return nil, fmt.Errorf("%w: word %d is not UTF-8", errFormat, i)
		}
		out = append(out, string(w))
		d.off += 1 + l
	}
	return out, nil
}

// float32s reads n little-endian float32s, each of which must pass ok.
func (d *modelReader) float32s(n int, what string, ok func(float32) bool) ([]float32, error) {
	b, err := d.next(4*n, what+"s")
	if err != nil {
		return nil, err
	}
	out := make([]float32, n)
	for i := range out {
		f := math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
		if !ok(f) {
			return nil, fmt.Errorf("%w: %s %d is %v", errFormat, what, i, f)
		}
		out[i] = f
	}
	return out, nil
}
