package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
	bolterrors "go.etcd.io/bbolt/errors"
)

// recallAt is an entry of session sid at t0+min giving ids.
func recallAt(sid string, min int, ids ...string) RecallEntry {
	e := RecallEntry{At: t0.Add(time.Duration(min) * time.Minute), SessionID: sid, Event: "user-prompt", Prompt: fmt.Sprint("prompt ", min)}
	for _, id := range ids {
		e.Given = append(e.Given, RecallMemory{ID: id, Score: 0.5, Kind: "fact", Preview: "text of " + id})
	}
	e.Withheld = []RecallMemory{{ID: "w", Score: 0.1, Reason: "relative_floor"}}
	return e
}

func seqs(es []RecallEntry) string {
	var b []string
	for _, e := range es {
		b = append(b, fmt.Sprint(e.Seq))
	}
	return strings.Join(b, ",")
}

// TestRecallLogQuery: newest first, by session, paged with Before, and it
// survives a restart.
func TestRecallLogQuery(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s := openTest(t, dir)
	for i := range 6 {
		sid := []string{"a", "b"}[i%2]
		if _, err := s.AddRecall(ctx, recallAt(sid, i, fmt.Sprint("m", i)), RecallLimits{}); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = openTest(t, dir)
	tests := []struct {
		name string
		q    RecallLogQuery
		want string
	}{
		{"all", RecallLogQuery{}, "6,5,4,3,2,1"},
		{"limit", RecallLogQuery{Limit: 2}, "6,5"},
		{"session", RecallLogQuery{SessionID: "a"}, "5,3,1"},
		{"before", RecallLogQuery{Before: 5, Limit: 2}, "4,3"},
		{"before and session", RecallLogQuery{Before: 5, SessionID: "b"}, "4,2"},
		{"before beyond the newest", RecallLogQuery{Before: 100, Limit: 1}, "6"},
		{"before the oldest", RecallLogQuery{Before: 1}, ""},
		{"unknown session", RecallLogQuery{SessionID: "zz"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := s.RecallLog(ctx, tt.q)
			if err != nil {
				t.Fatal(err)
			}
			if seqs(got) != tt.want {
				t.Errorf("seqs %s, want %s", seqs(got), tt.want)
			}
		})
	}
	got, _ := s.RecallLog(ctx, RecallLogQuery{Limit: 1})
	if e := got[0]; e.Prompt != "prompt 5" || len(e.Given) != 1 || e.Given[0].Preview != "text of m5" || e.Withheld[0].Reason != "relative_floor" {
		t.Errorf("entry not kept whole: %+v", e)
	}
	for _, q := range []RecallLogQuery{{Limit: -1}, {Limit: MaxRecallLogLimit + 1}, {SessionID: strings.Repeat("s", 300)}} {
		if _, err := s.RecallLog(ctx, q); err == nil {
			t.Errorf("%+v: no error", q)
		}
	}
}

// TestRecallLogBounded: the oldest entries go beyond Keep and MaxAge,
// with the feedback index's keys to them.
func TestRecallLogBounded(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name string
		lim  RecallLimits
		mins []int // the entries' times, in minutes after t0
		want string
	}{
		{"keep", RecallLimits{Keep: 3}, []int{0, 1, 2, 3, 4}, "5,4,3"},
		{"max age", RecallLimits{MaxAge: 90 * time.Minute}, []int{0, 60, 120, 121}, "4,3,2"},
		{"within both", RecallLimits{}, []int{0, 1}, "2,1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := openTest(t, t.TempDir())
			for i, m := range tt.mins {
				if _, err := s.AddRecall(ctx, recallAt("s", m, fmt.Sprint("m", i)), tt.lim); err != nil {
					t.Fatal(err)
				}
			}
			got, err := s.RecallLog(ctx, RecallLogQuery{})
			if err != nil {
				t.Fatal(err)
			}
			if seqs(got) != tt.want {
				t.Errorf("seqs %s, want %s", seqs(got), tt.want)
			}
			// Feedback on the first memory finds no entry once it is gone.
			n, err := s.AddRecallFeedback(ctx, []string{"m0"}, RecallFeedback{Op: "rated", Score: 1, At: t0})
			if err != nil {
				t.Fatal(err)
			}
			if kept := strings.HasSuffix(tt.want, ",1"); (n == 1) != kept {
				t.Errorf("feedback on m0 took %d entries; its entry kept: %v", n, kept)
			}
		})
	}
}

// TestRecallFeedback: feedback goes to the newest entry that gave the
// memory, and is bounded.
func TestRecallFeedback(t *testing.T) {
	ctx := context.Background()
	s := openTest(t, t.TempDir())
	for i, ids := range [][]string{{"x", "y"}, {"x"}, {"z"}} {
		if _, err := s.AddRecall(ctx, recallAt("s", i, ids...), RecallLimits{}); err != nil {
			t.Fatal(err)
		}
	}
	n, err := s.AddRecallFeedback(ctx, []string{"x", "y", "unknown"}, RecallFeedback{Op: "rated", Score: -1, At: t0})
	if err != nil || n != 2 {
		t.Fatalf("took %d, %v; want 2", n, err)
	}
	if _, err := s.AddRecallFeedback(ctx, []string{"x"}, RecallFeedback{Op: "reinforced", Score: 1, At: t0}); err != nil {
		t.Fatal(err)
	}
	got, _ := s.RecallLog(ctx, RecallLogQuery{})
	fb := map[uint64]string{}
	for _, e := range got {
		for _, f := range e.Feedback {
			fb[e.Seq] += fmt.Sprintf("%s:%s%+d ", f.ID, f.Op, f.Score)
		}
	}
	want := map[uint64]string{2: "x:rated-1 x:reinforced+1 ", 1: "y:rated-1 "}
	if fmt.Sprint(fb) != fmt.Sprint(want) {
		t.Errorf("feedback %v, want %v", fb, want)
	}
	for range MaxRecallFeedback + 5 {
		if _, err := s.AddRecallFeedback(ctx, []string{"z"}, RecallFeedback{Op: "rated", Score: 1, At: t0}); err != nil {
			t.Fatal(err)
		}
	}
	got, _ = s.RecallLog(ctx, RecallLogQuery{Limit: 1})
	if len(got[0].Feedback) != MaxRecallFeedback {
		t.Errorf("%d feedback entries, want %d", len(got[0].Feedback), MaxRecallFeedback)
	}
	if _, err := s.AddRecallFeedback(ctx, []string{"x"}, RecallFeedback{Op: "rated", Score: 2}); err == nil {
		t.Error("score 2: no error")
	}
}

// TestRecallFeedbackOnce: feedback of one op lands on the entry asked
// for (not the newest that gave the memory), once per memory, only on
// memories that entry gave.
func TestRecallFeedbackOnce(t *testing.T) {
	ctx := context.Background()
	s := openTest(t, t.TempDir())
	for i, ids := range [][]string{{"x", "y"}, {"x"}} {
		if _, err := s.AddRecall(ctx, recallAt("s", i, ids...), RecallLimits{}); err != nil {
			t.Fatal(err)
		}
	}
	steps := []struct {
		seq  uint64
		ids  []string
		op   string
		want []string
	}{
		{1, []string{"x", "z"}, "used", []string{"x"}}, // z: not given by entry 1
		{1, []string{"x", "y"}, "used", []string{"y"}}, // x: recorded already
		{1, []string{"x"}, "rated", []string{"x"}},     // another op
		{2, []string{"x"}, "used", []string{"x"}},
		{9, []string{"x"}, "used", nil}, // no such entry
	}
	for _, st := range steps {
		got, err := s.AddRecallFeedbackOnce(ctx, st.seq, st.ids, RecallFeedback{Op: st.op, Score: 1, At: t0})
		if err != nil || fmt.Sprint(got) != fmt.Sprint(st.want) {
			t.Errorf("entry %d %s %v: took %v, %v; want %v", st.seq, st.op, st.ids, got, err, st.want)
		}
	}
	got, _ := s.RecallLog(ctx, RecallLogQuery{})
	fb := map[uint64]string{}
	for _, e := range got {
		for _, f := range e.Feedback {
			fb[e.Seq] += fmt.Sprintf("%s:%s ", f.ID, f.Op)
		}
	}
	want := map[uint64]string{1: "x:used y:used x:rated ", 2: "x:used "}
	if fmt.Sprint(fb) != fmt.Sprint(want) {
		t.Errorf("feedback %v, want %v", fb, want)
	}
	if _, err := s.AddRecallFeedbackOnce(ctx, 1, []string{"x"}, RecallFeedback{Op: "", Score: 1}); err == nil {
		t.Error("no op: no error")
	}
}

func TestAddRecallValidates(t *testing.T) {
	s := openTest(t, t.TempDir())
	tests := []struct {
		name string
		mod  func(*RecallEntry)
	}{
		{"no session", func(e *RecallEntry) { e.SessionID = "" }},
		{"no event", func(e *RecallEntry) { e.Event = "" }},
		{"no time", func(e *RecallEntry) { e.At = time.Time{} }},
		{"long prompt", func(e *RecallEntry) { e.Prompt = strings.Repeat("p", MaxRecallPrompt+1) }},
		{"bad utf-8", func(e *RecallEntry) { e.Prompt = "\xff" }},
		{"no memory id", func(e *RecallEntry) { e.Given[0].ID = "" }},
		{"long preview", func(e *RecallEntry) { e.Withheld[0].Preview = strings.Repeat("p", MaxRecallPreview+1) }},
		{"too many", func(e *RecallEntry) { e.Given = make([]RecallMemory, MaxRecallMemories+1) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := recallAt("s", 0, "m")
			tt.mod(&e)
			if _, err := s.AddRecall(context.Background(), e, RecallLimits{}); err == nil {
				t.Error("no error")
			}
		})
	}
}

// previews maps "seq/id" to the preview of each memory of the log.
func previews(t *testing.T, s *Store) map[string]string {
	t.Helper()
	got, err := s.RecallLog(context.Background(), RecallLogQuery{})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, e := range got {
		for _, m := range append(append([]RecallMemory(nil), e.Given...), e.Withheld...) {
			if m.Preview == "" {
				continue
			}
			out[fmt.Sprintf("%d/%s", e.Seq, m.ID)] = m.Preview
		}
	}
	return out
}

// TestRecallLogForgetsDeleted: a memory deleted, trashed or removed by
// the team keeps its id and reason in the log but loses its text
// everywhere it was shown, also in an entry logged after the delete (a
// recall still in the service's queue); the others keep theirs.
func TestRecallLogForgetsDeleted(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name   string
		delete func(s *Store, id string) error
	}{
		{"delete", func(s *Store, id string) error { return s.Delete(ctx, id) }},
		{"trash", func(s *Store, id string) error {
			return s.Apply(ctx, Batch{Trash: []TrashRequest{{ID: id, Reason: "test"}}})
		}},
		{"forget", func(s *Store, id string) error { return s.ForgetRecalled(ctx, id) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := openTest(t, t.TempDir())
			gone := mustPut(t, s, mem("the deploy key lives in the vault")).ID
			kept := mustPut(t, s, mem("tests run with make test")).ID
			e1 := recallAt("s", 0, gone, kept)
			e1.Withheld = []RecallMemory{{ID: gone, Score: 0.1, Preview: "text of " + gone, Reason: "relative_floor"}}
			e2 := recallAt("s", 1, gone)
			if _, err := s.AddRecalls(ctx, []RecallEntry{e1, e2}, RecallLimits{}); err != nil {
				t.Fatal(err)
			}
			if err := tt.delete(s, gone); err != nil {
				t.Fatal(err)
			}
			late := recallAt("s", 2, gone, kept) // recalled before the delete, written after it
			if _, err := s.AddRecall(ctx, late, RecallLimits{}); err != nil {
				t.Fatal(err)
			}
			want := map[string]string{
				"1/" + gone: DeletedPreview, "1/" + kept: "text of " + kept, "2/" + gone: DeletedPreview,
				"3/" + gone: DeletedPreview, "3/" + kept: "text of " + kept,
			}
			if tt.name == "forget" { // the memory is still there: a later entry shows it
				want["3/"+gone] = "text of " + gone
			}
			if got := previews(t, s); fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("previews\n got %v\nwant %v", got, want)
			}
			got, _ := s.RecallLog(ctx, RecallLogQuery{Before: 2})
			if w := got[0].Withheld[0]; w.ID != gone || w.Reason != "relative_floor" || w.Preview != DeletedPreview {
				t.Errorf("withheld %+v: want its id and reason kept", w)
			}
		})
	}
}

// TestRecallLogForgetsPurged: a memory trashed while the log had no
// mention index (a log written by an earlier version) loses its previews
// when the trash is purged.
func TestRecallLogForgetsPurged(t *testing.T) {
	ctx := context.Background()
	s := openTest(t, t.TempDir())
	id := mustPut(t, s, mem("the staging database is on port 5433")).ID
	if err := s.Apply(ctx, Batch{Trash: []TrashRequest{{ID: id, Reason: "test"}}}); err != nil {
		t.Fatal(err)
	}
	// An entry written before the delete hook existed: its preview stayed.
	err := s.db.Update(func(tx *bolt.Tx) error {
		b, err := tx.CreateBucketIfNotExists(bucketRecalls)
		if err != nil {
			return err
		}
		e := recallAt("s", 0, id)
		e.Seq = 1
		data, _ := json.Marshal(e)
		if err := tx.DeleteBucket(bucketRecallMentions); err != nil && !errors.Is(err, bolterrors.ErrBucketNotFound) {
			return err
		}
		return b.Put(u64(1), data)
	})
	if err != nil {
		t.Fatal(err)
	}
	if n, err := s.PurgeTrash(ctx, t0.Add(time.Hour)); err != nil || n != 1 {
		t.Fatalf("purged %d, %v", n, err)
	}
	if got := previews(t, s)["1/"+id]; got != DeletedPreview {
		t.Errorf("preview %q after the purge, want %q", got, DeletedPreview)
	}
}

// TestClearRecallLog: the log empties, feedback finds nothing, and the
// next entry's Seq goes on after the last one.
func TestClearRecallLog(t *testing.T) {
	ctx := context.Background()
	s := openTest(t, t.TempDir())
	if n, err := s.ClearRecallLog(ctx); err != nil || n != 0 {
		t.Fatalf("empty log: cleared %d, %v", n, err)
	}
	for i := range 3 {
		if _, err := s.AddRecall(ctx, recallAt("s", i, fmt.Sprint("m", i)), RecallLimits{}); err != nil {
			t.Fatal(err)
		}
	}
	if n, err := s.ClearRecallLog(ctx); err != nil || n != 3 {
		t.Fatalf("cleared %d, %v; want 3", n, err)
	}
	if got, _ := s.RecallLog(ctx, RecallLogQuery{}); len(got) != 0 {
		t.Errorf("%d entries after clear", len(got))
	}
	if n, _ := s.AddRecallFeedback(ctx, []string{"m1"}, RecallFeedback{Op: "rated", Score: 1, At: t0}); n != 0 {
		t.Errorf("feedback took %d entries after clear", n)
	}
	e, err := s.AddRecall(ctx, recallAt("s", 9, "m9"), RecallLimits{})
	if err != nil || e.Seq != 4 {
		t.Errorf("next seq %d, %v; want 4", e.Seq, err)
	}
}

// TestAddRecallsKeepsValid: an invalid entry of a batch is left out with
// an error, the others are stored; the mention index follows pruning.
func TestAddRecallsKeepsValid(t *testing.T) {
	ctx := context.Background()
	s := openTest(t, t.TempDir())
	bad := recallAt("", 1, "m1")
	got, err := s.AddRecalls(ctx, []RecallEntry{recallAt("s", 0, "m0"), bad, recallAt("s", 2, "m2")}, RecallLimits{Keep: 1})
	if err == nil || len(got) != 2 {
		t.Fatalf("stored %d, %v; want 2 and an error", len(got), err)
	}
	if log, _ := s.RecallLog(ctx, RecallLogQuery{}); seqs(log) != "2" {
		t.Errorf("seqs %s, want 2", seqs(log))
	}
	var mentions []string
	_ = s.db.View(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketRecallMentions).ForEach(func(k, _ []byte) error {
			mentions = append(mentions, fmt.Sprintf("%s@%d", k[:len(k)-9], getU64(k[len(k)-8:])))
			return nil
		})
	})
	if fmt.Sprint(mentions) != "[m2@2]" {
		t.Errorf("mentions %v, want [m2@2]", mentions)
	}
}

// TestRecallLogScan: Scan bounds the entries read, of every session, so a
// session's older recall beyond it is not found.
func TestRecallLogScan(t *testing.T) {
	ctx := context.Background()
	s := openTest(t, t.TempDir())
	for i, sid := range []string{"a", "b", "b", "b"} {
		if _, err := s.AddRecall(ctx, recallAt(sid, i, "m"), RecallLimits{}); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		scan int
		want string
	}{{0, "1"}, {4, "1"}, {3, ""}} {
		got, err := s.RecallLog(ctx, RecallLogQuery{SessionID: "a", Scan: tc.scan})
		if err != nil || seqs(got) != tc.want {
			t.Errorf("scan %d: %q, %v; want %q", tc.scan, seqs(got), err, tc.want)
		}
	}
	if _, err := s.RecallLog(ctx, RecallLogQuery{Scan: -1}); err == nil {
		t.Error("scan -1: no error")
	}
}
