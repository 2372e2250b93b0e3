// Package events is memtray's in-process publish/subscribe for the live
// feed: the daemon publishes what happens (decisions, memory changes,
// capture state, steward runs, stats) and every open feed (the UI's SSE
// stream) subscribes. Publish never blocks: a subscriber that does not keep
// up loses events and its drop counter grows. A small ring of the newest
// events lets a reconnecting client resume where it left off.
package events

import (
	"sync"
	"sync/atomic"
	"time"
)

// Event is one published event. IDs increase monotonically within a Bus.
type Event struct {
	ID   uint64    `json:"id"`
	Type string    `json:"type"`
	At   time.Time `json:"at"`
	// Data is the event's payload; its Go type depends on Type (see
	// package httpapi for the types the daemon publishes).
	Data any `json:"data"`
}

// DefaultRing is how many recent events a Bus keeps for resuming clients
// when Options.Ring is zero.
const DefaultRing = 512

// Options configures New.
type Options struct {
	// Ring is how many recent events are kept for Resume; 0 means
	// DefaultRing, a negative value keeps none.
	Ring int
	// FirstID is the ID of the first event. Zero means the start time in
	// microseconds since the Unix epoch, so the IDs of a restarted process
	// exceed those of the one before it and a client resuming across a
	// restart gets a reset rather than the wrong events. (It stays below
	// 2^53, so JavaScript numbers hold it exactly.)
	FirstID uint64
	// Now tells the time for Event.At; nil is time.Now.
	Now func() time.Time
}

// Bus fans events out to subscribers. It is safe for concurrent use.
type Bus struct {
	now  func() time.Time
	mu   sync.Mutex
	next uint64 // ID of the next event
	subs map[*Subscription]struct{}
	ring []Event // circular, len == cap once full
	head int     // index of the oldest event once the ring is full
	size int
}

// New returns an empty Bus.
func New(opts Options) *Bus {
	b := &Bus{now: opts.Now, next: opts.FirstID, subs: map[*Subscription]struct{}{}, size: opts.Ring}
	if b.now == nil {
		b.now = time.Now
	}
	if b.next == 0 {
		b.next = uint64(time.Now().UnixMicro())
	}
	if b.size == 0 {
		b.size = DefaultRing
	}
	if b.size < 0 {
		b.size = 0
	}
	return b
}

// Publish sends an event of type typ with data to every subscriber and
// keeps it in the ring. It never blocks: a subscriber whose buffer is full
// misses the event (see Subscription.Dropped). It returns the event.
func (b *Bus) Publish(typ string, data any) Event {
	b.mu.Lock()
	defer b.mu.Unlock()
	e := Event{ID: b.next, Type: typ, At: b.now(), Data: data}
	b.next++
	if b.size > 0 {
		if len(b.ring) < b.size {
			b.ring = append(b.ring, e)
		} else {
			b.ring[b.head] = e
			b.head = (b.head + 1) % b.size
		}
	}
	for s := range b.subs {
		select {
		case s.c <- e:
		default:
			s.dropped.Add(1)
		}
	}
	return e
}

// Subscribe registers a subscriber that receives every event published
// from now on, with room for buffer events (at least 1) before it drops.
func (b *Bus) Subscribe(buffer int) *Subscription {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.subscribeLocked(max(buffer, 1))
}

func (b *Bus) subscribeLocked(buffer int) *Subscription {
	s := &Subscription{bus: b, c: make(chan Event, buffer)}
	b.subs[s] = struct{}{}
	return s
}

// Resume registers a subscriber for a client whose last received event was
// lastID. When every event after lastID is still in the ring, they are
// queued on C first (the channel grows to hold them besides buffer) and
// reset is false. Otherwise (the ring moved past lastID, or lastID was
// never issued by this Bus, e.g. before a restart) nothing is replayed and
// reset is true: the client must reload its state.
func (b *Bus) Resume(lastID uint64, buffer int) (s *Subscription, reset bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	buffer = max(buffer, 1)
	last := b.next - 1 // newest issued ID
	if lastID > last {
		return b.subscribeLocked(buffer), true
	}
	missed := b.sinceLocked(lastID)
	if len(missed) > 0 && missed[0].ID != lastID+1 || len(missed) == 0 && lastID != last {
		return b.subscribeLocked(buffer), true
	}
	s = b.subscribeLocked(buffer + len(missed))
	for _, e := range missed {
		s.c <- e
	}
	return s, false
}

// sinceLocked returns the ring's events with an ID above id, oldest first.
func (b *Bus) sinceLocked(id uint64) []Event {
	var out []Event
	n := len(b.ring)
	for i := range n {
		e := b.ring[(b.head+i)%n]
		if e.ID > id {
			out = append(out, e)
		}
	}
	return out
}

// Recent returns the events in the ring, oldest first.
func (b *Bus) Recent() []Event {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.sinceLocked(0)
}

// Subscribers counts the open subscriptions.
func (b *Bus) Subscribers() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.subs)
}

// Subscription is one subscriber's view of a Bus.
type Subscription struct {
	bus     *Bus
	c       chan Event
	dropped atomic.Int64
	once    sync.Once
}

// C delivers the events, oldest first. It is closed by Close.
func (s *Subscription) C() <-chan Event { return s.c }

// Dropped counts the events this subscriber missed because its buffer was full.
func (s *Subscription) Dropped() int64 { return s.dropped.Load() }

// Close unsubscribes and closes C. It is safe to call more than once.
func (s *Subscription) Close() {
	s.once.Do(func() {
		s.bus.mu.Lock()
		defer s.bus.mu.Unlock()
		delete(s.bus.subs, s)
		close(s.c)
	})
}
