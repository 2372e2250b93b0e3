package search

import (
	"context"
	"testing"

	"github.com/memtray/memtray/backend/config"
	"github.com/memtray/memtray/backend/memory"
)

// TestRecallRecordsAccessInOneWrite: a recall that gives several memories
// records them all as accessed in one store write (one sequence number,
// one fsync), and the hits it returns carry the counts recorded.
func TestRecallRecordsAccessInOneWrite(t *testing.T) {
	e, st := openFixture(t, nil)
	r := NewRecaller(e, st, config.Default().Recall, memory.FixedClock{T: testNow})
	ctx := context.Background()
	_, before, err := st.ChangedSince(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	out, err := r.Recall(ctx, RecallRequest{SessionID: "s1", Prompt: tlePrompt, Project: "orbit"})
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Hits) < 2 {
		t.Fatalf("the recall gave %d memories, want several", len(out.Hits))
	}
	changed, after, err := st.ChangedSince(ctx, before)
	if err != nil {
		t.Fatal(err)
	}
	if after != before+1 || len(changed) != len(out.Hits) {
		t.Errorf("sequence %d -> %d, %d records changed: want one write of the %d given", before, after, len(changed), len(out.Hits))
	}
	for _, h := range out.Hits {
		if _, ok := changed[h.Memory.ID]; !ok {
			t.Errorf("%s given but not recorded", h.Memory.ID)
		}
		if h.Memory.AccessCount != 1 || !h.Memory.LastAccessed.Equal(testNow) {
			t.Errorf("%s: hit carries access count %d, last accessed %v", h.Memory.ID, h.Memory.AccessCount, h.Memory.LastAccessed)
		}
	}
}
