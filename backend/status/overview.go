package status

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/memtray/memtray/backend/capture"
	"github.com/memtray/memtray/backend/feed"
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
	// growthDays and growthSeries bound the growth chart: its days, and
	// the projects drawn apart from "other".
	growthDays   = 365
	growthSeries = 6
	// growthMinDays is the shortest span the growth chart covers, so a
	// young store still draws lines (from 0) rather than points.
	growthMinDays = 14
	// indexLagWarn is how long a lagging text index stays a warning.
	indexLagWarn = 10 * time.Minute
	// DropWarn is how long dropped captures stay a warning.
	DropWarn = 10 * time.Minute
)

// Overview summarises the store, the pipeline, recall and health for the
// UI's overview page, in one walk of the store.
func (s *Service) Overview(ctx context.Context) (httpapi.Overview, error) {
	now := s.o.Clock.Now()
	o := httpapi.Overview{At: now.UTC(), Warnings: []httpapi.Warning{}}
	byKind, byProject := map[string]int{}, map[string]int{}
	today := now.UTC().Truncate(24 * time.Hour)
	first := today.AddDate(0, 0, -(overviewDays - 1))
	perDay := make([]int, overviewDays)
	created := map[string]map[int64]int{} // project -> UTC day (Unix days) -> memories created
	// Every count but Superseded counts what the Memories list shows by
	// default (snoozed included): the old versions a newer one superseded
	// are counted apart, so the Overview's count is the list's total.
	err := s.o.Store.Iterate(ctx, store.Filter{IncludeSnoozed: true, IncludeSuperseded: true}, func(m memory.Memory) error {
		if m.Superseded() {
			o.Superseded++
			return nil
		}
		o.Memories++
		byKind[string(m.Kind)]++
		byProject[m.Project]++
		if m.Snoozed(now) {
			o.Snoozed++
		}
		if m.Pinned {
			o.Pinned++
		}
		if created[m.Project] == nil {
			created[m.Project] = map[int64]int{}
		}
		created[m.Project][m.CreatedAt.UTC().Unix()/86400]++
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
	o.Growth = growth(created, projects, today)
	o.StoreBytes = dirSize(s.o.StorePath)
	rs := s.o.Recall()
	o.Recall = httpapi.RecallOverview{RecallStats: rs}
	if rs.Sessions > 0 {
		o.Recall.PerSession = float64(rs.Given) / float64(rs.Sessions)
	}
	o.Filter = filterBuckets(s.o.Decisions, now)
	o.Embedder = httpapi.EmbedderStatus{Model: s.o.EmbedderModel(), Reason: s.o.EmbedderReason(), Degraded: s.o.EmbedderDegraded()}
	o.Judge = s.judgeStatus()
	o.Capture, _ = s.o.Capture(ctx)
	o.Warnings = s.warnings(ctx)
	return o, nil
}

// growth makes the cumulative series of created (project -> Unix day ->
// memories created) from the oldest day (at most growthDays ago, at least
// growthMinDays - 1) to today:
// the largest projects of sorted apart, the rest as one "other" series.
func growth(created map[string]map[int64]int, sorted []httpapi.NameCount, today time.Time) httpapi.Growth {
	g := httpapi.Growth{Days: []string{}, Series: []httpapi.GrowthSeries{}}
	last := today.Unix() / 86400
	firstDay := last
	for _, days := range created {
		for d := range days {
			firstDay = min(firstDay, d)
		}
	}
	if len(created) == 0 {
		return g
	}
	firstDay = min(max(firstDay, last-growthDays+1), last-growthMinDays+1)
	for d := firstDay; d <= last; d++ {
		g.Days = append(g.Days, time.Unix(d*86400, 0).UTC().Format("2006-01-02"))
	}
	series := func(projects []string, other bool) httpapi.GrowthSeries {
		gs := httpapi.GrowthSeries{Other: other, Counts: make([]int, len(g.Days))}
		if !other {
			gs.Project = projects[0]
		}
		for _, p := range projects {
			for d, n := range created[p] {
				// Memories of the days before the chart are its baseline;
				// those stamped after today (a clock ahead) count today.
				i := int(min(max(d, firstDay), last) - firstDay)
				gs.Counts[i] += n
			}
		}
		for i := 1; i < len(gs.Counts); i++ {
			gs.Counts[i] += gs.Counts[i-1]
		}
		return gs
	}
	var rest []string
	for i, p := range sorted {
		if i < growthSeries {
			g.Series = append(g.Series, series([]string{p.Name}, false))
		} else {
			rest = append(rest, p.Name)
		}
	}
	for p := range created {
		if !slices.ContainsFunc(sorted, func(nc httpapi.NameCount) bool { return nc.Name == p }) {
			rest = append(rest, p)
		}
	}
	if len(rest) > 0 {
		g.Series = append(g.Series, series(rest, true))
	}
	return g
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

// filterBuckets lays the decision log's hourly counters over the last
// overviewHours, oldest first, every hour present.
func filterBuckets(log *feed.DecisionLog, now time.Time) []httpapi.FilterBucket {
	end := now.UTC().Truncate(time.Hour)
	start := end.Add(-(overviewHours - 1) * time.Hour)
	out := make([]httpapi.FilterBucket, overviewHours)
	for i := range out {
		out[i] = httpapi.FilterBucket{Hour: start.Add(time.Duration(i) * time.Hour), Verdicts: map[string]int{}, Rejected: map[string]int{}}
	}
	for _, h := range log.Hours(start) {
		if h.Hour.Before(start) || h.Hour.After(end) {
			continue
		}
		b := &out[int(h.Hour.Sub(start)/time.Hour)]
		for v, n := range h.Verdicts {
			b.Total += n
			b.Verdicts[v] += n
		}
		for st, n := range h.Rejected {
			b.Rejected[st] += n
		}
	}
	return out
}

func (s *Service) judgeStatus() httpapi.JudgeStatus {
	var js httpapi.JudgeStatus
	if s.o.Judge == nil {
		return js
	}
	js.Enabled, js.Name = true, s.o.Judge.Name()
	if b, ok := s.o.Judge.(*judge.Budgeted); ok {
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
func (s *Service) warnings(ctx context.Context) []httpapi.Warning {
	ws := []httpapi.Warning{}
	add := func(code, format string, args ...any) {
		ws = append(ws, httpapi.Warning{Code: code, Message: fmt.Sprintf(format, args...)})
	}
	if msg := s.o.FaultWarning(FaultEmbedder); msg != "" {
		add("embedder_degraded", "%s", msg)
	} else if s.o.EmbedderDegraded() {
		add("embedder_degraded", "The embedding model %s does not answer: search matches words only, and nothing new is stored, until it is back.", s.o.EmbedderModel())
	}
	for _, code := range []string{FaultDiskFull, FaultPipeline} {
		if msg := s.o.FaultWarning(code); msg != "" {
			add(code, "%s", msg)
		}
	}
	cs, _ := s.o.Capture(ctx)
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
		if st.Dropped > 0 && s.o.Clock.Now().Sub(st.LastDropped) < DropWarn {
			add("capture_dropped", "%d captured exchanges were dropped because the pipeline fell behind; your agent was not slowed down.", st.Dropped)
		}
	}
	if at := s.o.IndexLagAt(); !at.IsZero() && s.o.Clock.Now().Sub(at) < indexLagWarn {
		add("text_index", "The word index is behind the stored memories; it catches up at the next write or restart.")
	}
	if sw := s.o.Store.Info().Warnings; len(sw) > 0 {
		add("store_repaired", "At start the store found and handled: %s.", strings.Join(sw, "; "))
	}
	if msg := s.o.ClockWarning(); msg != "" {
		add("clock_jump", "%s", msg)
	}
	if at, serr := s.o.LastSweep(); serr != "" {
		add("steward_failed", "The steward's last scheduled sweep (%s) failed: %s.", at.Format(time.RFC3339), serr)
	}
	if js := s.judgeStatus(); js.Enabled && js.Exhausted {
		add("judge_budget", "The judge reached its call budget (%d/%d this hour, %d/%d today): exchanges pass unjudged until it frees up.",
			js.CallsLastHour, js.MaxPerHour, js.CallsLastDay, js.MaxPerDay)
	}
	return ws
}
