package store

import (
	"bufio"
	"context"
	"fmt"
	"hash/fnv"
	"io/fs"
	"math"
	"math/rand"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/memtray/memtray/backend/embed"
	"github.com/memtray/memtray/backend/memory"
)

// The vector index scans an int8 copy of the rows and rescores the best
// rescoreCandidates(k) exactly (vector.go). These tests check the parts
// (dotBlock, lanes, encode) against plain arithmetic, and the whole against
// an exact float32 scan on realistic corpora: how often the top k ids
// differ at all, for a range of candidate counts, and that the scores are
// exact every time.

func TestDotBlock(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	type tc struct {
		name string
		q    []int64
		rows [8][]int8
	}
	gen := func(name string, n int, f func() (int64, int8)) tc {
		c := tc{name: name, q: make([]int64, n)}
		for i := range c.rows {
			c.rows[i] = make([]int8, n)
		}
		for d := 0; d < n; d++ {
			for i := range c.rows {
				var x int8
				c.q[d], x = f()
				c.rows[i][d] = x
			}
		}
		return c
	}
	rnd := func() (int64, int8) { return int64(r.Intn(255) - 127), int8(r.Intn(255) - 127) }
	cases := []tc{
		gen("empty", 0, rnd),
		gen("one", 1, rnd),
		gen("tail 3", 3, rnd),
		gen("tail 7", 7, rnd),
		gen("13", 13, rnd),
		gen("lexical 256", 256, rnd),
		gen("semantic 301", 301, rnd),
		gen("max positive 557", 557, func() (int64, int8) { return 127, 127 }),
		gen("max negative 557", 557, func() (int64, int8) { return -127, 127 }),
		gen("min codes 557", 557, func() (int64, int8) { return -127, -127 }),
		gen("mixed signs 557", 557, func() (int64, int8) {
			if r.Intn(2) == 0 {
				return 127, -127
			}
			return -127, 127
		}),
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			blk := make([]uint64, len(c.q))
			for i, row := range c.rows {
				for d, x := range row {
					blk[d] |= uint64(uint8(int16(x)+128)) << (8 * i)
				}
			}
			var bias int64
			for _, x := range c.q {
				bias += 128 * x
			}
			a0, a1, a2, a3 := dotBlock(c.q, blk)
			var got [8]int64
			got[0], got[4] = lanes(a0)
			got[1], got[5] = lanes(a1)
			got[2], got[6] = lanes(a2)
			got[3], got[7] = lanes(a3)
			for i, row := range c.rows {
				var want int64
				for d, x := range row {
					want += c.q[d] * int64(x)
				}
				if got[i]-bias != want {
					t.Errorf("row %d: dotBlock gives %d, want %d", i, got[i]-bias, want)
				}
			}
		})
	}
}

func TestLanes(t *testing.T) {
	for _, c := range []struct{ lo, hi int64 }{
		{0, 0}, {1, -1}, {-1, 1}, {-1, -1}, {18_000_000, -18_000_000}, {-18_000_000, 18_000_000},
		{math.MaxInt32, math.MinInt32}, {math.MinInt32, math.MaxInt32},
	} {
		a := uint64(c.lo) + uint64(c.hi)<<32
		if lo, hi := lanes(a); lo != c.lo || hi != c.hi {
			t.Errorf("lanes(%d + %d<<32) = %d, %d", c.lo, c.hi, lo, hi)
		}
	}
}

func TestEncode(t *testing.T) {
	const dim = 37
	v, _ := newVectorIndex(dim)
	r := rand.New(rand.NewSource(2))
	e := &entry{}
	for i := range 20 {
		vec := make([]float32, dim)
		for d := range vec {
			vec[d] = float32(r.NormFloat64())
		}
		if i == 5 {
			vec[3] = 40 // one large coordinate squeezes the others
		}
		v.add(fmt.Sprint(i), vec, e)
	}
	v.remove("7")
	for row := range len(v.ids) {
		x := v.data[row*dim : (row+1)*dim]
		sc := v.scale[row]
		var mx float32
		for _, f := range x {
			mx = max(mx, abs32(f))
		}
		if sc != mx/127 {
			t.Errorf("row %d: scale %g, want max|x|/127 = %g", row, sc, mx/127)
		}
		for d, f := range x {
			c := int(v.q8[(row/8)*dim+d]>>(8*(row%8))&0xFF) - 128
			if c < -127 || c > 127 {
				t.Fatalf("row %d coordinate %d: code %d out of range", row, d, c)
			}
			if sc == 0 {
				if c != 0 {
					t.Errorf("free row %d coordinate %d: code %d, want 0", row, d, c)
				}
				continue
			}
			if diff := math.Abs(float64(c)*float64(sc) - float64(f)); diff > float64(sc)/2*1.0001 {
				t.Errorf("row %d coordinate %d: code %d x scale %g is %g from %g, more than half a step", row, d, c, sc, diff, f)
			}
		}
	}
}

// exactScan is the exact float32 scan the quantized one must reproduce: the
// rows passing rf, scored over each query's non-zero span with dot, best
// first, ties by row.
func exactScan(v *vectorIndex, q []float32, k int, rf *rowFilter) []Scored {
	sp := newSpan(q)
	var all []hit
	for r := range len(v.ids) {
		if rf.match(&v.meta[r]) {
			all = append(all, hit{score: dot(sp.q, v.data[r*v.dim+sp.c0:r*v.dim+sp.c1]), row: int32(r)})
		}
	}
	sortHits(all)
	out := make([]Scored, 0, k)
	for _, h := range all[:min(k, len(all))] {
		out = append(out, Scored{ID: v.ids[h.row], Score: clampSim(h.score)})
	}
	return out
}

// quantCase is one query of a quantization check.
type quantCase struct {
	q  []float32 // normalised
	k  int
	rf rowFilter
}

// quantStats compares the quantized scan with cand candidates against the
// exact scan: the queries whose top k ids (in order) differ, and the worst
// score gap of a differing row to the exact k-th. A returned row whose
// score is not its exact score fails t.
func quantStats(t *testing.T, v *vectorIndex, cases []quantCase, exact [][]Scored, cand func(k int) int) (differ int, worstGap float64) {
	t.Helper()
	for i, c := range cases {
		got := v.queryManyCand([][]float32{c.q}, c.k, cand(c.k), &c.rf)[0]
		want := exact[i]
		scoreOf := map[string]float64{}
		sp := newSpan(c.q)
		for _, g := range got {
			r := v.rows[g.ID]
			s := clampSim(dot(sp.q, v.data[int(r)*v.dim+sp.c0:int(r)*v.dim+sp.c1]))
			if g.Score != s {
				t.Fatalf("query %d: %s scored %v, its exact score is %v", i, g.ID, g.Score, s)
			}
			scoreOf[g.ID] = s
		}
		if len(got) != len(want) {
			t.Fatalf("query %d: %d results, exact scan %d", i, len(got), len(want))
		}
		// The same scores in the same order is the exact answer: rows of
		// equal score (different lines with the same vector) may come in
		// either order, in either scan.
		same := true
		for j := range got {
			if got[j] != want[j] && got[j].Score != want[j].Score {
				same = false
			}
		}
		if same {
			continue
		}
		differ++
		if os.Getenv("QDEBUG") != "" {
			t.Logf("query %d k=%d: got %v\nwant %v", i, c.k, got, want)
		}
		kth := want[len(want)-1].Score
		for _, g := range got {
			if !slices.Contains(want, g) {
				worstGap = max(worstGap, kth-g.Score)
			}
		}
	}
	return differ, worstGap
}

// projectTexts returns up to n distinct lines of prose and code from the
// repository's own files (documentation, Go sources and comments, test
// data), in a fixed order.
func projectTexts(t *testing.T, n int) []string {
	t.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	var files []string
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch d.Name() {
			case ".git", "node_modules", "bin", "dist", "model", "fuzz":
				return filepath.SkipDir
			}
			return nil
		}
		switch filepath.Ext(p) {
		case ".md", ".go", ".json", ".jsonl", ".ts", ".svelte":
			files = append(files, p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(files)
	seen := map[string]bool{}
	var out []string
	for _, p := range files {
		f, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			line := strings.TrimSpace(strings.TrimLeft(strings.TrimSpace(sc.Text()), "/#*-|>"))
			if len(strings.Fields(line)) < 4 || len(line) > 600 || !utf8.ValidString(line) || seen[line] {
				continue
			}
			seen[line] = true
			out = append(out, line)
		}
		f.Close()
	}
	if len(out) > n {
		// Every len/n-th line, so every file contributes.
		step := float64(len(out)) / float64(n)
		sub := make([]string, n)
		for i := range sub {
			sub[i] = out[int(float64(i)*step)]
		}
		out = sub
	}
	return out
}

// segmentParts returns q's parts as the search engine queries them (each
// part alone, zero elsewhere), plus q itself.
func segmentParts(q []float32) [][]float32 {
	out := [][]float32{q}
	off := 0
	for _, s := range embed.NewBuiltin().Segments() {
		p := make([]float32, len(q))
		copy(p[off:off+s.Dim], q[off:off+s.Dim])
		if !isZero(p) {
			out = append(out, normalized(p))
		}
		off += s.Dim
	}
	return out
}

var quantProjects = []string{"tallyho", "quill", "harbor", "atlas", "beacon", "cinder", "delta", "ember"}

// quantIndex indexes vecs with projects and kinds spread over the rows.
func quantIndex(t *testing.T, dim int, vecs [][]float32) *vectorIndex {
	t.Helper()
	v, err := newVectorIndex(dim)
	if err != nil {
		t.Fatal(err)
	}
	v.grow(len(vecs))
	for i, vec := range vecs {
		h := fnv.New32a()
		fmt.Fprint(h, i)
		x := h.Sum32()
		e := &entry{project: quantProjects[x%8], kind: memory.Kinds[(x/8)%uint32(len(memory.Kinds))]}
		v.add(fmt.Sprintf("m%06d", i), vec, e)
	}
	return v
}

// quantFilters are the filters every query runs with: none, one project
// (1 row in 8: the scan's one-row-at-a-time path), two kinds.
func quantFilters(v *vectorIndex) []rowFilter {
	now := time.Now().UnixNano()
	return []rowFilter{
		v.compile(&Filter{}, now),
		v.compile(&Filter{Project: "quill"}, now),
		v.compile(&Filter{Kinds: []memory.Kind{memory.KindDecision, memory.KindFact}}, now),
	}
}

// nearTie is how far below the exact k-th score a row the quantized scan
// returns instead may be: about 3 standard deviations of the int8
// estimate's error for the built-in embedder's vectors.
const nearTie = 0.005

// checkQuantized runs cases against the exact scan for a range of
// candidate counts, logs the table, and requires the shipped
// rescoreCandidates to return the exact top k for at least minAgree of
// the queries.
func checkQuantized(t *testing.T, v *vectorIndex, cases []quantCase, minAgree float64) {
	t.Helper()
	exact := make([][]Scored, len(cases))
	for i, c := range cases {
		exact[i] = exactScan(v, c.q, c.k, &c.rf)
	}
	type variant struct {
		name string
		cand func(k int) int
	}
	for _, vr := range []variant{
		{"k (no margin)", func(k int) int { return k }},
		{"max(2k, 32)", func(k int) int { return max(2*k, 32) }},
		{"max(3k, 48)", func(k int) int { return max(3*k, 48) }},
		{fmt.Sprintf("shipped max(%dk, %d)", rescoreFactor, rescoreMin), rescoreCandidates},
	} {
		differ, gap := quantStats(t, v, cases, exact, vr.cand)
		agree := 1 - float64(differ)/float64(len(cases))
		t.Logf("%d rows, %d queries, candidates %-22s top-k ids equal to the exact scan's in %.2f%% (%d differ; worst differing row %.2g below the exact k-th)",
			len(v.rows), len(cases), vr.name, 100*agree, differ, gap)
		if vr.name[:7] != "shipped" {
			continue
		}
		if agree < minAgree {
			t.Errorf("shipped candidate count: top k equal in %.2f%% of queries, want >= %.2f%%", 100*agree, 100*minAgree)
		}
		if gap > nearTie {
			t.Errorf("shipped candidate count: a returned row is %.4f below the exact k-th, more than a near-tie (%g)", gap, nearTie)
		}
	}
}

// TestQuantizedScanMatchesExact: the built-in embedder over the project's
// own texts (every line of its documentation, sources and test data with 4
// words or more), queried with near-duplicates of indexed lines (a word
// dropped), fragments and mixes of two lines, whole and per part as the
// search engine asks, at k = 1, 10 and 50 (50 is a search's candidate
// pool), without a filter, with one project, and with two kinds.
func TestQuantizedScanMatchesExact(t *testing.T) {
	t.Parallel() // slow under -race; its own dirs (and helper processes): overlaps the other slow tests
	n, nq := 15000, 80
	if testing.Short() || raceEnabled {
		n, nq = 4000, 30
	}
	texts := projectTexts(t, n)
	if len(texts) < n/2 {
		t.Fatalf("only %d project texts", len(texts))
	}
	emb := embed.NewBuiltin()
	vecs, err := emb.Embed(context.Background(), texts)
	if err != nil {
		t.Fatal(err)
	}
	v := quantIndex(t, emb.Dim(), vecs)
	r := rand.New(rand.NewSource(3))
	var qtexts []string
	for len(qtexts) < nq {
		w := strings.Fields(texts[r.Intn(len(texts))])
		switch len(qtexts) % 3 {
		case 0: // near-duplicate: one word dropped
			i := r.Intn(len(w))
			qtexts = append(qtexts, strings.Join(append(slices.Clone(w[:i]), w[i+1:]...), " "))
		case 1: // fragment of 2..6 words
			i := r.Intn(len(w))
			qtexts = append(qtexts, strings.Join(w[i:min(len(w), i+2+r.Intn(5))], " "))
		default: // halves of two lines
			u := strings.Fields(texts[r.Intn(len(texts))])
			qtexts = append(qtexts, strings.Join(append(slices.Clone(w[:len(w)/2]), u[len(u)/2:]...), " "))
		}
	}
	checkQuantized(t, v, textCases(t, qtexts, quantFilters(v)), 0.995)
}

// textCases are the queries for texts: each as a stored memory (what
// ingest's dedup looks up, k 1 and 5) and as a search query (weighted;
// whole and per part as the search engine asks, k 10 and 50), with every
// filter.
func textCases(t *testing.T, texts []string, filters []rowFilter) []quantCase {
	t.Helper()
	emb := embed.NewBuiltin()
	var cases []quantCase
	for i, qt := range texts {
		doc, err := emb.Embed(context.Background(), []string{qt})
		if err != nil {
			t.Fatal(err)
		}
		query, err := emb.EmbedWeighted(context.Background(), qt, func(string) float64 { return 1 })
		if err != nil {
			t.Fatal(err)
		}
		for fi, rf := range filters {
			if !isZero(doc[0]) {
				cases = append(cases, quantCase{q: normalized(doc[0]), k: []int{1, 5}[(i+fi)%2], rf: rf})
			}
			if isZero(query) {
				continue
			}
			for j, part := range segmentParts(normalized(query)) {
				cases = append(cases, quantCase{q: part, k: []int{10, 50}[(i+j+fi)%2], rf: rf})
			}
		}
	}
	return cases
}

// TestQuantizedScanGaussianClusters: random Gaussian vectors plus clusters
// of near-duplicates (a centre and noisy copies, so a query near a centre
// has a top k of near-ties), queried near centres and at random.
func TestQuantizedScanGaussianClusters(t *testing.T) {
	const dim = 256
	nRand, nClusters, size, nq := 20000, 300, 30, 100
	if testing.Short() || raceEnabled {
		nRand, nClusters, nq = 4000, 60, 40
	}
	r := rand.New(rand.NewSource(4))
	gauss := func() []float32 {
		x := make([]float32, dim)
		for d := range x {
			x[d] = float32(r.NormFloat64())
		}
		return normalized(x)
	}
	near := func(c []float32, noise float64) []float32 {
		x := make([]float32, dim)
		for d := range x {
			x[d] = c[d] + float32(noise*r.NormFloat64()/math.Sqrt(dim))
		}
		return normalized(x)
	}
	var vecs, centres [][]float32
	for range nRand {
		vecs = append(vecs, gauss())
	}
	for i := range nClusters {
		c := gauss()
		centres = append(centres, c)
		for j := range size {
			// Noise from 0.01 (near-identical) to 0.3 of the norm.
			vecs = append(vecs, near(c, 0.01+0.29*float64((i+j)%10)/9))
		}
	}
	r.Shuffle(len(vecs), func(i, j int) { vecs[i], vecs[j] = vecs[j], vecs[i] })
	v := quantIndex(t, dim, vecs)
	var cases []quantCase
	for i := range nq {
		q := gauss()
		if i%2 == 0 {
			q = near(centres[r.Intn(len(centres))], 0.2)
		}
		for fi, rf := range quantFilters(v) {
			cases = append(cases, quantCase{q: q, k: []int{1, 10, 50}[(i+fi)%3], rf: rf})
		}
	}
	checkQuantized(t, v, cases, 0.995)
}

// TestQuantized100k checks the bench store of 100k synthetic memories
// (benchStoreDir; building it takes minutes, so only with
// MEMTRAY_QUANT_100K=1) with BenchmarkVectorSearch's query texts (see
// textCases), no filter.
func TestQuantized100k(t *testing.T) {
	if os.Getenv("MEMTRAY_QUANT_100K") == "" {
		t.Skip("set MEMTRAY_QUANT_100K=1 (uses or builds the 100k bench store)")
	}
	s, err := Open(context.Background(), Options{Dir: benchStoreDir(t, 100_000), Model: embed.BuiltinModel, Dim: embed.BuiltinDim})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	texts, _ := benchQueries(200)
	s.mu.RLock()
	defer s.mu.RUnlock()
	cases := textCases(t, texts, []rowFilter{s.vec.compile(&Filter{}, time.Now().UnixNano())})
	checkQuantized(t, s.vec, cases, 0.995)
}
