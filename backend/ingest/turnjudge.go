package ingest

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/memtray/memtray/backend/memory"
	"github.com/memtray/memtray/backend/noise"
)

// OriginJudge marks, in a Decision's candidates, a memory the turn judge
// wrote in place of the distiller's choice.
const OriginJudge = "judge"

// maxJudgeToolBytes bounds a tool result before it
// is redacted for the turn judge, which shows a few hundred characters of
// each at most (package judge): a secret cut at this bound never reaches
// the prompt.
const maxJudgeToolBytes = 2 << 10

// judgeTurn asks the pipeline's turn judge, if it has one, which memories
// the turn t holds, once, after distillation found cands. It returns the
// statements to store: the judge's memories in place of kept, each
// redacted again and refused when it mainly restates a statement
// distillation dropped, or a piece it cut out of one, as revised or
// undone later (restatesRevised). When the judge keeps nothing the
// turn is rejected at StageJudge (r.decided). Without a turn judge, or when
// it fails (budget, timeout, a malformed answer: score judge_error), kept
// stands. A turn the judge keeps nothing of teaches the content scorer its
// final answer as noise, as the judge's SKIP of an exchange does. What an
// edit added to an instruction file (instr.go) is no choice to make: it
// stays beside the judge's memories, and a turn that has such a statement
// is not rejected.
func (p *Pipeline) judgeTurn(ctx context.Context, r *run, t Turn, cands, kept []Candidate) []Candidate {
	tj := p.turnJudge()
	if tj == nil {
		return kept
	}
	var instr []Candidate // what the turn wrote into an instruction file
	for _, c := range kept {
		if c.Origin == OriginInstruction {
			instr = append(instr, c)
		}
	}
	start := time.Now()
	v, err := tj.JudgeTurn(ctx, turnInput(t, cands))
	r.dec.Timings = append(r.dec.Timings, memory.StageTiming{Stage: StageJudge, Duration: time.Since(start)})
	if err != nil {
		r.score("judge_error", 1)
		return kept
	}
	r.score("judge_memories", float64(len(v.Memories)))
	if len(v.Memories) == 0 {
		r.score("judge_skip", 1)
		if len(instr) == 0 {
			r.reject(StageJudge, "the judge ("+tj.Name()+") kept nothing of the turn; "+describeCandidates(cands))
		}
		if p.scorer != nil && strings.TrimSpace(r.reply) != "" {
			// As for an exchange, the judge's verdict trains the scorer: the
			// turn's answer is noise.
			if err := p.scorer.Learn(ctx, r.reply, noise.SourceJudge); err != nil {
				r.score("learn_error", 1)
			}
		}
		if len(instr) == 0 {
			return nil
		}
		for _, c := range kept {
			if c.Origin != OriginInstruction {
				cv := &r.dec.Candidates[c.idx]
				cv.Kept, cv.Reason = false, "not chosen by the judge"
			}
		}
		return instr
	}
	// The judge's memories replace the distiller's choice.
	for _, c := range kept {
		if c.Origin == OriginInstruction {
			continue
		}
		cv := &r.dec.Candidates[c.idx]
		cv.Kept, cv.Reason = false, "not chosen by the judge"
	}
	var out []Candidate
	refused := 0
	for _, m := range v.Memories {
		text, n := redactText(StripInjected(m.Text))
		if n > 0 {
			r.dec.Scores["redactions"] += float64(n)
		}
		c := newCandidate(text, OriginJudge, ClassFinding, true, "")
		if m.Kind == memory.KindPreference {
			c.Class = ClassPreference
		}
		c.Kind, c.Type = m.Kind, m.Type
		if rev := restatesRevised(c, cands); rev != "" {
			c.Keep, c.Reason = false, "restates a statement revised later: "+preview(rev)
			refused++
		}
		if c.Text == "" {
			c.Keep, c.Reason = false, "empty after redaction"
		}
		c.idx = len(r.dec.Candidates)
		r.dec.Candidates = append(r.dec.Candidates, memory.CandidateVerdict{Text: preview(c.Text), Origin: c.Origin,
			Class: c.Class, Kept: c.Keep, Reason: c.Reason, Kind: c.Kind})
		if c.Keep {
			out = append(out, c)
		}
	}
	if refused > 0 {
		r.score("judge_refused", float64(refused))
	}
	out = append(out, instr...)
	if len(out) == 0 {
		r.reject(StageJudge, fmt.Sprintf("no memory of the judge (%s) passed the guards: %d restate a statement the session revised", tj.Name(), refused))
		return nil
	}
	return out
}

// restatesRevised returns the statement the session revised that c
// mainly restates, "" when there is none: a candidate distillation
// dropped as revised, or a piece it cut out of one as revised (revisedBy)
// while keeping the rest. c shares at least two subject tokens with it, at
// least half of the smaller subject, more than it shares with any
// statement distillation kept, and none of the specific tokens (long or
// load-bearing) the revising sentence brought in. A memory of the
// corrected finding names the same subject as the revised one, but also
// what the correction said.
func restatesRevised(c Candidate, cands []Candidate) string {
	best := 0
	for _, o := range cands {
		if o.Keep {
			best = max(best, overlap(c.subject, o.subject))
		}
	}
	restates := func(text, reason string, subject map[string]bool) bool {
		by, ok := revisedBy(reason)
		if !ok {
			return false
		}
		if subject == nil {
			subject = subjectOf(text)
		}
		n := overlap(c.subject, subject)
		if n < 2 || 2*n < min(len(c.subject), len(subject)) || n <= best {
			return false
		}
		return !sharesCorrection(c.subject, subject, by)
	}
	for _, o := range cands {
		if !o.Keep && restates(o.Text, o.Reason, o.subject) {
			return o.Text
		}
		for _, k := range o.cuts {
			if restates(k.text, k.reason, nil) {
				return k.text
			}
		}
	}
	return ""
}

// revisedBy returns what revised a statement distillation dropped or cut
// with reason (the revising sentence, or the call that moved its file),
// and whether the reason says the session revised it: "revised later" (a
// later sentence corrected it, a sentence of its own statement did, a
// later call moved or deleted the file it places) or "undone later" (a
// later sentence or request undid the state it describes). Both say the
// session left what the statement describes, and a later turn's revision
// is beyond what the judge sees. An unconfirmed guess, an offer or
// narration is not revised: nothing the session said contradicts it, and
// whether the turn bore a guess out is the judge's to read in the turn it
// sees whole.
func revisedBy(reason string) (string, bool) {
	for _, p := range []string{"revised later: ", "undone later: "} {
		if by, ok := strings.CutPrefix(reason, p); ok {
			return by, true
		}
	}
	return "", false
}

// sharesCorrection reports whether subject holds a specific token that the
// revising sentence by adds to the revised statement's subject: a token
// of 7 or more characters or a load-bearing one (a path, an identifier),
// other than the revision's cue words.
func sharesCorrection(subject, revised map[string]bool, by string) bool {
	for t := range subjectOf(by) {
		if revised[t] || !subject[t] || cueWord(t) {
			continue
		}
		if len(t) >= 7 || strings.ContainsAny(t, "_./:-") {
			return true
		}
	}
	return false
}

// turnInput is what the turn judge sees of t: its texts (already stripped
// and redacted by cleanTurn), the tool calls and results bounded and
// redacted here, and the candidates numbered from 1, each with the pieces
// distillation cut out of it and why (redacted here too, as tool calls
// are, though they come from the cleaned texts; the judge's prompt bounds
// them), so that the judge does not write a cut piece back.
func turnInput(t Turn, cands []Candidate) memory.TurnInput {
	in := memory.TurnInput{SessionID: t.SessionID, Project: t.Project, User: userTexts(t)}
	last := -1
	for i, s := range t.Steps {
		if strings.TrimSpace(s.Text) != "" && !s.Error {
			last = i
		}
	}
	for i, s := range t.Steps {
		st := memory.TurnStep{Origin: OriginToolLoop, Text: s.Text, Error: s.Error}
		switch {
		case s.Summary || strings.HasPrefix(strings.TrimSpace(s.Text), continuedPrefix):
			st.Origin = OriginSummary
		case i == last:
			st.Origin = OriginFinal
		}
		for _, c := range s.Calls {
			in, _ := redactText(c.Input) // whole: the path or command may follow other arguments
			st.Calls = append(st.Calls, memory.ToolCall{ID: c.ID, Name: c.Name, Input: in})
		}
		for _, res := range s.Results {
			st.Results = append(st.Results, memory.ToolResult{ToolUseID: res.ToolUseID, Name: res.Name,
				Content: judgeRedact(res.Content), IsError: res.IsError})
		}
		in.Steps = append(in.Steps, st)
	}
	for i, c := range cands {
		tc := memory.TurnCandidate{ID: i + 1, Text: c.Text, Origin: c.Origin, Class: c.Class, Kept: c.Keep, Reason: c.Reason}
		for _, k := range c.cuts {
			text, _ := redactText(k.text)
			reason, _ := redactText(k.reason)
			tc.Cuts = append(tc.Cuts, memory.TurnCut{Text: text, Reason: reason})
		}
		in.Candidates = append(in.Candidates, tc)
	}
	return in
}

// judgeRedact bounds a tool result to maxJudgeToolBytes and masks its secrets.
func judgeRedact(s string) string {
	if len(s) > maxJudgeToolBytes {
		s = strings.ToValidUTF8(s[:maxJudgeToolBytes], "")
	}
	out, _ := redactText(StripInjected(s))
	return out
}

// turnJudge returns the pipeline's judge as a turn judge, nil when it has
// none or its judge judges no turns.
func (p *Pipeline) turnJudge() memory.TurnJudge {
	if tj, ok := p.judge.(memory.TurnJudge); ok && tj != nil {
		return tj
	}
	return nil
}
