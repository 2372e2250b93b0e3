package feed

import (
	"sync"

	"github.com/memtray/memtray/backend/memory"
	"github.com/memtray/memtray/backend/redact"
)

// DecisionLog keeps the newest decisions with their (redacted) exchanges,
// for the feed and for "keep". It is safe for concurrent use.
type DecisionLog struct {
	mu      sync.Mutex
	size    int
	entries []DecisionEntry // ring, oldest at next once full
	next    int
	// publish, if set, announces each added entry (the live feed).
	publish func(DecisionEntry)
}

// NewDecisionLog returns a log of the newest size decisions (at least 1);
// publish, if not nil, announces each added entry.
func NewDecisionLog(size int, publish func(DecisionEntry)) *DecisionLog {
	if size < 1 {
		size = 1
	}
	return &DecisionLog{size: size, publish: publish}
}

// Add records dec with the redacted texts of ex.
func (l *DecisionLog) Add(dec memory.Decision, ex memory.Exchange) {
	user, _ := redact.Redact(ex.User)
	asst, _ := redact.Redact(ex.Assistant)
	e := DecisionEntry{Decision: dec, User: user, Assistant: asst, Project: ex.Project, Source: ex.Source}
	l.mu.Lock()
	if len(l.entries) < l.size {
		l.entries = append(l.entries, e)
	} else {
		l.entries[l.next] = e
		l.next = (l.next + 1) % l.size
	}
	l.mu.Unlock()
	if l.publish != nil {
		l.publish(e)
	}
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
