package feed

import (
	"encoding/json"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/memtray/memtray/backend/memory"
	"github.com/memtray/memtray/backend/redact"
	"github.com/memtray/memtray/backend/store"
)

// MaxPersistedText bounds each of a decision's texts (user, assistant) as
// the store keeps it, in bytes; the in-memory log keeps them whole until a
// restart.
const MaxPersistedText = 64 << 10

// hoursKept is how long the in-memory log keeps its hourly counters (the
// store's default for them).
const hoursKept = 400 * 24 * time.Hour

// DecisionLog keeps the newest decisions with their (redacted) exchanges,
// for the feed and for "keep", and counts every decision per hour. With a
// store (OpenDecisionLog) both survive restarts. It is safe for concurrent
// use.
type DecisionLog struct {
	mu      sync.Mutex
	size    int
	entries []DecisionEntry // ring, oldest at next once full
	next    int
	hours   map[int64]*store.DecisionCounts // by Unix hour start (UTC)
	// publish, if set, announces each added entry (the live feed).
	publish func(DecisionEntry)
	// st, if set, keeps the decisions and counters (see OpenDecisionLog).
	st     *store.Store
	limits store.DecisionLimits
	failed func(error)
	// commit group-commits the decisions being stored (see persist).
	commit groupCommit
}

// groupCommit writes the decisions of concurrent Adds together: the first
// to come commits its own at once (no waiting for company, so one caller
// at a time pays one transaction each, as before); those that come while
// it commits wait, and the next commit, made by the first of them, takes
// all that are waiting in one transaction (one fsync). Each Add returns
// once its decision's transaction is committed. (bbolt's own Batch would
// hold a lone decision for MaxBatchDelay, 10 ms, waiting for company.)
type groupCommit struct {
	mu      sync.Mutex
	waiting []*waiter
	busy    bool // a commit is under way, or handed to a waiter
}

// waiter is one decision waiting to be committed.
type waiter struct {
	add  store.DecisionAdd
	done chan commitResult // capacity 1
}

// commitResult tells a waiter its decision's transaction's error, or
// (lead) that it is to commit what waits.
type commitResult struct {
	err  error
	lead bool
}

// NewDecisionLog returns an in-memory log of the newest size decisions (at
// least 1); publish, if not nil, announces each added entry.
func NewDecisionLog(size int, publish func(DecisionEntry)) *DecisionLog {
	if size < 1 {
		size = 1
	}
	return &DecisionLog{size: size, publish: publish, hours: map[int64]*store.DecisionCounts{}}
}

// LogOptions configures OpenDecisionLog.
type LogOptions struct {
	// Size is how many decisions the log keeps (at least 1).
	Size int
	// Store keeps the decisions and their counters across restarts.
	Store *store.Store
	// Limits bound what the store keeps; a zero Keep is Size.
	Limits store.DecisionLimits
	// Publish, if not nil, announces each added entry.
	Publish func(DecisionEntry)
	// Failed, if not nil, is told when a decision could not be stored (it
	// stays in the in-memory log) or a stored one read.
	Failed func(error)
}

// OpenDecisionLog returns a log kept in o.Store, loaded with the newest
// stored decisions and every stored hourly counter. A stored decision that
// cannot be read is skipped and told to o.Failed.
func OpenDecisionLog(o LogOptions) (*DecisionLog, error) {
	if o.Store == nil {
		return nil, fmt.Errorf("decision log: a store is required")
	}
	l := NewDecisionLog(o.Size, o.Publish)
	l.st, l.failed, l.limits = o.Store, o.Failed, o.Limits
	if l.limits.Keep <= 0 {
		l.limits.Keep = l.size
	}
	recs, err := o.Store.Decisions(l.size)
	if err != nil {
		return nil, fmt.Errorf("decision log: %w", err)
	}
	for i := len(recs) - 1; i >= 0; i-- {
		var e DecisionEntry
		if err := json.Unmarshal(recs[i].Data, &e); err != nil {
			// One unreadable record costs its row, not the daemon's start.
			if l.failed != nil {
				l.failed(fmt.Errorf("decision log: stored decision %s: %w", recs[i].ID, err))
			}
			continue
		}
		l.entries = append(l.entries, e)
	}
	hours, err := o.Store.DecisionHours(time.Time{})
	if err != nil {
		return nil, fmt.Errorf("decision log: %w", err)
	}
	for i := range hours {
		l.hours[hours[i].Hour.Unix()] = &hours[i]
	}
	return l, nil
}

// Add records dec with the redacted texts of ex, and stores it when the
// log has a store: on disk before the log lists it, so that what the feed
// has shown survives a kill (a decision that fails to store is listed
// still, and reported to LogOptions.Failed). A long turn's verdicts are
// bounded (memory.MaxDecisionCandidates), so that its decision fits a
// stored record and the feed's page.
func (l *DecisionLog) Add(dec memory.Decision, ex memory.Exchange) {
	dec = dec.Bound(memory.MaxDecisionCandidates)
	user, _ := redact.Redact(ex.User)
	asst, _ := redact.Redact(ex.Assistant)
	if dec.At.IsZero() {
		dec.At = time.Now()
	}
	e := DecisionEntry{Decision: dec, User: user, Assistant: asst, Project: ex.Project, Source: ex.Source}
	stage := ""
	if dec.Verdict == memory.VerdictRejected {
		stage = dec.Stage
	}
	if l.st != nil {
		if err := l.persist(e, stage); err != nil && l.failed != nil {
			l.failed(err)
		}
	}
	l.mu.Lock()
	if len(l.entries) < l.size {
		l.entries = append(l.entries, e)
	} else {
		l.entries[l.next] = e
		l.next = (l.next + 1) % l.size
	}
	h := dec.At.UTC().Truncate(time.Hour)
	c := l.hours[h.Unix()]
	if c == nil {
		c = &store.DecisionCounts{Hour: h, Verdicts: map[string]int{}, Rejected: map[string]int{}}
		l.hours[h.Unix()] = c
		for k := range l.hours {
			if k < h.Add(-hoursKept).Unix() {
				delete(l.hours, k)
			}
		}
	}
	c.Verdicts[string(dec.Verdict)]++
	if stage != "" {
		c.Rejected[stage]++
	}
	l.mu.Unlock()
	if l.publish != nil {
		l.publish(e)
	}
}

// persist stores e, its texts cut to MaxPersistedText, and returns once it
// is on disk: committed with the decisions other Adds are storing at the
// same time (groupCommit).
func (l *DecisionLog) persist(e DecisionEntry, stage string) error {
	e.User, e.Assistant = memory.CutRunes(e.User, MaxPersistedText), memory.CutRunes(e.Assistant, MaxPersistedText)
	b, err := json.Marshal(e)
	if err != nil {
		return fmt.Errorf("decision log: %w", err)
	}
	verdict := string(e.Verdict)
	if verdict == "" {
		verdict = "unknown"
	}
	add := store.DecisionAdd{Record: store.DecisionRecord{At: e.At, ID: e.ID, Data: b}, Verdict: verdict, Stage: stage}
	if err := add.Validate(); err != nil { // one invalid decision fails alone, not the others' commit
		return fmt.Errorf("decision log: %w", err)
	}
	w := &waiter{add: add, done: make(chan commitResult, 1)}
	g := &l.commit
	g.mu.Lock()
	g.waiting = append(g.waiting, w)
	lead := !g.busy
	g.busy = true
	g.mu.Unlock()
	for {
		if lead {
			l.commitWaiting()
		}
		r := <-w.done
		if !r.lead {
			if r.err != nil {
				return fmt.Errorf("decision log: %w", r.err)
			}
			return nil
		}
		lead = true
	}
}

// commitWaiting commits every decision waiting in one transaction, tells
// each the result, and hands the next commit to the first decision that
// came meanwhile (or, with none, ends the group's commits).
func (l *DecisionLog) commitWaiting() {
	g := &l.commit
	g.mu.Lock()
	ws := g.waiting
	g.waiting = nil
	g.mu.Unlock()
	adds := make([]store.DecisionAdd, len(ws))
	for i, w := range ws {
		adds[i] = w.add
	}
	err := l.st.AddDecisions(adds, l.limits)
	for _, w := range ws {
		w.done <- commitResult{err: err}
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if len(g.waiting) == 0 {
		g.busy = false
		return
	}
	g.waiting[0].done <- commitResult{lead: true}
}

// Newest returns at most limit entries, the newest first.
func (l *DecisionLog) Newest(limit int) []DecisionEntry {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := len(l.entries)
	out := make([]DecisionEntry, 0, min(limit, n))
	for i := 0; i < n && len(out) < limit; i++ {
		// next is the oldest entry once the ring is full, and 0 before.
		out = append(out, l.entries[(l.next-1-i+2*n)%n])
	}
	return out
}

// Hours returns the hourly counters from the hour of since on, oldest
// first (hours without decisions are absent). They count every decision
// added, also those the log no longer keeps.
func (l *DecisionLog) Hours(since time.Time) []store.DecisionCounts {
	from := since.UTC().Truncate(time.Hour).Unix()
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []store.DecisionCounts
	for k, c := range l.hours {
		if k >= from {
			out = append(out, store.DecisionCounts{Hour: c.Hour, Verdicts: maps(c.Verdicts), Rejected: maps(c.Rejected)})
		}
	}
	slices.SortFunc(out, func(a, b store.DecisionCounts) int { return a.Hour.Compare(b.Hour) })
	return out
}

// maps copies m.
func maps(m map[string]int) map[string]int {
	out := make(map[string]int, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// Find returns the entry of the decision id, if still kept.
func (l *DecisionLog) Find(id string) (DecisionEntry, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, e := range l.entries {
		if e.ID == id {
			return e, true
		}
	}
	return DecisionEntry{}, false
}
