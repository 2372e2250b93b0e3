package eval

import (
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/memtray/memtray/backend/memory"
)

// SessionScore is what RunSessions measures on one session (or, in
// SessionsReport.Overall, on all of them).
type SessionScore struct {
	ID    string `json:"id,omitempty"`
	Agent string `json:"agent,omitempty"`
	// Skipped says why the session was not evaluated (file not found,
	// reader missing); its other fields are then zero.
	Skipped string `json:"skipped,omitempty"`
	// InvalidExchanges names the exchanges of the session left out because
	// they failed validation ("exchange N: ..."); the rest was ingested.
	InvalidExchanges []string `json:"invalid_exchanges,omitempty"`
	// Project is the project recall was asked with: the one memtray gave
	// most of the session's memories.
	Project   string `json:"project,omitempty"`
	Exchanges int    `json:"exchanges"`
	UserTurns int    `json:"user_turns"`
	// Facts, Covered and Coverage: facts some live memory covers.
	Facts    int     `json:"facts"`
	Covered  int     `json:"covered"`
	Coverage float64 `json:"coverage"`
	// Memories are the live (not superseded) memories; MemoriesCovering
	// those covering at least one fact; Precision their share (a lower
	// bound: the labels are not exhaustive).
	Memories         int     `json:"memories"`
	MemoriesCovering int     `json:"memories_covering"`
	Precision        float64 `json:"precision"`
	MemoriesPerTurn  float64 `json:"memories_per_turn"`
	// Traps are the statements the session revised; TrapsStored how many
	// of them a live memory still holds (keys read as the labels mean
	// them: whole paths and numbers, negated mentions not counted);
	// TrapMemories how many live memories hold one. TrapsStoredSubstring
	// is TrapsStored with the plain substring test the facts use, the
	// ruler before, reported so a change of ruler is not read as a change
	// of the pipeline.
	Traps                int `json:"traps"`
	TrapsStored          int `json:"traps_stored"`
	TrapsStoredSubstring int `json:"traps_stored_substring"`
	TrapMemories         int `json:"trap_memories"`
	// Queries are the facts' queries; QueryHits those for which one of the
	// first SessionsK memories recall gave covers the fact.
	Queries   int     `json:"queries"`
	QueryHits int     `json:"query_hits"`
	RecallAt5 float64 `json:"recall_at_5"`
	// QueryHitsProbe and RecallAt5Probe are QueryHits and RecallAt5 with
	// each query asked of the store as ingest left it: recall records the
	// memories it gives as accessed, and access raises a memory's score,
	// so RecallAt5 also depends on the order of the queries before it
	// (search.RecallRequest.Unrecorded).
	QueryHitsProbe int     `json:"query_hits_probe"`
	RecallAt5Probe float64 `json:"recall_at_5_probe"`
	// UserPrefQueries are the queries of the facts the user stated as a
	// preference of their own (Fact.Where "user", Fact.Kind "preference"):
	// how they like to work, which should follow them to every project.
	// The set is fixed by the labels: an uncovered preference's queries
	// count as misses, as in RecallAt5, so the rates of two builds that
	// cover different preferences are comparable. Each covered one's is
	// asked as a probe (no access recorded, the figures above unchanged):
	// UserPrefInProjectHits from the session's project (the probe above),
	// UserPrefNoProjectHits with no project (UserPrefNoProjectQueries =
	// UserPrefQueries), and UserPrefOtherProjectHits from each other
	// project the sessions' memories went to (UserPrefOtherProjectQueries =
	// UserPrefQueries x those projects). The recall_at_5 fields are hits /
	// queries.
	UserPrefQueries               int     `json:"user_pref_queries"`
	UserPrefInProjectHits         int     `json:"user_pref_in_project_hits"`
	UserPrefInProjectRecallAt5    float64 `json:"user_pref_in_project_recall_at_5"`
	UserPrefNoProjectQueries      int     `json:"user_pref_no_project_queries"`
	UserPrefNoProjectHits         int     `json:"user_pref_no_project_hits"`
	UserPrefNoProjectRecallAt5    float64 `json:"user_pref_no_project_recall_at_5"`
	UserPrefOtherProjectQueries   int     `json:"user_pref_other_project_queries"`
	UserPrefOtherProjectHits      int     `json:"user_pref_other_project_hits"`
	UserPrefOtherProjectRecallAt5 float64 `json:"user_pref_other_project_recall_at_5"`
	// CoverageByWhere splits Covered and Facts by Fact.Where.
	CoverageByWhere map[string]WhereCount `json:"coverage_by_where"`
	// LengthP50 and LengthP90 are percentiles of the live memories'
	// lengths, in characters.
	LengthP50 int `json:"length_p50"`
	LengthP90 int `json:"length_p90"`
	// Uncovered lists the ids of the facts no memory covers.
	Uncovered []string `json:"uncovered,omitempty"`
}

// OverallScore is SessionScore over every evaluated session, with the
// unrelated prompts.
type OverallScore struct {
	SessionScore
	// Sessions were evaluated; SessionsSkipped were not.
	Sessions        int `json:"sessions"`
	SessionsSkipped int `json:"sessions_skipped"`
	// UnrelatedPrompts were asked with no project; UnrelatedEmpty got no
	// memory.
	UnrelatedPrompts   int     `json:"unrelated_prompts"`
	UnrelatedEmpty     int     `json:"unrelated_empty"`
	UnrelatedEmptyRate float64 `json:"unrelated_empty_rate"`
	// UnrelatedInProject counts the unrelated prompts asked again in each
	// project the sessions' memories went to (prompts x projects), as a
	// prompt typed inside one of those repositories asks them: the
	// project's own memories compete. UnrelatedInProjectEmpty got no
	// memory.
	UnrelatedInProject          int     `json:"unrelated_in_project"`
	UnrelatedInProjectEmpty     int     `json:"unrelated_in_project_empty"`
	UnrelatedInProjectEmptyRate float64 `json:"unrelated_in_project_empty_rate"`
}

// SessionsReport is the result of RunSessions.
type SessionsReport struct {
	Set string `json:"set"`
	// Skipped, when set, says why nothing was evaluated ("skipped: ...
	// not found"); the rest of the report is then empty.
	Skipped  string         `json:"skipped,omitempty"`
	Overall  OverallScore   `json:"overall"`
	Sessions []SessionScore `json:"sessions"`
	// Identifiers is the identifier probe (SessionsOptions.
	// ProbeIdentifiers), when asked.
	Identifiers *IdentifierProbe `json:"identifier_probe,omitempty"`
	// AfterSweep is the same rows measured again after the steward's
	// sweeps (SessionsOptions.SweepDays), with Sweep saying what they did;
	// nil without sweeps.
	AfterSweep *SessionsReport `json:"after_sweep,omitempty"`
	Sweep      *SweepSummary   `json:"sweep,omitempty"`
	// Seconds is how long the run took.
	Seconds float64 `json:"seconds"`
}

// session returns the score of the session with this id.
func (r *SessionsReport) session(id string) *SessionScore {
	for i := range r.Sessions {
		if r.Sessions[i].ID == id {
			return &r.Sessions[i]
		}
	}
	panic("eval sessions: no score for session " + id)
}

// overall sums the evaluated sessions into r.Overall. all holds every
// session's live memories once (a memory two sessions wrote counts once),
// covering and trapping the ids of those that cover a fact or a trap of a
// session that wrote them.
func (r *SessionsReport) overall(all map[string]memory.Memory, covering, trapping map[string]bool) {
	o := &r.Overall
	o.CoverageByWhere = map[string]WhereCount{}
	for _, w := range Wheres {
		o.CoverageByWhere[w] = WhereCount{}
	}
	for i := range r.Sessions {
		s := &r.Sessions[i]
		if s.Skipped != "" {
			o.SessionsSkipped++
			continue
		}
		o.Sessions++
		o.Exchanges += s.Exchanges
		o.UserTurns += s.UserTurns
		o.Facts += s.Facts
		o.Covered += s.Covered
		o.Traps += s.Traps
		o.TrapsStored += s.TrapsStored
		o.TrapsStoredSubstring += s.TrapsStoredSubstring
		o.Queries += s.Queries
		o.QueryHits += s.QueryHits
		o.QueryHitsProbe += s.QueryHitsProbe
		s.userPrefRates()
		o.UserPrefQueries += s.UserPrefQueries
		o.UserPrefInProjectHits += s.UserPrefInProjectHits
		o.UserPrefNoProjectQueries += s.UserPrefNoProjectQueries
		o.UserPrefNoProjectHits += s.UserPrefNoProjectHits
		o.UserPrefOtherProjectQueries += s.UserPrefOtherProjectQueries
		o.UserPrefOtherProjectHits += s.UserPrefOtherProjectHits
		for w, c := range s.CoverageByWhere {
			oc := o.CoverageByWhere[w]
			oc.Covered += c.Covered
			oc.Facts += c.Facts
			o.CoverageByWhere[w] = oc
		}
	}
	o.Coverage = ratio(o.Covered, o.Facts)
	o.Memories = len(all)
	o.MemoriesCovering = len(covering)
	o.TrapMemories = len(trapping)
	o.Precision = ratio(o.MemoriesCovering, o.Memories)
	o.MemoriesPerTurn = ratio(o.Memories, o.UserTurns)
	o.RecallAt5 = ratio(o.QueryHits, o.Queries)
	o.RecallAt5Probe = ratio(o.QueryHitsProbe, o.Queries)
	o.userPrefRates()
	var texts []string
	for _, m := range all {
		texts = append(texts, m.Text)
	}
	lens := runeLengths(texts)
	o.LengthP50, o.LengthP90 = percentile(lens, 50), percentile(lens, 90)
}

// userPrefRates sets the user preferences' recall_at_5 fields from their
// hits and queries.
func (s *SessionScore) userPrefRates() {
	s.UserPrefInProjectRecallAt5 = ratio(s.UserPrefInProjectHits, s.UserPrefQueries)
	s.UserPrefNoProjectRecallAt5 = ratio(s.UserPrefNoProjectHits, s.UserPrefNoProjectQueries)
	s.UserPrefOtherProjectRecallAt5 = ratio(s.UserPrefOtherProjectHits, s.UserPrefOtherProjectQueries)
}

// WriteTable prints the report as aligned columns: one row per session and
// the overall row, then coverage by where and the unrelated prompts.
func (r *SessionsReport) WriteTable(w io.Writer) error {
	ew := &errWriter{w: w}
	if r.Skipped != "" {
		ew.printf("eval sessions: %s\n", r.Skipped)
		return ew.err
	}
	o := &r.Overall
	ew.printf("sessions: %s: %d evaluated, %d skipped; default config, built-in embedder; R@%d through the prompt hook's recall (floors on)\n\n",
		r.Set, o.Sessions, o.SessionsSkipped, SessionsK)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	ew2 := &errWriter{w: tw}
	ew2.printf("session\tagent\tproject\texch\tturns\tfacts\tcovered\tcoverage\tmemories\tmem/turn\tprecision\ttraps kept\t(substring)\tR@5\tlen p50\tlen p90\t\n")
	row := func(s *SessionScore, id, agent string) {
		ew2.printf("%s\t%s\t%s\t%d\t%d\t%d\t%d\t%s\t%d\t%.2f\t%s\t%d/%d\t%d/%d\t%s\t%d\t%d\t\n", id, agent, clipCell(s.Project, 24),
			s.Exchanges, s.UserTurns, s.Facts, s.Covered, pct(s.Coverage), s.Memories, s.MemoriesPerTurn, pct(s.Precision),
			s.TrapsStored, s.Traps, s.TrapsStoredSubstring, s.Traps, pct(s.RecallAt5), s.LengthP50, s.LengthP90)
	}
	for i := range r.Sessions {
		s := &r.Sessions[i]
		if s.Skipped != "" {
			ew2.printf("%s\t%s\t(%s)\t\t\t\t\t\t\t\t\t\t\t\t\t\t\n", s.ID, s.Agent, s.Skipped)
			continue
		}
		row(s, s.ID, s.Agent)
	}
	row(&o.SessionScore, "overall", "")
	if ew2.err == nil {
		ew2.err = tw.Flush()
	}
	if ew.err == nil {
		ew.err = ew2.err
	}
	ew.printf("\ncoverage by where:")
	for _, wh := range Wheres {
		c := o.CoverageByWhere[wh]
		ew.printf("  %s %d/%d (%s)", wh, c.Covered, c.Facts, pct(ratio(c.Covered, c.Facts)))
	}
	ew.printf("\nR@%d with each query asked of the store as ingest left it (no access recorded by the queries before it): %s\n", SessionsK, pct(o.RecallAt5Probe))
	if o.UserPrefQueries > 0 {
		ew.printf("user preferences recalled outside their project: R@%d %s (%d queries) with no project, %s (%d queries) from another session's project; %s in their own (every preference's queries, an uncovered one's a miss)\n",
			SessionsK, pct(o.UserPrefNoProjectRecallAt5), o.UserPrefNoProjectQueries,
			pct(o.UserPrefOtherProjectRecallAt5), o.UserPrefOtherProjectQueries, pct(o.UserPrefInProjectRecallAt5))
	}
	ew.printf("unrelated prompts answered with nothing: %d/%d (%s)\n", o.UnrelatedEmpty, o.UnrelatedPrompts, pct(o.UnrelatedEmptyRate))
	if o.UnrelatedInProject > 0 {
		ew.printf("  asked inside each of the sessions' projects: %d/%d (%s)\n", o.UnrelatedInProjectEmpty, o.UnrelatedInProject, pct(o.UnrelatedInProjectEmptyRate))
	}
	if p := r.Identifiers; p != nil {
		ew.printf("identifier probes: %d prompts naming one of %d rare identifiers of %d memories: the memory in the first %d %d (%s), other memories %d, nothing %d (%d memories): lexical memory far %d, generic %d, names unknown %d, no evidence %d, floors %d\n",
			p.Prompts, p.Identifiers, p.Memories, SessionsK, p.Hits, pct(ratio(p.Hits, p.Prompts)), p.Other, p.Empty, p.MemoriesWithAnEmpty,
			p.EmptyLexicalFar, p.EmptyGeneric, p.EmptyNamesUnknown, p.EmptyNoEvidence, p.EmptyFloors)
		ew.printf("  on the lexical test alone: %d, their lexical memory's z: <= 0 %d, 0-0.5 %d, 0.5-1 %d, >= 1 %d (lowest %.2f)\n",
			p.LexicalOnly, p.LexicalZ[0], p.LexicalZ[1], p.LexicalZ[2], p.LexicalZ[3], p.LexicalZMin)
		for _, f := range p.Forms {
			ew.printf("name-form probes (%s): %d prompts naming one of %d tokens of %d memories: the memory in the first %d %d (%s), other memories %d, nothing %d (%d memories): lexical memory far %d, generic %d, names unknown %d, no evidence %d, floors %d\n",
				f.Form, f.Prompts, f.Identifiers, f.Memories, SessionsK, f.Hits, pct(ratio(f.Hits, f.Prompts)), f.Other, f.Empty, f.MemoriesWithAnEmpty,
				f.EmptyLexicalFar, f.EmptyGeneric, f.EmptyNamesUnknown, f.EmptyNoEvidence, f.EmptyFloors)
		}
	}
	ew.printf("precision is a lower bound (the gold lists are not exhaustive); a fact counts only memories of its own session's ingest\n")
	ew.printf("took %.1fs\n", r.Seconds)
	if a := r.AfterSweep; a != nil && a.Sweep != nil && ew.err == nil {
		sw := a.Sweep
		ew.printf("\nafter %d days of the steward (%d hourly sweeps, applying %v): applied %v, %d to the trash, %d skipped; the last plan had %v, refused %v\n",
			sw.Days, sw.Sweeps, sw.Apply, sw.Counts, sw.Trashed, sw.Skipped, sw.Planned, sw.Refused)
		if sw.Use != "" && sw.Use != UseNone {
			ew.printf("simulated implicit feedback before the sweeps (--sweep-use %s): %d reinforcements\n", sw.Use, sw.Used)
		}
		ew.err = a.WriteTable(w)
	}
	return ew.err
}

// pct formats a share as a percentage with one decimal.
func pct(x float64) string { return fmt.Sprintf("%.1f%%", 100*x) }

// clipCell shortens a table cell to n characters.
func clipCell(s string, n int) string {
	if len([]rune(s)) <= n {
		return s
	}
	return string([]rune(s)[:n-1]) + "…"
}
