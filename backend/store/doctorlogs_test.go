package store

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/memtray/memtray/backend/memory"
	bolt "go.etcd.io/bbolt"
)

// TestDoctorChecksLogs: the recall log, the similarity calibrations and
// the turn marks, each with entries the test garbled in the file (bytes
// that are not JSON, valid JSON of the wrong type), are checked by memtray
// doctor (closed, and through the open store as the daemon's doctor does):
// a problem per bucket counting the garbled entries, the fix a salvage;
// the salvage then keeps every good entry and leaves the garbled ones
// out, saying so. A clean store has none of those problems.
func TestDoctorChecksLogs(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s := openTest(t, dir)
	var ms []memory.Memory
	for i := range 4 {
		ms = append(ms, mustPut(t, s, mem(fmt.Sprintf("logged fact %d: the cache %d expires after %d minutes", i, i, 10+i))))
	}
	for i := range 3 {
		if _, err := s.AddRecall(ctx, RecallEntry{At: t0, SessionID: fmt.Sprintf("s%d", i), Event: "prompt",
			Given: []RecallMemory{{ID: ms[i].ID, Preview: "logged fact"}}}, RecallLimits{}); err != nil {
			t.Fatal(err)
		}
	}
	for _, model := range []string{"model-a", "model-b", "model-c"} {
		if err := s.SetCalibration(model, []byte(`{"model":"`+model+`","thresholds":{"x":0.5}}`)); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.MarkTurn(ctx, []TurnMark{
		{Turn: "turn-a", Hash: "h1", Outcome: "stored", MemoryID: ms[0].ID},
		{Turn: "turn-b", Hash: "h2", Outcome: "stored", MemoryID: ms[1].ID},
		{Turn: "turn-c", Hash: "h3", Outcome: "stored", MemoryID: ms[2].ID},
	}); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if rep, err := Check(ctx, dir); err != nil || rep.Damaged() {
		t.Fatalf("doctor of the clean store: %v %+v", err, rep)
	}

	path := filepath.Join(dir, dbFile)
	db, err := bolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	err = db.Update(func(tx *bolt.Tx) error {
		rc := tx.Bucket(bucketRecalls)
		if err := rc.Put(u64(2), []byte("\x00not json")); err != nil {
			return err
		}
		if err := rc.Put(u64(3), []byte(`{"at":"yesterday","session_id":7}`)); err != nil {
			return err
		}
		if err := tx.Bucket(bucketCalib).Put([]byte("model-b"), []byte(`{"model":"model-b",`)); err != nil {
			return err
		}
		return tx.Bucket(bucketTurns).Put(turnMarkKey("turn-b", "h2"), []byte(`{"o":"stored","m":42}`))
	})
	if cerr := db.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.Fatal(err)
	}

	wantProblems := func(what string, rep *CheckReport) {
		t.Helper()
		for _, w := range []struct{ area, count string }{
			{"recalls", "2 of 3 recall log entries"}, {"calib", "1 of 3 similarity calibrations"}, {"turns", "1 of 3 turn marks"},
		} {
			if !slices.ContainsFunc(rep.Problems, func(p Problem) bool {
				return p.Area == w.area && strings.Contains(p.What, w.count) && p.Fix == fixSalvage
			}) {
				t.Errorf("%s: no %s problem counting %q: %+v", what, w.area, w.count, rep.Problems)
			}
		}
		if len(rep.Problems) != 3 {
			t.Errorf("%s: %d problems, want 3: %+v", what, len(rep.Problems), rep.Problems)
		}
	}
	rep, err := Check(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	wantProblems("doctor", rep)
	live := openTest(t, dir)
	lrep, err := live.Check(ctx)
	if err != nil {
		t.Fatal(err)
	}
	wantProblems("doctor through the open store", lrep)
	if err := live.Close(); err != nil {
		t.Fatal(err)
	}

	srep, err := Salvage(ctx, dir, nil)
	if err != nil {
		t.Fatalf("Salvage: %v", err)
	}
	if k := srep.Kept; k.Recalls != 1 || k.Calibrations != 2 || k.TurnMarks != 2 {
		t.Errorf("salvage kept %+v, want 1 recall, 2 calibrations, 2 turn marks", k)
	}
	for _, want := range []string{"2 recall log entries", "1 similarity calibrations", "1 turn marks"} {
		if !slices.ContainsFunc(srep.Kept.Dropped, func(d string) bool { return strings.HasPrefix(d, want) }) {
			t.Errorf("salvage does not say it dropped %s: %v", want, srep.Kept.Dropped)
		}
	}
	if rep, err := Check(ctx, dir); err != nil || rep.Damaged() {
		t.Errorf("doctor after the salvage: %v %+v", err, rep.Problems)
	}
	s = openTest(t, dir)
	marks, err := s.TurnMarks(ctx, "turn-a")
	if err != nil || marks["h1"].MemoryID != ms[0].ID {
		t.Errorf("turn-a's marks after the salvage: %v %v", marks, err)
	}
	if data, ok, err := s.Calibration("model-c"); err != nil || !ok || !strings.Contains(string(data), "model-c") {
		t.Errorf("model-c's calibration after the salvage: %s %v %v", data, ok, err)
	}
	log, err := s.RecallLog(ctx, RecallLogQuery{})
	if err != nil || len(log) != 1 || log[0].SessionID != "s0" {
		t.Errorf("recall log after the salvage: %+v %v", log, err)
	}
}
