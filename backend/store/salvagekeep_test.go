package store

import (
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"testing"

	"github.com/memtray/memtray/backend/memory"
	bolt "go.etcd.io/bbolt"
)

// keepStore is what keepFixture wrote besides the records.
type keepStore struct {
	dir, path       string
	records         int
	firstID, lastID string   // the smallest and largest record ids
	trashed         []string // ids moved to the trash
	outbox          int      // team outbox entries waiting
	machine         string   // the team machine name
}

// pulledID is the id of the team memory keepFixture pulls: the largest,
// in the records' last leaf page.
const pulledID = "ffffffffffffffffffffffffffffff00"

// keepFixture writes a team store of 160 records with every other
// bucket filled: the trash, the team outbox, a counter delta, a team
// base and cursor (a pull), the machine name and refusals, a recall, a
// calibration, a decision, and turn marks naming the first record (in
// the records' first leaf page) and the last.
func keepFixture(t *testing.T) keepStore {
	t.Helper()
	ctx := context.Background()
	k := keepStore{dir: t.TempDir()}
	k.path = filepath.Join(k.dir, dbFile)
	s := openTeam(t, k.dir)
	ms := make([]memory.Memory, 160)
	for i := range ms {
		ms[i] = mem(fmt.Sprintf("kept fact %d: the service %d listens on port %d", i, i, 8000+i))
		ms[i].ID = fmt.Sprintf("%032x", i+1) // in order: the first (a team memory's) is in the first leaf page
		if i%2 == 0 {
			ms[i].Project = "team"
		}
	}
	if _, err := s.PutBatch(ctx, ms); err != nil {
		t.Fatal(err)
	}
	ids := s.allIDs()
	k.firstID, k.lastID = ids[0], ids[len(ids)-1]
	k.trashed = ids[len(ids)-4 : len(ids)-1]
	var tr []TrashRequest
	for _, id := range k.trashed {
		tr = append(tr, TrashRequest{ID: id, Reason: "pruned by the test"})
	}
	if err := s.Apply(ctx, Batch{Trash: tr}); err != nil {
		t.Fatal(err)
	}
	pulled := teamMem("pulled from the team: deploys need two approvals")
	pulled.ID = pulledID
	if _, err := s.ApplyTeam(ctx, TeamChanges{Put: []memory.Memory{pulled}, Cursor: []byte("cursor-7")}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.RecordAccess(ctx, t0, pulledID); err != nil {
		t.Fatal(err)
	}
	var err error
	if k.machine, err = s.TeamMachine(ctx); err != nil {
		t.Fatal(err)
	}
	if err := s.SetTeamRefusals(ctx, []byte(`["refused"]`)); err != nil {
		t.Fatal(err)
	}
	if _, err := s.AddRecall(ctx, RecallEntry{At: t0, SessionID: "s1", Event: "prompt",
		Given: []RecallMemory{{ID: k.lastID, Preview: "kept fact"}}}, RecallLimits{}); err != nil {
		t.Fatal(err)
	}
	if err := s.SetCalibration(testEmb.model, []byte(`{"threshold":0.5}`)); err != nil {
		t.Fatal(err)
	}
	if err := s.AddDecision(DecisionRecord{At: t0, ID: "d1", Data: []byte(`{"verdict":"stored"}`)}, "stored", "", DecisionLimits{}); err != nil {
		t.Fatal(err)
	}
	if err := s.MarkTurn(ctx, []TurnMark{
		{Turn: "turn-first", Hash: "h1", Outcome: "stored", MemoryID: k.firstID},
		{Turn: "turn-last", Hash: "h2", Outcome: "stored", MemoryID: k.lastID},
	}); err != nil {
		t.Fatal(err)
	}
	es, _, err := s.Outbox(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	k.outbox, k.records = len(es), s.Count()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	return k
}

// allIDs is every record's id, sorted.
func (s *Store) allIDs() []string {
	s.mu.RLock()
	defer s.mu.RUnlock()
	var ids []string
	for id := range s.entries {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}

// TestSalvageKeepsBuckets: a salvage carries over every other bucket's
// readable, valid entries (at 4c30b9e it kept the records only): of an
// intact file, everything, the team cursor too; of a file whose first
// records leaf page is garbled (records lost), everything but the team
// cursor (the next pull must read the team anew), the outbox puts of
// lost memories (they would be pushed as deletes) and the turn marks
// naming a lost memory. The new store then works with what it kept: a
// trashed memory restores and exports, the recall log goes on, the
// doctor finds no damage.
func TestSalvageKeepsBuckets(t *testing.T) {
	ctx := context.Background()
	cases := []struct {
		name   string
		damage func(t *testing.T, path string)
		lossy  bool
	}{
		{"intact", func(*testing.T, string) {}, false},
		{"first records leaf garbled", recsLeaf(func(b []byte, leaf int) { binary.LittleEndian.PutUint16(b[leaf+8:], 0x40) }), true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			k := keepFixture(t)
			tc.damage(t, k.path)
			rep, err := Salvage(ctx, k.dir, nil)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("saved %d lost %d pages %d; kept %+v", rep.Saved, rep.Lost, len(rep.Pages), rep.Kept)
			if tc.lossy != (rep.Saved < k.records) {
				t.Fatalf("saved %d of %d records", rep.Saved, k.records)
			}
			kept := rep.Kept
			if kept.Trash != len(k.trashed) || rep.TrashLeft != 0 || kept.OutboxDeltas != 1 || kept.TeamBases != 1 ||
				!kept.TeamMachine || !kept.TeamRefusals || kept.Recalls != 1 || kept.Calibrations != 1 ||
				kept.Decisions != 1 || kept.DecisionHours != 1 {
				t.Errorf("kept %+v (trash left %d)", kept, rep.TrashLeft)
			}
			if kept.TeamCursor == tc.lossy {
				t.Errorf("team cursor kept: %v, want %v", kept.TeamCursor, !tc.lossy)
			}
			wantMarks := 2
			if tc.lossy {
				wantMarks = 1
			}
			if kept.TurnMarks != wantMarks || (kept.Outbox == k.outbox) == tc.lossy {
				t.Errorf("turn marks %d, want %d; outbox %d of %d", kept.TurnMarks, wantMarks, kept.Outbox, k.outbox)
			}
			if r, err := Check(ctx, k.dir); err != nil || r.Damaged() {
				t.Fatalf("Check after the salvage: %v %+v", err, r)
			}
			checkKeptStore(t, k, rep, tc.lossy)
		})
	}
}

// checkKeptStore opens the salvaged store of k and uses what it kept.
func checkKeptStore(t *testing.T, k keepStore, rep SalvageReport, lossy bool) {
	t.Helper()
	ctx := context.Background()
	s := openTeam(t, k.dir)
	trash, err := s.Trash(ctx)
	if err != nil || len(trash) != len(k.trashed) {
		t.Fatalf("trash: %d entries, %v", len(trash), err)
	}
	if err := s.Restore(ctx, k.trashed[0]); err != nil {
		t.Fatalf("restore %s: %v", k.trashed[0], err)
	}
	if err := s.Export(ctx, io.Discard); err != nil {
		t.Errorf("export after the restore: %v", err)
	}
	es, _, err := s.Outbox(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range es {
		if _, gerr := s.Get(ctx, e.ID); !e.Delete && gerr != nil {
			t.Errorf("outbox put of %s, which the store does not hold: %v", e.ID, gerr)
		}
	}
	if cur, _ := s.TeamCursor(); (string(cur) == "cursor-7") == lossy {
		t.Errorf("team cursor %q", cur)
	}
	if m, _ := s.TeamMachine(ctx); m != k.machine {
		t.Errorf("team machine %q, want %q", m, k.machine)
	}
	if b, _ := s.TeamRefusals(); string(b) != `["refused"]` {
		t.Errorf("team refusals %q", b)
	}
	if cal, ok, _ := s.Calibration(testEmb.model); !ok || string(cal) != `{"threshold":0.5}` {
		t.Errorf("calibration %q %v", cal, ok)
	}
	if ds, _ := s.Decisions(10); len(ds) != 1 {
		t.Errorf("%d decisions", len(ds))
	}
	if ms, _ := s.TurnMarks(ctx, "turn-first"); (len(ms) == 1) == lossy {
		t.Errorf("marks of the turn naming the first record: %v", ms)
	}
	next, err := s.AddRecall(ctx, RecallEntry{At: t0, SessionID: "s2", Event: "prompt"}, RecallLimits{})
	if err != nil || next.Seq != 2 {
		t.Errorf("the next recall is entry %d (%v), want 2", next.Seq, err)
	}
	if log, _ := s.RecallLog(ctx, RecallLogQuery{}); len(log) != 2 {
		t.Errorf("recall log of %d entries", len(log))
	}
	var given int
	_ = s.db.View(func(tx *bolt.Tx) error {
		if b := tx.Bucket(bucketRecallGiven); b != nil && b.Get([]byte(k.lastID)) != nil {
			given++
		}
		return nil
	})
	if given != 1 {
		t.Error("the recall index does not name the memory the kept recall gave")
	}
	if rep.Saved != s.Count()-1 {
		t.Errorf("the store holds %d records after one restore, the salvage saved %d", s.Count(), rep.Saved)
	}
}
