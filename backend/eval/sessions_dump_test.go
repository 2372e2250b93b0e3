package eval

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	"github.com/memtray/memtray/backend/memory"
	"github.com/memtray/memtray/backend/search"
)

func TestDumpMiss(t *testing.T) {
	f := Fact{ID: "F1", Keys: [][]string{{"pnpm"}}}
	covering := memory.Memory{ID: "m1", Text: "The project uses pnpm, never npm.", Kind: memory.KindConvention, Project: "web"}
	other := memory.Memory{ID: "m2", Text: "The API listens on port 8080."}
	all := map[string]memory.Memory{"m1": covering, "m2": other}
	hit := func(m memory.Memory) memory.Hit { return memory.Hit{Memory: m, Score: 0.5} }
	for _, tc := range []struct {
		name string
		got  search.Recalled
		want []string
	}{
		{"given past the first five", search.Recalled{Hits: []memory.Hit{hit(other), hit(other), hit(other), hit(other), hit(other), hit(covering)}},
			[]string{"6 given", "covering memory given at rank 6"}},
		{"withheld by a floor", search.Recalled{Hits: []memory.Hit{hit(other)}, Withheld: []search.Withheld{{ID: "m2", Reason: search.WithheldOverK}, {ID: "m1", Reason: search.WithheldMaxChars, Score: 0.4}}},
			[]string{"1 given", "covering memory withheld: max_chars (0.400)\n    memory: convention/web The project uses pnpm, never npm.\n"}},
		// The absolute floor tests the candidate's own evidence, not the
		// composite in brackets: the dump says so.
		{"withheld by the absolute floor", search.Recalled{Hits: []memory.Hit{hit(other)}, Withheld: []search.Withheld{{ID: "m1", Reason: search.WithheldAbsoluteFloor, Score: 0.7, Coverage: 0.05, Cosine: 0.31}}},
			[]string{"covering memory withheld: absolute_floor (0.700)\n    its own evidence: coverage 0.050 under search.absolute_floor and cosine 0.310 under the vector floor"}},
		{"nothing given", search.Recalled{Skipped: "no evidence", Withheld: []search.Withheld{{ID: "m1", Reason: search.WithheldNoEvidence}}},
			[]string{"0 given, skipped: no evidence", "withheld: no_evidence"}},
		{"not a candidate", search.Recalled{Hits: []memory.Hit{hit(other)}},
			[]string{"no covering memory among the candidates\n    covering memory not a candidate: convention/web The project uses pnpm, never npm.\n"}},
		// Each given memory and each covering one withheld shows every
		// factor of its composite: what ranked the given ones above it.
		{"factors", search.Recalled{Hits: []memory.Hit{{Memory: other, Score: 0.9, Breakdown: factors(0.9, 1.5, 1)}},
			Withheld: []search.Withheld{{ID: "m1", Reason: search.WithheldOverK, Score: 0.6, Breakdown: factors(0.6, 1, 2)}}},
			[]string{"covering memory withheld: over_k (0.600)\n    factors: composite 0.600 = relevance 0.600 (vector #2, bm25 #2) x importance 0.50 x recency 1.000 x access 1.00 x",
				"The API listens on port 8080.\n    factors: composite 0.900 = relevance 0.600 (vector #1, bm25 #1) x importance 0.50 x recency 1.000 x access 1.50 x",
				"keyword 1.00; mmr -0.000; 33 chars"}},
		// The eval asks for every withheld candidate (AllWithheld): one
		// past the first search.MaxWithheld is reported where it went.
		{"withheld past the cap", search.Recalled{Hits: []memory.Hit{hit(other)}, Withheld: append(slices.Repeat([]search.Withheld{{ID: "m2", Reason: search.WithheldOverK}}, search.MaxWithheld),
			search.Withheld{ID: "m1", Reason: search.WithheldRelativeFloor, Score: 0.1})},
			[]string{"covering memory withheld: relative_floor (0.100)"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b bytes.Buffer
			dumpMiss(&b, "D1", f, "Which package manager?", tc.got, all)
			out := b.String()
			if !strings.HasPrefix(out, `=== miss D1 F1 "Which package manager?": `) {
				t.Errorf("header: %q", out)
			}
			for _, w := range tc.want {
				if !strings.Contains(out, w) {
					t.Errorf("dump lacks %q:\n%s", w, out)
				}
			}
		})
	}
}

// factors is a breakdown of a given composite, relevance 0.6 at rank
// rank in both legs, importance 0.5 and the access factor access.
func factors(composite, access float64, rank int) memory.ScoreBreakdown {
	return memory.ScoreBreakdown{Composite: composite, Relevance: 0.6, VectorRank: rank, TextRank: rank, Importance: 0.5,
		Recency: 1, Access: access, AntiSticky: 1, KindBoost: 1, Surface: 1, ProjectBoost: 1, Feedback: 1, Keyword: 1}
}

// TestDumpEvidence: an unrelated prompt's block says which part of the
// evidence test held, with the numbers each compared; a miss's block too;
// without a test (nil) nothing is written.
func TestDumpEvidence(t *testing.T) {
	vectorOnly := &search.Evidence{Coverage: 0.3, Unknown: 0.4, Cosine: 0.25, Mean: 0.1, Std: 0.05, Threshold: 0.24, Sample: 256, Vector: true}
	named := &search.Evidence{Coverage: 0.5, Unknown: 0.2, Lexical: true, UnknownNames: []string{"terraform"}, NamesUnknown: true}
	lacks := &search.Evidence{Coverage: 0.45, Unknown: 0.1, Lexical: true, BestLacks: []string{"rust"}}
	outOfReach := &search.Evidence{Coverage: 0.45, Unknown: 0.3, Lexical: true, NamesOutOfReach: []string{"tailwind"}, Words: []string{"app+:8.7", "tailwind:14.8"}}
	affix := &search.Evidence{Coverage: 0.45, Unknown: 0.2, Lexical: true, UnknownNames: []string{"cnc"}, AffixNames: []string{"cnc"}}
	far := &search.Evidence{Coverage: 0.25, Unknown: 0, Lexical: true, LexicalFar: true, LexicalCosine: 0.19, LexicalZ: -0.2,
		Cosine: 0.24, Mean: 0.2, Std: 0.05, Threshold: 0.34, Sample: 256}
	for _, tc := range []struct {
		name string
		ev   *search.Evidence
		want []string
	}{
		{"vector only", vectorOnly, []string{"evidence holds: lexical no (coverage 0.300, unknown 0.400), vector yes (cosine 0.250, z 3.00; threshold 0.240, z 2.80; sample 256)"}},
		{"names unknown", named, []string{"evidence fails: lexical yes", "vector no sample", "unknown names terraform", "names the best candidate lacks -"}},
		{"best lacks a name", lacks, []string{"evidence holds: lexical yes", "unknown names -, names the best candidate lacks rust"}},
		{"an affix name", affix, []string{"evidence holds: lexical yes", "unknown names cnc", "as a longer term's start or end cnc"}},
		{"no affix name", lacks, []string{"as a longer term's start or end -", "names out of the prompt's reach -"}},
		{"a name out of reach", outOfReach, []string{"evidence holds: lexical yes", "names out of the prompt's reach tailwind", "words (information; + the best candidate holds it, ? no memory does): app+:8.7 tailwind:14.8"}},
		{"lexical memory far", far, []string{"evidence fails: lexical yes but not counted: its memory is no nearer than the sample's mean (cosine 0.190, z -0.20) (coverage 0.250, unknown 0.000), vector no"}},
		{"no test", nil, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b bytes.Buffer
			dumpUnrelated(&b, "Some prompt", search.Recalled{Evidence: tc.ev})
			dumpMiss(&b, "D1", Fact{ID: "F1", Keys: [][]string{{"x"}}}, "q", search.Recalled{Evidence: tc.ev}, nil)
			out := b.String()
			if n := strings.Count(out, "evidence "); tc.ev != nil && n != 2 || tc.ev == nil && n != 0 {
				t.Errorf("%d evidence lines:\n%s", n, out)
			}
			for _, w := range tc.want {
				if !strings.Contains(out, w) {
					t.Errorf("dump lacks %q:\n%s", w, out)
				}
			}
		})
	}
}

// TestDumpUnrelatedInProject: an unrelated prompt asked inside a project
// that got memories is written with its project, its evidence test, and
// each memory given with its score, kind and project, its own evidence,
// which per-memory test of the absolute floor let it through and every
// factor of its score.
func TestDumpUnrelatedInProject(t *testing.T) {
	got := search.Recalled{
		Evidence: &search.Evidence{Coverage: 0.25, Lexical: true},
		Hits: []memory.Hit{{Memory: memory.Memory{ID: "m1", Kind: memory.KindConfig, Project: "kiln", Text: "The kiln build reads config/kiln.toml."}, Score: 1.5,
			Breakdown: memory.ScoreBreakdown{Composite: 1.5, Relevance: 0.6, Importance: 0.5, ProjectBoost: 2.5}}},
		GivenEvidence: []search.GivenEvidence{{CandidateEvidence: search.CandidateEvidence{ID: "m1", Coverage: 0.13, Info: 0.25, Cosine: 0.29}, Through: "coverage"}},
	}
	var b bytes.Buffer
	dumpUnrelatedInProject(&b, "kiln", "How do I configure Tailwind dark mode?", got)
	out := b.String()
	for _, w := range []string{
		`=== unrelated in kiln "How do I configure Tailwind dark mode?": 1 memories`,
		"evidence holds: lexical yes (coverage 0.250",
		"given 1.500 config/kiln The kiln build reads config/kiln.toml.",
		"own evidence: coverage 0.130, info 0.250, cosine 0.290; through the absolute floor by coverage",
		"factors: composite 1.500 = relevance 0.600",
	} {
		if !strings.Contains(out, w) {
			t.Errorf("dump lacks %q:\n%s", w, out)
		}
	}
}
