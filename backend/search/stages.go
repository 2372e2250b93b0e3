package search

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/memtray/memtray/backend/memory"
	"github.com/memtray/memtray/backend/store"
)

// queryRun is the state one query carries through the read pipeline's
// stages.
type queryRun struct {
	q   Query
	res *Result
	// done says a stage decided the result (no candidates, no evidence):
	// the later stages do not run.
	done bool

	// analyse
	terms     []string       // the query's analysed terms, then names
	names     []string       // the query's stopNames, the last of terms
	n         int            // memories in the store
	df        map[string]int // document frequency of each of terms
	textTerms []store.Term   // what the BM25 leg searches for
	alts      map[string][]store.Term
	pool      int // each leg's depth, and the most candidates fusion keeps

	// legs
	qvec       []float32 // the query's embedding; nil when degraded
	qmodel     string    // the model that made qvec
	vecLists   [][]store.Scored
	vecWeights []float64
	textList   []store.Scored
	// projVecLists and projTextList are the same legs run within the
	// current project alone (projectLegs).
	projVecLists [][]store.Scored
	projTextList []store.Scored

	// fuse
	fused  []Fused
	vecIdx []int // the vector lists' indexes in Fused.Ranks
	txtIdx int   // the BM25 list's index in Fused.Ranks, -1 without one
	// vecRank is each memory's 1-based rank in the vector leg: its lists
	// (one per part of a segmented embedder) fused at their weights, so no
	// two memories share a rank.
	vecRank map[string]int

	// load and score
	now    time.Time
	cands  []candidate
	qwords []QueryWord // the query's words for the evidence test (gate only)
	// bestInfo is the best candidate's InfoShare, bestDoc its terms
	// (docTerms).
	bestInfo float64
	bestDoc  map[string]bool
	bestIdx  int // its index in cands

	// mmr: the order of cands to return them in, with what MMR took off
	// each one's composite for resembling one before it
	order []Pick
}

// gate reports whether the query-level evidence test runs.
func (e *Engine) gate(r *queryRun) bool { return !r.q.NoFloors && e.cfg.EvidenceGate }

// candidate is one fused memory and what the score stage measured of it.
type candidate struct {
	m        memory.Memory
	f        Fused
	b        memory.ScoreBreakdown
	coverage float64
	cosine   float64
	info     float64 // InfoShare of the query's words
}

// queryStage is one step of the read pipeline.
type queryStage struct {
	name string
	fn   func(e *Engine, ctx context.Context, r *queryRun) error
}

// queryStages are called in this order until one decides the result.
var queryStages = []queryStage{
	{"scope", (*Engine).scope},
	{"analyse", (*Engine).analyse},
	{"legs", (*Engine).legs},
	{"fuse", (*Engine).fuse},
	{"load", (*Engine).load},
	{"score", (*Engine).score},
	{"evidence", (*Engine).evidenceStage},
	{"subject", (*Engine).subject},
	{"absolute_floor", (*Engine).absoluteFloor},
	{"relative_floor", (*Engine).relativeFloor},
	{"mmr", (*Engine).diversify},
	{"hits", (*Engine).hits},
}

// Run runs q through the read pipeline, one stage after the other:
//
//  0. scope: a prompt's recall (Query.ProjectScoped) reaches only the
//     current project, the projects the prompt names, the memories of no
//     project and the user's own: the filter the legs apply says so (see
//     reach.go).
//  1. analyse: the query is analysed with the store's analyzer; its IDF
//     keywords are picked (Keywords). A prompt (more than PromptTerms
//     terms) searches BM25 for its keywords only; a short query searches
//     for its text, expanded with thesaurus terms in hybrid mode.
//  2. legs: the vector leg (query embedding, weighted by IDF when the
//     embedder supports it, cosine) and the BM25 leg each return the best
//     max(K x overfetch, candidates) memories matching the filter; the legs
//     run concurrently. With a current project (Query.Project) and no
//     project filter, each leg also returns the project's best as many
//     (projectLegs).
//  3. fuse, load, score: RRF (k = rrf_k; in hybrid mode the vector list
//     weighs vector_weight, BM25's 1) fuses the lists into a relevance in
//     0..1, rescaled over the pool depth (see RRF), and keeps the best pool
//     (the legs' depth); the current project's lists are fused the same
//     way and their best pool joins the candidates (mergeProject). The
//     candidates are loaded (snoozed and superseded ones dropped unless
//     the filter includes them) and Composite scores each with every
//     factor in its breakdown.
//  4. evidence, absolute_floor, relative_floor (unless NoFloors).
//     Rank-based RRF cannot tell whether anything is relevant (it is 1 at
//     the top whatever the query), so first the query as a whole needs
//     evidence that the store holds what it is about
//     (search.evidence_gate; see CheckEvidence): the best candidate must
//     contain words carrying more of the query's information than the
//     words no memory contains (InfoShare, UnknownShare: words weighed by
//     their surprisal in general language) and be nearer the query than
//     the sample's mean cosine (Evidence.LexicalFar: words shared by a
//     memory about something else; not when it alone holds a word of the
//     query that general language does not use: Evidence.Anchors), or
//     its cosine must beat the
//     best cosine that a store of this size would give an unrelated query
//     (the query's mean cosine over a sample of the store plus
//     ExpectedMaxZ(n) standard deviations, the query embedded as the
//     memories are, without the vector leg's IDF weights: evidenceVector;
//     not for a query naming
//     something no memory mentions, and a prompt naming one gets nothing
//     whatever the word test says: Evidence.NamesUnknown; a name the index
//     holds only inside a compound term is not unknown: docTerms; one a
//     candidate holds only as the start or end of a longer term, "Surreal"
//     of "surrealdb", stays unknown to both tests but is no reason to
//     refuse: QueryWord.Affix; for a scoped prompt, a name that only
//     memories out of its reach hold makes the vector test not count, but
//     is no reason to refuse: QueryWord.OutOfReach). Without
//     either, or when a prompt
//     (Query.Prompt) is too generic to be about anything (it names nothing
//     and its words carry less information than one word general language
//     does not use: "continue", "fix it"; see Specific), the search
//     returns nothing.
//     subject: a prompt's candidate lacking a name the prompt writes by
//     its form ("--firmware", "-a", "./out", "2.4": subjectSpans) goes
//     unless the prompt's words outside that name are specific on their
//     own (subject.go); with none left the prompt gets nothing.
//     Then each candidate needs evidence of its own:
//     Coverage at least absolute_floor or a cosine of at least
//     vector_floor. Then candidates scoring below relative_floor x the top
//     composite go.
//  5. mmr, hits: MMR (mmr_lambda, cosine of the embeddings; unless NoMMR)
//     orders the rest; excluded memories are removed; the first K are
//     returned, without embeddings. A hit's Score is what it ranks by: its
//     composite less what MMR took off it for resembling a hit above it
//     (Breakdown.Diversity), so scores never increase down the list.
func (e *Engine) Run(ctx context.Context, q Query) (*Result, error) {
	if err := e.validate(&q); err != nil {
		return nil, err
	}
	r := &queryRun{q: q, res: &Result{}, txtIdx: -1}
	for _, st := range queryStages {
		if err := st.fn(e, ctx, r); err != nil {
			return nil, err
		}
		if r.done {
			break
		}
	}
	return r.res, nil
}

// analyse analyses the query: its terms and their document frequencies,
// its keywords, what the BM25 leg searches for and the legs' depth.
func (e *Engine) analyse(ctx context.Context, r *queryRun) error {
	q, res := &r.q, r.res
	r.terms = e.idx.Analyze(q.Text)
	r.n = e.idx.Count()
	r.df = map[string]int{}
	if len(r.terms) > 0 {
		var err error
		if r.df, err = e.idx.DocFreq(ctx, dedupe(r.terms)); err != nil {
			return fmt.Errorf("search: document frequencies: %w", err)
		}
	}
	if r.names = stopNames(q.Text, e.idx.Analyze); len(r.names) > 0 {
		ndf, err := e.idx.NameDocFreq(ctx, r.names)
		if err != nil {
			return fmt.Errorf("search: document frequencies: %w", err)
		}
		maps.Copy(r.df, ndf)
		r.terms = append(r.terms, r.names...)
	}
	res.Keywords = Keywords(r.terms, r.df, r.n, e.cfg.MaxKeywords)
	res.TextQuery = q.Text
	if len(r.terms) > PromptTerms && len(res.Keywords) > 0 {
		res.TextQuery = e.keywordQuery(q.Text, res.Keywords)
	}
	if q.Mode != ModeVector {
		var err error
		if r.textTerms, res.Expansions, r.alts, err = e.textTerms(res.TextQuery, q.Mode == ModeHybrid); err != nil {
			return err
		}
		r.textTerms = append(r.textTerms, nameTerms(q.Text)...)
	}
	pool := int(math.Ceil(float64(q.K) * e.cfg.Overfetch))
	r.pool = min(max(pool, e.cfg.Candidates, q.K), store.MaxResults)
	return nil
}

// legs runs the vector leg and, unless in vector mode, the BM25 leg,
// concurrently.
func (e *Engine) legs(ctx context.Context, r *queryRun) error {
	var (
		vecErr, txtErr error
		wg             sync.WaitGroup
	)
	// The query vector feeds the floors even in bm25 mode.
	wg.Add(1)
	go func() {
		defer wg.Done()
		vecErr = e.vectorLeg(ctx, r)
	}()
	if r.q.Mode != ModeVector {
		wg.Add(1)
		go func() {
			defer wg.Done()
			txtErr = e.bm25Leg(ctx, r)
		}()
	}
	wg.Wait()
	return errors.Join(vecErr, txtErr)
}

// vectorLeg embeds the query and, unless in bm25 mode, searches the
// vectors with one list per part of a segmented embedder, and the current
// project's alone concurrently (projectLegs). An unavailable
// embedder degrades a search that has a BM25 leg instead of failing it.
// It runs concurrently with bm25Leg: it writes only qvec, vecLists,
// projVecLists, vecWeights and Result.Degraded.
func (e *Engine) vectorLeg(ctx context.Context, r *queryRun) error {
	v, model, err := e.embedQuery(ctx, r.q.Text, r.n)
	if err != nil {
		if errors.Is(err, memory.ErrUnavailable) && r.q.Mode != ModeVector {
			r.res.Degraded = err.Error()
			return nil
		}
		return err
	}
	r.qvec, r.qmodel = v, model
	if r.q.Mode == ModeBM25 {
		return nil
	}
	sqs := e.segmentQueries(r.qvec)
	vecs := make([][]float32, len(sqs))
	for i, sq := range sqs {
		vecs[i] = sq.vec
		r.vecWeights = append(r.vecWeights, sq.weight*e.cfg.VectorWeight)
	}
	// The store refuses a vector of another model than its own (it
	// switched models since the query was embedded): the search fails with
	// memory.ErrModelMismatch and its caller runs it again (memories,
	// recall) rather than rank by similarities between two models.
	f := r.q.Filter
	f.Model = model
	r.vecLists, r.projVecLists, err = alsoInProject(r, "vector", f, func(f store.Filter) ([][]store.Scored, error) {
		return e.idx.VectorSearchMany(ctx, vecs, r.pool, f)
	})
	return err
}

// bm25Leg searches the text index for the analysed terms, and the
// current project's alone concurrently (projectLegs). It runs
// concurrently with vectorLeg: it writes only textList and projTextList.
func (e *Engine) bm25Leg(ctx context.Context, r *queryRun) error {
	var err error
	r.textList, r.projTextList, err = alsoInProject(r, "text", r.q.Filter, func(f store.Filter) ([]store.Scored, error) {
		return e.idx.TextSearchTerms(ctx, r.textTerms, r.pool, f)
	})
	return err
}

// alsoInProject runs a leg's search with the filter f and, when the legs
// also search the current project alone (projectLegs), concurrently with
// f narrowed to the project; it returns both results (proj is the zero
// value when there is no project search) and their errors, joined, each
// naming the leg.
func alsoInProject[T any](r *queryRun, leg string, f store.Filter, search func(store.Filter) (T, error)) (all, proj T, err error) {
	var projErr error
	done := make(chan struct{})
	go func() {
		defer close(done)
		if r.projectLegs() {
			pf := f
			pf.Project = r.q.Project
			if proj, projErr = search(pf); projErr != nil {
				projErr = fmt.Errorf("search: %s leg in project %q: %w", leg, r.q.Project, projErr)
			}
		}
	}()
	if all, err = search(f); err != nil {
		err = fmt.Errorf("search: %s leg: %w", leg, err)
	}
	<-done
	return all, proj, errors.Join(err, projErr)
}

// projectLegs reports whether the legs also search the current project
// alone: the query has a current project and no project filter. The
// project boost (Composite) can only lift the candidates the pool holds,
// and the pool is the whole store's best: in a store of many projects the
// current project's memory a prompt asks about can rank below the pool's
// depth behind other projects' memories of the same words (sessions-dev:
// a question about spotter's pre-commit checks got five memories of four
// other projects and none of spotter's).
func (r *queryRun) projectLegs() bool {
	return r.q.Project != "" && r.q.Filter.Project == ""
}

// fuse fuses the legs' lists with RRF and keeps the best pool, joined by
// the best pool of the current project's lists (projectLegs); with none
// the search is done.
func (e *Engine) fuse(_ context.Context, r *queryRun) error {
	q := &r.q
	var lists, plists [][]string
	var weights []float64
	if q.Mode != ModeBM25 && r.res.Degraded == "" {
		for i, l := range r.vecLists {
			r.vecIdx = append(r.vecIdx, len(lists))
			lists = append(lists, ids(l))
			weights = append(weights, r.vecWeights[i])
			if i < len(r.projVecLists) {
				plists = append(plists, ids(r.projVecLists[i]))
			}
		}
	}
	if q.Mode != ModeVector {
		r.txtIdx = len(lists)
		lists = append(lists, ids(r.textList))
		weights = append(weights, 1)
		plists = append(plists, ids(r.projTextList))
	}
	if q.Mode != ModeHybrid {
		// One leg alone: its own lists at their relative weights.
		for i := range weights {
			weights[i] /= weights[0]
		}
	}
	// Only the best pool of the fusion go on: each further one is deep in
	// one list at most, and loading, analysing and scoring them all (up to
	// 150 at K = 5 from three lists) took half of a hybrid query at 100k
	// while changing no result of the evaluation sets (recall-dev,
	// LoCoMo, LongMemEval: the same metrics to four places).
	r.fused = bestPool(RRF(lists, weights, e.cfg.RRFK, r.pool), r.pool)
	if len(r.vecIdx) > 0 {
		r.vecRank = e.vecRanks(lists[:len(r.vecIdx)], weights[:len(r.vecIdx)], r.pool)
	}
	if r.projectLegs() && len(plists) == len(lists) {
		r.fused = mergeProject(r.fused, bestPool(RRF(plists, weights, e.cfg.RRFK, r.pool), r.pool), r.pool, max(e.cfg.ProjectBoost, 1))
		if len(r.vecIdx) > 0 {
			for id, rank := range e.vecRanks(plists[:len(r.vecIdx)], weights[:len(r.vecIdx)], r.pool) {
				if _, ok := r.vecRank[id]; !ok {
					r.vecRank[id] = rank
				}
			}
		}
	}
	r.res.Candidates = len(r.fused)
	r.done = len(r.fused) == 0
	return nil
}

// vecRanks is each memory's 1-based rank in the fusion of the vector
// lists alone.
func (e *Engine) vecRanks(lists [][]string, weights []float64, pool int) map[string]int {
	vec := RRF(lists, weights, e.cfg.RRFK, pool)
	out := make(map[string]int, len(vec))
	for i, f := range vec {
		out[f.ID] = i + 1
	}
	return out
}

// bestPool cuts a fusion to its best pool.
func bestPool(fused []Fused, pool int) []Fused {
	if len(fused) > pool {
		return fused[:pool]
	}
	return fused
}

// mergeProject joins to the whole store's pool (all) the memories of the
// current project's pool (proj) that it lacks, each with its relevance
// and ranks among the project's memories, and keeps the best pool of the
// two as the composite score will weigh them: a project memory's
// relevance times boost (the project boost). A memory both pools hold
// keeps its relevance in the whole store. The result is sorted by
// relevance, as RRF sorts.
func mergeProject(all, proj []Fused, pool int, boost float64) []Fused {
	inProj := make(map[string]bool, len(proj))
	for _, f := range proj {
		inProj[f.ID] = true
	}
	have := make(map[string]bool, len(all))
	for _, f := range all {
		have[f.ID] = true
	}
	out := slices.Clone(all)
	for _, f := range proj {
		if !have[f.ID] {
			out = append(out, f)
		}
	}
	weighed := func(f Fused) float64 {
		if inProj[f.ID] {
			return f.Score * boost
		}
		return f.Score
	}
	sort.SliceStable(out, func(i, j int) bool { return weighed(out[i]) > weighed(out[j]) })
	out = bestPool(out, pool)
	sort.SliceStable(out, func(i, j int) bool { return out[i].Score > out[j].Score })
	return out
}

// load reads the fused memories, in fusion order, and drops the ones
// deleted since the legs ran and the snoozed and superseded ones the
// filter does not include.
func (e *Engine) load(ctx context.Context, r *queryRun) error {
	fusedIDs := make([]string, len(r.fused))
	for i, f := range r.fused {
		fusedIDs[i] = f.ID
	}
	mems, err := e.idx.GetMany(ctx, fusedIDs)
	if err != nil {
		return fmt.Errorf("search: load candidates: %w", err)
	}
	r.now = e.clock.Now()
	f := &r.q.Filter
	r.cands = make([]candidate, 0, len(r.fused))
	for _, fu := range r.fused {
		m, ok := mems[fu.ID]
		if !ok {
			continue // deleted since the legs ran
		}
		if (!f.IncludeSnoozed && m.Snoozed(r.now)) || (!f.IncludeSuperseded && m.Superseded()) {
			continue
		}
		r.cands = append(r.cands, candidate{m: m, f: fu})
	}
	return nil
}

// score gives each candidate its composite score and its evidence
// (Coverage, InfoShare, cosine), and records them in the Result.
func (e *Engine) score(ctx context.Context, r *queryRun) error {
	if e.gate(r) {
		var err error
		if r.qwords, err = e.queryWords(ctx, r.q.Text, r.df); err != nil {
			return err
		}
	}
	res := r.res
	held := make([]bool, len(r.qwords)) // a candidate holds the word
	for i := range r.cands {
		c := &r.cands[i]
		if r.qvec != nil && c.m.EmbeddingModel != "" && r.qmodel != "" && c.m.EmbeddingModel != r.qmodel {
			// The store switched models after the legs ran: the cosine
			// would compare two models' vectors. The store's error comes
			// once the switch is complete, so the caller's retry embeds
			// with the new model.
			if err := e.idx.CheckModel(r.qmodel); err != nil {
				return fmt.Errorf("search: memory %s: %w", c.m.ID, err)
			}
			return fmt.Errorf("search: memory %s has an embedding of model %q, the query one of %q: %w", c.m.ID, c.m.EmbeddingModel, r.qmodel, memory.ErrModelMismatch)
		}
		doc := namedTerms(e.docTerms(c.m.Text), c.m.Text, r.names)
		for j, w := range r.qwords {
			if !held[j] && slices.ContainsFunc(w.Terms, func(t string) bool { return doc[t] }) {
				held[j] = true
			}
			if w.Unknown && slices.ContainsFunc(w.Terms, func(t string) bool { return doc[t] }) {
				r.qwords[j].Unknown = false // only inside a compound term of the index ("phoenix.liveviewtest")
			}
			if w.Unknown && w.Name && !w.Affix && AffixOf(w.Terms, doc) {
				r.qwords[j].Affix = true // the start or end of a longer term ("surreal" of "surrealdb")
			}
		}
		hits := 0
		kdoc := e.keywordTerms(doc)
		for _, k := range res.Keywords {
			if kdoc[k.Term] {
				hits++
			}
		}
		sig := Signals{Relevance: c.f.Score, VectorRank: r.vecRank[c.m.ID], KeywordHits: hits, Project: r.q.Project,
			Named: r.res.NamedProjects, Now: r.now}
		if r.txtIdx >= 0 {
			sig.TextRank = c.f.Ranks[r.txtIdx]
		}
		c.b = Composite(&c.m, sig, e.cfg)
		c.cosine = memory.Cosine(r.qvec, c.m.Embedding)
		c.coverage = ExpandedCoverage(r.terms, doc, r.df, r.n, r.alts)
		c.info = InfoShare(r.qwords, doc)
		if r.bestDoc == nil || c.info > r.bestInfo {
			r.bestInfo, r.bestDoc, r.bestIdx = c.info, doc, i
		}
	}
	if err := e.markOutOfReach(ctx, r, held); err != nil {
		return err
	}
	for _, c := range r.cands {
		res.Scored = append(res.Scored, CandidateEvidence{ID: c.m.ID, Coverage: c.coverage, Info: c.info, Cosine: c.cosine, Composite: c.b.Composite, Breakdown: c.b})
		res.Coverage = math.Max(res.Coverage, c.coverage)
		res.Cosine = math.Max(res.Cosine, c.cosine)
	}
	return nil
}

// markOutOfReach marks, for a scoped prompt whose words the evidence test
// weighs, the words written as names that some memory contains but no
// memory within the prompt's reach does (QueryWord.OutOfReach): none of
// the candidates holds one, nor does the BM25 index within the reach's
// filter (a candidate's compound terms count, docTerms). held says which
// of the words a candidate holds.
func (e *Engine) markOutOfReach(ctx context.Context, r *queryRun, held []bool) error {
	if !r.res.Scoped || !outOfReachNames {
		return nil
	}
	for j, w := range r.qwords {
		if !w.Name || w.Unknown || held[j] {
			continue
		}
		terms := make([]store.Term, len(w.Terms))
		for i, t := range w.Terms {
			terms[i] = store.Term{Text: t, Boost: 1, Name: w.Form}
		}
		hits, err := e.idx.TextSearchTerms(ctx, terms, 1, r.q.Filter)
		if err != nil {
			return fmt.Errorf("search: is %q within the prompt's reach: %w", w.Word, err)
		}
		r.qwords[j].OutOfReach = len(hits) == 0
	}
	return nil
}

// outOfReachNames turns markOutOfReach on (ablation switch).
var outOfReachNames = true

// evidenceStage is the query-level evidence test (see Run, step 4): when
// it fails the search is done and returns nothing.
func (e *Engine) evidenceStage(ctx context.Context, r *queryRun) error {
	if !e.gate(r) || len(r.cands) == 0 {
		return nil
	}
	qvec, cosine, lexCos, err := e.evidenceVector(ctx, r)
	if err != nil {
		return err
	}
	ev, err := e.evidence(ctx, r.qwords, r.bestDoc, r.n, qvec, r.qmodel, r.bestInfo, cosine, lexCos)
	if err != nil {
		return err
	}
	if !r.q.Prompt {
		// A search someone asked for (the window, memtray search, an
		// agent's tool call) is answered by a memory that holds its words,
		// however its meaning measures: the nearness of that memory
		// (LexicalFar) judges only what a prompt brings along unasked. A
		// lone identifier ("qx68k", an error code) embeds as noise.
		ev.Generic, ev.LexicalFar = false, false
	}
	refused := RefusedNames(r.qwords)
	for _, w := range r.qwords {
		if w.Name && w.Unknown && w.Affix {
			ev.AffixNames = append(ev.AffixNames, w.Word)
		}
	}
	ev.NamesUnknown = r.q.Prompt && len(refused) > 0
	ev.BestLacks = LackedNames(r.qwords, r.bestDoc)
	ev.Words = wordsHeld(r.qwords, r.bestDoc)
	r.res.Evidence, r.res.Tested = ev, true
	if !ev.Holds() {
		r.res.NoEvidence = true
		r.done = true
	}
	return nil
}

// wordsHeld writes each of ws with its information, "+" after one doc
// holds and "?" after one no memory contains (Evidence.Words).
func wordsHeld(ws []QueryWord, doc map[string]bool) []string {
	out := make([]string, len(ws))
	for i, w := range ws {
		mark := ""
		if slices.ContainsFunc(w.Terms, func(t string) bool { return doc[t] }) {
			mark = "+"
		} else if w.Unknown {
			mark = "?"
		}
		out[i] = fmt.Sprintf("%s%s:%.1f", w.Word, mark, w.Info)
	}
	return out
}

// absoluteFloor drops the candidates without evidence of their own: a
// Coverage under absolute_floor and a cosine under vector_floor.
func (e *Engine) absoluteFloor(_ context.Context, r *queryRun) error {
	if r.q.NoFloors {
		return nil
	}
	kept := r.cands[:0]
	for _, c := range r.cands {
		if c.coverage < e.cfg.AbsoluteFloor && c.cosine < e.vectorFloor() {
			r.res.BelowAbsolute++
			continue
		}
		kept = append(kept, c)
	}
	r.cands = kept
	return nil
}

// relativeFloor drops the candidates scoring under relative_floor x the
// top composite, and those scoring nothing.
func (e *Engine) relativeFloor(_ context.Context, r *queryRun) error {
	if r.q.NoFloors {
		return nil
	}
	var top float64
	for _, c := range r.cands {
		top = math.Max(top, c.b.Composite)
	}
	kept := r.cands[:0]
	for _, c := range r.cands {
		if c.b.Composite < e.cfg.RelativeFloor*top || c.b.Composite <= 0 {
			r.res.BelowRelative++
			continue
		}
		kept = append(kept, c)
	}
	r.cands = kept
	return nil
}

// diversify sorts the candidates by composite score, then, unless NoMMR,
// orders them with MMR for diversity, keeping what MMR took off each one
// (see Pick.Penalty) for its breakdown.
func (e *Engine) diversify(_ context.Context, r *queryRun) error {
	cands := r.cands
	sort.SliceStable(cands, func(i, j int) bool { return cands[i].b.Composite > cands[j].b.Composite })
	if r.q.NoMMR || len(cands) < 2 {
		r.order = make([]Pick, len(cands))
		for i := range r.order {
			r.order[i] = Pick{Index: i, SimilarTo: -1}
		}
		return nil
	}
	rel := make([]float64, len(cands))
	vecs := make([][]float32, len(cands))
	for i, c := range cands {
		rel[i], vecs[i] = c.b.Composite, c.m.Embedding
	}
	r.order = MMRPicks(rel, vecs, e.cfg.MMRLambda, 0)
	return nil
}

// hits returns the first K candidates that are not excluded, without
// their embeddings. A hit's Score is what it ranks by: its composite less
// what MMR took off it (Breakdown.Diversity, resembling SimilarTo), not
// below 0, so the scores never increase down the list.
func (e *Engine) hits(_ context.Context, r *queryRun) error {
	for _, p := range r.order {
		if len(r.res.Hits) == r.q.K {
			break
		}
		c := r.cands[p.Index]
		if r.q.Exclude != nil && r.q.Exclude(c.m.ID) {
			continue
		}
		c.m.Embedding = nil
		b := c.b
		if p.Penalty > 0 {
			b.Diversity, b.SimilarTo = p.Penalty, r.cands[p.SimilarTo].m.ID
		}
		r.res.Hits = append(r.res.Hits, memory.Hit{Memory: c.m, Score: math.Max(0, b.Composite-b.Diversity), Breakdown: b})
	}
	return nil
}
