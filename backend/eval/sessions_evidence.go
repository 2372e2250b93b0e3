package eval

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/memtray/memtray/backend/search"
)

// Kinds of EvidenceRecord: what a recall of RunSessions was asked for.
const (
	// EvidenceRelevant is a query of a covered fact, asked in the
	// session's project.
	EvidenceRelevant = "relevant"
	// EvidenceUnrelated is an unrelated prompt asked with no project.
	EvidenceUnrelated = "unrelated"
	// EvidenceUnrelatedInProject is an unrelated prompt asked inside one
	// of the sessions' projects.
	EvidenceUnrelatedInProject = "unrelated_in_project"
)

// EvidenceRecord is one recall RunSessions asked and the query-level
// evidence test it ran (SessionsOptions.Evidence): the numbers a rule on
// the evidence is chosen from, for relevant queries and unrelated prompts
// alike.
type EvidenceRecord struct {
	// Kind is EvidenceRelevant, EvidenceUnrelated or
	// EvidenceUnrelatedInProject.
	Kind    string `json:"kind"`
	Session string `json:"session,omitempty"`
	Fact    string `json:"fact,omitempty"`
	Query   string `json:"query"`
	Project string `json:"project,omitempty"`
	// Hit says a memory covering the fact was among the first SessionsK
	// given (relevant queries only).
	Hit bool `json:"hit,omitempty"`
	// Given is how many memories recall gave.
	Given int `json:"given"`
	// Evidence is the test's numbers; nil when it did not run (no
	// candidates).
	Evidence *search.Evidence `json:"evidence,omitempty"`
}

// logEvidence appends rec to the run's evidence records and, when
// SessionsOptions.Evidence is set, writes it there as a JSON line.
func (r *sessionsRun) logEvidence(rec EvidenceRecord) error {
	r.evidence = append(r.evidence, rec)
	if r.opts.Evidence == nil {
		return nil
	}
	b, err := json.Marshal(rec)
	if err != nil {
		return fmt.Errorf("eval sessions: evidence record: %w", err)
	}
	if _, err := r.opts.Evidence.Write(append(b, '\n')); err != nil {
		return fmt.Errorf("eval sessions: write the evidence record: %w", err)
	}
	return nil
}

// evidenceBin is one row of the distribution table: records whose value
// is at least lo (and under the next row's lo).
type evidenceBin struct {
	label string
	lo    float64
}

// dumpEvidenceDistributions writes, side by side, how the evidence
// numbers of the relevant queries recall answered with a hit and of the
// unrelated prompts it gave memories to are distributed (and, for
// reference, of the unrelated prompts it gave nothing): the best
// candidate's Coverage, its margin over Unknown, the cosine's z-score
// over the sample, and how many of the query's names the store knows but
// the best candidate lacks (BestLacks). A rule on the evidence can only
// lose the first column's queries and gain the second's prompts.
func dumpEvidenceDistributions(w io.Writer, recs []EvidenceRecord) {
	type col struct {
		name string
		keep func(EvidenceRecord) bool
	}
	cols := []col{
		{"relevant hit", func(r EvidenceRecord) bool { return r.Kind == EvidenceRelevant && r.Hit }},
		{"unrelated given", func(r EvidenceRecord) bool { return r.Kind == EvidenceUnrelated && r.Given > 0 }},
		{"in-project given", func(r EvidenceRecord) bool { return r.Kind == EvidenceUnrelatedInProject && r.Given > 0 }},
		{"unrelated empty", func(r EvidenceRecord) bool { return r.Kind == EvidenceUnrelated && r.Given == 0 }},
	}
	z := func(ev *search.Evidence) float64 {
		if ev.Std == 0 {
			return 0
		}
		return (ev.Cosine - ev.Mean) / ev.Std
	}
	tables := []struct {
		title string
		value func(*search.Evidence) float64
		bins  []evidenceBin
	}{
		{"coverage (best candidate's share of the query's information)", func(ev *search.Evidence) float64 { return ev.Coverage },
			[]evidenceBin{{"< .2", -1}, {".2-.3", .2}, {".3-.4", .3}, {".4-.5", .4}, {".5-.6", .5}, {".6-.8", .6}, {">= .8", .8}}},
		{"coverage - unknown (the lexical test holds above 0)", func(ev *search.Evidence) float64 { return ev.Coverage - ev.Unknown },
			[]evidenceBin{{"<= 0", -2}, {"0-.1", 1e-9}, {".1-.2", .1}, {".2-.3", .2}, {".3-.5", .3}, {">= .5", .5}}},
		{"cosine z over the sample (the vector test holds above its threshold, about 2.4-2.9)", z,
			[]evidenceBin{{"< 2", -99}, {"2-2.5", 2}, {"2.5-3", 2.5}, {"3-3.5", 3}, {"3.5-4", 3.5}, {">= 4", 4}}},
		{"names the store knows that the best candidate lacks", func(ev *search.Evidence) float64 { return float64(len(ev.BestLacks)) },
			[]evidenceBin{{"0", -1}, {"1", 1}, {">= 2", 2}}},
	}
	fmt.Fprintf(w, "=== evidence distributions (query-level test; counts)\n")
	for _, t := range tables {
		fmt.Fprintf(w, "  %s\n  %-8s", t.title, "")
		for _, c := range cols {
			fmt.Fprintf(w, " %16s", c.name)
		}
		fmt.Fprintln(w)
		counts := make([][]int, len(t.bins))
		totals := make([]int, len(cols))
		for i := range counts {
			counts[i] = make([]int, len(cols))
		}
		for _, rec := range recs {
			if rec.Evidence == nil {
				continue
			}
			v := t.value(rec.Evidence)
			row := 0
			for i, b := range t.bins {
				if v >= b.lo {
					row = i
				}
			}
			for j, c := range cols {
				if c.keep(rec) {
					counts[row][j]++
					totals[j]++
				}
			}
		}
		for i, b := range t.bins {
			fmt.Fprintf(w, "  %-8s%s\n", b.label, countsRow(counts[i]))
		}
		fmt.Fprintf(w, "  %-8s%s\n", "all", countsRow(totals))
	}
}

// countsRow is a row of the distribution table: each count in a column of
// its own.
func countsRow(n []int) string {
	var b strings.Builder
	for _, v := range n {
		fmt.Fprintf(&b, " %16d", v)
	}
	return b.String()
}
