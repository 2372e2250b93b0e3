package wordvec

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// tinyCorpus generates sentences in which words of the same group share
// contexts: "the cat sleeps on the mat", "the dog sleeps on the rug", ...
func tinyCorpus() *Corpus {
	groups := [][]string{
		{"cat", "dog", "kitten", "puppy"},
		{"database", "table", "index", "query"},
		{"red", "green", "blue", "yellow"},
	}
	frames := [][]string{
		{"the %s sleeps on the mat", "a small %s likes milk", "my %s plays with the ball", "feed the %s every morning"},
		{"the %s stores rows on disk", "vacuum the %s after bulk deletes", "an sql %s needs a schema", "postgres can scan the %s quickly"},
		{"she painted the wall %s", "the %s light means something", "a bright %s colour appears", "mix %s paint with water"},
	}
	rng := rand.New(rand.NewPCG(1, 2))
	c := NewCorpus()
	var doc strings.Builder
	for n := 0; n < 3000; n++ {
		g := rng.IntN(len(groups))
		w := groups[g][rng.IntN(len(groups[g]))]
		f := frames[g][rng.IntN(len(frames[g]))]
		fmt.Fprintf(&doc, f+". ", w)
		if n%20 == 19 {
			c.Add(doc.String())
			doc.Reset()
		}
	}
	return c
}

func tinyParams() Params {
	p := DefaultParams()
	p.Dim, p.Oversample, p.MinCount, p.Workers = 8, 4, 2, 2
	return p
}

func cos(a, b []float32) float64 {
	var d, na, nb float64
	for i := range a {
		d += float64(a[i]) * float64(b[i])
		na += float64(a[i]) * float64(a[i])
		nb += float64(b[i]) * float64(b[i])
	}
	if na == 0 || nb == 0 {
		return 0
	}
	return d / math.Sqrt(na*nb)
}

func TestTrainDeterministicAndLoad(t *testing.T) {
	c := tinyCorpus()
	p := tinyParams()
	m1, st, err := Train(c, p)
	if err != nil {
		t.Fatal(err)
	}
	p.Workers = 1
	m2, _, err := Train(c, p)
	if err != nil {
		t.Fatal(err)
	}
	var b1, b2 bytes.Buffer
	if _, err := m1.WriteTo(&b1); err != nil {
		t.Fatal(err)
	}
	if _, err := m2.WriteTo(&b2); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(b1.Bytes(), b2.Bytes()) {
		t.Fatal("same corpus and seed gave different model bytes")
	}
	if st.Vocab != m1.Len() || m1.Dim() != 8 {
		t.Fatalf("vocab %d/%d dim %d", st.Vocab, m1.Len(), m1.Dim())
	}
	m3, err := Load(bytes.NewReader(b1.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	var b3 bytes.Buffer
	if _, err := m3.WriteTo(&b3); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(b1.Bytes(), b3.Bytes()) {
		t.Fatal("load/write round trip changed the bytes")
	}
	if !slices.Equal(m1.Sentence("the cat"), m3.Sentence("the cat")) {
		t.Fatal("loaded model embeds differently")
	}
	// Another seed gives other bytes (the seed is used).
	p.Seed++
	m4, _, err := Train(c, p)
	if err != nil {
		t.Fatal(err)
	}
	var b4 bytes.Buffer
	m4.WriteTo(&b4)
	if bytes.Equal(b1.Bytes(), b4.Bytes()) {
		t.Fatal("seed had no effect")
	}
}

func TestVectorsGroupWords(t *testing.T) {
	m, _, err := Train(tinyCorpus(), tinyParams())
	if err != nil {
		t.Fatal(err)
	}
	vec := func(w string) []float32 {
		i := m.Lookup(w)
		if i < 0 {
			t.Fatalf("%q not in vocabulary", w)
		}
		return m.Vector(i, nil)
	}
	same := cos(vec("cat"), vec("puppy"))
	diff := cos(vec("cat"), vec("database"))
	if !(same > diff+0.3) {
		t.Fatalf("cos(cat, puppy) = %.3f, cos(cat, database) = %.3f", same, diff)
	}
	s1 := m.Sentence("My kitten likes milk")
	s2 := m.Sentence("a puppy plays with a ball")
	s3 := m.Sentence("vacuum the index")
	if !(cos(s1, s2) > cos(s1, s3)) {
		t.Fatalf("sentence similarity: pets %.3f, pet/db %.3f", cos(s1, s2), cos(s1, s3))
	}
	if n := cos(s1, s1); math.Abs(n-1) > 1e-5 {
		t.Fatalf("sentence vector not unit: %v", n)
	}
	if z := m.Sentence("zzzz qqqq 12345"); slices.ContainsFunc(z, func(x float32) bool { return x != 0 }) {
		t.Fatal("unknown words should give the zero vector")
	}
}

func TestTokens(t *testing.T) {
	cases := []struct{ in, want string }{
		{"Hello, World", "hello world"},
		{"credit_ledger uses HTTPServer.Listen", "credit ledger uses http server listen"},
		{"It ended. Next one", "it ended | next one"},
		{"version 12345 and x86_64", "version and x86"},
		{"line one\nline two", "line one | line two"},
		{"a " + strings.Repeat("x", 50) + " b", "a b"},
	}
	for _, c := range cases {
		var got []string
		Tokens(c.in, func(w string) {
			if w == "" {
				w = "|"
			}
			got = append(got, w)
		})
		if strings.Join(got, " ") != c.want {
			t.Errorf("Tokens(%q) = %q, want %q", c.in, strings.Join(got, " "), c.want)
		}
	}
}

func TestRandomizedSVD(t *testing.T) {
	// A 60 x 40 matrix of known rank-3 structure plus small noise.
	rng := rand.New(rand.NewPCG(3, 4))
	const r, c = 60, 40
	sing := []float64{10, 5, 2}
	dense := make([]float64, r*c)
	for s, sv := range sing {
		u := make([]float64, r)
		v := make([]float64, c)
		for i := range u {
			u[i] = rng.NormFloat64()
		}
		for i := range v {
			v[i] = rng.NormFloat64()
		}
		orth := func(x []float64) {
			n := 0.0
			for _, e := range x {
				n += e * e
			}
			for i := range x {
				x[i] /= math.Sqrt(n)
			}
		}
		orth(u)
		orth(v)
		_ = s
		for i := 0; i < r; i++ {
			for j := 0; j < c; j++ {
				dense[i*c+j] += sv * u[i] * v[j]
			}
		}
	}
	m := &csr{rows: r, cols: c, ptr: make([]int64, r+1)}
	for i := 0; i < r; i++ {
		for j := 0; j < c; j++ {
			m.idx = append(m.idx, uint32(j))
			m.val = append(m.val, float32(dense[i*c+j]))
		}
		m.ptr[i+1] = int64(len(m.idx))
	}
	_, sv, err := randomizedSVD(m, 3, 5, 2, 1, 2)
	if err != nil {
		t.Fatal(err)
	}
	// Random u, v are only nearly orthogonal: allow 20%.
	for i, want := range sing {
		if math.Abs(sv[i]-want)/want > 0.2 {
			t.Fatalf("singular values %v, want about %v", sv, sing)
		}
	}
}

func TestLoadRejects(t *testing.T) {
	m, _, err := Train(tinyCorpus(), tinyParams())
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	m.WriteTo(&b)
	good := b.Bytes()
	mut := func(f func(d []byte) []byte) []byte { return f(slices.Clone(good)) }
	cases := map[string][]byte{
		"empty":     nil,
		"magic":     mut(func(d []byte) []byte { d[0] = 'X'; return d }),
		"version":   mut(func(d []byte) []byte { binary.LittleEndian.PutUint32(d[4:], 2); return d }),
		"no words":  mut(func(d []byte) []byte { binary.LittleEndian.PutUint32(d[8:], 0); return d }),
		"huge dim":  mut(func(d []byte) []byte { binary.LittleEndian.PutUint32(d[12:], MaxDim+1); return d }),
		"truncated": good[:len(good)-1],
		"trailing":  append(slices.Clone(good), 0),
		"word len":  mut(func(d []byte) []byte { d[16] = 0; return d }),
		"bad prob": mut(func(d []byte) []byte {
			off := len(good) - m.Len()*m.Dim() - 8*m.Len()
			binary.LittleEndian.PutUint32(d[off:], math.Float32bits(float32(math.NaN())))
			return d
		}),
	}
	for name, data := range cases {
		if _, err := Load(bytes.NewReader(data)); err == nil {
			t.Errorf("%s: Load accepted a malformed file", name)
		}
	}
}

func FuzzLoad(f *testing.F) {
	m, _, err := Train(tinyCorpus(), tinyParams())
	if err != nil {
		f.Fatal(err)
	}
	var b bytes.Buffer
	m.WriteTo(&b)
	f.Add(b.Bytes())
	f.Add([]byte("MTWV\x01\x00\x00\x00\x01\x00\x00\x00\x01\x00\x00\x00\x01a\x00\x00\x80\x3f\x00\x00\x00\x00\x05"))
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := Load(bytes.NewReader(data))
		if err != nil {
			return
		}
		v := m.Sentence(strings.Join(m.Words(), " "))
		if len(v) != m.Dim() {
			t.Fatal("wrong sentence length")
		}
		var out bytes.Buffer
		if _, err := m.WriteTo(&out); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(out.Bytes(), data) {
			t.Fatal("accepted file does not round-trip")
		}
	})
}

func BenchmarkSentence(b *testing.B) {
	m, _, err := Train(tinyCorpus(), tinyParams())
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		m.Sentence("the kitten sleeps on the mat every morning after milk")
	}
}
