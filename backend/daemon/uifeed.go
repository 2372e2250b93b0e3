package daemon

import (
	"bytes"
	"context"
	"time"

	"github.com/memtray/memtray/backend/httpapi"
	"github.com/memtray/memtray/backend/memory"
	"github.com/memtray/memtray/backend/status"
	"github.com/memtray/memtray/backend/steward"
)

// Feed timing defaults (Options can shorten them for tests).
const (
	// DefaultCaptureTick is how often the capture counters are checked
	// for a "capture" event while anyone listens.
	DefaultCaptureTick = 2 * time.Second
	// DefaultStatsTick is how often a "stats" event goes out while anyone listens.
	DefaultStatsTick = 5 * time.Second
)

func (d *Daemon) publish(typ string, data any) {
	if d.bus != nil {
		d.bus.Publish(typ, data)
	}
}

// publishMemory announces a change of memories; m, if given, is the one
// changed memory as it is now.
func (d *Daemon) publishMemory(op string, ids []string, m *memory.Memory) {
	if d.team != nil && len(ids) > 0 {
		d.team.Kick() // a team memory among them is pushed now, not at the next look (team.go)
	}
	if d.bus == nil || len(ids) == 0 {
		return
	}
	ev := httpapi.MemoryEvent{Op: op, IDs: ids}
	if m != nil {
		c := *m
		c.Embedding = nil
		ev.Memory = &c
	}
	d.bus.Publish(httpapi.EventMemory, ev)
}

// publishDecision announces a logged decision and the memories it wrote.
func (d *Daemon) publishDecision(e httpapi.DecisionEntry) {
	d.publish(httpapi.EventDecision, e)
	switch e.Verdict {
	case memory.VerdictStored:
		d.publishMemory(httpapi.MemoryAdded, e.MemoryIDs, nil)
	case memory.VerdictUpdated, memory.VerdictMerged:
		d.publishMemory(httpapi.MemoryUpdated, e.MemoryIDs, nil)
	}
}

// publishSteward announces a plan or a run.
func (d *Daemon) publishSteward(op string, pl *steward.Plan, res *steward.Result, scheduled bool, err error) {
	ev := httpapi.StewardEvent{Op: op, Scheduled: scheduled, Counts: map[string]int{}}
	if pl != nil {
		ev.PlanID, ev.Scope, ev.Actions = pl.ID, pl.Scope, len(pl.Actions)
		for k, v := range pl.Counts {
			ev.Counts[k] = v
		}
	}
	if res != nil {
		ev.RunID, ev.Trashed, ev.Skipped, ev.Actions = res.RunID, res.Trashed, len(res.Skipped), len(res.Applied)
		if res.PlanID != "" {
			ev.PlanID = res.PlanID
		}
		ev.Counts = map[string]int{}
		for k, v := range res.Counts {
			ev.Counts[k] = v
		}
	}
	if err != nil {
		ev.Error = err.Error()
	}
	d.publish(httpapi.EventSteward, ev)
}

// publishRun announces the memories a steward run changed and trashed.
func (d *Daemon) publishRun(res steward.Result) {
	var changed, trashed []string
	for _, a := range res.Applied {
		if a.After.Trashed {
			trashed = append(trashed, a.ID)
		} else {
			changed = append(changed, a.ID)
		}
		trashed = append(trashed, a.MergedIDs...)
	}
	d.publishMemory(httpapi.MemoryUpdated, changed, nil)
	d.publishMemory(httpapi.MemoryTrashed, trashed, nil)
}

// runFeed publishes the periodic events while anyone listens: "capture"
// when the proxy's counters moved, "stats" every stats tick.
func (d *Daemon) runFeed(ctx context.Context) {
	ct, st := d.captureTick, d.statsTick
	if ct <= 0 {
		ct = DefaultCaptureTick
	}
	if st <= 0 {
		st = DefaultStatsTick
	}
	capTick, statsTick := time.NewTicker(ct), time.NewTicker(st)
	defer capTick.Stop()
	defer statsTick.Stop()
	var lastStats []byte
	for {
		select {
		case <-ctx.Done():
			return
		case <-capTick.C:
			if d.bus.Subscribers() == 0 {
				continue
			}
			cs, _ := d.settings.Capture(ctx)
			if !bytes.Equal(cs.Stats, lastStats) {
				lastStats = cs.Stats
				d.publish(httpapi.EventCapture, cs)
			}
		case <-statsTick.C:
			if d.bus.Subscribers() == 0 {
				continue
			}
			d.publish(httpapi.EventStats, d.statsEvent(ctx))
		}
	}
}

// statsEvent is a "stats" event: the status service's compact overview
// with the team sync's state (never waiting on the network).
func (d *Daemon) statsEvent(ctx context.Context) httpapi.StatsEvent {
	ev := d.status.StatsEvent(ctx)
	if d.team != nil {
		ts := d.team.Status()
		ev.Team = &ts
	}
	return ev
}

// openStatus builds the status service over the daemon's own state.
func (d *Daemon) openStatus() error {
	var err error
	d.status, err = status.New(status.Options{Version: d.version, StartedAt: d.startedAt, Listen: func() string { return d.listen },
		Store: d.store, StorePath: d.StorePath(), Clock: d.clock, Bus: d.bus, Decisions: d.decisions, LogSize: d.cfg.Ingest.DecisionLog,
		Judge: d.judge, Capture: d.settings.Capture, Capturing: d.proxy.Enabled,
		EmbedderModel: func() string { return d.emb.Model() }, EmbedderReason: func() string { return d.EmbedderChoice().Reason },
		EmbedderDegraded: d.embedderDegraded, Pipeline: d.pipelineStats, Transcripts: d.transcriptStats,
		Recall: d.recaller.Stats, Thresholds: d.embedders.Thresholds, FaultWarning: d.faultWarning, ClockWarning: d.clockWarning,
		IndexLagAt: func() time.Time {
			if at := d.indexLagAt.Load(); at != 0 {
				return time.Unix(0, at)
			}
			return time.Time{}
		},
		LastSweep: func() (time.Time, string) {
			if o := d.lastSweep.Load(); o != nil {
				return o.At, o.Err
			}
			return time.Time{}, ""
		}})
	return err
}

// Status is the status service: stats, the overview and its warnings,
// the live feed's subscriptions and MCP's status.
func (d *Daemon) Status() *status.Service { return d.status }
