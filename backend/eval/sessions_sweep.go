package eval

import (
	"context"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/memtray/memtray/backend/config"
	"github.com/memtray/memtray/backend/memory"
	"github.com/memtray/memtray/backend/recall"
	"github.com/memtray/memtray/backend/search"
	"github.com/memtray/memtray/backend/steward"
)

// sweepEvery is how often the sweeps of SessionsOptions.SweepDays run: the
// default steward.every.
var sweepEvery = time.Duration(config.Default().Steward.Every)

// SweepSummary says what the steward's sweeps of SessionsOptions.SweepDays
// did to the store.
type SweepSummary struct {
	// Days passed, with Sweeps sweeps (one an hour) applying Apply.
	Days   int      `json:"days"`
	Sweeps int      `json:"sweeps"`
	Apply  []string `json:"apply"`
	// Counts is the actions applied per operation over all sweeps, and
	// Planned those planned (applied or not) by the last sweep.
	Counts  map[string]int `json:"counts"`
	Planned map[string]int `json:"planned_last"`
	// Trashed counts the memories the sweeps moved to the trash (merged
	// away or pruned); Skipped the actions apply skipped.
	Trashed int `json:"trashed"`
	Skipped int `json:"skipped"`
	// Refused counts the near-duplicate pairs the last plan refused to
	// merge, by steward.RefusalKind.
	Refused map[string]int `json:"refused"`
	// Use is the simulation of implicit feedback before the sweeps
	// (SessionsOptions.SweepUse) and Used the reinforcements it made.
	Use  string `json:"use,omitempty"`
	Used int    `json:"used"`
}

// simulateUse notes, in the first pass, the memories of rec's first
// SessionsK that opts.SweepUse says the turn after the recall of q would
// have used (see SessionsOptions.SweepUse); reinforceUsed reinforces
// them once the pass is measured, so that its rows stay those of a run
// without the simulation.
func (r *sessionsRun) simulateUse(f Fact, q string, rec search.Recalled) {
	use := r.opts.SweepUse
	if r.pass != "" || r.opts.SweepDays == 0 || use == "" || use == UseNone {
		return
	}
	for _, h := range rec.Hits[:min(len(rec.Hits), SessionsK)] {
		if !coversLower(strings.ToLower(h.Memory.Text), f.Keys) {
			continue
		}
		if use == UseTokens && !slices.ContainsFunc(recall.UsableTokens(h.Memory.Text), func(tok string) bool { return !memory.HoldsToken(q, tok) }) {
			continue
		}
		r.used = append(r.used, h.Memory.ID)
	}
}

// reinforceUsed reinforces each memory simulateUse noted, once per recall
// that gave it, as the daemon's implicit feedback does (ReinforceUsed).
func (r *sessionsRun) reinforceUsed(ctx context.Context) error {
	for _, id := range r.used {
		if _, err := r.d.Feedback().ReinforceUsed(ctx, id); err != nil {
			return fmt.Errorf("eval sessions: simulated use of %s: %w", id, err)
		}
	}
	return nil
}

// passTag is the pass's tag for recall session ids ("" in the first pass).
func (r *sessionsRun) passTag() string {
	if r.pass == "" {
		return ""
	}
	return r.pass + "-"
}

// afterSweep lets opts.SweepDays pass with the steward sweeping every
// sweepEvery (sweep), then measures every row again on the store it left
// (r.rep.AfterSweep). The sweeps see the store as the first pass left it,
// the accesses its recall recorded included, as a week of use would.
func (r *sessionsRun) afterSweep(ctx context.Context) error {
	start := time.Now()
	sum, err := r.sweep(ctx)
	if err != nil {
		return err
	}
	first := r.rep
	again := &SessionsReport{Set: first.Set, Sweep: sum}
	for _, s := range first.Sessions {
		again.Sessions = append(again.Sessions, SessionScore{ID: s.ID, Agent: s.Agent, Skipped: s.Skipped, InvalidExchanges: s.InvalidExchanges})
	}
	r.rep, r.pass = again, "swept"
	defer func() { r.rep, r.pass = first, "" }()
	if r.opts.Dump != nil {
		fmt.Fprintf(r.opts.Dump, "\n######## after %d days of the steward's sweeps ########\n", sum.Days)
	}
	for _, step := range []func(context.Context) error{r.score, r.unrelated} {
		if err := step(ctx); err != nil {
			return err
		}
	}
	again.overall(r.all, r.covering, r.trapping)
	again.Seconds = time.Since(start).Seconds()
	first.AfterSweep = again
	return nil
}

// sweep runs the steward as the daemon's schedule does for
// opts.SweepDays: every sweepEvery of the run's clock, a plan of every
// operation (the Steward service's, the default config's thresholds and
// the daemon's merge similarity) of which the operations of
// opts.SweepApply (else the config's auto_apply) are applied (the
// scheduled sweep's purge of trash older than trash_days changes no row:
// what is in the trash is not stored). It then reads the store again (r.final): a
// merged or pruned memory is in the trash, no longer stored; a merge's
// survivor holds the kept text and counts for the sessions of every
// memory merged into it (its text may be theirs).
func (r *sessionsRun) sweep(ctx context.Context) (*SweepSummary, error) {
	apply := r.opts.SweepApply
	if apply == nil {
		apply = config.Default().Steward.AutoApply
	}
	sum := &SweepSummary{Days: r.opts.SweepDays, Apply: slices.Clone(apply), Counts: map[string]int{}, Refused: map[string]int{},
		Use: r.opts.SweepUse, Used: len(r.used)}
	if err := r.reinforceUsed(ctx); err != nil {
		return nil, err
	}
	svc := r.d.Steward()
	sweeps := int(time.Duration(r.opts.SweepDays) * 24 * time.Hour / sweepEvery)
	r.progress(fmt.Sprintf("steward: %d sweeps over %d days, applying %v", sweeps, r.opts.SweepDays, apply))
	var applied, refused []steward.Action
	for i := 0; i < sweeps; i++ {
		r.clock.advance(sweepEvery)
		pl, err := svc.StewardPlan(ctx, steward.PlanOptions{Apply: apply})
		if err != nil {
			return nil, fmt.Errorf("eval sessions: steward sweep %d: %w", i+1, err)
		}
		sum.Sweeps++
		if i == sweeps-1 {
			sum.Planned = maps.Clone(pl.Counts)
			refused = pl.Refused
			for _, a := range pl.Refused {
				sum.Refused[steward.RefusalKind(a.Reason)]++
			}
		}
		var ops []string
		for _, op := range apply {
			if pl.Counts[op] > 0 {
				ops = append(ops, op)
			}
		}
		if len(ops) > 0 {
			res, err := svc.StewardApply(ctx, steward.ApplyRequest{PlanID: pl.ID, Ops: ops})
			if err != nil {
				return nil, fmt.Errorf("eval sessions: steward sweep %d: apply %v: %w", i+1, ops, err)
			}
			for op, n := range res.Counts {
				sum.Counts[op] += n
			}
			sum.Trashed += res.Trashed
			sum.Skipped += len(res.Skipped)
			applied = append(applied, res.Applied...)
		}
	}
	// Merges first, in the order applied: a survivor counts for the
	// sessions of what it absorbed, a chain of merges included.
	for _, a := range applied {
		if a.Op != steward.OpMerge {
			continue
		}
		for sid, ids := range r.touched {
			if slices.ContainsFunc(a.MergedIDs, func(id string) bool { return slices.Contains(ids, id) }) && !slices.Contains(ids, a.ID) {
				r.touched[sid] = append(ids, a.ID)
			}
		}
	}
	final, err := snapshot(ctx, r.d.Store())
	if err != nil {
		return nil, err
	}
	if r.opts.Dump != nil {
		dumpSweep(r.opts.Dump, sum, applied, refused, r.final)
	}
	r.final = final
	return sum, nil
}

// dumpSweep writes what the sweeps applied: every merge with both texts
// and the reason, every prune, a line per other action, then the
// near-duplicates the last plan refused to merge, with both texts.
func dumpSweep(w io.Writer, sum *SweepSummary, applied, refused []steward.Action, before map[string]memory.Memory) {
	// before: the store as the sweeps found it, for a merged text the action lacks.
	fmt.Fprintf(w, "\n######## steward: %d sweeps over %d days, applying %v: %v (trashed %d, skipped %d; last plan %v, refused %v) ########\n",
		sum.Sweeps, sum.Days, sum.Apply, sum.Counts, sum.Trashed, sum.Skipped, sum.Planned, sum.Refused)
	for _, a := range applied {
		switch a.Op {
		case steward.OpMerge:
			fmt.Fprintf(w, "\nmerge %s <- %v (cosine %.3f, project %s)\n  survivor: %s\n", a.ID, a.MergedIDs, a.Similarity, a.Project, a.Before.Text)
			for i, id := range a.MergedIDs {
				text := before[id].Text
				if i < len(a.MergedBefore) && a.MergedBefore[i].Text != "" {
					text = a.MergedBefore[i].Text
				}
				fmt.Fprintf(w, "  merged:   %s\n", text)
			}
			fmt.Fprintf(w, "  kept:     %s\n  reason:   %s\n", a.KeptText, a.Reason)
		default:
			fmt.Fprintf(w, "%s %s: %s | %s\n", a.Op, a.ID, a.Reason, a.Preview)
		}
	}
	for _, a := range refused {
		other := ""
		if len(a.MergedBefore) > 0 {
			other = a.MergedBefore[0].Text
		}
		fmt.Fprintf(w, "\nrefused %s + %v (cosine %.3f): %s\n  a: %s\n  b: %s\n", a.ID, a.MergedIDs, a.Similarity, a.Reason, a.Before.Text, other)
	}
}
