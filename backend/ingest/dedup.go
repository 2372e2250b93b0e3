package ingest

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/memtray/memtray/backend/embed"
	"github.com/memtray/memtray/backend/memory"
	"github.com/memtray/memtray/backend/store"
)

// outcome is what dedup did with one chunk.
type outcome int

const (
	outCreated outcome = iota
	outUpdated
	outMerged
	outDuplicate
)

// dedupAndStore decides, chunk by chunk: an exact duplicate (same content
// hash) or a near duplicate (cosine >= duplicate_similarity) that adds no
// load-bearing token reinforces the stored memory; a near duplicate that
// adds one supersedes it (the old version stays, marked superseded); a
// chunk similar to an ingested source document (>= source_similarity)
// links to it; anything else is a new memory. Then the Decision's verdict
// is the strongest outcome: stored, updated, merged, skipped-duplicate.
func (p *Pipeline) dedupAndStore(ctx context.Context, r *run) error {
	select {
	case p.wmu <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	}
	defer func() { <-p.wmu }()
	best := outDuplicate
	var reasons []string
	for i, text := range r.texts {
		out, id, why, err := p.place(ctx, r, text, r.vecs[i])
		if err != nil {
			return err
		}
		if out < best {
			best = out
		}
		r.dec.MemoryIDs = append(r.dec.MemoryIDs, id)
		reasons = append(reasons, why)
	}
	r.dec.Verdict, r.dec.Stage, r.decided = verdicts[best], StageDedup, true
	if best == outCreated {
		r.dec.Stage = StageStore
	}
	r.dec.Reason = strings.Join(slices.Compact(reasons), "; ")
	return nil
}

// place dedups and stores one chunk (see placeMemory) and returns the id
// of the memory it stored, updated or found.
func (p *Pipeline) place(ctx context.Context, r *run, text string, vec []float32) (outcome, string, string, error) {
	out, m, why, err := p.placeMemory(ctx, r, text, vec)
	return out, m.ID, why, err
}

// placeMemory dedups and stores one text, with the pipeline's write lock
// held: every memory the pipeline writes passes here, and reaches the store
// through commit. A replacement (r.replaces) supersedes that memory; else
// the same text reinforces the memory of the run's project holding it
// (store.FindByHash: a memory of another project, or of no project when
// the run has one, is not found, as near duplicates are looked for in the
// project only: ownProject), a near duplicate (unless r.exact) reinforces
// or supersedes its memory, and anything else is a new memory, linked to
// a similar source document. It returns the memory stored,
// updated or found.
//
// vec is of r.model. When the store switched to another model since it was
// embedded (a re-embedding finished: every similarity search and the
// store's write refuse it with memory.ErrModelMismatch before anything is
// decided or written), text is embedded again with the pipeline's embedder,
// switched by then, and placed again: no decision is taken on a similarity
// between two models' vectors. A switch while it is embedded again is met
// the same way, up to maxModelSwitches times. This per-text retry is the
// only one: a run is never run again as a whole, which would place again
// the texts already stored before the switch (as their own duplicates).
func (p *Pipeline) placeMemory(ctx context.Context, r *run, text string, vec []float32) (outcome, memory.Memory, string, error) {
	out, m, why, err := p.placeOnce(ctx, r, text, vec)
	// A copy: the run's other texts keep their vectors and r.model, which
	// labels them (each is embedded again when it is placed).
	again := *r
	for range maxModelSwitches {
		if err == nil || !errors.Is(err, memory.ErrModelMismatch) || again.model == "" {
			break
		}
		emb := embed.Snapshot(p.emb)
		if emb.Model() == again.model {
			break // the store's model changed, not the embedder: nothing to embed again with
		}
		vecs, eerr := emb.Embed(ctx, []string{text})
		if eerr != nil {
			return 0, memory.Memory{}, "", fmt.Errorf("embed again with %s after a model switch: %w", emb.Model(), eerr)
		}
		if len(vecs) != 1 {
			return 0, memory.Memory{}, "", fmt.Errorf("embed again with %s after a model switch: %d vectors for one text", emb.Model(), len(vecs))
		}
		again.model = emb.Model()
		out, m, why, err = p.placeOnce(ctx, &again, text, vecs[0])
	}
	return out, m, why, err
}

// maxModelSwitches bounds how many times placeMemory embeds one text again
// after the store switched models under it: a switch takes a re-embedding
// of the whole store, so more than one during a text's placement is rare,
// and a store that keeps switching fails the write instead of looping.
const maxModelSwitches = 3

// placeOnce is placeMemory with vec as it is.
func (p *Pipeline) placeOnce(ctx context.Context, r *run, text string, vec []float32) (outcome, memory.Memory, string, error) {
	if r.replaces != "" {
		return p.replace(ctx, r, text, vec)
	}
	if old, ok, err := p.store.FindByHash(ctx, memory.ContentHash(text), r.ex.Project); err != nil {
		return 0, memory.Memory{}, "", fmt.Errorf("find duplicate: %w", err)
	} else if ok && !r.setAside(old.ID) && !(r.exact && old.Superseded()) {
		return p.duplicate(ctx, r, old.ID, outDuplicate)
	}
	m := p.newMemory(r, text, vec)
	if !r.exact {
		out, stored, why, done, err := p.sameRuleMemory(ctx, r, m) // instrrule.go
		if err != nil || done {
			return out, stored, why, err
		}
		out, stored, why, done, err = p.nearDuplicate(ctx, r, m)
		if err != nil || done {
			return out, stored, why, err
		}
	}
	if r.source != "" {
		// A document's chunks are sources themselves; they do not link.
		return p.commit(ctx, r, m, "", "new source memory")
	}
	src, err := p.store.VectorSearch(ctx, vec, 1, store.Filter{Source: "ingest:", Model: r.model})
	if err != nil {
		return 0, memory.Memory{}, "", fmt.Errorf("find source: %w", err)
	}
	why := "new memory"
	if len(src) == 1 && src[0].Score >= p.sourceThreshold() && !strings.HasPrefix(m.Source, "ingest:") {
		m.ExtendsSource = src[0].ID
		why = fmt.Sprintf("new memory extending source %s (similarity %.2f)", src[0].ID, src[0].Score)
	}
	return p.commit(ctx, r, m, "", why)
}

// nearDuplicate looks for a stored memory m's text nearly repeats (cosine
// >= duplicate_similarity): one m adds no load-bearing token to is
// reinforced, one it adds some to is superseded by m (unless m repeats an
// older version of it). done says it decided.
func (p *Pipeline) nearDuplicate(ctx context.Context, r *run, m memory.Memory) (outcome, memory.Memory, string, bool, error) {
	k := 1
	if r.repack != nil {
		k += len(r.repack.aside)
	}
	near, err := p.store.VectorSearch(ctx, m.Embedding, k, ownProject(r.ex.Project, m.EmbeddingModel))
	if err != nil {
		return 0, memory.Memory{}, "", false, fmt.Errorf("find near duplicate: %w", err)
	}
	near = slices.DeleteFunc(near, func(s store.Scored) bool { return r.setAside(s.ID) })
	near = near[:min(len(near), 1)]
	if len(near) == 1 {
		r.score("nearest_similarity", max(r.dec.Scores["nearest_similarity"], near[0].Score))
	}
	if len(near) == 0 || near[0].Score < p.dupThreshold() {
		return 0, memory.Memory{}, "", false, nil
	}
	old, err := p.store.Get(ctx, near[0].ID)
	if err != nil {
		return 0, memory.Memory{}, "", false, fmt.Errorf("read near duplicate: %w", err)
	}
	added := newTokens(old.Text, m.Text)
	if len(added) == 0 {
		_, stored, _, err := p.duplicate(ctx, r, old.ID, outMerged)
		return outMerged, stored, fmt.Sprintf("near duplicate of %s (similarity %.2f)", old.ID, near[0].Score), true, err
	}
	if prev, ok, err := p.olderVersion(ctx, r, m.Text, m.Embedding); err != nil {
		return 0, memory.Memory{}, "", false, err
	} else if ok {
		return outDuplicate, memory.Memory{ID: prev}, fmt.Sprintf("an older version of %s, already superseded", old.ID), true, nil
	}
	m.Importance = max(m.Importance, old.Importance)
	out, stored, why, err := p.commit(ctx, r, m, old.ID, fmt.Sprintf("updates %s (similarity %.2f, adds %s)", old.ID, near[0].Score, strings.Join(added, ", ")))
	if out == outCreated {
		out = outUpdated
	}
	return out, stored, why, true, err
}

// replace stores text as the new version of the live memory r.replaces
// (an edit, an imported item whose file changed), unless another live
// memory of its project holds the same text: then nothing is written, and the
// duplicate is named (not reinforced: the caller decides).
func (p *Pipeline) replace(ctx context.Context, r *run, text string, vec []float32) (outcome, memory.Memory, string, error) {
	if other, ok, err := p.store.FindByHash(ctx, memory.ContentHash(text), r.ex.Project); err != nil {
		return 0, memory.Memory{}, "", fmt.Errorf("find duplicate: %w", err)
	} else if ok && !other.Superseded() && other.ID != r.replaces {
		return outDuplicate, other, "the same text is already stored as memory " + other.ID, nil
	}
	out, stored, why, err := p.commit(ctx, r, p.newMemory(r, text, vec), r.replaces, "updates "+r.replaces)
	if out == outCreated {
		out = outUpdated
	}
	return out, stored, why, err
}

// commit is the pipeline's one write into the store: m as a new memory,
// or as the new version of supersedes. A live memory of m's project that
// holds the same text by then (a writer outside the pipeline's lock, such as an import
// of an export file) wins and is reinforced instead. The marks r.tw owes
// (a turn's statement, turnmark.go) are written in the same transaction.
func (p *Pipeline) commit(ctx context.Context, r *run, m memory.Memory, supersedes, why string) (outcome, memory.Memory, string, error) {
	if r.into != "" && supersedes == "" {
		return p.commitInto(ctx, r, m, why)
	}
	in := store.Insert{Memory: m, Supersedes: supersedes, Unique: true}
	if r.tw != nil {
		out := outCreated
		if supersedes != "" {
			out = outUpdated // as the callers report it
		}
		if in.Memory.ID == "" {
			in.Memory.ID = p.store.NewID() // the outcome mark names it
		}
		in.Marks = r.tw.marks(out, in.Memory.ID)
	}
	stored, existed, err := p.store.Insert(ctx, in)
	if stored.ID != "" && !existed {
		r.tw.written() // also with an error: the record is stored, its text index lags
	}
	if err != nil {
		if supersedes != "" {
			return 0, stored, "", fmt.Errorf("supersede %s: %w", supersedes, err)
		}
		return 0, stored, "", fmt.Errorf("store: %w", err)
	}
	if existed {
		return p.duplicate(ctx, r, stored.ID, outDuplicate)
	}
	return outCreated, stored, why, nil
}

// commitInto stores m into the memory r.into, re-packed (settle): the
// same record, its id and history kept, with m's text, vector, kind and
// type (and its importance when higher). When that memory was superseded
// or deleted meanwhile, m is stored as a new memory.
func (p *Pipeline) commitInto(ctx context.Context, r *run, m memory.Memory, why string) (outcome, memory.Memory, string, error) {
	into := r.into
	stored, err := p.store.Update(ctx, into, func(o *memory.Memory) error {
		if o.Superseded() {
			return errSkipRevision
		}
		o.Text, o.Embedding, o.EmbeddingModel = m.Text, m.Embedding, m.EmbeddingModel
		o.Kind, o.KindOrigin, o.Type = m.Kind, m.KindOrigin, m.Type
		o.Importance = max(o.Importance, m.Importance)
		if m.ExtendsSource != "" {
			o.ExtendsSource = m.ExtendsSource
		}
		return nil
	})
	switch {
	case errors.Is(err, errSkipRevision), errors.Is(err, memory.ErrNotFound):
		r.into = ""
		return p.commit(ctx, r, m, "", why)
	case err != nil:
		return 0, memory.Memory{}, "", fmt.Errorf("store a re-packed statement into %s: %w", into, err)
	}
	delete(r.repack.aside, into)
	return outUpdated, stored, "re-packed into " + into, nil
}

// duplicate reinforces the memory id that holds the text already; out
// (duplicate, or merged for a near duplicate) is the outcome the caller
// reports, and the one the marks r.tw owes record with the reinforcement.
func (p *Pipeline) duplicate(ctx context.Context, r *run, id string, out outcome) (outcome, memory.Memory, string, error) {
	m, err := p.reinforce(ctx, id, r.tw.marks(out, id))
	if m.ID != "" {
		r.tw.written()
	}
	if err != nil {
		return 0, memory.Memory{}, "", err
	}
	return outDuplicate, m, "same text already stored", nil
}

// olderVersion finds a superseded memory that text repeats (a replayed
// session sending an old version again), so it does not supersede the
// newer version back.
func (p *Pipeline) olderVersion(ctx context.Context, r *run, text string, vec []float32) (string, bool, error) {
	hist, err := p.store.VectorSearch(ctx, vec, 5, withSuperseded(ownProject(r.ex.Project, r.model)))
	if err != nil {
		return "", false, fmt.Errorf("find older versions: %w", err)
	}
	var ids []string
	for _, h := range hist {
		if h.Score >= p.dupThreshold() {
			ids = append(ids, h.ID)
		}
	}
	ms, err := p.store.GetMany(ctx, ids)
	if err != nil {
		return "", false, fmt.Errorf("read older versions: %w", err)
	}
	for _, id := range ids {
		if m, ok := ms[id]; ok && m.Superseded() && len(newTokens(m.Text, text)) == 0 {
			return id, true, nil
		}
	}
	return "", false, nil
}

// ownProject is the filter of the memories of project alone, embedded
// with model: what a memory of project is placed among (a near duplicate,
// an older version, the same rule of a file). A memory of no project ("")
// is placed among the memories of no project only, as one of a project is
// among its project's only: Filter.Project "" would match every project,
// so an exchange of no project would reinforce or supersede another
// project's memory, out of its reach (search.scope) and relabelled.
func ownProject(project, model string) store.Filter {
	return store.Filter{Projects: []string{project}, Model: model}
}

// withSuperseded returns f widened to the superseded memories.
func withSuperseded(f store.Filter) store.Filter {
	f.IncludeSuperseded = true
	return f
}

// newMemory builds the record for one chunk.
func (p *Pipeline) newMemory(r *run, text string, vec []float32) memory.Memory {
	kind, origin := r.kind, r.kindOrigin
	typ := memory.TypeProject
	if kind == "" {
		kind = GuessKind(text)
		if kind == memory.KindPreference {
			// a guessed preference ("you want ...") is typed by what
			// it is about, as Distill types a statement's (ruleType)
			kind, typ = ruleType([]string{text}, text)
		}
	} else if kind == memory.KindPreference {
		typ = memory.TypeUser
	}
	if origin == "" && !(r.whole && r.kind != "") { // a whole record keeps what it says of its kind
		origin = GuessOrigin(kind, text)
	}
	src := r.ex.Source
	if r.source != "" {
		src = r.source
	}
	if src == "" {
		src = memory.SourceCapture
	}
	imp := 0.5
	if g := r.given; g != nil {
		if g.Type != "" {
			typ = g.Type
		}
		if g.Importance > 0 {
			imp = g.Importance
		}
	}
	var m memory.Memory
	if r.whole {
		m = *r.given // every other field as the caller gave it (Write)
	}
	m.Text, m.Kind, m.KindOrigin, m.Type, m.Project, m.Source = text, kind, origin, typ, r.ex.Project, src
	m.Importance, m.Embedding, m.EmbeddingModel = imp, vec, r.model
	return m
}

// reinforce counts one more sighting of a stored memory and returns it;
// marks are written with it (store.UpdateMarked).
func (p *Pipeline) reinforce(ctx context.Context, id string, marks []store.TurnMark) (memory.Memory, error) {
	now := p.clock.Now()
	m, err := p.store.UpdateMarked(ctx, id, func(m *memory.Memory) error {
		m.Reinforce(now)
		return nil
	}, marks)
	if err != nil {
		return m, fmt.Errorf("reinforce %s: %w", id, err)
	}
	return m, nil
}

// newTokens lists the load-bearing tokens of next that old lacks, sorted.
func newTokens(old, next string) []string {
	have := memory.LoadBearing(old)
	var out []string
	for t := range memory.LoadBearing(next) {
		if !have[t] {
			out = append(out, t)
		}
	}
	slices.Sort(out)
	if len(out) > 5 {
		out = append(out[:5], "...")
	}
	return out
}

// Kind cues, strongest first; the first that matches names the kind.
var kindCues = []struct {
	kind memory.Kind
	re   *regexp.Regexp
}{
	{memory.KindPreference, regexp.MustCompile(`(?i)\byou(?: (?:prefer|want|like|asked me to)|'d like)\b|\byour preference\b`)},
	{memory.KindDecision, regexp.MustCompile(`(?i)\b(?:we (?:decided|chose|picked|went with|standardi[sz]ed on|settled on)|decided (?:on|to|against)|chose \w+ over|instead of|rather than|over \w+ because)\b`)},
	{memory.KindDebugging, regexp.MustCompile(`(?i)\b(?:root cause|caused by|the (?:bug|crash|leak|failure|error) (?:was|came|comes)|fixed by|the fix|crash(?:es|ed)?|stack trace|regression)\b`)},
	{memory.KindInvariant, regexp.MustCompile(`(?i)\b(?:invariant|must (?:never|always|not)|never (?:be|call|edit|change)|is immutable|at-least-once|exactly-once)\b`)},
	{memory.KindConvention, regexp.MustCompile(`(?i)\b(?:convention|always|never|(?:all|every) \w+ (?:go|live|must|should)|we (?:always|never)|don't use|do not use|use \S+ everywhere)\b`)},
	{memory.KindConfig, regexp.MustCompile(`(?i)(?:\b[A-Z][A-Z0-9]*_[A-Z0-9_]+\b|\b\w+=\S+|\.(?:ya?ml|toml|ini|env|conf|json)\b|\bport \d+|\benvironment variable\b|\bconfig(?:ured|uration)?\b)`)},
}

// strongCue is wording that states a memory's kind outright: a decision
// taken, a rule laid down, a preference said.
var strongCue = map[memory.Kind]*regexp.Regexp{
	memory.KindDecision:   regexp.MustCompile(`(?i)\b(?:we (?:decided|chose|picked|went with|settled on)|(?:the )?decision (?:is|was) to|decided (?:to|on|against))\b`),
	memory.KindConvention: regexp.MustCompile(`(?i)\b(?:convention|we always|we never|always use|never use)\b`),
	memory.KindInvariant:  regexp.MustCompile(`(?i)\b(?:invariant|must never|must always)\b`),
	memory.KindPreference: regexp.MustCompile(`(?i)\b(?:you prefer|your preference|i prefer|i want|never|always|don't|do not)\b`),
}

// GuessOrigin says how certain a kind GuessKind named from text is: a cue
// when the wording states the kind outright (recall boosts it), a guess
// otherwise (no boost: a status report worded "instead of X" is no
// decision).
func GuessOrigin(kind memory.Kind, text string) memory.KindOrigin {
	if re, ok := strongCue[kind]; ok && re.MatchString(text) {
		return memory.KindCued
	}
	return memory.KindGuessed
}

// offerClause is a condition put on the reader's wish ("when you want to
// move on", "if you'd like a diff"): the writer offers something, it
// states no preference of the reader's.
var offerClause = regexp.MustCompile(`(?i)\b(?:if|when|whenever|once|as|whatever|wherever) you(?:'d)? (?:want|like|prefer|wish)\b`)

// GuessKind names the kind of a memory from its wording; fact when
// nothing stands out. An offer (offerClause) is no preference cue.
func GuessKind(text string) memory.Kind {
	text = offerClause.ReplaceAllString(text, "")
	for _, c := range kindCues {
		if c.re.MatchString(text) {
			return c.kind
		}
	}
	return memory.KindFact
}
