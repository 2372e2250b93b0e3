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
	// DropWarn is how long dropped captures stay a warning.
	DropWarn = 10 * time.Minute
)

// Overview summarises the store, the pipeline, recall and health for the
// UI's overview page, in one walk of the store.
func (s *Service) Overview(ctx context.Context) (httpapi.Overview, error) {
	now := s.o.Clock.Now()
	o := httpapi.Overview{At: now.UTC(), Memories: s.o.Store.Count(), Warnings: []httpapi.Warning{}}
	byKind, byProject := map[string]int{}, map[string]int{}
	today := now.UTC().Truncate(24 * time.Hour)
	first := today.AddDate(0, 0, -(overviewDays - 1))
	perDay := make([]int, overviewDays)
	err := s.o.Store.Iterate(ctx, store.Filter{IncludeSnoozed: true, IncludeSuperseded: true}, func(m memory.Memory) error {
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
	o.StoreBytes = dirSize(s.o.StorePath)
	rs := s.o.Recall()
	o.Recall = httpapi.RecallOverview{RecallStats: rs}
	if rs.Sessions > 0 {
		o.Recall.PerSession = float64(rs.Given) / float64(rs.Sessions)
	}
	o.Filter = filterBuckets(s.o.Decisions.Newest(s.o.LogSize), now)
	o.Embedder = httpapi.EmbedderStatus{Model: s.o.EmbedderModel(), Reason: s.o.EmbedderReason(), Degraded: s.o.EmbedderDegraded()}
	o.Judge = s.judgeStatus()
	o.Capture, _ = s.o.Capture(ctx)
	o.Warnings = s.warnings(ctx)
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
