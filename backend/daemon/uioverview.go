package daemon

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/memtray/memtray/backend/capture"
	"github.com/memtray/memtray/backend/embed"
	"github.com/memtray/memtray/backend/httpapi"
	"github.com/memtray/memtray/backend/judge"
	"github.com/memtray/memtray/backend/memory"
	"github.com/memtray/memtray/backend/store"
)

// Overview bounds.
const (
	overviewProjects = 20
	overviewDays     = 30
	overviewHours    = 48
	// indexLagWarn is how long a lagging text index stays a warning.
	indexLagWarn = 10 * time.Minute
	// dropWarn is how long dropped captures stay a warning.
	dropWarn = 10 * time.Minute
)

// Overview summarises the store, the pipeline, recall and health for the
// UI's overview page, in one walk of the store.
func (d *Daemon) Overview(ctx context.Context) (httpapi.Overview, error) {
	now := d.clock.Now()
	o := httpapi.Overview{At: now.UTC(), Memories: d.store.Count(), Warnings: []httpapi.Warning{}}
	byKind, byProject := map[string]int{}, map[string]int{}
	today := now.UTC().Truncate(24 * time.Hour)
	first := today.AddDate(0, 0, -(overviewDays - 1))
	perDay := make([]int, overviewDays)
	err := d.store.Iterate(ctx, store.Filter{IncludeSnoozed: true, IncludeSuperseded: true}, func(m memory.Memory) error {
		byKind[string(m.Kind)]++
		byProject[m.Project]++
		if m.Snoozed(now) {
			o.Snoozed++
		}
		if m.Superseded() {
			o.Superseded++
		}
		if m.Pinned {
			o.Pinned++
		}
		if c := m.CreatedAt.UTC(); !c.Before(first) {
			if i := int(c.Sub(first) / (24 * time.Hour)); i < overviewDays {
				perDay[i]++
			}
		}
		return nil
	})
	if err != nil {
		return o, fmt.Errorf("overview: %w", err)
	}
	o.ByKind = sortedCounts(byKind)
	projects := sortedCounts(byProject)
	if len(projects) > overviewProjects {
		for _, p := range projects[overviewProjects:] {
			o.OtherProjects++
			o.OtherMemories += p.Count
		}
		projects = projects[:overviewProjects]
	}
	o.ByProject = projects
	for i, n := range perDay {
		o.CreatedPerDay = append(o.CreatedPerDay, httpapi.DayCount{Day: first.AddDate(0, 0, i).Format("2006-01-02"), Count: n})
	}
	o.StoreBytes = dirSize(d.StorePath())
	rs := d.recaller.Stats()
	o.Recall = httpapi.RecallOverview{RecallStats: rs}
	if rs.Sessions > 0 {
		o.Recall.PerSession = float64(rs.Given) / float64(rs.Sessions)
	}
	o.Filter = filterBuckets(d.decisions.Newest(d.cfg.Ingest.DecisionLog), now)
	o.Embedder = httpapi.EmbedderStatus{Model: d.emb.Model(), Reason: d.EmbedderChoice().Reason, Degraded: d.embedderDegraded()}
	o.Judge = d.judgeStatus()
	o.Capture, _ = d.settings.Capture(ctx)
	o.Warnings = d.warnings(ctx)
	return o, nil
}

// sortedCounts orders counts by size, then name.
func sortedCounts(m map[string]int) []httpapi.NameCount {
	out := make([]httpapi.NameCount, 0, len(m))
	for k, v := range m {
		out = append(out, httpapi.NameCount{Name: k, Count: v})
	}
	slices.SortFunc(out, func(a, b httpapi.NameCount) int {
		if c := cmp.Compare(b.Count, a.Count); c != 0 {
			return c
		}
		return cmp.Compare(a.Name, b.Name)
	})
	return out
}

// filterBuckets counts decisions per hour over the last overviewHours,
// oldest first, every hour present.
func filterBuckets(log []httpapi.DecisionEntry, now time.Time) []httpapi.FilterBucket {
	end := now.UTC().Truncate(time.Hour)
	start := end.Add(-(overviewHours - 1) * time.Hour)
	out := make([]httpapi.FilterBucket, overviewHours)
	for i := range out {
		out[i] = httpapi.FilterBucket{Hour: start.Add(time.Duration(i) * time.Hour), Verdicts: map[string]int{}, Rejected: map[string]int{}}
	}
	for _, e := range log {
		at := e.At.UTC()
		if at.Before(start) || !at.Before(end.Add(time.Hour)) {
			continue
		}
		b := &out[int(at.Sub(start)/time.Hour)]
		b.Total++
		b.Verdicts[string(e.Verdict)]++
		if e.Verdict == memory.VerdictRejected {
			b.Rejected[e.Stage]++
		}
	}
	return out
}

// embedderDegraded reports whether the embedder does not answer now: it
// was away at start and has not come back, or it failed since.
func (d *Daemon) embedderDegraded() bool {
	if _, failing := d.faults.get(faultEmbedder); failing {
		return true
	}
	r, ok := embed.Snapshot(d.emb).(*embed.Reconnecting)
	return ok && !r.Available()
}

func (d *Daemon) judgeStatus() httpapi.JudgeStatus {
	var js httpapi.JudgeStatus
	if d.judge == nil {
		return js
	}
	js.Enabled, js.Name = true, d.judge.Name()
	if b, ok := d.judge.(*judge.Budgeted); ok {
		st := b.Stats()
		js.CallsLastHour, js.CallsLastDay = st.CallsLastHour, st.CallsLastDay
		js.MaxPerHour, js.MaxPerDay = st.MaxPerHour, st.MaxPerDay
		js.Tokens = st.InputTokens + st.OutputTokens
		js.Exhausted = st.CallsLastHour >= st.MaxPerHour || st.CallsLastDay >= st.MaxPerDay
	}
	return js
}

// warnings lists what a user should know now, each in a sentence, one
// per code. Each goes away by itself when its cause does.
func (d *Daemon) warnings(ctx context.Context) []httpapi.Warning {
	ws := []httpapi.Warning{}
	add := func(code, format string, args ...any) {
		ws = append(ws, httpapi.Warning{Code: code, Message: fmt.Sprintf(format, args...)})
	}
	if msg := d.faultWarning(faultEmbedder); msg != "" {
		add("embedder_degraded", "%s", msg)
	} else if d.embedderDegraded() {
		add("embedder_degraded", "The embedding model %s does not answer: search matches words only, and nothing new is stored, until it is back.", d.emb.Model())
	}
	for _, code := range []string{faultDiskFull, faultPipeline} {
		if msg := d.faultWarning(code); msg != "" {
			add(code, "%s", msg)
		}
	}
	cs, _ := d.settings.Capture(ctx)
	var st capture.Stats
	if json.Unmarshal(cs.Stats, &st) == nil {
		if u := st.Upstream; u != nil && u.Kind == capture.UpstreamUnreachable {
			add("upstream_unreachable", "The provider at %s cannot be reached since %s (%d requests; last: %s): your agent gets a 502 saying so, and memtray forwards again as soon as it answers.",
				u.Host, u.Since.Local().Format("15:04:05"), u.Count, u.Error)
		} else if u != nil {
			add("upstream_reset", "The provider at %s broke off %d answers mid-stream since %s (last: %s): your agent saw the same break, and those exchanges were not captured.",
				u.Host, u.Count, u.Since.Local().Format("15:04:05"), u.Error)
		}
		// Upstream and pipeline errors have their own warnings above; this
		// one is for exchanges not understood, until one is handled again.
		if st.LastError != "" && st.LastErrorKind == capture.ErrKindCapture && st.LastErrorAt.After(st.LastHandled) {
			add("capture_error", "Capture hit an error: %s.", st.LastError)
		}
		if st.Dropped > 0 && d.clock.Now().Sub(st.LastDropped) < dropWarn {
			add("capture_dropped", "%d captured exchanges were dropped because the pipeline fell behind; your agent was not slowed down.", st.Dropped)
		}
	}
	if at := d.indexLagAt.Load(); at != 0 && d.clock.Now().Sub(time.Unix(0, at)) < indexLagWarn {
		add("text_index", "The word index is behind the stored memories; it catches up at the next write or restart.")
	}
	if sw := d.store.Info().Warnings; len(sw) > 0 {
		add("store_repaired", "At start the store found and handled: %s.", strings.Join(sw, "; "))
	}
	if msg := d.clockWarning(); msg != "" {
		add("clock_jump", "%s", msg)
	}
	if o := d.lastSweep.Load(); o != nil && o.Err != "" {
		add("steward_failed", "The steward's last scheduled sweep (%s) failed: %s.", o.At.Format(time.RFC3339), o.Err)
	}
	if js := d.judgeStatus(); js.Enabled && js.Exhausted {
		add("judge_budget", "The judge reached its call budget (%d/%d this hour, %d/%d today): exchanges pass unjudged until it frees up.",
			js.CallsLastHour, js.MaxPerHour, js.CallsLastDay, js.MaxPerDay)
	}
	return ws
}
