package events

import (
	"fmt"
	"sync"
	"testing"
	"time"
)

func ids(es []Event) []uint64 {
	out := make([]uint64, len(es))
	for i, e := range es {
		out[i] = e.ID
	}
	return out
}

func drain(s *Subscription) []Event {
	var out []Event
	for {
		select {
		case e := <-s.C():
			out = append(out, e)
		default:
			return out
		}
	}
}

func TestPublishSubscribe(t *testing.T) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	b := New(Options{Ring: 4, FirstID: 10, Now: func() time.Time { return at }})
	early := b.Subscribe(8)
	defer early.Close()
	e := b.Publish("decision", 1)
	if e.ID != 10 || e.Type != "decision" || !e.At.Equal(at) || e.Data != 1 {
		t.Fatalf("first event = %+v", e)
	}
	late := b.Subscribe(8)
	defer late.Close()
	b.Publish("memory", 2)
	if got := ids(drain(early)); fmt.Sprint(got) != "[10 11]" {
		t.Errorf("early subscriber got %v", got)
	}
	if got := ids(drain(late)); fmt.Sprint(got) != "[11]" {
		t.Errorf("late subscriber got %v, want only what came after it subscribed", got)
	}
	if b.LastID() != 11 || b.Subscribers() != 2 {
		t.Errorf("LastID %d, Subscribers %d", b.LastID(), b.Subscribers())
	}
}

func TestSlowSubscriberDropsAndNeverBlocks(t *testing.T) {
	b := New(Options{Ring: 2, FirstID: 1})
	slow := b.Subscribe(3)
	defer slow.Close()
	fast := b.Subscribe(100)
	defer fast.Close()
	done := make(chan struct{})
	go func() {
		for range 50 {
			b.Publish("x", nil)
		}
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Publish blocked on a subscriber that reads nothing")
	}
	if got := len(drain(slow)); got != 3 {
		t.Errorf("slow subscriber holds %d events, want its buffer of 3", got)
	}
	if slow.Dropped() != 47 {
		t.Errorf("slow.Dropped() = %d, want 47", slow.Dropped())
	}
	if got := len(drain(fast)); got != 50 || fast.Dropped() != 0 {
		t.Errorf("fast subscriber got %d, dropped %d", got, fast.Dropped())
	}
}

func TestResume(t *testing.T) {
	tests := []struct {
		name      string
		published int
		lastID    uint64
		wantReset bool
		want      string
	}{
		{"all still in the ring", 5, 3, false, "[4 5]"},
		{"up to date", 5, 5, false, "[]"},
		{"first event missed", 3, 0, false, "[1 2 3]"},
		{"ring moved past it", 10, 3, true, "[]"},
		{"just inside the ring", 10, 6, false, "[7 8 9 10]"},
		{"from a previous process", 5, 99, true, "[]"},
		{"nothing published yet", 0, 0, false, "[]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := New(Options{Ring: 4, FirstID: 1})
			for i := range tt.published {
				b.Publish("x", i)
			}
			s, reset := b.Resume(tt.lastID, 1)
			defer s.Close()
			got := drain(s)
			if reset != tt.wantReset || fmt.Sprint(ids(got)) != tt.want {
				t.Fatalf("Resume(%d) = %v reset %v; want %s reset %v", tt.lastID, ids(got), reset, tt.want, tt.wantReset)
			}
			// Live events follow the replayed ones.
			e := b.Publish("y", nil)
			if live := drain(s); len(live) != 1 || live[0].ID != e.ID {
				t.Fatalf("after resume, live events = %v", ids(live))
			}
		})
	}
}

func TestNoRing(t *testing.T) {
	b := New(Options{Ring: -1, FirstID: 1})
	b.Publish("x", nil)
	if len(b.Recent()) != 0 {
		t.Fatal("a bus without a ring kept events")
	}
	s, reset := b.Resume(0, 1)
	defer s.Close()
	if !reset {
		t.Fatal("resume without a ring should reset")
	}
}

func TestDefaultFirstIDGrows(t *testing.T) {
	a := New(Options{})
	time.Sleep(2 * time.Microsecond)
	b := New(Options{})
	if a.LastID() == 0 || b.LastID() <= a.LastID() || b.LastID() > 1<<53 {
		t.Fatalf("first IDs %d then %d", a.LastID()+1, b.LastID()+1)
	}
}

func TestCloseConcurrentWithPublish(t *testing.T) {
	b := New(Options{Ring: 8, FirstID: 1})
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for range 200 {
				b.Publish("x", nil)
			}
		})
	}
	for range 4 {
		wg.Go(func() {
			for range 50 {
				s := b.Subscribe(2)
				drain(s)
				s.Close()
				s.Close() // twice is fine
				// C is closed: what is still buffered (at most its 2) drains, then the range ends.
				n := 0
				for range s.C() {
					if n++; n > 2 {
						t.Error("C still open after Close")
						break
					}
				}
			}
		})
	}
	wg.Wait()
	if b.Subscribers() != 0 {
		t.Fatalf("%d subscribers left", b.Subscribers())
	}
	last := uint64(0)
	for _, e := range b.Recent() {
		if e.ID <= last {
			t.Fatalf("IDs not increasing: %v", ids(b.Recent()))
		}
		last = e.ID
	}
	if b.LastID() != 800 {
		t.Fatalf("LastID = %d, want 800", b.LastID())
	}
}

func BenchmarkPublish(b *testing.B) {
	for _, n := range []int{0, 1, 10} {
		b.Run(fmt.Sprintf("subscribers=%d", n), func(b *testing.B) {
			bus := New(Options{FirstID: 1})
			var wg sync.WaitGroup
			for range n {
				s := bus.Subscribe(1024)
				wg.Go(func() {
					for range s.C() {
					}
				})
			}
			b.ReportAllocs()
			for b.Loop() {
				bus.Publish("decision", nil)
			}
			b.StopTimer()
			for s := range bus.subs {
				s.Close()
			}
			wg.Wait()
		})
	}
}
