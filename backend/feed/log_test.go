package feed

import (
	"testing"

	"github.com/memtray/memtray/backend/memory"
)

func TestDecisionLogRing(t *testing.T) {
	l := NewDecisionLog(3, nil)
	for i := 0; i < 5; i++ {
		l.Add(memory.Decision{ID: string(rune('a' + i))}, memory.Exchange{})
	}
	got := l.Newest(10)
	if len(got) != 3 || got[0].ID != "e" || got[2].ID != "c" {
		t.Errorf("newest: %v", got)
	}
	if _, ok := l.Find("a"); ok {
		t.Error("an evicted decision is still found")
	}
	if len(l.Newest(1)) != 1 {
		t.Error("limit ignored")
	}
}
