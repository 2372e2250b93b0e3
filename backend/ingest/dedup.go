package ingest

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"

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
	verdict := map[outcome]memory.Verdict{outCreated: memory.VerdictStored, outUpdated: memory.VerdictUpdated,
		outMerged: memory.VerdictMerged, outDuplicate: memory.VerdictDuplicate}[best]
	r.dec.Verdict, r.dec.Stage, r.decided = verdict, StageDedup, true
	if best == outCreated {
		r.dec.Stage = StageStore
	}
	r.dec.Reason = strings.Join(slices.Compact(reasons), "; ")
	return nil
}

// place dedups and stores one chunk.
func (p *Pipeline) place(ctx context.Context, r *run, text string, vec []float32) (outcome, string, string, error) {
	if old, ok, err := p.store.FindByHash(ctx, memory.ContentHash(text)); err != nil {
		return 0, "", "", fmt.Errorf("find duplicate: %w", err)
	} else if ok {
		if err := p.reinforce(ctx, old.ID); err != nil {
			return 0, "", "", err
		}
		return outDuplicate, old.ID, "same text already stored", nil
	}
	near, err := p.store.VectorSearch(ctx, vec, 1, store.Filter{Project: r.ex.Project})
	if err != nil {
		return 0, "", "", fmt.Errorf("find near duplicate: %w", err)
	}
	if len(near) == 1 {
		r.score("nearest_similarity", max(r.dec.Scores["nearest_similarity"], near[0].Score))
	}
	m := p.newMemory(r, text, vec)
	if len(near) == 1 && near[0].Score >= p.cfg.DuplicateSimilarity {
		old, err := p.store.Get(ctx, near[0].ID)
		if err != nil {
			return 0, "", "", fmt.Errorf("read near duplicate: %w", err)
		}
		if added := newTokens(old.Text, text); len(added) > 0 {
			if prev, ok, err := p.olderVersion(ctx, r, text, vec); err != nil {
				return 0, "", "", err
			} else if ok {
				return outDuplicate, prev, fmt.Sprintf("an older version of %s, already superseded", shortID(old.ID)), nil
			}
			m.Importance = max(m.Importance, old.Importance)
			stored, err := p.store.Supersede(ctx, old.ID, m)
			if err != nil {
				return 0, "", "", fmt.Errorf("supersede %s: %w", old.ID, err)
			}
			return outUpdated, stored.ID, fmt.Sprintf("updates %s (similarity %.2f, adds %s)", shortID(old.ID), near[0].Score, strings.Join(added, ", ")), nil
		}
		if err := p.reinforce(ctx, old.ID); err != nil {
			return 0, "", "", err
		}
		return outMerged, old.ID, fmt.Sprintf("near duplicate of %s (similarity %.2f)", shortID(old.ID), near[0].Score), nil
	}
	if r.source != "" {
		// A document's chunks are sources themselves; they do not link.
		stored, err := p.store.Put(ctx, m)
		if err != nil {
			return 0, "", "", fmt.Errorf("store: %w", err)
		}
		return outCreated, stored.ID, "new source memory", nil
	}
	src, err := p.store.VectorSearch(ctx, vec, 1, store.Filter{Source: "ingest:"})
	if err != nil {
		return 0, "", "", fmt.Errorf("find source: %w", err)
	}
	why := "new memory"
	if len(src) == 1 && src[0].Score >= p.cfg.SourceSimilarity && !strings.HasPrefix(m.Source, "ingest:") {
		m.ExtendsSource = src[0].ID
		why = fmt.Sprintf("new memory extending source %s (similarity %.2f)", shortID(src[0].ID), src[0].Score)
	}
	stored, err := p.store.Put(ctx, m)
	if err != nil {
		return 0, "", "", fmt.Errorf("store: %w", err)
	}
	return outCreated, stored.ID, why, nil
}

// olderVersion finds a superseded memory that text repeats (a replayed
// session sending an old version again), so it does not supersede the
// newer version back.
func (p *Pipeline) olderVersion(ctx context.Context, r *run, text string, vec []float32) (string, bool, error) {
	hist, err := p.store.VectorSearch(ctx, vec, 5, store.Filter{Project: r.ex.Project, IncludeSuperseded: true})
	if err != nil {
		return "", false, fmt.Errorf("find older versions: %w", err)
	}
	var ids []string
	for _, h := range hist {
		if h.Score >= p.cfg.DuplicateSimilarity {
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

// newMemory builds the record for one chunk.
func (p *Pipeline) newMemory(r *run, text string, vec []float32) memory.Memory {
	kind, origin := r.kind, r.kindOrigin
	if kind == "" {
		kind = GuessKind(text)
	}
	if origin == "" {
		origin = GuessOrigin(kind, text)
	}
	typ := memory.TypeProject
	if kind == memory.KindPreference {
		typ = memory.TypeUser
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
	return memory.Memory{Text: text, Kind: kind, KindOrigin: origin, Type: typ, Project: r.ex.Project, Source: src,
		Importance: imp, Embedding: vec, EmbeddingModel: r.model}
}

// reinforce counts one more sighting of a stored memory.
func (p *Pipeline) reinforce(ctx context.Context, id string) error {
	now := p.clock.Now()
	_, err := p.store.Update(ctx, id, func(m *memory.Memory) error {
		m.Reinforce(now)
		return nil
	})
	if err != nil {
		return fmt.Errorf("reinforce %s: %w", id, err)
	}
	return nil
}

// newTokens lists the load-bearing tokens of next that old lacks, sorted.
func newTokens(old, next string) []string {
	have := LoadBearing(old)
	var out []string
	for t := range LoadBearing(next) {
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

func shortID(id string) string {
	if len(id) > 8 {
		return id[:8]
	}
	return id
}

// Kind cues, strongest first; the first that matches names the kind.
var kindCues = []struct {
	kind memory.Kind
	re   *regexp.Regexp
}{
	{memory.KindPreference, regexp.MustCompile(`(?i)\byou (?:prefer|want|like|'d like|asked me to)\b|\byour preference\b`)},
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

// GuessKind names the kind of a memory from its wording; fact when
// nothing stands out.
func GuessKind(text string) memory.Kind {
	for _, c := range kindCues {
		if c.re.MatchString(text) {
			return c.kind
		}
	}
	return memory.KindFact
}
