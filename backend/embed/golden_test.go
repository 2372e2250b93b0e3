package embed

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"hash"
	"math"
	"testing"

	"github.com/memtray/memtray/backend/embed/wordvec"
)

// goldenTexts is a fixed list of memory- and query-like texts whose
// built-in embeddings TestBuiltinEmbeddingsUnchanged pins.
var goldenTexts = []string{
	"",
	"   ,,, ",
	"Hello world",
	"ünïcødé wörds ok",
	"the invoice is due on the first of the month",
	"send the bill to accounting before Friday",
	"we use PostgreSQL 16 with pgvector for the team store",
	"run `make test` before pushing; CI runs go test -race on every package",
	"parseHTTPResponse returns ErrTimeout when the server hangs",
	"prefer tabs over spaces in Go files; gofmt decides",
	"the deploy script lives in build/release.sh and needs GITHUB_TOKEN",
	"stickers are printed as shipping labels on the Zebra printer",
	"comment threads anchor to Yjs relative positions, so comments survive concurrent edits",
	"xyzzy plugh qwertyuiop",
}

// putFloats hashes vs' float32 bit patterns.
func putFloats(h hash.Hash, vs []float32) {
	var b [4]byte
	for _, x := range vs {
		binary.LittleEndian.PutUint32(b[:], math.Float32bits(x))
		h.Write(b[:])
	}
}

// TestBuiltinEmbeddingsUnchanged: the built-in embedder's vectors of
// goldenTexts (documents and weighted queries) and every shipped word
// vector and probability are bit for bit those of 2308138, before the
// shipped model's storage changed (exp-wvload). A change of the vectors
// must change BuiltinModel and this hash together.
func TestBuiltinEmbeddingsUnchanged(t *testing.T) {
	const want = "0358df0187067f8af10f53a45ff6d60df7ee3d028fbb3412ba5eda348cc0a46b"
	b := NewBuiltin()
	h := sha256.New()
	for _, text := range goldenTexts {
		putFloats(h, b.EmbedOne(text))
		q, err := b.EmbedWeighted(t.Context(), text, func(string) float64 { return 1 })
		if err != nil {
			t.Fatal(err)
		}
		putFloats(h, q)
	}
	m, err := wordvec.Builtin()
	if err != nil {
		t.Fatal(err)
	}
	var v []float32
	for i, w := range m.Words() {
		h.Write([]byte(w))
		v = m.Vector(i, v)
		putFloats(h, v)
		putFloats(h, []float32{float32(m.Prob(i))})
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != want {
		t.Errorf("built-in embeddings hash %s, want %s (%s)", got, want, BuiltinModel)
	}
}
