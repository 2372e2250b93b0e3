package memory

import (
	"errors"
	"math"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestValidate(t *testing.T) {
	ok := Memory{Text: "The API listens on 8080.", Kind: KindConfig, Type: TypeProject, Importance: 0.5}
	cases := []struct {
		name string
		edit func(*Memory)
		want string // "" = valid
	}{
		{"valid", func(*Memory) {}, ""},
		{"defaults left empty", func(m *Memory) { m.Kind, m.Type, m.Importance = "", "", 0 }, ""},
		{"empty", func(m *Memory) { m.Text = " \n\t" }, "empty"},
		{"too long", func(m *Memory) { m.Text = strings.Repeat("a", MaxTextBytes+1) }, "64 KiB"},
		{"bad utf8", func(m *Memory) { m.Text = "ok \xff" }, "UTF-8"},
		{"nul", func(m *Memory) { m.Text = "ok \x00 no" }, "UTF-8"},
		{"kind", func(m *Memory) { m.Kind = "gossip" }, "unknown kind"},
		{"type", func(m *Memory) { m.Type = "secret" }, "unknown type"},
		{"kind origin", func(m *Memory) { m.KindOrigin = "hunch" }, "unknown kind origin"},
		{"kind origin judge", func(m *Memory) { m.KindOrigin = KindJudged }, ""},
		{"importance high", func(m *Memory) { m.Importance = 1.5 }, "importance"},
		{"importance nan", func(m *Memory) { m.Importance = math.NaN() }, "importance"},
		{"project", func(m *Memory) { m.Project = strings.Repeat("p", 257) }, "project"},
		{"scope team", func(m *Memory) { m.Scope = ScopeTeam }, ""},
		{"scope personal", func(m *Memory) { m.Scope = ScopePersonal }, ""},
		{"scope unknown", func(m *Memory) { m.Scope = "world" }, "unknown scope"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m := ok
			tc.edit(&m)
			err := m.Validate()
			if tc.want == "" {
				if err != nil {
					t.Fatalf("Validate = %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) || !errors.Is(err, ErrInvalid) {
				t.Fatalf("Validate = %v, want ErrInvalid mentioning %q", err, tc.want)
			}
		})
	}
}

// TestKindCertain: a kind is certain when given, judged or cued; a record
// without an origin (an older store) only when its source states kinds.
func TestKindCertain(t *testing.T) {
	cases := []struct {
		origin KindOrigin
		source string
		want   bool
	}{
		{KindGiven, SourceCapture, true},
		{KindJudged, SourceCapture, true},
		{KindCued, "ingest:design.md", true},
		{KindGuessed, SourceMCP, false},
		{"", SourceMCP, true},
		{"", SourceImport, true},
		{"", SourceCapture, false},
		{"", SourceCLI, true},
		{"", "ingest:design.md", false},
		{"", "", false},
		{"hunch", SourceMCP, false},
	}
	for _, c := range cases {
		m := Memory{Kind: KindDecision, KindOrigin: c.origin, Source: c.source}
		if got := m.KindCertain(); got != c.want {
			t.Errorf("origin %q, source %q: KindCertain = %v, want %v", c.origin, c.source, got, c.want)
		}
	}
}

func TestContentHashFoldsSpace(t *testing.T) {
	a := ContentHash("use  pnpm\n\tnot npm ")
	if a != ContentHash("use pnpm not npm") || a == ContentHash("use pnpm, not npm") {
		t.Fatal("ContentHash should fold white space and nothing else")
	}
	if got := NormalizeSpace("  a \n b\t\tc  "); got != "a b c" {
		t.Fatalf("NormalizeSpace = %q", got)
	}
}

func TestDerived(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	m := Memory{CooldownUntil: now.Add(time.Hour), FeedbackSum: 1, FeedbackN: 4}
	if !m.Snoozed(now) || m.Snoozed(now.Add(2*time.Hour)) {
		t.Fatal("Snoozed")
	}
	if m.FeedbackAvg() != 0.25 || (&Memory{}).FeedbackAvg() != 0 {
		t.Fatal("FeedbackAvg")
	}
	m.ApplyDefaults()
	if m.Kind != KindFact || m.Type != TypeProject || m.Importance != 0.5 {
		t.Fatalf("ApplyDefaults: %+v", m)
	}
}

func TestStickiness(t *testing.T) {
	tests := []struct {
		name                          string
		access, reinforced, minAccess int
		want                          float64
	}{
		{"below the minimum", 4, 0, 5, 0},
		{"at the minimum, never reinforced", 5, 0, 5, 5},
		{"reinforced", 12, 3, 5, 4},
		{"one reinforcement counts as none", 7, 1, 5, 7},
		{"no access", 0, 0, 0, 0},
		{"negative access", -3, 0, -5, 0},
		{"negative reinforcements", 6, -2, 1, 6},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Stickiness(tt.access, tt.reinforced, tt.minAccess); got != tt.want {
				t.Errorf("Stickiness(%d, %d, %d) = %v, want %v", tt.access, tt.reinforced, tt.minAccess, got, tt.want)
			}
		})
	}
}

func TestReinforce(t *testing.T) {
	at := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	m := Memory{ReinforcedCount: 2, AccessCount: 9, LastReinforcedAt: at.Add(-time.Hour)}
	m.Reinforce(at)
	if m.ReinforcedCount != 3 || !m.LastReinforcedAt.Equal(at) || m.AccessCount != 9 {
		t.Errorf("after Reinforce: %d reinforcements at %v, %d accesses", m.ReinforcedCount, m.LastReinforcedAt, m.AccessCount)
	}
}

// TestParseScope: only the two named scopes parse; the default is not typed.
func TestParseScope(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Scope
		ok   bool
	}{{"team", ScopeTeam, true}, {"personal", ScopePersonal, true}, {"", "", false}, {"Team", "", false}, {"all", "", false}} {
		got, err := ParseScope(tc.in)
		if (err == nil) != tc.ok || got != tc.want {
			t.Errorf("ParseScope(%q) = %q, %v", tc.in, got, err)
		}
		if err != nil && !errors.Is(err, ErrInvalid) {
			t.Errorf("ParseScope(%q): %v is not ErrInvalid", tc.in, err)
		}
	}
}

// TestDecisionTurnLabel: a decision's turn is named as its user counts it
// when the prompts were counted, else by its first exchange, else not.
func TestDecisionTurnLabel(t *testing.T) {
	for _, tc := range []struct {
		d    Decision
		want string
	}{
		{Decision{UserTurn: 3, Turn: 17}, "turn 3"},
		{Decision{Turn: 17}, "exchange 17"},
		{Decision{}, ""},
	} {
		if got := tc.d.TurnLabel(); got != tc.want {
			t.Errorf("%+v: %q, want %q", tc.d, got, tc.want)
		}
	}
}

// TestDecisionBound: a decision listing more than n verdicts keeps every
// kept one and every one naming a memory, then the others in order while
// they fit, and counts the rest; the caller's list is left as it was.
func TestDecisionBound(t *testing.T) {
	v := func(text string, kept bool, id string) CandidateVerdict {
		return CandidateVerdict{Text: text, Kept: kept, MemoryID: id}
	}
	texts := func(cs []CandidateVerdict) string {
		var out []string
		for _, c := range cs {
			out = append(out, c.Text)
		}
		return strings.Join(out, " ")
	}
	all := []CandidateVerdict{v("d1", false, ""), v("k1", true, "m1"), v("d2", false, ""), v("d3", false, ""),
		v("r1", false, "m0"), v("d4", false, ""), v("k2", true, "")}
	for _, tc := range []struct {
		n       int
		want    string
		omitted int
	}{
		{7, "d1 k1 d2 d3 r1 d4 k2", 0},
		{10, "d1 k1 d2 d3 r1 d4 k2", 0},
		{5, "d1 k1 d2 r1 k2", 2},
		{3, "k1 r1 k2", 4},
		{1, "k1 r1 k2", 4},
	} {
		d := Decision{Candidates: slices.Clone(all)}
		got := d.Bound(tc.n)
		if texts(got.Candidates) != tc.want || got.CandidatesOmitted != tc.omitted {
			t.Errorf("Bound(%d) = %q, %d omitted; want %q, %d", tc.n, texts(got.Candidates), got.CandidatesOmitted, tc.want, tc.omitted)
		}
		if !slices.Equal(d.Candidates, all) {
			t.Errorf("Bound(%d) changed the caller's list: %q", tc.n, texts(d.Candidates))
		}
	}
}
