package store

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/memtray/memtray/backend/memory"
)

// List is the browser's listing path (a table of every memory, sorted and
// filtered on its columns, paged): it answers from the in-memory entries
// alone, never reading bbolt or decoding a record. Every entry carries, next
// to the filter fields the vector index needs, the columns List sorts and
// filters on (listFields) and the lowercased text for the substring filter;
// they are set wherever an entry is (Open, Put, PutBatch, Update, Delete,
// Supersede, Apply with its trash and restore, Import, ApplyTeam) and
// Reembed leaves them as they are, since it changes only embeddings. The
// same entries answer Facets (counts per project, kind, type, source and
// scope) without decoding a record.
//
// Memory cost: ~100 bytes of fields per memory plus the lowercased text (its
// length in bytes, ~70-350 bytes for typical memories); see
// BenchmarkOpen (heap-MB, list-text-MB).

// ListSort names the key List sorts by.
type ListSort string

// The sort keys of List; they are the UI's (httpapi.ListSorts).
const (
	SortCreated    ListSort = "created"    // CreatedAt (the default)
	SortUpdated    ListSort = "updated"    // UpdatedAt
	SortImportance ListSort = "importance" // Importance
	SortAccess     ListSort = "access"     // AccessCount
	SortReinforced ListSort = "reinforced" // ReinforcedCount
	SortStickiness ListSort = "stickiness" // see ListQuery.StickyMinAccess
	SortLastUsed   ListSort = "last_used"  // LastAccessed (never accessed sorts first)
	SortKind       ListSort = "kind"       // Kind, as a string
	SortProject    ListSort = "project"    // Project, as a string
)

// ListSorts are List's sort keys.
var ListSorts = []ListSort{SortCreated, SortUpdated, SortImportance, SortAccess, SortReinforced,
	SortStickiness, SortLastUsed, SortKind, SortProject}

// SnoozeFilter says what List does with snoozed memories (CooldownUntil
// after ListQuery.Now).
type SnoozeFilter uint8

const (
	SnoozedInclude SnoozeFilter = iota // list them with the others (the zero value)
	SnoozedExclude                     // leave them out
	SnoozedOnly                        // list only them
)

// ListQuery selects, orders and pages List's answer.
type ListQuery struct {
	Project string // exact project; "" matches all
	// Projects keeps the memories of any of these projects (with Project
	// set too, both must hold); empty matches all.
	Projects []string
	Kinds    []memory.Kind // any of; empty matches all
	Types    []memory.Type // any of; empty matches all
	// Scopes keeps the memories of any of these stored scopes
	// (memory.ScopeDefault among them keeps those without one); empty
	// matches all.
	Scopes []memory.Scope
	// Source keeps the memories of one source, exactly or as its family,
	// the part before the first ":" ("ingest" keeps "ingest:design.md",
	// see SourceFamily); "" matches all.
	Source  string
	Snoozed SnoozeFilter
	// IncludeSuperseded lists old versions (SupersededBy set) too.
	IncludeSuperseded bool
	// Text keeps the memories whose text contains it, ignoring case
	// (strings.Contains(strings.ToLower(text), strings.ToLower(Text))).
	Text string
	// Now is the instant snoozing is judged at; zero is the store's clock.
	Now time.Time
	// Sort is the key ("" is SortCreated), ascending unless Desc. Ties are
	// broken by id, in the same direction, so pages never overlap.
	Sort ListSort
	Desc bool
	// StickyMinAccess parameterises SortStickiness, which is
	// memory.Stickiness: AccessCount / max(ReinforcedCount, 1), and 0 when
	// AccessCount is below StickyMinAccess or not positive.
	StickyMinAccess int
	// Offset skips that many matches; Limit bounds the ids returned (0: all).
	Offset, Limit int
}

func (q *ListQuery) validate() error {
	var problems []string
	for _, k := range q.Kinds {
		if !k.Valid() {
			problems = append(problems, fmt.Sprintf("unknown kind %q in list query", k))
		}
	}
	for _, t := range q.Types {
		if !t.Valid() {
			problems = append(problems, fmt.Sprintf("unknown type %q in list query", t))
		}
	}
	for _, sc := range q.Scopes {
		if !sc.Valid() {
			problems = append(problems, fmt.Sprintf("unknown scope %q in list query", sc))
		}
	}
	if len(q.Source) > 256 || !memory.ValidUTF8(q.Source) {
		problems = append(problems, "list query source is too long or not UTF-8")
	}
	for _, p := range append([]string{q.Project}, q.Projects...) {
		if len(p) > 256 || !memory.ValidUTF8(p) {
			problems = append(problems, "list query project is too long or not UTF-8")
			break
		}
	}
	if q.Sort != "" && !slices.Contains(ListSorts, q.Sort) {
		problems = append(problems, fmt.Sprintf("unknown sort key %q", q.Sort))
	}
	if q.Snoozed > SnoozedOnly {
		problems = append(problems, "unknown snooze filter")
	}
	if q.Offset < 0 || q.Limit < 0 {
		problems = append(problems, "offset and limit must not be negative")
	}
	if len(problems) > 0 {
		return &memory.ValidationError{Problems: problems}
	}
	return nil
}

// listFields are the columns of an entry List sorts and filters on that
// the record header does not hold.
type listFields struct {
	updated, lastAccessed int64 // timeKey
	importance            float64
	access, reinforced    int
	typ                   memory.Type
	scope                 memory.Scope
	pinned                bool
	lower                 string // strings.ToLower(text)
	// names is the number of terms the names field makes of the text
	// (nameLength): counted with the text, or at Open the count Close
	// stored (internalNames) when the text is the one it was counted from.
	names int32
}

// timeKey orders times as time.Time.Compare does, the zero time first:
// unix nanoseconds, saturated outside the years 1678..2262.
func timeKey(t time.Time) int64 {
	if t.IsZero() {
		return math.MinInt64
	}
	if s := t.Unix(); s <= math.MinInt64/1_000_000_000+1 {
		return math.MinInt64 + 1
	} else if s >= math.MaxInt64/1_000_000_000-1 {
		return math.MaxInt64
	}
	return t.UnixNano()
}

// internType shares the string of a known type.
func internType(t memory.Type) memory.Type {
	for _, v := range memory.Types {
		if t == v {
			return v
		}
	}
	return t
}

// typeCode numbers the known types from 1 (0: any other), for bit sets.
func typeCode(t memory.Type) uint8 {
	for i, v := range memory.Types {
		if t == v {
			return uint8(i + 1)
		}
	}
	return 0
}

// scopes are the stored scopes, numbered from 1 by scopeCode.
var scopes = [...]memory.Scope{memory.ScopeDefault, memory.ScopePersonal, memory.ScopeTeam}

// scopeCode numbers the known scopes from 1 (0: any other), for bit sets.
func scopeCode(sc memory.Scope) uint8 {
	for i, v := range scopes {
		if sc == v {
			return uint8(i + 1)
		}
	}
	return 0
}

// internScope shares the string of a known scope.
func internScope(sc memory.Scope) memory.Scope {
	if c := scopeCode(sc); c > 0 {
		return scopes[c-1]
	}
	return sc
}

// listFieldsOf makes the listFields of a memory; names is the count of
// its text's names when known (stored, internalNames), else -1: counted here.
func listFieldsOf(text string, typ memory.Type, scope memory.Scope, importance float64, pinned bool,
	access, reinforced int, updated, lastAccessed time.Time, names int32) listFields {
	if names < 0 {
		names = nameLength(text)
	}
	return listFields{
		updated: timeKey(updated), lastAccessed: timeKey(lastAccessed),
		importance: importance, access: access, reinforced: reinforced,
		typ: internType(typ), scope: internScope(scope), pinned: pinned,
		// A fresh copy: text may alias a bigger allocation (a decoded record).
		lower: strings.Clone(strings.ToLower(text)),
		names: names,
	}
}

// pendingList is an entry loaded from its header whose listFields are
// still to be decoded from the record's JSON (which aliases bbolt's map:
// valid only inside the read transaction).
type pendingList struct {
	id string
	e  *entry
	js []byte
	// names is the record's names count as Close stored it (internalNames),
	// or -1: to be counted from its text.
	names int32
}

// unreadableRecord names a record whose JSON does not decode, and why.
type unreadableRecord struct {
	id  string
	err error
}

// fillListFields decodes the listFields of pending entries on up to
// GOMAXPROCS goroutines and returns the records whose JSON does not
// decode, in pending's order. It must run inside the read transaction
// the JSON comes from.
func fillListFields(pending []pendingList) []unreadableRecord {
	workers := min(runtime.GOMAXPROCS(0), max(1, len(pending)/1024))
	bad := make([][]unreadableRecord, workers)
	var wg sync.WaitGroup
	per := (len(pending) + workers - 1) / max(workers, 1)
	for w := 0; w < workers; w++ {
		lo, hi := w*per, min((w+1)*per, len(pending))
		wg.Add(1)
		go func() {
			defer wg.Done()
			for _, p := range pending[lo:hi] {
				// The whole record, by the rule every read decodes it by:
				// one Open keeps is one every read can decode.
				var m memory.Memory
				if err := decodeFields(p.js, &m); err != nil {
					bad[w] = append(bad[w], unreadableRecord{p.id, err})
					continue
				}
				p.e.listFields = listFieldsOf(m.Text, m.Type, m.Scope, m.Importance, m.Pinned, m.AccessCount,
					m.ReinforcedCount, m.UpdatedAt, m.LastAccessed, p.names)
			}
		}()
	}
	wg.Wait()
	var out []unreadableRecord
	for _, b := range bad {
		out = append(out, b...)
	}
	return out
}

// listItem is one match of a List: its sort key as an order-preserving
// unsigned integer (numeric keys) or a string (kind, project), and its id.
type listItem struct {
	k  uint64
	s  string
	id string
}

// intKey maps an int64 to a uint64 of the same order.
func intKey(i int64) uint64 { return uint64(i) ^ (1 << 63) }

// floatKey maps a float64 to a uint64 ordered as cmp.Compare orders
// floats: NaN first, -0 equal to +0.
func floatKey(f float64) uint64 {
	if math.IsNaN(f) {
		return 0
	}
	if f == 0 {
		f = 0 // -0 -> +0
	}
	b := math.Float64bits(f)
	if b>>63 == 1 {
		return ^b
	}
	return b | 1<<63
}

// List returns the ids of one page of the memories q selects, in q's
// order, and how many matched in all. It reads only the in-memory entries
// (no bbolt, no decoding): fetch the page's records with GetMany. At 100k
// memories a page takes a few milliseconds (BenchmarkList). Writes made
// after List returns may make a listed id disappear before GetMany.
func (s *Store) List(ctx context.Context, q ListQuery) ([]string, int, error) {
	if err := s.checkOpen(); err != nil {
		return nil, 0, err
	}
	if err := q.validate(); err != nil {
		return nil, 0, fmt.Errorf("list: %w", err)
	}
	if err := ctx.Err(); err != nil {
		return nil, 0, err
	}
	m := s.matcherOf(&q)
	sortKey := q.Sort
	if sortKey == "" {
		sortKey = SortCreated
	}

	bufp := listBufs.Get().(*[]listItem)
	defer func() {
		clear(*bufp) // drop the ids
		listBufs.Put(bufp)
	}()
	s.mu.RLock()
	items := slices.Grow((*bufp)[:0], len(s.entries))
	for id, e := range s.entries {
		if !m.match(e) {
			continue
		}
		it := listItem{id: id}
		switch sortKey {
		case SortCreated:
			it.k = intKey(e.created)
		case SortUpdated:
			it.k = intKey(e.updated)
		case SortImportance:
			it.k = floatKey(e.importance)
		case SortAccess:
			it.k = intKey(int64(e.access))
		case SortReinforced:
			it.k = intKey(int64(e.reinforced))
		case SortStickiness:
			it.k = floatKey(memory.Stickiness(e.access, e.reinforced, q.StickyMinAccess))
		case SortLastUsed:
			it.k = intKey(e.lastAccessed)
		case SortKind:
			it.s = string(e.kind)
		case SortProject:
			it.s = e.project
		}
		items = append(items, it)
	}
	s.mu.RUnlock()
	*bufp = items

	total := len(items)
	if q.Offset >= total {
		return []string{}, total, nil
	}
	end := total
	if q.Limit > 0 {
		end = min(total, q.Offset+q.Limit)
	}
	compare := func(a, b listItem) int {
		c := cmp.Compare(a.k, b.k)
		if c == 0 {
			c = strings.Compare(a.s, b.s)
		}
		if c == 0 {
			c = strings.Compare(a.id, b.id)
		}
		if q.Desc {
			return -c
		}
		return c
	}
	sortPage(items, q.Offset, end, compare)
	out := make([]string, 0, end-q.Offset)
	for _, it := range items[q.Offset:end] {
		out = append(out, it.id)
	}
	return out, total, nil
}

// listMatcher is a ListQuery's filters prepared for testing entries.
type listMatcher struct {
	q        *ListQuery
	nowKey   int64
	text     string // lowercased
	pivot    int    // rarestByte(text)
	projects map[string]bool
	// Bit sets by kindCode, typeCode and scopeCode; 0 matches any.
	kinds, types, scopes uint32
}

// matcherOf prepares q's filters (q must be valid).
func (s *Store) matcherOf(q *ListQuery) *listMatcher {
	now := q.Now
	if now.IsZero() {
		now = s.now()
	}
	m := &listMatcher{q: q, nowKey: now.UnixNano(), text: strings.ToLower(q.Text)}
	m.pivot = rarestByte(m.text)
	for _, k := range q.Kinds {
		m.kinds |= 1 << kindCode(k)
	}
	for _, t := range q.Types {
		m.types |= 1 << typeCode(t)
	}
	for _, sc := range q.Scopes {
		m.scopes |= 1 << scopeCode(sc)
	}
	if len(q.Projects) > 0 {
		m.projects = make(map[string]bool, len(q.Projects))
		for _, p := range q.Projects {
			m.projects[p] = true
		}
	}
	return m
}

// match reports whether e passes the query's filters.
func (m *listMatcher) match(e *entry) bool {
	q := m.q
	switch {
	case q.Project != "" && e.project != q.Project,
		m.kinds != 0 && m.kinds&(1<<kindCode(e.kind)) == 0,
		m.types != 0 && m.types&(1<<typeCode(e.typ)) == 0,
		m.scopes != 0 && m.scopes&(1<<scopeCode(e.scope)) == 0,
		!q.IncludeSuperseded && e.superseded,
		q.Snoozed != SnoozedInclude && (e.cooldown > m.nowKey) != (q.Snoozed == SnoozedOnly),
		q.Source != "" && !SourceIn(e.source, q.Source),
		m.projects != nil && !m.projects[e.project],
		m.text != "" && !containsAt(e.lower, m.text, m.pivot):
		return false
	}
	return true
}

// SourceFamily is a source without what follows its first ":"
// ("ingest:design.md" -> "ingest").
func SourceFamily(source string) string {
	if i := strings.IndexByte(source, ':'); i >= 0 {
		return source[:i]
	}
	return source
}

// SourceIn reports whether source is want or of the family want
// (SourceFamily(source) == want), as ListQuery.Source filters.
func SourceIn(source, want string) bool {
	if source == want {
		return true
	}
	n := len(want)
	return len(source) > n && source[n] == ':' && source[:n] == want && strings.IndexByte(want, ':') < 0
}

// listBufs recycles List's match buffers (100k matches are 4 MB).
var listBufs = sync.Pool{New: func() any { return new([]listItem) }}

// sortPage rearranges a so that a[lo:hi] holds, sorted, the elements that
// a full sort would put there (cmp must order a's elements strictly: no
// two equal). It takes O(len(a) + (hi-lo) log(hi-lo)) comparisons on
// average instead of a full sort's O(len(a) log len(a)).
func sortPage(a []listItem, lo, hi int, cmp func(a, b listItem) int) {
	selectNth(a, hi, cmp)
	selectNth(a[:hi], lo, cmp)
	slices.SortFunc(a[lo:hi], cmp)
}

// selectNth rearranges a so that a[k] is the element a full sort would put
// there, with smaller elements before it and larger after (quickselect
// with random pivots). k outside a leaves a as it is.
func selectNth(a []listItem, k int, cmp func(a, b listItem) int) {
	if k < 0 || k >= len(a) {
		return
	}
	l, r := 0, len(a)-1
	for r-l > 12 {
		p := a[l+rand.IntN(r-l+1)]
		i, j := l, r
		for i <= j {
			for cmp(a[i], p) < 0 {
				i++
			}
			for cmp(a[j], p) > 0 {
				j--
			}
			if i <= j {
				a[i], a[j] = a[j], a[i]
				i++
				j--
			}
		}
		// a[l..j] <= p <= a[i..r]; between them only p itself.
		switch {
		case k <= j:
			r = j
		case k >= i:
			l = i
		default:
			return
		}
	}
	slices.SortFunc(a[l:r+1], cmp)
}

// byteFreq ranks the bytes of English text, most frequent last; a byte not
// listed (digits, punctuation, non-ASCII) counts as rare.
const byteFreq = "zqjxkvbpygfwmucdlhrsnioate "

// rarestByte returns the position in needle of its rarest byte by
// byteFreq, the one containsAt looks for first.
func rarestByte(needle string) int {
	best, rank := 0, len(byteFreq)
	for i := 0; i < len(needle); i++ {
		r := strings.IndexByte(byteFreq, needle[i])
		if r < 0 {
			return i
		}
		if r < rank {
			best, rank = i, r
		}
	}
	return best
}

// containsAt is strings.Contains(hay, needle), scanning (with IndexByte's
// vector instructions) for needle's byte at pivot, which is usually rare,
// instead of its first byte, which often is not.
func containsAt(hay, needle string, pivot int) bool {
	c, n := needle[pivot], len(needle)
	for i := pivot; i < len(hay); {
		j := strings.IndexByte(hay[i:], c)
		if j < 0 {
			return false
		}
		start := i + j - pivot
		if start+n > len(hay) {
			return false
		}
		if hay[start:start+n] == needle {
			return true
		}
		i += j + 1
	}
	return false
}
