package daemon

import (
	"errors"
	"fmt"
	"sync"
	"syscall"
	"time"

	"github.com/memtray/memtray/backend/embed"
	"github.com/memtray/memtray/backend/ingest"
	"github.com/memtray/memtray/backend/memory"
	"github.com/memtray/memtray/backend/status"
)

// Fault codes: what failed the last time it was tried, shown as warnings
// (GET /api/overview, `memtray stats`) until the same work succeeds again.
const (
	// faultEmbedder: the embedder failed or timed out while the daemon ran
	// (an embedder already away at start is embed.Reconnecting's).
	faultEmbedder = status.FaultEmbedder
	// faultDiskFull: a write failed for lack of disk space.
	faultDiskFull = status.FaultDiskFull
	// faultPipeline: the write pipeline failed otherwise.
	faultPipeline = status.FaultPipeline
)

// faults are the problems the daemon runs into now: set when work fails,
// cleared when the same work succeeds, so a warning goes away by itself
// when its cause does. Safe for concurrent use.
type faults struct {
	mu sync.Mutex
	m  map[string]fault
}

// fault is one current problem.
type fault struct {
	Err   string
	Since time.Time // first failure since the last success
	Last  time.Time
	Count int
}

func (f *faults) set(code string, err error, now time.Time) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.m == nil {
		f.m = map[string]fault{}
	}
	x, ok := f.m[code]
	if !ok {
		x.Since = now
	}
	x.Err, x.Last = err.Error(), now
	x.Count++
	f.m[code] = x
}

func (f *faults) clear(codes ...string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, c := range codes {
		delete(f.m, c)
	}
}

func (f *faults) get(code string) (fault, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	x, ok := f.m[code]
	return x, ok
}

// faultCode classifies a failed write: the disk is full, the embedder is
// away, or something else in the pipeline.
func faultCode(err error) string {
	switch {
	case errors.Is(err, syscall.ENOSPC):
		return faultDiskFull
	case errors.Is(err, memory.ErrUnavailable):
		return faultEmbedder
	}
	return faultPipeline
}

// noteProcessed records how the write pipeline did with one item: an error
// sets its fault (and is logged once when it starts); a decision clears
// what it proves to work again: the embedder when an embedding stage ran,
// writing when something was written.
func (d *Daemon) noteProcessed(dec memory.Decision, err error) {
	if err != nil {
		code := faultCode(err)
		if _, ongoing := d.faults.get(code); !ongoing {
			d.log.Warn("write pipeline failing; exchanges are not stored until it recovers", "fault", code, "err", err)
		}
		d.faults.set(code, err, d.clock.Now())
		return
	}
	for _, t := range dec.Timings {
		if t.Stage == ingest.StageEmbed || (t.Stage == ingest.StageContent && d.pipeline.Scorer() != nil) {
			d.recovered(faultEmbedder)
			break
		}
	}
	switch dec.Verdict {
	case memory.VerdictStored, memory.VerdictUpdated, memory.VerdictMerged:
		d.recovered(faultDiskFull, faultPipeline)
	}
}

// recovered clears faults, logging each that was on.
func (d *Daemon) recovered(codes ...string) {
	for _, c := range codes {
		if x, ok := d.faults.get(c); ok {
			d.log.Info("recovered", "fault", c, "failures", x.Count, "since", x.Since.Format(time.RFC3339))
		}
	}
	d.faults.clear(codes...)
}

// faultWarning is the sentence a current fault shows, or "" for none.
func (d *Daemon) faultWarning(code string) string {
	x, ok := d.faults.get(code)
	if !ok {
		return ""
	}
	since := x.Since.Local().Format("15:04:05")
	switch code {
	case faultEmbedder:
		return fmt.Sprintf("The embedding model %s fails since %s (%d times; last: %s): new exchanges are not stored until it answers again, which memtray notices by itself; search matches words only meanwhile.",
			d.emb.Model(), since, x.Count, x.Err)
	case faultDiskFull:
		return fmt.Sprintf("The disk holding %s is full since %s (%d writes failed; last: %s): new memories are not stored, nothing stored is lost, and writing resumes by itself when space is freed.",
			d.cfg.DataDir, since, x.Count, x.Err)
	case faultPipeline:
		return fmt.Sprintf("The write pipeline fails since %s (%d times; last: %s): captured exchanges are not stored; your agent is not affected.",
			since, x.Count, x.Err)
	}
	return ""
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
