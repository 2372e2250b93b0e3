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
// normalised once, in one contiguous []float32 (row-major), with the
// fields filters need stored inline per row, scanned exactly (brute force)
// by up to GOMAXPROCS goroutines with a private top-k heap each. It is
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
type vectorIndex struct {
	dim   int
	data  []float32 // rows*dim, normalised vectors
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
		kind: kindCode(e.kind), flags: rowLive}
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
		v.data = append(v.data, make([]float32, v.dim)...)
	}
	v.ids[r] = id
	v.rows[id] = r
	return r
}

// add indexes vec for id (a normalised copy), replacing what id had. A zero
// vector is similar to nothing: id is left out.
func (v *vectorIndex) add(id string, vec []float32, e *entry) {
	if isZero(vec) || len(vec) != v.dim {
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
	v.meta[r] = v.rowMetaOf(e)
}

// addPacked indexes a packed little-endian float32 vector.
func (v *vectorIndex) addPacked(id string, packed []byte, e *entry) {
	if len(packed) != 4*v.dim {
		v.remove(id)
		return
	}
	var sq float64
	for i := 0; i < v.dim; i++ {
		f := math.Float32frombits(binary.LittleEndian.Uint32(packed[4*i:]))
		sq += float64(f) * float64(f)
	}
	if sq == 0 {
		v.remove(id)
		return
	}
	r := v.slot(id)
	row := v.data[int(r)*v.dim : int(r+1)*v.dim]
	inv := 1 / math.Sqrt(sq)
	for i := range row {
		row[i] = float32(float64(math.Float32frombits(binary.LittleEndian.Uint32(packed[4*i:]))) * inv)
	}
	v.meta[r] = v.rowMetaOf(e)
}

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
		v.free = append(v.free, r)
	}
}

func (v *vectorIndex) count() int { return len(v.rows) }

// rowFilter is a Filter compiled against the index's codes.
type rowFilter struct {
	none         bool // matches nothing (unknown project)
	project      uint32
	anyProject   bool
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

func (rf *rowFilter) match(m *rowMeta) bool {
	if m.flags&rowLive == 0 {
		return false
	}
	if !rf.anyProject && m.project != rf.project {
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

// query returns the k rows matching rf most similar to q (normalised),
// best first, as ids and cosine similarities.
func (v *vectorIndex) query(q []float32, k int, rf *rowFilter) []Scored {
	return v.queryMany([][]float32{q}, k, rf)[0]
}

// queryMany is query for several query vectors in one pass over the rows
// (the index is memory-bound: one pass reads each row once, whatever the
// number of queries). A query that is zero outside one range of
// coordinates (one part of a segmented embedder's vector) only reads that
// range.
func (v *vectorIndex) queryMany(qs [][]float32, k int, rf *rowFilter) [][]Scored {
	out := make([][]Scored, len(qs))
	n := len(v.ids)
	if rf.none || n == 0 || k <= 0 {
		return out
	}
	type span struct {
		q      []float32
		c0, c1 int
	}
	var spans []span
	var which []int // index in qs of each span
	for i, q := range qs {
		if len(q) != v.dim {
			continue
		}
		c0, c1 := 0, len(q)
		for c0 < c1 && q[c0] == 0 {
			c0++
		}
		for c1 > c0 && q[c1-1] == 0 {
			c1--
		}
		spans = append(spans, span{q: q[c0:c1], c0: c0, c1: c1})
		which = append(which, i)
	}
	if len(spans) == 0 {
		return out
	}
	workers := runtime.GOMAXPROCS(0)
	if n < minParallelRows || workers < 2 {
		workers = 1
	}
	heaps := make([][]topK, workers)
	scan := func(w, lo, hi int) {
		ts := make([]topK, len(spans))
		for i := range ts {
			ts[i] = topK{k: k, h: make([]hit, 0, k)}
		}
		dim := v.dim
		for r := lo; r < hi; r++ {
			if !rf.match(&v.meta[r]) {
				continue
			}
			row := v.data[r*dim : (r+1)*dim]
			for i := range spans {
				sp := &spans[i]
				ts[i].push(hit{score: dot(sp.q, row[sp.c0:sp.c1]), row: int32(r)})
			}
		}
		heaps[w] = ts
	}
	if workers == 1 {
		scan(0, 0, n)
	} else {
		var wg sync.WaitGroup
		per := (n + workers - 1) / workers
		for w := 0; w < workers; w++ {
			lo, hi := w*per, min((w+1)*per, n)
			wg.Add(1)
			go func() { defer wg.Done(); scan(w, lo, hi) }()
		}
		wg.Wait()
	}
	for i := range spans {
		var all []hit
		for _, ts := range heaps {
			all = append(all, ts[i].h...)
		}
		slices.SortFunc(all, func(a, b hit) int {
			if a.score != b.score {
				if a.score > b.score {
					return -1
				}
				return 1
			}
			return int(a.row - b.row)
		})
		if len(all) > k {
			all = all[:k]
		}
		res := make([]Scored, len(all))
		for j, h := range all {
			res[j] = Scored{ID: v.ids[h.row], Score: clampSim(h.score)}
		}
		out[which[i]] = res
	}
	return out
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
