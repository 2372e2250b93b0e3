package embed

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/memtray/memtray/backend/embed/wordvec"
)

// LexicalModel names the lexical embedder's output (the built-in model of
// memtray before word vectors; stores embedded with it keep working). The
// version suffix changes whenever the vectors change, because a store
// records the model of its vectors and refuses to mix them.
const LexicalModel = "builtin-hash-v2"

// LexicalDim is the length of the lexical embedder's vectors.
const LexicalDim = 256

// Lexical is memtray's hashing embedder: signed feature hashing (64-bit
// FNV-1a finalised with splitmix64; the low bit is the sign) of
//
//   - character 3..5-grams of each word, with boundary marks ("^word$"),
//     together weighing 1 per word: they carry most of the vector, so
//     inflections, compounds and typos still meet ("retried"/"retries");
//   - the word itself (lowercased, lightly stemmed, stop words dropped) at 0.3;
//   - whole identifiers (credit_ledger, httpx.WriteProblem, HBR-E1042) at 1,
//     besides their parts (camelCase, snake_case, dotted, paths and
//     kebab-case are split),
//
// with sublinear term frequency (1 + ln tf), L2-normalised. It needs no
// network and no model file, is deterministic, and is safe for concurrent
// use. It is good at near-duplicates and lexical overlap, not at paraphrase:
// Builtin adds word vectors to it.
//
// The weights were chosen on ../shared/eval/recall-dev.json and LoCoMo: with
// words dominant, the vector leg was a noisier copy of BM25 and hybrid search
// fell below BM25 alone; with character n-grams dominant it adds what BM25's
// exact stems miss. Word bigrams did not help retrieval and were dropped.
// 256 dimensions: hashing noise in a cosine is about 1/sqrt(dim), and 512
// measured better for the vector leg alone, but the exact scan over 100k
// memories costs twice as much and hybrid results did not improve reliably.
type Lexical struct {
	dim int
}

// NewLexical returns the lexical embedder.
func NewLexical() *Lexical { return &Lexical{dim: LexicalDim} }

// Model returns LexicalModel.
func (b *Lexical) Model() string { return LexicalModel }

// Dim returns LexicalDim.
func (b *Lexical) Dim() int { return b.dim }

// Embed returns one L2-normalised vector per text. A text with no usable
// token gets the zero vector. Invalid UTF-8 is an error.
func (b *Lexical) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	var f featurizer
	for i, t := range texts {
		if i%64 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, fmt.Errorf("builtin embed: %w", err)
			}
		}
		if !utf8.ValidString(t) {
			return nil, fmt.Errorf("builtin embed: text %d is not valid UTF-8", i)
		}
		out[i] = f.vector(t, b.dim, nil)
	}
	return out, nil
}

// EmbedOne embeds a single text; a convenience for callers and tests.
func (b *Lexical) EmbedOne(text string) []float32 {
	var f featurizer
	return f.vector(text, b.dim, nil)
}

// EmbedWeighted embeds a query with a weight per token, so that a search can
// weight the query's words by their inverse document frequency in the store
// (documents are embedded without weights: the dot product then weighs each
// shared feature by the rarity of the query word it came from, as BM25 does).
// weight receives each lowercased token: whole identifiers ("credit_ledger")
// and their parts ("credit", "ledger"); a weight <= 0 drops the token. A nil
// weight gives Embed's vector.
func (b *Lexical) EmbedWeighted(ctx context.Context, text string, weight func(token string) float64) ([]float32, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("builtin embed: %w", err)
	}
	if !utf8.ValidString(text) {
		return nil, fmt.Errorf("builtin embed: text is not valid UTF-8")
	}
	var f featurizer
	return f.vector(text, b.dim, weight), nil
}

// Feature weights (see Builtin).
const (
	wWord     = 0.3
	wIdent    = 1.0
	wCharGram = 1.0 // per word, spread over its n-grams
)

// Feature kinds, mixed into the hash so equal strings of different kinds do
// not share a bucket.
const (
	kindWord  = 1
	kindIdent = 2
	kindGram  = 4
)

type feature struct {
	h uint64
	w float32
}

// featurizer holds reusable buffers; it is not safe for concurrent use, so
// Embed makes one per call.
type featurizer struct {
	feats []feature
	runes []rune
}

// vector embeds text. weight, if not nil, scales the features of each token
// (whole identifiers and their parts alike); a weight <= 0 drops the token.
func (f *featurizer) vector(text string, dim int, weight func(token string) float64) []float32 {
	f.feats = f.feats[:0]
	wt := func(s string) float32 {
		if weight == nil {
			return 1
		}
		w := weight(s)
		if !(w > 0) || math.IsInf(w, 0) {
			return 0
		}
		return float32(w)
	}
	forEachToken(text, func(whole string, parts []string) {
		if len(parts) > 1 {
			if w := wt(whole); w > 0 {
				f.add(kindIdent, whole, wIdent*w)
			}
		}
		for _, p := range parts {
			w := float32(0)
			if !isStopword(p) {
				w = wt(p)
			}
			if w == 0 {
				continue
			}
			f.add(kindWord, stem(p), wWord*w)
			f.charGrams(p, w)
		}
	})
	vec := make([]float32, dim)
	if len(f.feats) == 0 {
		return vec
	}
	slices.SortFunc(f.feats, func(x, y feature) int {
		switch {
		case x.h < y.h:
			return -1
		case x.h > y.h:
			return 1
		}
		return 0
	})
	for i := 0; i < len(f.feats); {
		j := i
		for j < len(f.feats) && f.feats[j].h == f.feats[i].h {
			j++
		}
		h := f.feats[i].h
		w := f.feats[i].w * (1 + float32(math.Log(float64(j-i))))
		idx := int((h >> 1) % uint64(dim))
		if h&1 == 1 {
			w = -w
		}
		vec[idx] += w
		i = j
	}
	var norm float64
	for _, v := range vec {
		norm += float64(v) * float64(v)
	}
	if norm == 0 {
		return vec
	}
	inv := float32(1 / math.Sqrt(norm))
	for i := range vec {
		vec[i] *= inv
	}
	return vec
}

func (f *featurizer) add(kind byte, s string, w float32) {
	h := fnvByte(fnvOffset, kind)
	h = fnvString(h, s)
	f.feats = append(f.feats, feature{mix(h), w})
}

// charGrams adds the 3..5-grams of "^word$", together weighing wCharGram.
func (f *featurizer) charGrams(word string, scale float32) {
	f.runes = f.runes[:0]
	f.runes = append(f.runes, '^')
	for _, r := range word {
		f.runes = append(f.runes, r)
	}
	f.runes = append(f.runes, '$')
	n := len(f.runes)
	total := 0
	for g := 3; g <= 5; g++ {
		if n >= g {
			total += n - g + 1
		}
	}
	if total == 0 {
		return
	}
	w := scale * float32(wCharGram/math.Sqrt(float64(total)))
	for g := 3; g <= 5; g++ {
		for i := 0; i+g <= n; i++ {
			h := fnvByte(fnvOffset, kindGram)
			for _, r := range f.runes[i : i+g] {
				h = fnvRune(h, r)
			}
			f.feats = append(f.feats, feature{mix(h), w})
		}
	}
}

const (
	fnvOffset = 14695981039346656037
	fnvPrime  = 1099511628211
)

func fnvByte(h uint64, c byte) uint64 { return (h ^ uint64(c)) * fnvPrime }

func fnvString(h uint64, s string) uint64 {
	for i := 0; i < len(s); i++ {
		h = (h ^ uint64(s[i])) * fnvPrime
	}
	return h
}

func fnvRune(h uint64, r rune) uint64 {
	if r < utf8.RuneSelf {
		return fnvByte(h, byte(r))
	}
	var buf [4]byte
	n := utf8.EncodeRune(buf[:], r)
	for _, c := range buf[:n] {
		h = fnvByte(h, c)
	}
	return h
}

// mix finalises an FNV hash (splitmix64) so low bits are well distributed.
func mix(h uint64) uint64 {
	h ^= h >> 30
	h *= 0xbf58476d1ce4e5b9
	h ^= h >> 27
	h *= 0x94d049bb133111eb
	h ^= h >> 31
	return h
}

// isTokenRune reports whether r belongs inside a raw token.
func isTokenRune(r rune) bool {
	return unicode.IsLetter(r) || unicode.IsDigit(r) || r == '_' || wordvec.IsJoiner(r)
}

// forEachToken splits text into raw tokens (runs of letters, digits and
// identifier punctuation, trimmed of joiners at the ends) and calls fn with
// the lowercased whole token and its lowercased parts: split at joiners, at
// underscores and at camelCase boundaries.
func forEachToken(text string, fn func(whole string, parts []string)) {
	var parts []string
	i := 0
	for i < len(text) {
		r, size := utf8.DecodeRuneInString(text[i:])
		if !isTokenRune(r) {
			i += size
			continue
		}
		j := i
		for j < len(text) {
			r2, s2 := utf8.DecodeRuneInString(text[j:])
			if !isTokenRune(r2) {
				break
			}
			j += s2
		}
		raw := strings.TrimFunc(text[i:j], func(r rune) bool { return wordvec.IsJoiner(r) || r == '_' })
		i = j
		if raw == "" {
			continue
		}
		parts = splitIdent(raw, parts[:0])
		if len(parts) == 0 {
			continue
		}
		fn(strings.ToLower(raw), parts)
	}
}

// splitIdent appends the lowercased parts of an identifier-like token,
// split as wordvec.SplitIdent splits them.
func splitIdent(tok string, parts []string) []string {
	wordvec.SplitIdent([]rune(tok), func(p []rune) { parts = append(parts, strings.ToLower(string(p))) })
	return parts
}

// stem strips a few English suffixes so plural and inflected forms meet.
// Character n-grams cover what it misses.
func stem(w string) string {
	n := len(w)
	switch {
	case n > 4 && strings.HasSuffix(w, "ies"):
		w = w[:n-3] + "y"
	case n > 4 && strings.HasSuffix(w, "sses"):
		w = w[:n-2]
	case n > 3 && strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "ss") &&
		!strings.HasSuffix(w, "us") && !strings.HasSuffix(w, "is"):
		w = w[:n-1]
	}
	n = len(w)
	switch {
	case n > 5 && strings.HasSuffix(w, "ing"):
		w = undouble(w[:n-3])
	case n > 4 && strings.HasSuffix(w, "ed"):
		w = undouble(w[:n-2])
	}
	if len(w) > 4 && strings.HasSuffix(w, "e") {
		w = w[:len(w)-1]
	}
	return w
}

func undouble(w string) string {
	n := len(w)
	if n > 3 && w[n-1] == w[n-2] && w[n-1] != 'l' && w[n-1] != 's' && w[n-1] != 'z' {
		return w[:n-1]
	}
	return w
}

var stopwords = func() map[string]struct{} {
	m := map[string]struct{}{}
	for _, w := range strings.Fields(`a about above after again against all am an and any are as at be
		because been before being below between both but by can could did do does doing down during
		each few for from further had has have having he her here hers herself him himself his how i
		if in into is it its itself just me more most my myself no nor not now of off on once only or
		other our ours ourselves out over own same she should so some such than that the their theirs
		them themselves then there these they this those through to too under until up very was we
		were what when where which while who whom why will with would you your yours yourself
		yourselves s t don't isn't can't won't also us via e g ie eg etc let`) {
		m[w] = struct{}{}
	}
	return m
}()

func isStopword(w string) bool {
	_, ok := stopwords[w]
	return ok
}
