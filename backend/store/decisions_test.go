package store

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

func TestDecisionsSurviveReopen(t *testing.T) {
	dir := t.TempDir()
	s := openTest(t, dir)
	for i := range 5 {
		verdict, stage := "stored", ""
		if i%2 == 1 {
			verdict, stage = "rejected", "content"
		}
		rec := DecisionRecord{At: t0.Add(-time.Duration(5-i) * time.Minute), ID: fmt.Sprintf("d%d", i), Data: []byte(fmt.Sprintf(`{"n":%d}`, i))}
		if err := s.AddDecision(rec, verdict, stage, DecisionLimits{}); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = openTest(t, dir)
	got, err := s.Decisions(3)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 || got[0].ID != "d4" || got[2].ID != "d2" || string(got[0].Data) != `{"n":4}` {
		t.Fatalf("decisions after reopen: %+v", got)
	}
	if !got[0].At.Equal(t0.Add(-time.Minute)) {
		t.Errorf("time %v, want %v", got[0].At, t0.Add(-time.Minute))
	}
	hours, err := s.DecisionHours(t0.Add(-24 * time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if len(hours) != 1 || hours[0].Verdicts["stored"] != 3 || hours[0].Verdicts["rejected"] != 2 || hours[0].Rejected["content"] != 2 ||
		!hours[0].Hour.Equal(t0.Add(-time.Hour)) {
		t.Fatalf("hours after reopen: %+v", hours)
	}
}

func TestDecisionsBounded(t *testing.T) {
	tests := []struct {
		name    string
		lim     DecisionLimits
		ages    []time.Duration // before t0, oldest first
		want    []string
		hours   int
		hoursOf time.Duration
	}{
		{"keep", DecisionLimits{Keep: 2}, []time.Duration{3 * time.Minute, 2 * time.Minute, time.Minute}, []string{"d2", "d1"}, 1, time.Hour},
		{"max age", DecisionLimits{MaxAge: time.Hour}, []time.Duration{3 * time.Hour, 2 * time.Hour, time.Minute}, []string{"d2"}, 3, 4 * time.Hour},
		{"counters age", DecisionLimits{MaxAge: time.Hour, CountsAge: 90 * time.Minute}, []time.Duration{3 * time.Hour, 2 * time.Hour, time.Minute}, []string{"d2"}, 2, 4 * time.Hour},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := openTest(t, t.TempDir())
			for i, a := range tt.ages {
				if err := s.AddDecision(DecisionRecord{At: t0.Add(-a), ID: fmt.Sprintf("d%d", i), Data: []byte("{}")}, "stored", "", tt.lim); err != nil {
					t.Fatal(err)
				}
			}
			got, err := s.Decisions(10)
			if err != nil {
				t.Fatal(err)
			}
			var ids []string
			for _, r := range got {
				ids = append(ids, r.ID)
			}
			if strings.Join(ids, ",") != strings.Join(tt.want, ",") {
				t.Errorf("kept %v, want %v", ids, tt.want)
			}
			hours, err := s.DecisionHours(t0.Add(-tt.hoursOf))
			if err != nil {
				t.Fatal(err)
			}
			if len(hours) != tt.hours {
				t.Errorf("%d hourly counters, want %d: %+v", len(hours), tt.hours, hours)
			}
			for _, h := range hours {
				if h.Verdicts == nil || h.Rejected == nil {
					t.Errorf("hour %v has a nil map: %+v", h.Hour, h)
				}
			}
		})
	}
}

func TestAddDecisionInvalid(t *testing.T) {
	s := openTest(t, t.TempDir())
	for _, tt := range []struct {
		name           string
		rec            DecisionRecord
		verdict, stage string
	}{
		{"no id", DecisionRecord{At: t0}, "stored", ""},
		{"long id", DecisionRecord{At: t0, ID: strings.Repeat("x", maxDecisionID+1)}, "stored", ""},
		{"big", DecisionRecord{At: t0, ID: "a", Data: make([]byte, maxDecisionData+1)}, "stored", ""},
		{"no verdict", DecisionRecord{At: t0, ID: "a"}, "", ""},
		{"long stage", DecisionRecord{At: t0, ID: "a"}, "rejected", strings.Repeat("s", 65)},
		{"no time", DecisionRecord{ID: "a"}, "stored", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if err := s.AddDecision(tt.rec, tt.verdict, tt.stage, DecisionLimits{}); err == nil {
				t.Error("accepted")
			}
		})
	}
	if got, err := s.Decisions(10); err != nil || len(got) != 0 {
		t.Errorf("invalid decisions stored: %v %v", got, err)
	}
}

// TestAddDecisions: a batch stores and counts as its decisions one by one
// would (counters of two hours, the bound kept), and a batch with one
// invalid decision stores none of it.
func TestAddDecisions(t *testing.T) {
	batch := func(n int) []DecisionAdd {
		var adds []DecisionAdd
		for i := range n {
			a := DecisionAdd{Record: DecisionRecord{At: t0.Add(-time.Duration(n-i) * 20 * time.Minute), ID: fmt.Sprintf("d%d", i), Data: []byte("{}")}, Verdict: "stored"}
			if i%3 == 0 {
				a.Verdict, a.Stage = "rejected", "content"
			}
			adds = append(adds, a)
		}
		return adds
	}
	tests := []struct {
		name    string
		adds    []DecisionAdd
		lim     DecisionLimits
		kept    int
		wantErr bool
	}{
		{"empty", nil, DecisionLimits{}, 0, false},
		{"one", batch(1), DecisionLimits{}, 1, false},
		{"two hours", batch(5), DecisionLimits{}, 5, false},
		{"bounded", batch(6), DecisionLimits{Keep: 4}, 4, false},
		{"one invalid", append(batch(3), DecisionAdd{Record: DecisionRecord{At: t0, ID: "bad"}}), DecisionLimits{}, 0, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			one, all := openTest(t, t.TempDir()), openTest(t, t.TempDir())
			err := all.AddDecisions(tc.adds, tc.lim)
			if (err != nil) != tc.wantErr {
				t.Fatalf("error %v, want one: %v", err, tc.wantErr)
			}
			if !tc.wantErr {
				for _, a := range tc.adds {
					if err := one.AddDecision(a.Record, a.Verdict, a.Stage, tc.lim); err != nil {
						t.Fatal(err)
					}
				}
			}
			for _, s := range []*Store{one, all} {
				defer func() { _ = s.Close() }()
			}
			wantD, err := one.Decisions(100)
			if err != nil {
				t.Fatal(err)
			}
			gotD, err := all.Decisions(100)
			if err != nil {
				t.Fatal(err)
			}
			wantH, err := one.DecisionHours(time.Time{})
			if err != nil {
				t.Fatal(err)
			}
			gotH, err := all.DecisionHours(time.Time{})
			if err != nil {
				t.Fatal(err)
			}
			if len(gotD) != tc.kept {
				t.Errorf("batch kept %d decisions, want %d", len(gotD), tc.kept)
			}
			if fmt.Sprint(gotD) != fmt.Sprint(wantD) || fmt.Sprint(gotH) != fmt.Sprint(wantH) {
				t.Errorf("batch stored %v\n%v\none by one %v\n%v", gotD, gotH, wantD, wantH)
			}
		})
	}
}
