package ingest

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/memtray/memtray/backend/embed"
	"github.com/memtray/memtray/backend/memory"
	"github.com/memtray/memtray/backend/store"
)

// StageDistill names the step that splits a turn into statements and
// keeps the durable ones (Decisions of turns report it).
const StageDistill = "distill"

// ProcessTurn forms the memories of one user turn: its texts are stripped
// of injected blocks and redacted, split into candidate statements and
// classified (Distill), the statements the turn or a later one (later:
// the redacted or raw texts the session said after this turn, when the
// caller knows them) revised are dropped, and each kept statement is
// embedded, deduplicated and stored as its own memory. The Decision lists
// every candidate with its verdict; its verdict is the strongest outcome
// of the kept ones, or rejected when none was kept.
//
// A turn of a headless session under the count that has not ended is held
// (see ProcessSession): held is true and nothing is stored.
func (p *Pipeline) ProcessTurn(ctx context.Context, t Turn, later []LaterText, st SessionState) (dec memory.Decision, held bool, err error) {
	for i, ex := range t.Exchanges {
		if err := Validate(ex); err != nil {
			return memory.Decision{}, false, fmt.Errorf("exchange %d of the turn: %w", i, err)
		}
	}
	if st.UserTurns < 0 {
		return memory.Decision{}, false, &memory.ValidationError{Problems: []string{"session user turns must not be negative"}}
	}
	r := p.newRun(t.Exchange(), false, "")
	r.session = st
	start := time.Now()
	t, later, redactions := cleanTurn(t, later)
	if !st.Ended && t.SessionID != "" {
		t.awaiting = awaitedCalls(t) // live capture: a Stop between a call and its result (continueTurn)
	}
	r.score("redactions", float64(redactions))
	r.user, r.reply = strings.Join(t.User, "\n\n"), t.Final()
	r.dec.Preview = preview(firstNonEmpty(r.user, r.reply))
	r.dec.Timings = append(r.dec.Timings, memory.StageTiming{Stage: StageRedact, Duration: time.Since(start)})

	if allErrors(t) {
		r.reject(StageSource, "error response")
		return r.dec, false, nil
	}
	if r.turnKey = turnKey(t); r.turnKey != "" {
		marks, err := p.store.TurnMarks(ctx, r.turnKey)
		if err != nil {
			return r.dec, false, fmt.Errorf("ingest: %w", err)
		}
		if _, ok := marks[""]; ok {
			dec := replayed(r, marks)
			if err := p.rememberReplayed(ctx, t, later, marks, st.Ended, &dec); err != nil {
				return r.dec, false, err
			}
			return dec, false, nil
		}
		r.marks = marks
		if len(marks) == 0 && t.Project != "" {
			if dec, ok, err := p.relabelEarlier(ctx, r, t); ok || err != nil {
				return dec, false, err
			}
		}
	}
	if err := p.headless(ctx, r); err != nil || r.held {
		return r.dec, r.held, err
	}
	if r.decided {
		return r.dec, false, nil
	}
	if !st.Ended && t.SessionID != "" && len(t.User) == 0 && len(t.Exchanges) > 0 && t.Exchanges[0].ToolLoop {
		// A live turn's continuation (session.go), read after its Stop.
		if ok, err := p.continueTurn(ctx, r, t); ok || err != nil {
			return r.dec, false, err
		}
	}

	start = time.Now()
	if t.SessionID != "" {
		t.held = p.recent.held(t.SessionID) // held.go: what the session said before the turn
	}
	cands, revises, pending := distillWith(t, later, st.Revisions.memo())
	base := len(r.dec.Candidates)
	// Deferred first, so it runs last: once the earlier turns are revised
	// knowing this one (a retry of a failed revision runs the turn again).
	defer func() {
		if err == nil && !held {
			err = p.markRejected(ctx, r.turnKey, dec)
		}
	}()
	defer func() {
		if dec.Stage != StageReplay { // a run of the turn at once decided it, revisions included
			p.reviseEarlier(ctx, t, st, cands, revises, pending, base, &dec, &err) // session.go
		}
	}()
	r.dec.Timings = append(r.dec.Timings, memory.StageTiming{Stage: StageDistill, Duration: time.Since(start)})
	var kept []Candidate
	for _, c := range cands {
		c.idx = len(r.dec.Candidates)
		r.dec.Candidates = append(r.dec.Candidates, memory.CandidateVerdict{Text: preview(c.Text), Origin: c.Origin, Class: c.Class, Kept: c.Keep, Reason: c.Reason, Kind: c.Kind})
		if c.Keep {
			kept = append(kept, c)
		}
	}
	// What distillation cut out of a statement it kept in part follows the
	// statements, each piece a dropped verdict with why; after them, so
	// the statement at base+i stays cands[i] (reviseEarlier).
	r.dec.Candidates = append(r.dec.Candidates, cutVerdicts(cands)...)
	r.score("candidates", float64(len(cands)))
	r.score("kept", float64(len(kept)))
	if kept = p.judgeTurn(ctx, r, t, cands, kept); r.decided { // turnjudge.go
		return r.dec, false, nil
	}
	if len(kept) == 0 {
		r.reject(StageDistill, describeCandidates(cands))
		return r.dec, false, nil
	}
	if err := p.storeCandidates(ctx, r, kept); err != nil {
		return r.dec, false, err
	}
	if r.dec.Stage == StageReplay {
		return r.dec, false, nil
	}
	r.dec.Reason = describeCandidates(cands) + "; " + r.dec.Reason
	return r.dec, false, nil
}

// cleanTurn strips injected blocks from every text of the turn and masks
// secrets in them and in later; it returns the number of secrets masked.
func cleanTurn(t Turn, later []LaterText) (Turn, []LaterText, int) {
	n := 0
	clean := func(s string) string {
		out, k := redactText(StripInjected(s))
		n += k
		return out
	}
	out := t
	out.User = make([]string, len(t.User))
	for i, u := range t.User {
		out.User[i] = clean(u)
	}
	out.Answers = make([]memory.Answer, len(t.Answers))
	for i, a := range t.Answers {
		a.Question, a.Answer = clean(a.Question), clean(a.Answer)
		out.Answers[i] = a
	}
	out.Steps = make([]Step, len(t.Steps))
	for i, s := range t.Steps {
		s.Text = clean(s.Text)
		out.Steps[i] = s
	}
	cl := make([]LaterText, len(later))
	for i, l := range later {
		cl[i] = LaterText{Text: clean(l.Text), From: l.From}
	}
	return out, cl, n
}

// allErrors reports whether every response of the turn failed.
func allErrors(t Turn) bool {
	if len(t.Steps) == 0 {
		return false
	}
	for _, s := range t.Steps {
		if !s.Error {
			return false
		}
	}
	return true
}

func firstNonEmpty(ss ...string) string {
	for _, s := range ss {
		if strings.TrimSpace(s) != "" {
			return s
		}
	}
	return ""
}

// storeCandidates embeds the kept statements in one batch and places each
// (dedup, update, link or create) as a memory of its own kind and type.
func (p *Pipeline) storeCandidates(ctx context.Context, r *run, kept []Candidate) (err error) {
	start := time.Now()
	texts := make([]string, len(kept))
	for i, c := range kept {
		texts[i] = c.Text
	}
	emb := embed.Snapshot(p.emb)
	vecs, err := emb.Embed(ctx, texts)
	if err != nil {
		return fmt.Errorf("ingest: embed %d statements: %w", len(texts), err)
	}
	if len(vecs) != len(texts) {
		return fmt.Errorf("ingest: embedder returned %d vectors for %d statements", len(vecs), len(texts))
	}
	r.dec.Timings = append(r.dec.Timings, memory.StageTiming{Stage: StageEmbed, Duration: time.Since(start)})
	r.model = emb.Model()
	kept, vecs = p.contentGate(r, kept, vecs)
	if len(kept) == 0 {
		r.reject(StageContent, "every kept statement scored as noise: "+r.dec.Reason)
		return nil
	}
	r.dec.Chunks = len(kept)

	start = time.Now()
	select {
	case p.wmu <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	}
	defer func() { <-p.wmu }()
	if r.turnKey != "" {
		// Read again under the write lock: another run of the turn (two
		// capture paths at once) may have placed it meanwhile.
		marks, err := p.store.TurnMarks(ctx, r.turnKey)
		if err != nil {
			return fmt.Errorf("ingest: %w", err)
		}
		if _, ok := marks[""]; ok {
			r.dec, r.decided = replayed(r, marks), true
			return nil
		}
		r.marks = marks
	}
	best := outDuplicate
	var reasons []string
	// What an earlier run of the turn placed is not placed again (see
	// turnmark.go); the rest is marked pending with the first write, and
	// each placement's outcome recorded with its write (r.tw).
	var tw *turnWrite
	if r.turnKey != "" {
		tw = &turnWrite{key: r.turnKey}
		for _, c := range kept {
			h := memory.ContentHash(c.Text)
			if _, ok := r.marks[h]; !ok { // a pending mark keeps its time (resolvePending)
				tw.owed = append(tw.owed, store.TurnMark{Turn: r.turnKey, Hash: h, Atomic: true})
			}
		}
		r.tw = tw
		defer func() {
			r.tw = nil
			// What is still owed: the outcomes of placements that wrote
			// nothing (also when a later statement failed), and the turn
			// decided unless its last write carried it. Pending marks
			// owed guard no placement: none wrote since.
			var rest []store.TurnMark
			for _, m := range tw.owed {
				if m.Outcome != "" {
					rest = append(rest, m)
				}
			}
			if err == nil && r.decided && !tw.decided {
				rest = append(rest, store.TurnMark{Turn: r.turnKey, Outcome: string(r.dec.Verdict)})
			}
			if merr := p.store.MarkTurn(context.WithoutCancel(ctx), rest); merr != nil && err == nil {
				err = fmt.Errorf("ingest: %w", merr)
			}
		}()
	}
	for i, c := range kept {
		if tw != nil {
			tw.hash, tw.last, tw.best, tw.wrote = memory.ContentHash(c.Text), i == len(kept)-1, best, false
		}
		out, id, why, record, err := p.placeStatement(ctx, r, c, vecs[i])
		if err != nil {
			return fmt.Errorf("ingest: store statement %d: %w", i, err)
		}
		if record && tw != nil && !tw.wrote {
			tw.owed = append(tw.owed, store.TurnMark{Turn: r.turnKey, Hash: tw.hash, Outcome: outcomeOf(out), MemoryID: id})
		}
		best = min(best, out)
		r.dec.MemoryIDs = append(r.dec.MemoryIDs, id)
		r.dec.Candidates[c.idx].MemoryID = id
		reasons = append(reasons, why)
	}
	r.dec.Timings = append(r.dec.Timings, memory.StageTiming{Stage: StageDedup, Duration: time.Since(start)})
	r.dec.Verdict = verdicts[best]
	r.dec.Stage, r.decided = StageDedup, true
	if best == outCreated {
		r.dec.Stage = StageStore
	}
	r.dec.Reason = summarizeReasons(reasons)
	return nil
}

// placeStatement places one kept statement of the turn, unless an earlier
// run of the turn did (its marks): then its outcome and memory are that
// run's, and nothing is written or reinforced. record says the outcome is
// new to the marks (placed now, or a pending mark resolved); a placement
// that wrote recorded it with its write already (r.tw).
func (p *Pipeline) placeStatement(ctx context.Context, r *run, c Candidate, vec []float32) (out outcome, id, why string, record bool, err error) {
	if mk, ok := r.marks[memory.ContentHash(c.Text)]; ok && r.turnKey != "" {
		if mk.Outcome != "" {
			return markedOutcome(mk.Outcome), mk.MemoryID, "placed by an earlier run of the turn", false, nil
		}
		if !mk.Atomic { // an Atomic mark still pending: the earlier run did not place it
			out, id, ok, err := p.resolvePending(ctx, c.Text, r.ex.Project, mk)
			if err != nil || ok {
				return out, id, "placed by an earlier run of the turn, cut short", ok, err
			}
		}
	}
	cr := *r
	cr.kind, cr.kindOrigin = c.Kind, c.kindOrigin()
	cr.given = &memory.Memory{Type: c.Type}
	if r.repack != nil {
		cr.into = r.repack.into[c.Text]
	}
	out, id, why, err = p.place(ctx, &cr, c.Text, vec)
	return out, id, why, err == nil, err
}

// contentGate is the adaptive content score (package noise) on each kept
// statement: a statement nearer the learned noise than the quality
// prototypes is dropped. The Decision keeps the best score (and, when
// every statement failed, the reason of the best).
func (p *Pipeline) contentGate(r *run, kept []Candidate, vecs [][]float32) ([]Candidate, [][]float32) {
	if p.scorer == nil {
		return kept, vecs
	}
	best := -1.0
	var outC []Candidate
	var outV [][]float32
	for i, c := range kept {
		if c.Origin == OriginJudge || userRule(c) { // the judge read the whole turn: its choice is not second-guessed
			outC, outV = append(outC, c), append(outV, vecs[i])
			continue
		}
		sc := p.scorer.ScoreVector(vecs[i])
		if sc.Value > best {
			best = sc.Value
			r.score("content_score", sc.Value)
			r.score("quality_sim", sc.Quality)
			r.score("noise_sim", sc.Noise)
			if !sc.Pass {
				r.dec.Reason = fmt.Sprintf("content score %s (nearest noise: %s)", scoreUnder(sc.Value, p.scorer.Threshold()), sc.Nearest)
			}
		}
		if !sc.Pass {
			cv := &r.dec.Candidates[c.idx]
			cv.Kept, cv.Reason = false, "content score "+scoreUnder(sc.Value, p.scorer.Threshold())
			continue
		}
		outC, outV = append(outC, c), append(outV, vecs[i])
	}
	return outC, outV
}

// userRule reports whether a candidate is a rule the user stated in
// their own words (a prompt's preference or standing order, a refusal's
// words) about how the agent is to work, the user's preference
// (ruleType): the content score gate does not judge it. The gate's noise
// is learned from what the agent says (status reports, narration), and
// such a rule speaks of the same acts ("commit as each task is completed
// and the tests pass"): the rule tests of userSentences, not its
// likeness to a status report, decide it. A rule of the project's
// content (and output pasted with a rule's wording in it) is judged as
// before.
func userRule(c Candidate) bool {
	return c.Origin == OriginUser && c.Class == ClassPreference && c.Type == memory.TypeUser
}

// summarizeReasons counts what dedup did with the statements.
func summarizeReasons(reasons []string) string {
	counts := map[string]int{}
	var order []string
	for _, r := range reasons {
		key := r
		if i := strings.Index(r, " ("); i > 0 {
			key = r[:i]
		}
		if i := strings.Index(key, " of "); i > 0 && strings.HasPrefix(key, "near duplicate") {
			key = "near duplicate"
		}
		if strings.HasPrefix(key, "updates ") {
			key = "updates a memory"
		}
		if counts[key] == 0 {
			order = append(order, key)
		}
		counts[key]++
	}
	parts := make([]string, 0, len(order))
	for _, k := range order {
		parts = append(parts, fmt.Sprintf("%s %d", k, counts[k]))
	}
	return strings.Join(parts, ", ")
}

// cutVerdicts returns, for the feed, each piece distillation cut out of
// a candidate of cands (Candidate.cuts) as a dropped verdict with the
// cut's reason and its candidate's origin and class, marked Cut.
func cutVerdicts(cands []Candidate) []memory.CandidateVerdict {
	var out []memory.CandidateVerdict
	for _, c := range cands {
		for _, k := range c.cuts {
			out = append(out, memory.CandidateVerdict{Text: preview(k.text), Origin: c.Origin, Class: c.Class,
				Reason: k.reason, Cut: true})
		}
	}
	return out
}
