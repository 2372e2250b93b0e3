package store

import (
	"encoding/binary"
	"math"
	"runtime"
	"slices"
	"sync"

	"github.com/memtray/memtray/backend/memory"
)

// vectorIndex is the in-memory vector index: every record's embedding,
// normalised once, in one contiguous []float32 (row-major), plus a scan copy
// of the same rows quantized to int8 (see q8), with the fields filters need
// stored inline per row. A query scans the int8 copy by up to GOMAXPROCS
// goroutines, keeps the best rescoreCandidates(k) rows per query vector,
// then rescores those exactly from the float32 rows and returns the true
// top k: the same rows and the same scores as an exact float32 scan, except
// that a row tied with the k-th within the quantization error may be
// swapped for another (see vector_quant_test.go for how often). It is
// rebuilt from bbolt at every Open and never persisted. The Store's mu
// guards it: writers hold the write lock, queries the read lock.
//
// Why not chromem-go's collection (the design's first choice): at 100k
// 256-d records its query took 51 ms p50 / 67 ms p99 here (78 / 139 ms with
// a project `where`), because every query walks a map of documents through
// a channel, evaluates the `where` with map lookups per document, and
// pushes every similarity into a mutex-guarded heap; the dot products are
// only 27% of its time. This layout does the same exact search in ~5 ms.
// BenchmarkVectorChromem keeps the comparison reproducible.
//
// Why int8: the float32 scan of 100k 557-d rows reads 222 MB and does 56 M
// multiply-adds per query, which the Go compiler does not vectorise (one
// scalar MULSS+ADDSS per coordinate). The int8 copy is a quarter of the
// bytes, and its layout (8 rows interleaved per uint64, see dotBlock) lets
// one 64-bit multiply do two coordinate products: the scan takes about half
// the CPU time (measured on one core at 100k: 22.6 ms -> 11.2 ms).
type vectorIndex struct {
	dim  int
	data []float32 // rows*dim, normalised vectors: exact scores
	// q8 is the scan copy, in blocks of 8 rows: q8[b*dim+d] holds
	// coordinate d of rows 8b..8b+7, byte i for row 8b+i, each the row's
	// int8 code c (|c| <= 127, x ~ c*scale[row]) stored as c+128.
	q8    []uint64
	scale []float32 // row -> its codes' scale: max |x| / 127; 0 for a free row
	ids   []string  // row -> id; "" for a free row
	meta  []rowMeta
	rows  map[string]int32 // id -> row
	free  []int32
	codes map[string]uint32 // interned project and source strings; 0 is ""
	names []string          // code -> string
}

// rowMeta is what a filter needs of a row, inline so a scan touches no map.
type rowMeta struct {
	created, cooldown int64 // unix nanoseconds; 0 = none
	project, source   uint32
	kind              uint8 // 1 + index in memory.Kinds; 0 unknown
	flags             uint8
	typ               uint8 // typeCode: 1 + index in memory.Types; 0 unknown
}

const (
	rowLive       = 1
	rowSuperseded = 2
)

func newVectorIndex(dim int) (*vectorIndex, error) {
	return &vectorIndex{dim: dim, rows: make(map[string]int32), codes: map[string]uint32{"": 0}, names: []string{""}}, nil
}

// grow reserves room for n more rows.
func (v *vectorIndex) grow(n int) {
	v.data = slices.Grow(v.data, n*v.dim)
	v.q8 = slices.Grow(v.q8, (n+7)/8*v.dim)
	v.scale = slices.Grow(v.scale, n)
	v.ids = slices.Grow(v.ids, n)
	v.meta = slices.Grow(v.meta, n)
}

func (v *vectorIndex) code(s string) uint32 {
	if c, ok := v.codes[s]; ok {
		return c
	}
	c := uint32(len(v.names))
	v.codes[s] = c
	v.names = append(v.names, s)
	return c
}

func kindCode(k memory.Kind) uint8 {
	for i, x := range memory.Kinds {
		if x == k {
			return uint8(i + 1)
		}
	}
	return 0
}

func (v *vectorIndex) rowMetaOf(e *entry) rowMeta {
	m := rowMeta{created: e.created, cooldown: e.cooldown, project: v.code(e.project), source: v.code(e.source),
		kind: kindCode(e.kind), typ: typeCode(e.typ), flags: rowLive}
	if e.superseded {
		m.flags |= rowSuperseded
	}
	return m
}

// slot returns the row for id, allocating one if needed.
func (v *vectorIndex) slot(id string) int32 {
	if r, ok := v.rows[id]; ok {
		return r
	}
	var r int32
	if n := len(v.free); n > 0 {
		r = v.free[n-1]
		v.free = v.free[:n-1]
	} else {
		r = int32(len(v.ids))
		v.ids = append(v.ids, "")
		v.meta = append(v.meta, rowMeta{})
		v.scale = append(v.scale, 0)
		v.data = append(v.data, make([]float32, v.dim)...)
		if r%8 == 0 {
			v.q8 = append(v.q8, make([]uint64, v.dim)...)
		}
	}
	v.ids[r] = id
	v.rows[id] = r
	return r
}

// add indexes vec for id (a normalised copy), replacing what id had. A zero
// vector is similar to nothing: id is left out. So is a vector with a NaN
// or Inf component, which every write refuses before it gets here
// (checkVector): never a row that scores NaN.
func (v *vectorIndex) add(id string, vec []float32, e *entry) {
	if isZero(vec) || len(vec) != v.dim || checkVector(vec, v.dim) != nil {
		v.remove(id)
		return
	}
	r := v.slot(id)
	row := v.data[int(r)*v.dim : int(r+1)*v.dim]
	var sq float64
	for _, f := range vec {
		sq += float64(f) * float64(f)
	}
	inv := 1 / math.Sqrt(sq)
	for i, f := range vec {
		row[i] = float32(float64(f) * inv)
	}
	v.encode(r)
	v.meta[r] = v.rowMetaOf(e)
}

// vecState is what a stored vector is fit for.
type vecState uint8

const (
	vecOK      vecState = iota // finite, the store's dimension, not zero: indexed
	vecZero                    // all zeros: similar to nothing, left out (an embedder's answer for a text without a usable token)
	vecDamaged                 // a NaN or Inf component, or a length other than the store's dimension: left out, reported
)

// packedState classifies a packed little-endian float32 vector for a
// store of dimension dim. A NaN or Inf component makes every cosine with
// the row NaN (or the row itself NaN once normalised), and a NaN score
// compares false with every other: ranking with one is undefined.
func packedState(packed []byte, dim int) vecState {
	if len(packed) != 4*dim {
		return vecDamaged
	}
	zero := true
	for i := 0; i < dim; i++ {
		bits := binary.LittleEndian.Uint32(packed[4*i:])
		if bits&0x7f800000 == 0x7f800000 { // exponent all ones: Inf or NaN
			return vecDamaged
		}
		if bits&^(1<<31) != 0 {
			zero = false
		}
	}
	if zero {
		return vecZero
	}
	return vecOK
}

// addPacked indexes a packed little-endian float32 vector. A vector
// packedState does not call vecOK is left out (id's row removed); its
// state is returned so that Open can report the damaged ones.
func (v *vectorIndex) addPacked(id string, packed []byte, e *entry) vecState {
	st := packedState(packed, v.dim)
	var sq float64
	if st == vecOK {
		for i := 0; i < v.dim; i++ {
			f := math.Float32frombits(binary.LittleEndian.Uint32(packed[4*i:]))
			sq += float64(f) * float64(f)
		}
	}
	if st != vecOK || sq == 0 { // sq == 0: subnormal components whose squares underflow
		v.remove(id)
		return st
	}
	r := v.slot(id)
	row := v.data[int(r)*v.dim : int(r+1)*v.dim]
	inv := 1 / math.Sqrt(sq)
	for i := range row {
		row[i] = float32(float64(math.Float32frombits(binary.LittleEndian.Uint32(packed[4*i:]))) * inv)
	}
	v.encode(r)
	v.meta[r] = v.rowMetaOf(e)
	return st
}

// encode writes row r's int8 codes into the scan copy: symmetric, with
// the row's own scale max |x| / 127, rounded to nearest.
func (v *vectorIndex) encode(r int32) {
	row := v.data[int(r)*v.dim : int(r+1)*v.dim]
	var mx float32
	for _, f := range row {
		mx = max(mx, abs32(f))
	}
	blk := v.q8[int(r/8)*v.dim : int(r/8+1)*v.dim]
	blk = blk[:len(row)]
	sh := 8 * uint(r%8)
	keep := ^(uint64(0xFF) << sh)
	if mx == 0 {
		v.scale[r] = 0
		for d := range blk {
			blk[d] = blk[d]&keep | 128<<sh
		}
		return
	}
	inv := 127 / mx
	for d, f := range row {
		// Round half away from zero without a branch (the signs are
		// random: a branch would mispredict half the time).
		x := f * inv
		half := math.Float32frombits(math.Float32bits(x)&(1<<31) | 0x3f000000) // ±0.5
		c := min(max(int32(x+half), -127), 127)
		blk[d] = blk[d]&keep | uint64(uint8(c+128))<<sh
	}
	v.scale[r] = mx / 127
}

func abs32(f float32) float32 { return math.Float32frombits(math.Float32bits(f) &^ (1 << 31)) }

// setMeta refreshes the filter fields of id's row, if it has one.
func (v *vectorIndex) setMeta(id string, e *entry) {
	if r, ok := v.rows[id]; ok {
		v.meta[r] = v.rowMetaOf(e)
	}
}

func (v *vectorIndex) remove(ids ...string) {
	for _, id := range ids {
		r, ok := v.rows[id]
		if !ok {
			continue
		}
		delete(v.rows, id)
		v.ids[r] = ""
		v.meta[r] = rowMeta{}
		clear(v.data[int(r)*v.dim : int(r+1)*v.dim])
		v.encode(r)
		v.free = append(v.free, r)
	}
}

func (v *vectorIndex) count() int { return len(v.rows) }

// projects returns the projects of the live rows, "" left out, in code
// order: one pass over the rows' fields, no record read.
func (v *vectorIndex) projects() []string {
	seen := make([]bool, len(v.names))
	for i := range v.meta {
		if v.meta[i].flags&rowLive != 0 {
			seen[v.meta[i].project] = true
		}
	}
	var out []string
	for c, ok := range seen {
		if ok && v.names[c] != "" {
			out = append(out, v.names[c])
		}
	}
	return out
}

// looseIDs returns the ids of the live rows of no project (when
// noProject; but for those with a source of but) or of one of the types
// in types, at most limit+1 of them.
func (v *vectorIndex) looseIDs(noProject bool, but []string, types []memory.Type, limit int) []string {
	var mask uint32
	for _, t := range types {
		mask |= 1 << typeCode(t)
	}
	none := v.codes[""]
	var butCodes []uint32
	for _, src := range but {
		if c, ok := v.codes[src]; ok {
			butCodes = append(butCodes, c)
		}
	}
	var out []string
	for i := range v.meta {
		m := &v.meta[i]
		if m.flags&rowLive != 0 && ((noProject && m.project == none && !slices.Contains(butCodes, m.source)) || mask&(1<<m.typ) != 0) {
			if out = append(out, v.ids[i]); len(out) > limit {
				break
			}
		}
	}
	return out
}

// rowFilter is a Filter compiled against the index's codes.
type rowFilter struct {
	none       bool // matches nothing (unknown project)
	project    uint32
	anyProject bool
	// projects, when not nil, are the codes of Filter.Projects the index
	// knows; plusTypes has a bit per type code of Filter.PlusTypes.
	projects  []uint32
	plusTypes uint32
	// noProjectBut are the source codes of Filter.NoProjectBut: a row of
	// no project (code noProject) with one of them is not of projects.
	noProjectBut []uint32
	noProject    uint32
	kinds        uint32 // bit per kind code; 0 = any
	sources      []bool // by code; nil = any
	since, until int64
	now          int64
	snoozed      bool // include snoozed
	superseded   bool // include superseded
}

func (v *vectorIndex) compile(f *Filter, now int64) rowFilter {
	rf := rowFilter{anyProject: f.Project == "", now: now, snoozed: f.IncludeSnoozed, superseded: f.IncludeSuperseded}
	if !f.anyProject() {
		c, ok := v.codes[f.Project]
		rf.project = c
		rf.none = !ok
	}
	if len(f.Projects) > 0 {
		rf.projects = []uint32{}
		for _, p := range f.Projects {
			if c, ok := v.codes[p]; ok {
				rf.projects = append(rf.projects, c)
			}
		}
		for _, t := range f.PlusTypes {
			rf.plusTypes |= 1 << typeCode(t)
		}
		rf.noProject = v.codes[""]
		for _, src := range f.NoProjectBut {
			if c, ok := v.codes[src]; ok {
				rf.noProjectBut = append(rf.noProjectBut, c)
			}
		}
	}
	for _, k := range f.Kinds {
		rf.kinds |= 1 << kindCode(k)
	}
	if f.Source != "" {
		rf.sources = make([]bool, len(v.names))
		e := entry{}
		for c, name := range v.names {
			e.source = name
			rf.sources[c] = f.matchSource(&e)
		}
	}
	if !f.Since.IsZero() {
		rf.since = f.Since.UnixNano()
	}
	if !f.Until.IsZero() {
		rf.until = f.Until.UnixNano()
	}
	return rf
}

// inProjects reports whether row m is of rf.projects (a row of no
// project with a source of noProjectBut is not).
func (rf *rowFilter) inProjects(m *rowMeta) bool {
	if m.project == rf.noProject && slices.Contains(rf.noProjectBut, m.source) {
		return false
	}
	return slices.Contains(rf.projects, m.project)
}

func (rf *rowFilter) match(m *rowMeta) bool {
	if m.flags&rowLive == 0 {
		return false
	}
	if !rf.anyProject && m.project != rf.project {
		return false
	}
	if rf.projects != nil && !rf.inProjects(m) && rf.plusTypes&(1<<m.typ) == 0 {
		return false
	}
	if rf.kinds != 0 && rf.kinds&(1<<m.kind) == 0 {
		return false
	}
	if rf.sources != nil && (int(m.source) >= len(rf.sources) || !rf.sources[m.source]) {
		return false
	}
	if rf.since != 0 && m.created < rf.since {
		return false
	}
	if rf.until != 0 && m.created >= rf.until {
		return false
	}
	if !rf.snoozed && m.cooldown > rf.now {
		return false
	}
	if !rf.superseded && m.flags&rowSuperseded != 0 {
		return false
	}
	return true
}

// hit is one scored row.
type hit struct {
	score float32
	row   int32
	exact bool // score is already the exact float32 one: no rescoring
}

// topK is a min-heap of the k best hits seen.
type topK struct {
	k int
	h []hit
}

func (t *topK) push(x hit) {
	if len(t.h) < t.k {
		t.h = append(t.h, x)
		for i := len(t.h) - 1; i > 0; {
			p := (i - 1) / 2
			if t.h[p].score <= t.h[i].score {
				break
			}
			t.h[p], t.h[i] = t.h[i], t.h[p]
			i = p
		}
		return
	}
	if x.score <= t.h[0].score {
		return
	}
	t.h[0] = x
	for i := 0; ; {
		l, r, m := 2*i+1, 2*i+2, i
		if l < len(t.h) && t.h[l].score < t.h[m].score {
			m = l
		}
		if r < len(t.h) && t.h[r].score < t.h[m].score {
			m = r
		}
		if m == i {
			break
		}
		t.h[m], t.h[i] = t.h[i], t.h[m]
		i = m
	}
}

// minParallelRows is the index size below which one goroutine scans.
const minParallelRows = 8192

// Rescoring: the int8 scan keeps rescoreCandidates(k) rows per query
// vector, which are then scored exactly. Measured by vector_quant_test.go
// (the built-in embedder over the project's own texts and over the 100k
// bench store, Gaussian vectors with near-duplicate clusters): keeping only
// k rows gets the exact top k for 44-91% of queries; max(2k, 32) already
// for all of them except where rows tie exactly at the k-th score. 4k and
// 64 keep a margin for embedders whose int8 error is larger (other
// dimensions, other distributions); a rescored row costs about 1 µs (it
// is rarely in cache), so 200 of them add about 0.2 ms to a 100k scan.
const (
	rescoreFactor = 4
	rescoreMin    = 64
)

// rescoreCandidates is how many rows the int8 scan keeps for k results.
func rescoreCandidates(k int) int { return max(rescoreFactor*k, rescoreMin) }

// denseBlock is the least number of a block's 8 rows passing the filter
// for which the block is scored with dotBlock; fewer are scored one by one
// in float32, exactly, so they need no rescoring (a selective filter, such
// as one project among many, would otherwise pay for 8 rows to score 1).
const denseBlock = 4

// query returns the k rows matching rf most similar to q (normalised),
// best first, as ids and cosine similarities.
func (v *vectorIndex) query(q []float32, k int, rf *rowFilter) []Scored {
	return v.queryMany([][]float32{q}, k, rf)[0]
}

// span is one query vector of queryMany: the non-zero range [c0, c1) of
// its coordinates, in float32 and as int8 codes.
type span struct {
	q      []float32 // the query's coordinates c0..c1
	c0, c1 int
	codes  []int64 // q's int8 codes, |c| <= 127, as multipliers for dotBlock
	bias   int64   // 128 * sum(codes): what the +128 of the rows' stored codes adds
	scale  float32 // q ~ codes * scale
}

func newSpan(q []float32) span {
	c0, c1 := 0, len(q)
	for c0 < c1 && q[c0] == 0 {
		c0++
	}
	for c1 > c0 && q[c1-1] == 0 {
		c1--
	}
	sp := span{q: q[c0:c1], c0: c0, c1: c1, codes: make([]int64, c1-c0)}
	var mx float32
	for _, f := range sp.q {
		mx = max(mx, abs32(f))
	}
	if mx == 0 {
		return sp
	}
	inv := 127 / mx
	for i, f := range sp.q {
		c := int64(math.Round(float64(f * inv)))
		sp.codes[i] = min(max(c, -127), 127)
		sp.bias += 128 * sp.codes[i]
	}
	sp.scale = mx / 127
	return sp
}

// queryMany is query for several query vectors in one pass over the rows
// (one pass reads each row once, whatever the number of queries). A query
// that is zero outside one range of coordinates (one part of a segmented
// embedder's vector) only reads that range.
//
// The pass scores the int8 copy and keeps, per query, the
// rescoreCandidates(k) best rows by that estimate; those are then scored
// exactly (the same float32 dot product as an exact scan, so the same
// scores bit for bit) and the k best returned, ties by row.
func (v *vectorIndex) queryMany(qs [][]float32, k int, rf *rowFilter) [][]Scored {
	return v.queryManyCand(qs, k, rescoreCandidates(k), rf)
}

// queryManyCand is queryMany keeping cand (>= k) rows per query for the
// exact rescoring.
func (v *vectorIndex) queryManyCand(qs [][]float32, k, cand int, rf *rowFilter) [][]Scored {
	out := make([][]Scored, len(qs))
	n := len(v.ids)
	if rf.none || n == 0 || k <= 0 {
		return out
	}
	var spans []span
	var which []int // index in qs of each span
	for i, q := range qs {
		if len(q) != v.dim {
			continue
		}
		spans = append(spans, newSpan(q))
		which = append(which, i)
	}
	if len(spans) == 0 {
		return out
	}
	cand = max(cand, k)
	blocks := (n + 7) / 8
	workers := runtime.GOMAXPROCS(0)
	if n < minParallelRows || workers < 2 {
		workers = 1
	}
	heaps := make([][]topK, workers)
	scan := func(w, lo, hi int) {
		ts := make([]topK, len(spans))
		for i := range ts {
			ts[i] = topK{k: cand, h: make([]hit, 0, min(cand, 8*(hi-lo)))}
		}
		dim := v.dim
		var est [8]int64
		for b := lo; b < hi; b++ {
			r0 := 8 * b
			var pass [8]bool
			m := 0
			for i := range min(8, n-r0) {
				if rf.match(&v.meta[r0+i]) {
					pass[i] = true
					m++
				}
			}
			if m == 0 {
				continue
			}
			if m < denseBlock {
				for i, ok := range pass {
					if !ok {
						continue
					}
					r := r0 + i
					row := v.data[r*dim : (r+1)*dim]
					for j := range spans {
						sp := &spans[j]
						ts[j].push(hit{score: dot(sp.q, row[sp.c0:sp.c1]), row: int32(r), exact: true})
					}
				}
				continue
			}
			blk := v.q8[b*dim : (b+1)*dim]
			for j := range spans {
				sp := &spans[j]
				a0, a1, a2, a3 := dotBlock(sp.codes, blk[sp.c0:sp.c1])
				est[0], est[4] = lanes(a0)
				est[1], est[5] = lanes(a1)
				est[2], est[6] = lanes(a2)
				est[3], est[7] = lanes(a3)
				for i, ok := range pass {
					if ok {
						s := float32(est[i]-sp.bias) * sp.scale * v.scale[r0+i]
						ts[j].push(hit{score: s, row: int32(r0 + i)})
					}
				}
			}
		}
		heaps[w] = ts
	}
	if workers == 1 {
		scan(0, 0, blocks)
	} else {
		var wg sync.WaitGroup
		per := (blocks + workers - 1) / workers
		for w := 0; w < workers; w++ {
			lo, hi := min(w*per, blocks), min((w+1)*per, blocks)
			wg.Add(1)
			go func() { defer wg.Done(); scan(w, lo, hi) }()
		}
		wg.Wait()
	}
	for j := range spans {
		sp := &spans[j]
		var all []hit
		for _, ts := range heaps {
			all = append(all, ts[j].h...)
		}
		if len(all) > cand {
			// The best cand of every worker's best cand: the same rows
			// whatever the number of workers.
			sortHits(all)
			all = all[:cand]
		}
		for i := range all {
			if !all[i].exact {
				r := int(all[i].row)
				all[i].score = dot(sp.q, v.data[r*v.dim+sp.c0:r*v.dim+sp.c1])
			}
		}
		sortHits(all)
		if len(all) > k {
			all = all[:k]
		}
		res := make([]Scored, len(all))
		for i, h := range all {
			res[i] = Scored{ID: v.ids[h.row], Score: clampSim(h.score)}
		}
		out[which[j]] = res
	}
	return out
}

// sortHits orders hits best first, ties by row.
func sortHits(hs []hit) {
	slices.SortFunc(hs, func(a, b hit) int {
		if a.score != b.score {
			if a.score > b.score {
				return -1
			}
			return 1
		}
		return int(a.row - b.row)
	})
}

// lanes splits a dotBlock accumulator into its two signed 32-bit sums (the
// low lane's row first). The accumulator is their sum modulo 2^64, lo +
// hi*2^32, and each is far below 2^31 in magnitude (at most
// dim*255*127).
func lanes(a uint64) (lo, hi int64) {
	l := int32(uint32(a))
	return int64(l), int64(int32(uint32((a - uint64(int64(l))) >> 32)))
}

// dotBlock scores the 8 rows of one block against a query's int8 codes q
// over the coordinates blk covers (len(blk) == len(q)). Each blk word holds
// one coordinate of the 8 rows, a byte each; masking every fourth byte
// leaves two rows 32 bits apart, so one 64-bit multiply by the query's
// code scores both, and the sums stay apart (SWAR; the compiler does not
// vectorise, so this is how the scan does two products per instruction).
// It returns 4 accumulators: a0 holds rows 0 and 4, a1 rows 1 and 5, a2
// rows 2 and 6, a3 rows 3 and 7 (see lanes). Negative codes work through
// two's complement: the lanes are decoded modulo 2^32.
func dotBlock(q []int64, blk []uint64) (a0, a1, a2, a3 uint64) {
	const m = 0x000000FF_000000FF
	blk = blk[:len(q)]
	d := 0
	for ; d+4 <= len(q); d += 4 {
		qq := q[d : d+4 : d+4]
		bb := blk[d : d+4 : d+4]
		x, y := uint64(qq[0]), uint64(qq[1])
		w, u := bb[0], bb[1]
		a0 += (w&m)*x + (u&m)*y
		a1 += (w>>8&m)*x + (u>>8&m)*y
		a2 += (w>>16&m)*x + (u>>16&m)*y
		a3 += (w>>24&m)*x + (u>>24&m)*y
		x, y = uint64(qq[2]), uint64(qq[3])
		w, u = bb[2], bb[3]
		a0 += (w&m)*x + (u&m)*y
		a1 += (w>>8&m)*x + (u>>8&m)*y
		a2 += (w>>16&m)*x + (u>>16&m)*y
		a3 += (w>>24&m)*x + (u>>24&m)*y
	}
	for ; d < len(q); d++ {
		x, w := uint64(q[d]), blk[d]
		a0 += (w & m) * x
		a1 += (w >> 8 & m) * x
		a2 += (w >> 16 & m) * x
		a3 += (w >> 24 & m) * x
	}
	return a0, a1, a2, a3
}

// dot is the dot product of two equal-length vectors, unrolled eight ways
// (independent accumulators let the CPU overlap the multiplies).
func dot(a, b []float32) float32 {
	b = b[:len(a)]
	var s0, s1, s2, s3, s4, s5, s6, s7 float32
	i := 0
	for ; i+8 <= len(a); i += 8 {
		aa := a[i : i+8 : i+8]
		bb := b[i : i+8 : i+8]
		s0 += aa[0] * bb[0]
		s1 += aa[1] * bb[1]
		s2 += aa[2] * bb[2]
		s3 += aa[3] * bb[3]
		s4 += aa[4] * bb[4]
		s5 += aa[5] * bb[5]
		s6 += aa[6] * bb[6]
		s7 += aa[7] * bb[7]
	}
	for ; i < len(a); i++ {
		s0 += a[i] * b[i]
	}
	return (s0 + s1) + (s2 + s3) + (s4 + s5) + (s6 + s7)
}
