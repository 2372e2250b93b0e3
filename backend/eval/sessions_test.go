package eval

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/memtray/memtray/backend/memory"
)

func TestCovers(t *testing.T) {
	keys := [][]string{{"KV_COMPACT_EVERY"}, {"10m", "10 minutes"}}
	for _, tc := range []struct {
		name string
		text string
		keys [][]string
		want bool
	}{
		{"every group", "Set KV_COMPACT_EVERY; default 10 minutes.", keys, true},
		{"case-insensitive", "kv_compact_every defaults to 10M", keys, true},
		{"other alternative", "KV_COMPACT_EVERY=10m", keys, true},
		{"one group missing", "KV_COMPACT_EVERY sets the interval", keys, false},
		{"no group", "nothing here", keys, false},
		{"no keys", "anything", nil, false},
		{"unicode case", "Die GRÖSSE ist fest", [][]string{{"größe", "grösse"}}, true},
		{"substring counts", "the 10minutes mark", [][]string{{"10minutes"}}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Covers(tc.text, tc.keys); got != tc.want {
				t.Errorf("Covers(%q, %v) = %v, want %v", tc.text, tc.keys, got, tc.want)
			}
		})
	}
}

// metricFacts are three facts, one per where.
var metricFacts = []Fact{
	{ID: "F1", Where: WhereUser, Keys: [][]string{{"alpha"}}, Queries: []string{"q1", "q2"}},
	{ID: "F2", Where: WhereToolLoop, Keys: [][]string{{"beta"}, {"one", "two"}}, Queries: []string{"q3"}},
	{ID: "F3", Where: WhereFinalAnswer, Keys: [][]string{{"gamma"}}, Queries: []string{"q4"}},
}

func TestFactCoverageAndPrecision(t *testing.T) {
	for _, tc := range []struct {
		name     string
		texts    []string
		covered  []bool
		covering int
		byWhere  map[string]WhereCount
	}{
		{"no memories", nil, []bool{false, false, false}, 0,
			map[string]WhereCount{WhereUser: {0, 1}, WhereToolLoop: {0, 1}, WhereFinalAnswer: {0, 1}}},
		{"one memory two facts", []string{"Alpha and BETA two"}, []bool{true, true, false}, 1,
			map[string]WhereCount{WhereUser: {1, 1}, WhereToolLoop: {1, 1}, WhereFinalAnswer: {0, 1}}},
		{"unrelated memories lower precision", []string{"gamma", "noise", "beta without the second group"}, []bool{false, false, true}, 1,
			map[string]WhereCount{WhereUser: {0, 1}, WhereToolLoop: {0, 1}, WhereFinalAnswer: {1, 1}}},
		{"two memories one fact", []string{"alpha", "ALPHA again"}, []bool{true, false, false}, 2,
			map[string]WhereCount{WhereUser: {1, 1}, WhereToolLoop: {0, 1}, WhereFinalAnswer: {0, 1}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			covered := factCoverage(metricFacts, tc.texts)
			if !reflect.DeepEqual(covered, tc.covered) {
				t.Errorf("covered = %v, want %v", covered, tc.covered)
			}
			if got := coveringMemories(metricFacts, tc.texts); got != tc.covering {
				t.Errorf("covering memories = %d, want %d", got, tc.covering)
			}
			if got := coverageByWhere(metricFacts, covered); !reflect.DeepEqual(got, tc.byWhere) {
				t.Errorf("by where = %v, want %v", got, tc.byWhere)
			}
		})
	}
}

func TestCoverageByWhereListsEveryWhere(t *testing.T) {
	got := coverageByWhere(nil, nil)
	if len(got) != len(Wheres) {
		t.Fatalf("by where of no facts = %v, want every where at zero", got)
	}
}

func TestTrapsKept(t *testing.T) {
	traps := []Trap{
		{Keys: [][]string{{"5 minutes"}, {"compaction"}}},
		{Keys: [][]string{{"mysql"}}},
	}
	for _, tc := range []struct {
		name           string
		texts          []string
		kept, memories int
	}{
		{"none", []string{"compaction every 10 minutes"}, 0, 0},
		{"one trap twice", []string{"Compaction: 5 minutes", "the compaction runs every 5 minutes"}, 1, 2},
		{"both traps in one memory", []string{"compaction 5 minutes on MySQL"}, 2, 1},
		{"no memories", nil, 0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			kept, mems := trapsKept(traps, tc.texts)
			if kept != tc.kept || mems != tc.memories {
				t.Errorf("trapsKept = %d traps, %d memories; want %d, %d", kept, mems, tc.kept, tc.memories)
			}
		})
	}
}

func TestHitCovers(t *testing.T) {
	keys := [][]string{{"needle"}}
	for _, tc := range []struct {
		name  string
		given []string
		want  bool
	}{
		{"first", []string{"needle", "a", "b"}, true},
		{"fifth", []string{"a", "b", "c", "d", "the NEEDLE"}, true},
		{"sixth is too deep", []string{"a", "b", "c", "d", "e", "needle"}, false},
		{"nothing given", nil, false},
		{"given but not covering", []string{"hay"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := hitCovers(tc.given, keys, SessionsK); got != tc.want {
				t.Errorf("hitCovers(%v) = %v, want %v", tc.given, got, tc.want)
			}
		})
	}
}

func TestPercentileAndRatio(t *testing.T) {
	for _, tc := range []struct {
		xs   []int
		p    float64
		want int
	}{
		{nil, 50, 0},
		{[]int{7}, 90, 7},
		{[]int{5, 1, 3, 2, 4}, 50, 3},
		{[]int{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, 90, 9},
		{[]int{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, 50, 5},
		{[]int{10, 20}, 100, 20},
	} {
		if got := percentile(tc.xs, tc.p); got != tc.want {
			t.Errorf("percentile(%v, %v) = %d, want %d", tc.xs, tc.p, got, tc.want)
		}
	}
	if ratio(1, 0) != 0 || ratio(1, 4) != 0.25 {
		t.Errorf("ratio is wrong")
	}
	if got := runeLengths([]string{"héllo", ""}); !reflect.DeepEqual(got, []int{5, 0}) {
		t.Errorf("runeLengths = %v, want characters", got)
	}
}

func TestMostCommon(t *testing.T) {
	key := func(s string) string { return s }
	for _, tc := range []struct {
		xs   []string
		want string
	}{
		{nil, ""},
		{[]string{"", ""}, ""},
		{[]string{"b", "a", "b"}, "b"},
		{[]string{"b", "a"}, "a"},
		{[]string{"", "", "x"}, "x"},
	} {
		if got := mostCommon(tc.xs, key); got != tc.want {
			t.Errorf("mostCommon(%q) = %q, want %q", tc.xs, got, tc.want)
		}
	}
}

func TestScoreSession(t *testing.T) {
	ls := &LabelledSession{ID: "S", UserTurns: 4, Facts: metricFacts, Traps: []Trap{{Keys: [][]string{{"old"}}}}}
	var sc SessionScore
	covered := scoreSession(&sc, ls, []string{"alpha", "old noise", "beta one gamma"}, 9, "proj")
	if !reflect.DeepEqual(covered, []bool{true, true, true}) {
		t.Fatalf("covered = %v", covered)
	}
	want := SessionScore{Project: "proj", Exchanges: 9, UserTurns: 4, Facts: 3, Covered: 3, Coverage: 1,
		Memories: 3, MemoriesCovering: 2, Precision: 2.0 / 3, MemoriesPerTurn: 0.75, Traps: 1, TrapsStored: 1, TrapsStoredSubstring: 1, TrapMemories: 1,
		Queries: 4, CoverageByWhere: map[string]WhereCount{WhereUser: {1, 1}, WhereToolLoop: {1, 1}, WhereFinalAnswer: {1, 1}},
		LengthP50: 9, LengthP90: 14}
	if !reflect.DeepEqual(sc, want) {
		t.Errorf("score =\n%+v\nwant\n%+v", sc, want)
	}
	sc = SessionScore{}
	scoreSession(&sc, ls, nil, 0, "")
	if sc.Covered != 0 || sc.Precision != 0 || sc.MemoriesPerTurn != 0 || len(sc.Uncovered) != 3 {
		t.Errorf("no memories: %+v", sc)
	}
}

func TestOverallCountsSharedMemoriesOnce(t *testing.T) {
	r := &SessionsReport{Sessions: []SessionScore{
		{ID: "A", UserTurns: 2, Facts: 2, Covered: 1, Queries: 4, QueryHits: 2, QueryHitsProbe: 3, Traps: 1, TrapsStored: 1,
			CoverageByWhere: map[string]WhereCount{WhereUser: {1, 2}}},
		{ID: "B", UserTurns: 2, Facts: 2, Covered: 2, Queries: 4, QueryHits: 3, QueryHitsProbe: 3,
			CoverageByWhere: map[string]WhereCount{WhereToolLoop: {2, 2}}},
		{ID: "C", Skipped: "reader missing for codex", Facts: 99},
	}}
	all := map[string]memory.Memory{"m1": {Text: "abc"}, "m2": {Text: "abcdef"}, "m3": {Text: "a"}, "m4": {Text: "ab"}}
	r.overall(all, map[string]bool{"m1": true, "m2": true}, map[string]bool{"m3": true})
	o := r.Overall
	if o.Sessions != 2 || o.SessionsSkipped != 1 || o.Facts != 4 || o.Covered != 3 || o.Coverage != 0.75 {
		t.Errorf("facts: %+v", o)
	}
	if o.Memories != 4 || o.MemoriesCovering != 2 || o.Precision != 0.5 || o.MemoriesPerTurn != 1 || o.TrapMemories != 1 || o.TrapsStored != 1 {
		t.Errorf("memories: %+v", o)
	}
	if o.Queries != 8 || o.QueryHits != 5 || o.RecallAt5 != 5.0/8 || o.QueryHitsProbe != 6 || o.RecallAt5Probe != 6.0/8 {
		t.Errorf("recall: %+v", o)
	}
	if o.CoverageByWhere[WhereUser] != (WhereCount{1, 2}) || o.CoverageByWhere[WhereToolLoop] != (WhereCount{2, 2}) ||
		o.CoverageByWhere[WhereFinalAnswer] != (WhereCount{}) {
		t.Errorf("by where: %v", o.CoverageByWhere)
	}
	if o.LengthP50 != 2 || o.LengthP90 != 6 {
		t.Errorf("lengths: p50 %d p90 %d", o.LengthP50, o.LengthP90)
	}
}

func TestUserPreference(t *testing.T) {
	for _, tc := range []struct {
		where, kind string
		want        bool
	}{
		{WhereUser, KindPreference, true},
		{WhereUser, "convention", false},
		{WhereUser, "", false},
		{WhereFinalAnswer, KindPreference, false},
		{WhereToolLoop, KindPreference, false},
	} {
		if got := userPreference(Fact{Where: tc.where, Kind: tc.kind}); got != tc.want {
			t.Errorf("userPreference(where %q, kind %q) = %v, want %v", tc.where, tc.kind, got, tc.want)
		}
	}
}

// TestOverallUserPreferencesElsewhere: the user preferences' queries and
// hits are summed over the sessions and each rate is hits / its own
// queries; the table's footer says them, and says nothing when no
// preference was asked.
func TestOverallUserPreferencesElsewhere(t *testing.T) {
	r := &SessionsReport{Sessions: []SessionScore{
		{ID: "A", UserTurns: 1, UserPrefQueries: 2, UserPrefInProjectHits: 2, UserPrefNoProjectQueries: 2, UserPrefNoProjectHits: 1,
			UserPrefOtherProjectQueries: 4, UserPrefOtherProjectHits: 1},
		{ID: "B", UserTurns: 1, UserPrefQueries: 2, UserPrefInProjectHits: 1, UserPrefNoProjectQueries: 2, UserPrefNoProjectHits: 2,
			UserPrefOtherProjectQueries: 4, UserPrefOtherProjectHits: 4},
		{ID: "C", UserTurns: 1},
	}}
	r.overall(map[string]memory.Memory{}, nil, nil)
	o := r.Overall
	if o.UserPrefQueries != 4 || o.UserPrefInProjectHits != 3 || o.UserPrefInProjectRecallAt5 != 0.75 ||
		o.UserPrefNoProjectQueries != 4 || o.UserPrefNoProjectHits != 3 || o.UserPrefNoProjectRecallAt5 != 0.75 ||
		o.UserPrefOtherProjectQueries != 8 || o.UserPrefOtherProjectHits != 5 || o.UserPrefOtherProjectRecallAt5 != 5.0/8 {
		t.Errorf("overall user preferences: %+v", o)
	}
	if a := r.Sessions[0]; a.UserPrefNoProjectRecallAt5 != 0.5 || a.UserPrefOtherProjectRecallAt5 != 0.25 || a.UserPrefInProjectRecallAt5 != 1 {
		t.Errorf("session A's rates: %+v", a)
	}
	if c := r.Sessions[2]; c.UserPrefNoProjectRecallAt5 != 0 || c.UserPrefOtherProjectRecallAt5 != 0 {
		t.Errorf("session C asked nothing, rates %+v", c)
	}
	var table strings.Builder
	if err := r.WriteTable(&table); err != nil {
		t.Fatal(err)
	}
	want := "user preferences recalled outside their project: R@5 75.0% (4 queries) with no project, 62.5% (8 queries) from another session's project; 75.0% in their own (every preference's queries, an uncovered one's a miss)\n"
	if !strings.Contains(table.String(), want) {
		t.Errorf("table has no %q:\n%s", want, table.String())
	}
	r = &SessionsReport{Sessions: []SessionScore{{ID: "A", UserTurns: 1}}}
	r.overall(map[string]memory.Memory{}, nil, nil)
	table.Reset()
	if err := r.WriteTable(&table); err != nil || strings.Contains(table.String(), "user preferences") {
		t.Errorf("no preference asked, the table still says: %v\n%s", err, table.String())
	}
}

// validSet is a minimal valid set; mutate copies of it.
const validSet = `{"format":"memtray-sessions","version":1,"sessions":[{"id":"S1","agent":"claude-code","file":"a.jsonl","user_turns":1,
"facts":[{"id":"F1","where":"user","keys":[["x"]],"queries":["q"]}],"traps":[{"keys":[["y"]]}]}],"unrelated_prompts":["u"]}`

func TestParseSessionSet(t *testing.T) {
	if _, err := ParseSessionSet([]byte(validSet)); err != nil {
		t.Fatalf("valid set: %v", err)
	}
	for _, tc := range []struct {
		name, from, to, want string
	}{
		{"not JSON", validSet, "{", "unexpected EOF"},
		{"trailing data", validSet + "", validSet + "{}", "data after"},
		{"wrong format", `"memtray-sessions"`, `"other"`, "format"},
		{"newer version", `"version":1`, `"version":2`, "version 2"},
		{"no sessions", `"sessions":[{`, `"sessions":[],"x":[{`, "sessions"},
		{"no session id", `"id":"S1"`, `"id":""`, "no id"},
		{"no agent", `"agent":"claude-code"`, `"agent":" "`, "no agent"},
		{"no file", `"file":"a.jsonl"`, `"file":""`, "no file"},
		{"absolute file", `"file":"a.jsonl"`, `"file":"/etc/passwd"`, "relative"},
		{"negative turns", `"user_turns":1`, `"user_turns":-1`, "negative"},
		{"no fact id", `"id":"F1"`, `"id":""`, "no id"},
		{"unknown where", `"where":"user"`, `"where":"dream"`, "where"},
		{"no queries", `"queries":["q"]`, `"queries":[]`, "queries"},
		{"blank query", `"queries":["q"]`, `"queries":[" "]`, "query 1"},
		{"no keys", `"keys":[["x"]]`, `"keys":[]`, "key groups"},
		{"empty group", `"keys":[["x"]]`, `"keys":[[]]`, "alternatives"},
		{"blank alternative", `"keys":[["x"]]`, `"keys":[[""]]`, "blank"},
		{"bad trap", `"keys":[["y"]]`, `"keys":[]`, "trap 1"},
		{"blank unrelated prompt", `["u"]`, `[""]`, "unrelated prompt 1"},
		{"invalid UTF-8", `"q"`, "\"q\xff\"", "UTF-8"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data := strings.Replace(validSet, tc.from, tc.to, 1)
			if data == validSet {
				t.Fatalf("the mutation %q -> %q changed nothing", tc.from, tc.to)
			}
			_, err := ParseSessionSet([]byte(data))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want one containing %q", err, tc.want)
			}
		})
	}
	dup := strings.Replace(validSet, `"sessions":[{`, `"sessions":[{"id":"S1","agent":"a","file":"b","facts":[]},{`, 1)
	if _, err := ParseSessionSet([]byte(dup)); err == nil || !strings.Contains(err.Error(), "twice") {
		t.Errorf("duplicate session id: err = %v", err)
	}
}

func TestLoadSessionSetTestdata(t *testing.T) {
	set, err := LoadSessionSet(filepath.Join("testdata", "sessions", "set.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(set.Sessions) != 2 || len(set.UnrelatedPrompts) != 2 {
		t.Errorf("testdata set: %d sessions, %d unrelated prompts", len(set.Sessions), len(set.UnrelatedPrompts))
	}
}

func FuzzParseSessionSet(f *testing.F) {
	f.Add([]byte(validSet))
	f.Add([]byte(`{}`))
	f.Add([]byte(`{"sessions":[{"id":"a","agent":"b","file":"c","facts":[{"id":"f","where":"user","keys":[["k"]],"queries":["q"]}]}]}`))
	if data, err := os.ReadFile(filepath.Join("testdata", "sessions", "set.json")); err == nil {
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		set, err := ParseSessionSet(data)
		if err != nil {
			return
		}
		for _, s := range set.Sessions {
			for _, fact := range s.Facts {
				// A valid fact's keys can be evaluated; its own statement of
				// the keys covers it.
				var parts []string
				for _, g := range fact.Keys {
					parts = append(parts, g[0])
				}
				if !Covers(strings.Join(parts, " "), fact.Keys) {
					t.Fatalf("a text holding an alternative of every group does not cover %v", fact.Keys)
				}
			}
		}
	})
}
