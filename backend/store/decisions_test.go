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
