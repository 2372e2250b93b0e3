package search

import (
	"context"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/memtray/memtray/backend/config"
	"github.com/memtray/memtray/backend/embed"
	"github.com/memtray/memtray/backend/embed/wordvec"
	"github.com/memtray/memtray/backend/memory"
	"github.com/memtray/memtray/backend/store"
)

// Mode selects which candidate lists a search fuses.
type Mode string

// The search modes.
const (
	// ModeHybrid fuses the vector and BM25 lists (the default).
	ModeHybrid Mode = "hybrid"
	// ModeBM25 uses the BM25 list alone.
	ModeBM25 Mode = "bm25"
	// ModeVector uses the vector list alone.
	ModeVector Mode = "vector"
)

// Modes lists every Mode.
var Modes = []Mode{ModeHybrid, ModeBM25, ModeVector}

// MaxQueryBytes bounds a query's text.
const MaxQueryBytes = 64 << 10

// MaxK bounds Query.K.
const MaxK = 1000

// PromptTerms is the number of analysed terms above which a query counts as a
// prompt: its BM25 leg then searches for its IDF keywords instead of the
// whole text.
const PromptTerms = 16

// Query is one search request.
type Query struct {
	// Text is what to search for: a short query or a whole prompt.
	Text string
	// Project is the caller's current project; its memories get the project
	// boost. It does not filter: set Filter.Project for that.
	Project string
	// K is how many hits to return; 0 means the configured default.
	K int
	// Mode is hybrid (default when empty), bm25 or vector.
	Mode Mode
	// Filter narrows the candidates (project, kinds, source, time range,
	// snoozed, superseded).
	Filter store.Filter
	// Exclude, if set, drops the memories it returns true for (e.g. what
	// this session already received). Excluded memories still count for
	// diversity: a near-duplicate of one is demoted as well.
	Exclude func(id string) bool
	// NoFloors keeps candidates below the relative and absolute floors
	// (evaluation protocols that score a fixed depth use it).
	NoFloors bool
	// NoMMR keeps the composite order instead of reordering for diversity.
	NoMMR bool
	// Prompt says Text is a user's prompt to an agent (the prompt hook's
	// recall), not words someone searches for: a generic prompt ("continue",
	// "fix it") gets nothing (Evidence.Generic), while a search for one
	// ordinary word ("postgres") is a search like any other.
	Prompt bool
	// ProjectScoped limits the search to what a prompt of Project may be
	// given (the prompt hook's recall, recall.project_scoped): the
	// memories of Project, of no project, the user's own (memory.TypeUser)
	// and those of the projects Text names (NamedProjects). Ignored with a
	// Filter.Project (the caller chose the project).
	ProjectScoped bool
}

// Result is a search's hits plus what shaped them.
type Result struct {
	// Hits are the results, best first.
	Hits []memory.Hit
	// Keywords are the query's IDF keywords.
	Keywords []Keyword
	// TextQuery is what the BM25 leg searched for.
	TextQuery string
	// Expansions are the terms a hybrid search's BM25 leg added to
	// TextQuery's own: analysed WordNet synonyms and hypernyms of its words,
	// with their weights.
	Expansions []store.Term
	// Candidates is the number of memories scored: the distinct ones the
	// legs returned, at most the pool (the legs' depth), and at most as
	// many more of the current project's (see Run, step 3).
	Candidates int
	// BelowAbsolute and BelowRelative count the candidates each floor dropped.
	BelowAbsolute, BelowRelative int
	// LackName counts the candidates a prompt's subject stage dropped: each
	// lacks a name the prompt writes by its form, and the prompt's other
	// words are not specific on their own (see Run, step 4).
	LackName int
	// Evidence is the query-level test of whether the store holds what the
	// query is about (see Run, step 4); Tested says it ran (the gate is on,
	// the floors are and there were candidates). NoEvidence is set when it
	// failed and the search returned nothing for that reason.
	Evidence   Evidence
	Tested     bool
	NoEvidence bool
	// Coverage and Cosine are the best candidate's evidence of each kind
	// (see Run).
	Coverage, Cosine float64
	// Scored is every candidate's evidence, in fusion order, before the
	// floors (for explaining a result).
	Scored []CandidateEvidence
	// Scoped says the search was limited to a prompt's reach
	// (Query.ProjectScoped); NamedProjects are the other projects it
	// reached because the text names them.
	Scoped        bool
	NamedProjects []string
	// Degraded, when not empty, says why the vector leg was skipped: the
	// embedder is unavailable (memory.ErrUnavailable), so a hybrid search
	// ran on BM25 alone rather than failing.
	Degraded string
}

// CandidateEvidence is what Run measured of one candidate.
type CandidateEvidence struct {
	ID string `json:"id"`
	// Coverage is ExpandedCoverage (store IDF), Info InfoShare (general
	// surprisal), Cosine the embedding cosine to the query.
	Coverage  float64 `json:"coverage"`
	Info      float64 `json:"info"`
	Cosine    float64 `json:"cosine"`
	Composite float64 `json:"composite"`
	// Breakdown is every factor of Composite, for evaluation (the eval's
	// dump); not serialised.
	Breakdown memory.ScoreBreakdown `json:"-"`
}

// index is the part of *store.Store the engine uses.
type index interface {
	VectorSearchMany(ctx context.Context, vecs [][]float32, n int, f store.Filter) ([][]store.Scored, error)
	TextSearchTerms(ctx context.Context, terms []store.Term, n int, f store.Filter) ([]store.Scored, error)
	GetMany(ctx context.Context, ids []string) (map[string]memory.Memory, error)
	List(ctx context.Context, q store.ListQuery) ([]string, int, error)
	DocFreq(ctx context.Context, terms []string) (map[string]int, error)
	NameDocFreq(ctx context.Context, names []string) (map[string]int, error)
	Analyze(text string) []string
	Count() int
	CheckModel(model string) error
	Projects() []string
}

// Engine runs searches over one store. It is safe for concurrent use.
type Engine struct {
	idx   index
	emb   memory.Embedder
	cfg   config.Search
	clock memory.Clock
	// thesaurus returns the query expansion thesaurus, loading it on first
	// use; nil or a nil result: no expansion.
	thesaurus func() (Thesaurus, error)
	// sample and background are what the vector evidence is measured
	// against, wordInfo weighs the query's words (Evidence).
	sample     storeSample
	background backgroundVecs
	wordInfo   func() (func(string) (float64, bool), float64, error)
	floors     floors // similarity floors set after New (floor.go)
}

// Thesaurus proposes words related to a query word (wordvec.Thesaurus).
type Thesaurus interface {
	Related(word string, fn func(related string, synonym bool))
}

// New returns an engine over st that embeds queries with emb (the store's
// embedding model), scores with cfg and tells the time with clock (nil: the
// wall clock).
func New(st *store.Store, emb memory.Embedder, cfg config.Search, clock memory.Clock) *Engine {
	return newEngine(st, emb, cfg, clock)
}

func newEngine(idx index, emb memory.Embedder, cfg config.Search, clock memory.Clock) *Engine {
	if clock == nil {
		clock = memory.SystemClock{}
	}
	if cfg.VectorWeight == 0 {
		cfg.VectorWeight = DefaultVectorWeight(emb.Model())
	}
	return &Engine{idx: idx, emb: emb, cfg: cfg, clock: clock, thesaurus: builtinThesaurus, wordInfo: wordInfo}
}

// builtinThesaurus is the WordNet thesaurus shipped in the binary.
func builtinThesaurus() (Thesaurus, error) {
	t, err := wordvec.BuiltinThesaurus()
	if err != nil {
		return nil, err
	}
	return t, nil
}

// DefaultVectorWeight is the vector list's RRF weight for an embedding
// model when the config leaves it to search (see config.Search.VectorWeight):
// 0.25 for the lexical vectors (embed.LexicalModel), 1 for the others (a
// segmented embedder's parts carry their own weights, which it scales).
func DefaultVectorWeight(model string) float64 {
	if model == embed.LexicalModel {
		return 0.25
	}
	return 1
}

// segmentQuery is one vector list's query and RRF weight.
type segmentQuery struct {
	vec    []float32
	weight float64
}

// segmentQueries splits a query vector into one query per part of a
// segmented embedder (memory.SegmentedEmbedder), each zero outside its
// part; a part the query leaves all zero is skipped (nothing to rank by).
// Other embedders give the vector itself at weight 1.
func (e *Engine) segmentQueries(qvec []float32) []segmentQuery {
	segs := segmentsOf(e.emb)
	total := 0
	for _, s := range segs {
		total += s.Dim
	}
	if len(segs) < 2 || total != len(qvec) {
		return []segmentQuery{{vec: qvec, weight: 1}}
	}
	var out []segmentQuery
	off := 0
	for _, s := range segs {
		part := qvec[off : off+s.Dim]
		nonzero := false
		for _, x := range part {
			if x != 0 {
				nonzero = true
				break
			}
		}
		if nonzero && s.Weight > 0 {
			v := make([]float32, len(qvec))
			copy(v[off:], part)
			out = append(out, segmentQuery{vec: v, weight: s.Weight})
		}
		off += s.Dim
	}
	return out
}

// segmentsOf returns the parts of emb or of the embedder of the same model
// it wraps (the cache does), nil if it is not segmented.
func segmentsOf(emb memory.Embedder) []memory.Segment {
	if s, ok := unwrapped[memory.SegmentedEmbedder](emb); ok {
		return s.Segments()
	}
	return nil
}

// unwrapped returns emb, or the embedder of the same model it wraps (through
// Unwrap, as the cache does), as a T when one of them is.
func unwrapped[T any](emb memory.Embedder) (T, bool) {
	model := emb.Model()
	for depth := 0; emb != nil && depth < 8; depth++ {
		if t, ok := emb.(T); ok && emb.Model() == model {
			return t, true
		}
		u, ok := emb.(interface{ Unwrap() memory.Embedder })
		if !ok {
			break
		}
		emb = u.Unwrap()
	}
	var zero T
	return zero, false
}

// Config returns the engine's search constants.
func (e *Engine) Config() config.Search { return e.cfg }

// Search runs q and returns its hits, best first; see Run.
func (e *Engine) Search(ctx context.Context, q Query) ([]memory.Hit, error) {
	r, err := e.Run(ctx, q)
	if err != nil {
		return nil, err
	}
	return r.Hits, nil
}

// queryWords returns the query's words for the evidence test
// (QueryWords), looking up the document frequencies of their terms that
// df, the whole query's, lacks.
func (e *Engine) queryWords(ctx context.Context, text string, df map[string]int) ([]QueryWord, error) {
	prob, maxInfo, err := e.wordInfo()
	if err != nil {
		return nil, err
	}
	var missing []string
	for _, w := range words(text) {
		lw := strings.ToLower(w)
		for _, p := range append([]string{lw}, identParts(lw)...) { // the parts too (QueryWords)
			for _, t := range e.idx.Analyze(p) {
				if _, ok := df[t]; !ok {
					missing = append(missing, t)
				}
			}
		}
	}
	if len(missing) > 0 {
		more, err := e.idx.DocFreq(ctx, dedupe(missing))
		if err != nil {
			return nil, fmt.Errorf("search: document frequencies: %w", err)
		}
		all := make(map[string]int, len(df)+len(more))
		for t, v := range df {
			all[t] = v
		}
		for t, v := range more {
			all[t] = v
		}
		df = all
	}
	return QueryWords(text, e.idx.Analyze, df, prob, maxInfo), nil
}

// weightedEmbedder is an embedder that can weight a query's tokens
// (embed.Builtin does).
type weightedEmbedder interface {
	EmbedWeighted(ctx context.Context, text string, weight func(token string) float64) ([]float32, error)
}

// embedQuery embeds the query text. When the embedder (or one it wraps, as
// the cache does) can weight tokens, each token is weighted by its smoothed
// IDF in the store (SmoothIDF of its analysed terms, the rarest one), and
// tokens the store's analyzer drops (stop words) are left out: measured on
// LoCoMo, it lifts the built-in vector leg's R@5 from .41 to .46.
//
// It returns the vector and the model that made it: the embedder as it is
// now (embed.Snapshot), so a model switch while it runs cannot mislabel
// the vector.
func (e *Engine) embedQuery(ctx context.Context, text string, n int) ([]float32, string, error) {
	emb := embed.Snapshot(e.emb)
	vec, err := e.embedQueryWith(ctx, emb, text, n)
	return vec, emb.Model(), err
}

// embedQueryWith is embedQuery with emb, a snapshot of the engine's embedder.
func (e *Engine) embedQueryWith(ctx context.Context, emb memory.Embedder, text string, n int) ([]float32, error) {
	var vec []float32
	if w, ok := unwrapped[weightedEmbedder](emb); ok {
		cache := map[string]float64{}
		var dfErr error
		weight := func(tok string) float64 {
			if v, ok := cache[tok]; ok {
				return v
			}
			v := 0.0
			if terms := e.idx.Analyze(tok); len(terms) > 0 {
				df, err := e.idx.DocFreq(ctx, terms)
				if err != nil && dfErr == nil {
					dfErr = err
				}
				for _, t := range terms {
					v = math.Max(v, SmoothIDF(df[t], n))
				}
			}
			cache[tok] = v
			return v
		}
		v, err := w.EmbedWeighted(ctx, text, weight)
		if err == nil {
			err = dfErr
		}
		if err != nil {
			return nil, fmt.Errorf("search: embed query: %w", err)
		}
		vec = v
	}
	if vec == nil {
		return plainQueryVector(ctx, emb, text)
	}
	if len(vec) != emb.Dim() {
		return nil, fmt.Errorf("search: query vector has %d dimensions, %s has %d", len(vec), emb.Model(), emb.Dim())
	}
	return vec, nil
}

// plainQueryVector embeds the query text as emb embeds a query of its own
// (memory.QueryEmbedder), else as a document, with no weights.
func plainQueryVector(ctx context.Context, emb memory.Embedder, text string) ([]float32, error) {
	var vec []float32
	if qe, ok := emb.(memory.QueryEmbedder); ok {
		v, err := qe.EmbedQuery(ctx, text)
		if err != nil {
			return nil, fmt.Errorf("search: embed query: %w", err)
		}
		vec = v
	} else {
		vs, err := emb.Embed(ctx, []string{text})
		if err != nil {
			return nil, fmt.Errorf("search: embed query: %w", err)
		}
		if len(vs) != 1 {
			return nil, fmt.Errorf("search: %s returned %d vectors for one query", emb.Model(), len(vs))
		}
		vec = vs[0]
	}
	if len(vec) != emb.Dim() {
		return nil, fmt.Errorf("search: query vector has %d dimensions, %s has %d", len(vec), emb.Model(), emb.Dim())
	}
	return vec, nil
}

func (e *Engine) validate(q *Query) error {
	var problems []string
	if strings.TrimSpace(q.Text) == "" {
		problems = append(problems, "query text is empty")
	}
	if len(q.Text) > MaxQueryBytes {
		problems = append(problems, "query text is longer than 64 KiB")
	}
	if !memory.ValidUTF8(q.Text) {
		problems = append(problems, "query text is not valid UTF-8")
	}
	if q.K == 0 {
		q.K = e.cfg.K
	}
	if q.K < 1 || q.K > MaxK {
		problems = append(problems, fmt.Sprintf("k must be within 1..%d", MaxK))
	}
	switch q.Mode {
	case "":
		q.Mode = ModeHybrid
	case ModeHybrid, ModeBM25, ModeVector:
	default:
		problems = append(problems, fmt.Sprintf("unknown search mode %q (want hybrid, bm25 or vector)", q.Mode))
	}
	if len(problems) > 0 {
		return fmt.Errorf("search: %w", &memory.ValidationError{Problems: problems})
	}
	return nil
}

// nameTerms are the BM25 leg's terms of the names text writes by a form
// the word analyzer splits or strips (memory.NameTerms: "--firmware",
// "examples/", "slice()"), each of weight 1 like a word: a memory that
// writes the name as the query does scores it beside the word, one that
// only has the word does not. None when nameTermsOn is off.
func nameTerms(text string) []store.Term {
	if !nameTermsOn {
		return nil
	}
	var out []store.Term
	for _, t := range memory.NameTerms(text) {
		out = append(out, store.Term{Text: t, Boost: 1, Name: true})
	}
	return out
}

// nameTermsOn makes the BM25 leg search the names field (ablation switch).
var nameTermsOn = true

// stopNames returns the names text writes by their form (memory.NameTerms)
// of which analyze keeps no term: every word of the name is a stop word
// ("-a", "./out", "all()"). A name form is never a stop word: each is a
// term of the query as the names field holds it (the document frequency
// is NameDocFreq's, a memory's docTerms gain it by namedTerms), and a
// word of the evidence test (QueryWords), so that "what does -a do?"
// weighs the flag as a name, not nothing. Such a term never equals one of
// the analyzer's, which holds no '-', '/', '(' , '$' or '#' and does not
// start with ':'. None when stopWordNames is off.
func stopNames(text string, analyze func(string) []string) []string {
	if !stopWordNames || !nameTermsOn {
		return nil
	}
	var out []string
	for _, n := range memory.NameTerms(text) {
		if len(analyze(n)) == 0 {
			out = append(out, n)
		}
	}
	return out
}

// stopWordNames makes a name whose words are all stop words a term of
// the query (stopNames; ablation switch).
var stopWordNames = true

// namedTerms adds to doc, a memory's docTerms, those of names (a query's
// stopNames) that text writes; doc itself is returned when it writes
// none.
func namedTerms(doc map[string]bool, text string, names []string) map[string]bool {
	if len(names) == 0 {
		return doc
	}
	var out map[string]bool
	for _, n := range memory.NameTerms(text) {
		if slices.Contains(names, n) {
			if out == nil {
				out = maps.Clone(doc)
			}
			out[n] = true
		}
	}
	if out == nil {
		return doc
	}
	return out
}

// textTerms analyses the BM25 leg's query into weighted terms: its own
// terms at weight 1 and, when expand is set and the thesaurus and weights
// allow, the analysed forms of the synonyms (synonym_weight) and hypernyms
// (hypernym_weight) of its plain words that it does not already contain. A
// term two words propose keeps its highest weight. Words with digits,
// underscores or inner capitals are identifiers and are not expanded, nor
// are stop words. alts maps each expanded word's own terms to the weighted
// synonym terms it proposed (ExpandedCoverage; hypernyms only expand).
func (e *Engine) textTerms(text string, expand bool) (all, extra []store.Term, alts map[string][]store.Term, err error) {
	var own []store.Term
	have := map[string]bool{}
	for _, t := range e.idx.Analyze(text) {
		if !have[t] {
			have[t] = true
			own = append(own, store.Term{Text: t, Boost: 1})
		}
	}
	if !expand || e.thesaurus == nil || (e.cfg.SynonymWeight <= 0 && e.cfg.HypernymWeight <= 0) {
		return own, nil, nil, nil
	}
	th, err := e.thesaurus()
	if err != nil {
		return nil, nil, nil, fmt.Errorf("search: thesaurus: %w", err)
	}
	if th == nil {
		return own, nil, nil, nil
	}
	weight := map[string]float64{}
	var order []string
	seen := map[string]bool{}
	for _, w := range letterRuns(text) {
		if !plainWord(w) {
			continue
		}
		lw := strings.ToLower(w)
		own := e.idx.Analyze(lw)
		if seen[lw] || len(own) == 0 {
			continue
		}
		seen[lw] = true
		th.Related(lw, func(r string, synonym bool) {
			wt := e.cfg.HypernymWeight
			if synonym {
				wt = e.cfg.SynonymWeight
			}
			if wt <= 0 {
				return
			}
			for _, t := range e.idx.Analyze(r) {
				if have[t] {
					continue
				}
				if _, ok := weight[t]; !ok {
					order = append(order, t)
				}
				weight[t] = max(weight[t], wt)
				if !synonym {
					return // a hypernym is too loose to count as the word itself
				}
				if alts == nil {
					alts = map[string][]store.Term{}
				}
				for _, o := range own {
					alts[o] = append(alts[o], store.Term{Text: t, Boost: wt})
				}
			}
		})
	}
	for _, t := range order {
		extra = append(extra, store.Term{Text: t, Boost: weight[t]})
	}
	return append(own, extra...), extra, alts, nil
}

// plainWord reports whether w is an ordinary word: letters only, lowercase
// after the first letter.
func plainWord(w string) bool {
	for i, r := range w {
		if !unicode.IsLetter(r) || (i > 0 && unicode.IsUpper(r)) {
			return false
		}
	}
	return w != ""
}

// keywordQuery rewrites a prompt as its keywords, using an original word
// for each keyword (the BM25 leg analyses its query again, and stemming is
// not idempotent).
func (e *Engine) keywordQuery(text string, kws []Keyword) string {
	want := map[string]string{}
	for _, k := range kws {
		want[k.Term] = ""
	}
	left := len(want)
	seen := map[string]bool{}
	for _, w := range words(text) {
		lw := strings.ToLower(w)
		if seen[lw] {
			continue
		}
		seen[lw] = true
		for _, t := range e.idx.Analyze(w) {
			if orig, ok := want[t]; ok && orig == "" {
				want[t] = w
				left--
			}
		}
		if left == 0 {
			break
		}
	}
	parts := make([]string, 0, len(kws))
	for _, k := range kws {
		if w := want[k.Term]; w != "" {
			parts = append(parts, w)
		} else {
			parts = append(parts, k.Term)
		}
	}
	return strings.Join(parts, " ")
}

// words splits text into words the way the store's analyzer tokenizes it
// (Unicode word boundaries): runs of letters, digits and '_', where a '.',
// an apostrophe or a colon between two of them joins the two sides
// ("httpx.WriteProblem", "what's" and "Enum.map" are one word each), while
// a '-', a '/' or a space ends the word.
func words(text string) []string {
	var out []string
	for _, w := range wordSpans(text) {
		out = append(out, text[w[0]:w[1]])
	}
	return out
}

// letterRuns splits text at anything but letters, digits and '_': the
// words query expansion looks up ("Melanie's" gives "Melanie" and "s").
func letterRuns(text string) []string {
	return strings.FieldsFunc(text, func(r rune) bool { return !wordRune(r) })
}

// identParts splits an identifier at anything but letters and digits: the
// parts of a dotted path ("opk.core": "opk", "core") and of a snake_case
// name ("pattern_match": "pattern", "match"), which the evidence test
// judges a query's identifier by when no memory holds it whole
// (QueryWords).
func identParts(text string) []string {
	return strings.FieldsFunc(text, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
}

// wordSpans returns the byte offsets [start, end) of the words of text
// (see words).
func wordSpans(text string) [][2]int {
	var out [][2]int
	start := -1
	for i, r := range text {
		in := wordRune(r)
		if !in && start >= 0 && joiner(r) {
			_, size := utf8.DecodeRuneInString(text[i:])
			next, _ := utf8.DecodeRuneInString(text[i+size:])
			in = wordRune(next) // a joiner inside a word
		}
		if in && start < 0 {
			start = i
		}
		if !in && start >= 0 {
			out = append(out, [2]int{start, i})
			start = -1
		}
	}
	if start >= 0 {
		out = append(out, [2]int{start, len(text)})
	}
	return out
}

func wordRune(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) || r == '_' }

// joiner reports whether r joins two word runes into one word (Unicode
// word boundaries' MidNumLet and MidLetter).
func joiner(r rune) bool {
	switch r {
	case '.', '\'', '’', ':':
		return true
	}
	return false
}

func ids(list []store.Scored) []string {
	out := make([]string, len(list))
	for i, s := range list {
		out[i] = s.ID
	}
	return out
}

// docTerms is the set of terms a memory's text holds for the evidence:
// the index's terms, plus the parts of each compound one. The index keeps
// an identifier joined by '.', ':' or '_' whole (Unicode word boundaries;
// it splits at '/' and '-' itself): "Phoenix.LiveViewTest" is the one
// term "phoenix.liveviewtest", while a query may name a part of it
// ("LiveViewTest"): a query word found only so is not unknown
// (Engine.score), as QueryWords judges a query's compound by its parts.
// The parts are letterRuns', which keeps '_': a compound splits at '.' and
// ':' only, and a snake_case name stays one term ("opk.core_utils" gives
// "opk" and "core_util", not "core"). Only the keyword factor reads the
// parts of a snake_case name (keywordTerms).
func (e *Engine) docTerms(text string) map[string]bool {
	terms := e.idx.Analyze(text)
	doc := termSet(terms)
	for _, t := range terms {
		if !strings.ContainsAny(t, ".:/_-") {
			continue
		}
		for _, part := range letterRuns(t) {
			if part == t {
				continue
			}
			for _, pt := range e.idx.Analyze(part) {
				doc[pt] = true
			}
		}
	}
	return doc
}

// keywordTerms is doc, a memory's docTerms, with the parts of its
// snake_case terms: the index keeps "transcript_view_show_debug" whole and
// docTerms splits a compound at '.' and ':' only (letterRuns keeps '_'; the
// index splits at '/' and '-' itself), so without them a query's keyword "debug" is no hit in a
// memory naming show_debug. Only the keyword factor reads these parts
// (Engine.score): the evidence test and a memory's Coverage keep docTerms
// (splitting there as well answered more unrelated prompts inside a
// project and lost R@5 on sessions-dev; docs/benchmarks.md, exp-recall5).
// doc itself is returned when it has no such term.
func (e *Engine) keywordTerms(doc map[string]bool) map[string]bool {
	var out map[string]bool
	for t := range doc {
		if !strings.Contains(t, "_") {
			continue
		}
		for _, p := range identParts(t) {
			for _, pt := range e.idx.Analyze(p) {
				if doc[pt] {
					continue
				}
				if out == nil {
					out = maps.Clone(doc)
				}
				out[pt] = true
			}
		}
	}
	if out == nil {
		return doc
	}
	return out
}

func termSet(terms []string) map[string]bool {
	m := make(map[string]bool, len(terms))
	for _, t := range terms {
		m[t] = true
	}
	return m
}

func dedupe(terms []string) []string {
	seen := map[string]bool{}
	out := terms[:0:0]
	for _, t := range terms {
		if !seen[t] {
			seen[t] = true
			out = append(out, t)
		}
	}
	return out
}
