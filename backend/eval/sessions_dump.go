package eval

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/memtray/memtray/backend/memory"
	"github.com/memtray/memtray/backend/search"
)

// dumpSession writes a session's live memories, each with the ids of the
// facts ("F:") and the traps ("TRAP:") it covers, then the facts no memory
// covers, each with where its text went (went), for reading a run by hand
// (SessionsOptions.Dump).
func dumpSession(w io.Writer, ls *LabelledSession, live []memory.Memory, covered []bool, went func(Fact) string) {
	fmt.Fprintf(w, "=== session %s (%s, %d memories)\n", ls.ID, ls.Agent, len(live))
	// In the order they were written (ties by text), not by their random
	// ids: two runs' dumps diff line by line.
	live = slices.Clone(live)
	slices.SortStableFunc(live, func(a, b memory.Memory) int {
		if c := a.CreatedAt.Compare(b.CreatedAt); c != 0 {
			return c
		}
		return strings.Compare(a.Text, b.Text)
	})
	for _, m := range live {
		lower := strings.ToLower(m.Text)
		var tags []string
		for _, f := range ls.Facts {
			if coversLower(lower, f.Keys) {
				tags = append(tags, "F:"+f.ID)
			}
		}
		for i, t := range ls.Traps {
			switch {
			case trapCoversLower(lower, t.Keys):
				tags = append(tags, fmt.Sprintf("TRAP:%d", i+1))
			case coversLower(lower, t.Keys):
				tags = append(tags, fmt.Sprintf("trap-substring:%d", i+1)) // the old ruler's only
			}
		}
		if len(tags) == 0 {
			tags = []string{"-"}
		}
		fmt.Fprintf(w, "--- [%s] %s/%s %s\n%s\n", strings.Join(tags, " "), m.Kind, m.KindOrigin, m.Type, m.Text)
	}
	for i, f := range ls.Facts {
		if !covered[i] {
			fmt.Fprintf(w, "!!! uncovered %s (%s): %s\n    went: %s\n", f.ID, f.Where, f.Statement, went(f))
		}
	}
}

// dumpUnrelated writes an unrelated prompt, the query-level evidence test
// recall ran for it and the memories it gave.
func dumpUnrelated(w io.Writer, prompt string, got search.Recalled) {
	hits := got.Hits
	fmt.Fprintf(w, "=== unrelated %q: %d memories\n", prompt, len(hits))
	dumpEvidence(w, got.Evidence)
	for _, h := range hits {
		fmt.Fprintf(w, "  %.3f %s\n", h.Score, oneLine(h.Memory.Text, 120))
	}
}

// dumpUnrelatedInProject writes an unrelated prompt asked inside project
// proj that got memories: the query-level evidence test, then each memory
// given with its score, kind and project, its own evidence (coverage,
// information share, cosine) and which per-memory test of the absolute
// floor let it through (search.GivenEvidence), and every factor of its
// composite.
func dumpUnrelatedInProject(w io.Writer, proj, prompt string, got search.Recalled) {
	fmt.Fprintf(w, "=== unrelated in %s %q: %d memories\n", proj, prompt, len(got.Hits))
	dumpEvidence(w, got.Evidence)
	for i, h := range got.Hits {
		fmt.Fprintf(w, "  given %.3f %s/%s %s\n", h.Score, h.Memory.Kind, h.Memory.Project, oneLine(h.Memory.Text, 100))
		if i < len(got.GivenEvidence) {
			ge := got.GivenEvidence[i]
			fmt.Fprintf(w, "    own evidence: coverage %.3f, info %.3f, cosine %.3f; through the absolute floor by %s\n", ge.Coverage, ge.Info, ge.Cosine, ge.Through)
		}
		dumpFactors(w, h.Breakdown, h.Memory.Text)
	}
}

// dumpMiss writes a query of a covered fact whose recall gave no memory
// covering it in the first SessionsK, and why: what was given (or why
// nothing was), and where the memories covering the fact went (given past
// the first SessionsK, or withheld and by which floor, each with its kind,
// project and text; neither: not a candidate at all, and then every memory
// covering the fact, with its project, so a miss can be read without the
// session's memory list).
func dumpMiss(w io.Writer, session string, f Fact, query string, got search.Recalled, all map[string]memory.Memory) {
	why := fmt.Sprintf("%d given", len(got.Hits))
	if got.Skipped != "" {
		why += ", skipped: " + got.Skipped
	}
	fmt.Fprintf(w, "=== miss %s %s %q: %s\n", session, f.ID, query, why)
	dumpEvidence(w, got.Evidence)
	found := false
	for i, h := range got.Hits {
		if coversLower(strings.ToLower(h.Memory.Text), f.Keys) {
			fmt.Fprintf(w, "  covering memory given at rank %d (%.3f)\n", i+1, h.Score)
			found = true
		}
	}
	for _, wh := range got.Withheld {
		if m, ok := all[wh.ID]; ok && coversLower(strings.ToLower(m.Text), f.Keys) {
			fmt.Fprintf(w, "  covering memory withheld: %s (%.3f)\n", wh.Reason, wh.Score)
			if wh.Reason == search.WithheldAbsoluteFloor {
				// what the floor tests: the candidate's own evidence, not its composite
				fmt.Fprintf(w, "    its own evidence: coverage %.3f under search.absolute_floor and cosine %.3f under the vector floor (importance and boosts do not count)\n", wh.Coverage, wh.Cosine)
			}
			dumpFactors(w, wh.Breakdown, m.Text)
			fmt.Fprintf(w, "    memory: %s/%s %s\n", m.Kind, m.Project, oneLine(m.Text, 100))
			found = true
		}
	}
	if !found {
		fmt.Fprintf(w, "  no covering memory among the candidates\n")
		for _, m := range memoriesCovering(all, f) {
			fmt.Fprintf(w, "    covering memory not a candidate: %s/%s %s\n", m.Kind, m.Project, oneLine(m.Text, 100))
		}
	}
	for _, h := range got.Hits {
		fmt.Fprintf(w, "  given %.3f %s/%s %s\n", h.Score, h.Memory.Kind, h.Memory.Project, oneLine(h.Memory.Text, 100))
		dumpFactors(w, h.Breakdown, h.Memory.Text)
	}
}

// memoriesCovering is the memories of all that cover f, in the order of
// their texts (a dump's lines diff between runs).
func memoriesCovering(all map[string]memory.Memory, f Fact) []memory.Memory {
	var out []memory.Memory
	for _, m := range all {
		if coversLower(strings.ToLower(m.Text), f.Keys) {
			out = append(out, m)
		}
	}
	slices.SortFunc(out, func(a, b memory.Memory) int { return strings.Compare(a.Text, b.Text) })
	return out
}

// dumpFactors writes, under a given or covering memory of a miss, every
// factor of its composite score (search.Composite) with its rank in each
// leg (0: not in that leg), what MMR took off it and its length in
// characters: what put the given memories above the covering one. Nothing
// for a memory without a breakdown (withheld before it was scored).
func dumpFactors(w io.Writer, b memory.ScoreBreakdown, text string) {
	if b == (memory.ScoreBreakdown{}) {
		return
	}
	fmt.Fprintf(w, "    factors: composite %.3f = relevance %.3f (vector #%d, bm25 #%d) x importance %.2f x recency %.3f x access %.2f x anti-sticky %.3f x kind %.2f x surface %.2f x project %.2f x feedback %.2f x keyword %.2f; mmr -%.3f; %d chars\n",
		b.Composite, b.Relevance, b.VectorRank, b.TextRank, b.Importance, b.Recency, b.Access, b.AntiSticky, b.KindBoost, b.Surface, b.ProjectBoost, b.Feedback, b.Keyword, b.Diversity, len([]rune(text)))
}

// oneLine is text cut to its first n runes ("..." when cut) on one line
// (newlines made spaces), for a dump's line of a memory.
func oneLine(text string, n int) string {
	if r := []rune(text); len(r) > n {
		text = string(r[:n]) + "..."
	}
	return strings.ReplaceAll(text, "\n", " ")
}

// dumpEvidence writes which part of the query-level evidence test (see
// search.Evidence) held: the lexical test (the best candidate's coverage
// of the query's information against the share no memory contains), the
// vector test (the best cosine against the threshold, with how many
// standard deviations above the sample mean each is), whether the lexical
// test's memory was too far from the query for it to count
// (search.Evidence.LexicalFar) and the prompt rules (generic, naming
// something no memory contains). Nothing without a test.
func dumpEvidence(w io.Writer, ev *search.Evidence) {
	if ev == nil {
		return
	}
	yes := func(b bool) string {
		if b {
			return "yes"
		}
		return "no"
	}
	vec := "no sample"
	if ev.Sample > 0 && ev.Std > 0 {
		vec = fmt.Sprintf("%s (cosine %.3f, z %.2f; threshold %.3f, z %.2f; sample %d)", yes(ev.Vector),
			ev.Cosine, (ev.Cosine-ev.Mean)/ev.Std, ev.Threshold, (ev.Threshold-ev.Mean)/ev.Std, ev.Sample)
	}
	list := func(ws []string) string {
		if len(ws) == 0 {
			return "-"
		}
		return strings.Join(ws, ",")
	}
	lexical := yes(ev.Lexical)
	switch {
	case ev.LexicalFar:
		lexical = fmt.Sprintf("yes but not counted: its memory is no nearer than the sample's mean (cosine %.3f, z %.2f)", ev.LexicalCosine, ev.LexicalZ)
	case ev.Lexical && ev.Std > 0 && ev.LexicalCosine <= ev.Mean && len(ev.Anchors) > 0:
		lexical = fmt.Sprintf("yes, counted though its memory is no nearer than the sample's mean (cosine %.3f, z %.2f): only it holds %s, which general language does not use",
			ev.LexicalCosine, ev.LexicalZ, strings.Join(ev.Anchors, ","))
	}
	fmt.Fprintf(w, "  evidence %s: lexical %s (coverage %.3f, unknown %.3f), vector %s, generic %s, unknown names %s, names the best candidate lacks %s, unknown names a candidate has as a longer term's start or end %s, names out of the prompt's reach %s\n",
		map[bool]string{true: "holds", false: "fails"}[ev.Holds()], lexical, ev.Coverage, ev.Unknown, vec, yes(ev.Generic), list(ev.UnknownNames), list(ev.BestLacks), list(ev.AffixNames), list(ev.NamesOutOfReach))
	if len(ev.UnheldNames) > 0 {
		fmt.Fprintf(w, "  generic without the names it writes by their form that no candidate holds: %s\n", list(ev.UnheldNames))
	}
	if len(ev.Words) > 0 {
		fmt.Fprintf(w, "  words (information; + the best candidate holds it, ? no memory does): %s\n", strings.Join(ev.Words, " "))
	}
}
