package wordvec

import (
	"cmp"
	"fmt"
	"math"
	"slices"
)

// Corpus accumulates tokenized text for Train: a word table with counts and
// the token stream as word ids (gaps marked), so the text is tokenized once.
type Corpus struct {
	ids    map[string]uint32
	words  []string
	counts []int64
	stream []uint32
	tokens int64
}

// gapID marks a break in the token stream (no window spans it).
const gapID = math.MaxUint32

// NewCorpus returns an empty corpus.
func NewCorpus() *Corpus { return &Corpus{ids: map[string]uint32{}} }

// Add tokenizes one document (see Tokens) and appends it to the corpus; a
// document boundary is a gap.
func (c *Corpus) Add(text string) {
	Tokens(text, func(w string) {
		if w == "" {
			c.gap()
			return
		}
		id, ok := c.ids[w]
		if !ok {
			id = uint32(len(c.words))
			c.ids[w] = id
			c.words = append(c.words, w)
			c.counts = append(c.counts, 0)
		}
		c.counts[id]++
		c.tokens++
		c.stream = append(c.stream, id)
	})
	c.gap()
}

func (c *Corpus) gap() {
	if n := len(c.stream); n > 0 && c.stream[n-1] != gapID {
		c.stream = append(c.stream, gapID)
	}
}

// Tokens returns the number of tokens added.
func (c *Corpus) Tokens() int64 { return c.tokens }

// Types returns the number of distinct words added.
func (c *Corpus) Types() int { return len(c.words) }

// Params are the training parameters.
type Params struct {
	// Window is how many tokens on each side count as context; a context
	// word at distance d weighs 1/d.
	Window int `json:"window"`
	// MaxVocab keeps the most frequent words; MinCount drops rarer ones.
	MaxVocab int `json:"max_vocab"`
	MinCount int `json:"min_count"`
	// Dim is the vector length (the SVD rank).
	Dim int `json:"dim"`
	// Oversample extra random directions and PowerIters power iterations
	// make the randomized SVD accurate.
	Oversample int `json:"oversample"`
	PowerIters int `json:"power_iters"`
	// ContextSmoothing is the exponent applied to context counts in PMI.
	ContextSmoothing float64 `json:"context_smoothing"`
	// EigenPower is the exponent of the singular values in U·S^p.
	EigenPower float64 `json:"eigen_power"`
	// Seed seeds the random test matrix.
	Seed uint64 `json:"seed"`
	// Workers bounds the parallelism of the matrix products (results do not
	// depend on it).
	Workers int `json:"-"`
}

// DefaultParams are the parameters of issue 9's prototype.
func DefaultParams() Params {
	return Params{Window: 5, MaxVocab: 80000, MinCount: 5, Dim: 300, Oversample: 20, PowerIters: 2,
		ContextSmoothing: 0.75, EigenPower: 0.5, Seed: 9, Workers: 2}
}

// Validate checks the parameters.
func (p Params) Validate() error {
	switch {
	case p.Window < 1 || p.Window > 50:
		return fmt.Errorf("wordvec: window %d out of 1..50", p.Window)
	case p.MaxVocab < 2 || p.MaxVocab > MaxWords:
		return fmt.Errorf("wordvec: max vocabulary %d out of 2..%d", p.MaxVocab, MaxWords)
	case p.MinCount < 1:
		return fmt.Errorf("wordvec: min count %d < 1", p.MinCount)
	case p.Dim < 1 || p.Dim > MaxDim:
		return fmt.Errorf("wordvec: dimension %d out of 1..%d", p.Dim, MaxDim)
	case p.Oversample < 0 || p.PowerIters < 0 || p.PowerIters > 10:
		return fmt.Errorf("wordvec: oversample %d / power iterations %d invalid", p.Oversample, p.PowerIters)
	case !(p.ContextSmoothing > 0 && p.ContextSmoothing <= 1):
		return fmt.Errorf("wordvec: context smoothing %v out of (0, 1]", p.ContextSmoothing)
	case !(p.EigenPower >= 0 && p.EigenPower <= 1):
		return fmt.Errorf("wordvec: eigen power %v out of [0, 1]", p.EigenPower)
	}
	return nil
}

// Stats describe a training run.
type Stats struct {
	Tokens    int64     `json:"tokens"`
	Types     int       `json:"types"`
	Vocab     int       `json:"vocab"`
	Pairs     int       `json:"cooccurrence_pairs"`
	NonZero   int       `json:"ppmi_nonzero"`
	TopSingle []float64 `json:"top_singular_values"`
}

// Train builds word vectors from the corpus: the vocabulary (the MaxVocab
// most frequent words seen at least MinCount times; ties by word), weighted
// co-occurrence counts within Window, PPMI with smoothed context counts, a
// seeded randomized truncated SVD, vectors U·S^EigenPower, L2-normalised and
// quantized to int8 with one scale per row. The result depends only on the
// corpus and the parameters.
func Train(c *Corpus, p Params) (*Model, Stats, error) {
	var st Stats
	if err := p.Validate(); err != nil {
		return nil, st, err
	}
	st.Tokens, st.Types = c.tokens, len(c.words)
	order := make([]uint32, 0, len(c.words))
	for id, n := range c.counts {
		if n >= int64(p.MinCount) && len(c.words[id]) <= MaxWordBytes {
			order = append(order, uint32(id))
		}
	}
	slices.SortFunc(order, func(a, b uint32) int {
		if x := cmp.Compare(c.counts[b], c.counts[a]); x != 0 {
			return x
		}
		return cmp.Compare(c.words[a], c.words[b])
	})
	if len(order) > p.MaxVocab {
		order = order[:p.MaxVocab]
	}
	V := len(order)
	st.Vocab = V
	if V < 2 {
		return nil, st, fmt.Errorf("wordvec: vocabulary of %d words is too small", V)
	}
	dim := min(p.Dim, V-1)
	remap := make([]int32, len(c.words))
	for i := range remap {
		remap[i] = -1
	}
	for r, id := range order {
		remap[id] = int32(r)
	}

	// Co-occurrences, upper triangle keyed (min, max).
	pairs := map[uint64]float32{}
	s := c.stream
	for i := range s {
		if s[i] == gapID {
			continue
		}
		a := remap[s[i]]
		if a < 0 {
			continue
		}
		for d := 1; d <= p.Window && i+d < len(s); d++ {
			if s[i+d] == gapID {
				break
			}
			b := remap[s[i+d]]
			if b < 0 {
				continue
			}
			lo, hi := a, b
			if lo > hi {
				lo, hi = hi, lo
			}
			pairs[uint64(lo)<<32|uint64(hi)] += 1 / float32(d)
		}
	}
	st.Pairs = len(pairs)
	keys := make([]uint64, 0, len(pairs))
	for k := range pairs {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	vals := make([]float32, len(keys))
	for i, k := range keys {
		vals[i] = pairs[k]
	}
	pairs = nil

	// Symmetric CSR of the counts.
	rowN := make([]int64, V+1)
	for _, k := range keys {
		lo, hi := int(k>>32), int(uint32(k))
		rowN[lo+1]++
		if lo != hi {
			rowN[hi+1]++
		}
	}
	for i := 0; i < V; i++ {
		rowN[i+1] += rowN[i]
	}
	nnz := rowN[V]
	cols := make([]uint32, nnz)
	xs := make([]float32, nnz)
	fill := slices.Clone(rowN[:V])
	for i, k := range keys {
		lo, hi := int(k>>32), uint32(k)
		v := vals[i]
		if int(hi) == lo {
			cols[fill[lo]], xs[fill[lo]] = hi, 2*v
			fill[lo]++
			continue
		}
		cols[fill[lo]], xs[fill[lo]] = hi, v
		fill[lo]++
		cols[fill[hi]], xs[fill[hi]] = uint32(lo), v
		fill[hi]++
	}
	keys, vals = nil, nil
	// Rows were filled with ascending columns: keys (a, i), a < i, come
	// before keys (i, b) in sorted order.

	// PPMI: log(X_ij * sum(c^α) / (r_i * c_j^α)), clipped at 0.
	rowSum := make([]float64, V)
	var total float64
	for i := 0; i < V; i++ {
		for k := rowN[i]; k < rowN[i+1]; k++ {
			rowSum[i] += float64(xs[k])
		}
		total += rowSum[i]
	}
	ctx := make([]float64, V) // symmetric: column sums = row sums
	var ctxTotal float64
	for j := range ctx {
		ctx[j] = math.Pow(rowSum[j], p.ContextSmoothing)
		ctxTotal += ctx[j]
	}
	m := &csr{rows: V, cols: V, ptr: make([]int64, V+1)}
	m.idx, m.val = cols[:0], xs[:0] // compact in place
	var w int64
	for i := 0; i < V; i++ {
		start := rowN[i]
		end := rowN[i+1]
		for k := start; k < end; k++ {
			j := cols[k]
			pmi := math.Log(float64(xs[k]) * ctxTotal / (rowSum[i] * ctx[j]))
			if pmi > 0 {
				cols[w], xs[w] = j, float32(pmi)
				w++
			}
		}
		m.ptr[i+1] = w
	}
	m.idx, m.val = cols[:w], xs[:w]
	st.NonZero = int(w)
	_ = total

	u, sv, err := randomizedSVD(m, dim, p.Oversample, p.PowerIters, p.Seed, max(p.Workers, 1))
	if err != nil {
		return nil, st, err
	}
	st.TopSingle = slices.Clone(sv[:min(5, len(sv))])

	model := &Model{dim: dim, words: make([]string, V), prob: make([]float32, V),
		scales: make([]float32, V), vecs: make([]byte, V*dim)}
	row := make([]float64, dim)
	for r, id := range order {
		model.words[r] = c.words[id]
		model.prob[r] = float32(float64(c.counts[id]) / float64(c.tokens))
		var n float64
		for k := 0; k < dim; k++ {
			row[k] = u[r*dim+k] * math.Pow(sv[k], p.EigenPower)
			n += row[k] * row[k]
		}
		if n == 0 {
			continue
		}
		n = math.Sqrt(n)
		var mx float64
		for k := range row {
			row[k] /= n
			mx = math.Max(mx, math.Abs(row[k]))
		}
		scale := mx / 127
		model.scales[r] = float32(scale)
		for k, x := range row {
			model.vecs[r*dim+k] = byte(int8(math.Round(x / scale)))
		}
	}
	if err := model.init(); err != nil {
		return nil, st, err
	}
	return model, st, nil
}
