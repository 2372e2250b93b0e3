package wordvec_test

import (
	"fmt"
	"math"
	"os"
	"sort"
	"strings"
	"testing"
)

// TestNeighbours prints the nearest words of WORDVEC_WORDS (comma-separated)
// in the model at WORDVEC_MODEL: a sanity check of a trained model.
func TestNeighbours(t *testing.T) {
	path, words := os.Getenv("WORDVEC_MODEL"), os.Getenv("WORDVEC_WORDS")
	if path == "" || words == "" {
		t.Skip("set WORDVEC_MODEL and WORDVEC_WORDS")
	}
	m := loadModelFile(t, path)
	vecs := make([][]float32, m.Len())
	for i := range vecs {
		vecs[i] = m.Vector(i, nil)
	}
	for _, w := range strings.Split(words, ",") {
		i := m.Lookup(w)
		if i < 0 {
			t.Logf("%s: not in vocabulary", w)
			continue
		}
		type nb struct {
			w string
			c float64
		}
		var nbs []nb
		for j, v := range vecs {
			if j == i {
				continue
			}
			var d float64
			for k := range v {
				d += float64(v[k]) * float64(vecs[i][k])
			}
			nbs = append(nbs, nb{m.Words()[j], d})
		}
		sort.Slice(nbs, func(a, b int) bool { return nbs[a].c > nbs[b].c })
		var b strings.Builder
		for _, n := range nbs[:10] {
			fmt.Fprintf(&b, " %s(%.2f)", n.w, n.c)
		}
		t.Logf("%s (p=%.1e):%s", w, m.Prob(i), b.String())
	}
	_ = math.Abs
}
