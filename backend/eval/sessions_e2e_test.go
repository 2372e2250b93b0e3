package eval

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/memtray/memtray/backend/config"
)

// TestRunSessionsTestdata runs the tiny set of testdata/sessions through a
// real daemon: two synthetic Claude Code sessions. What the pipeline keeps
// may change; the figures must agree with each other and the set.
func TestRunSessionsTestdata(t *testing.T) {
	var msgs []string
	rep, err := RunSessions(context.Background(), filepath.Join("testdata", "sessions", "set.json"),
		SessionsOptions{TempDir: t.TempDir(), Progress: func(m string) { msgs = append(msgs, m) }})
	if err != nil {
		t.Fatal(err)
	}
	logTable(t, rep)
	if rep.Skipped != "" || len(rep.Sessions) != 2 || len(msgs) == 0 {
		t.Fatalf("report: skipped %q, %d sessions, progress %q", rep.Skipped, len(rep.Sessions), msgs)
	}
	o := rep.Overall
	if o.Sessions != 2 || o.SessionsSkipped != 0 || o.Facts != 6 || o.Traps != 1 || o.Queries != 8 || o.UserTurns != 4 || o.UnrelatedPrompts != 2 {
		t.Errorf("overall counts do not match the set: %+v", o)
	}
	// Two projects (kvstore, webshop), each asked both unrelated prompts.
	if o.UnrelatedInProject != 4 || o.UnrelatedInProjectEmpty > 4 || o.UnrelatedInProjectEmptyRate != ratio(o.UnrelatedInProjectEmpty, 4) {
		t.Errorf("unrelated prompts in the projects: %d asked, %d empty (%.2f), want 4 asked", o.UnrelatedInProject, o.UnrelatedInProjectEmpty, o.UnrelatedInProjectEmptyRate)
	}
	if o.Memories == 0 || o.Covered == 0 {
		t.Errorf("the daemon kept nothing of the sessions, or nothing covers a fact: %+v", o)
	}
	sumMem, sumCovered := 0, 0
	for _, s := range append(rep.Sessions, o.SessionScore) {
		if s.Covered > s.Facts || s.MemoriesCovering > s.Memories || s.QueryHits > s.Queries || s.TrapsStored > s.Traps ||
			s.TrapMemories > s.Memories || s.LengthP50 > s.LengthP90 || s.Exchanges == 0 {
			t.Errorf("%s: inconsistent figures: %+v", s.ID, s)
		}
		where := 0
		for _, c := range s.CoverageByWhere {
			where += c.Facts
		}
		if where != s.Facts || len(s.Uncovered) != s.Facts-s.Covered && s.ID != "" {
			t.Errorf("%s: by where %v, uncovered %v for %d of %d facts covered", s.ID, s.CoverageByWhere, s.Uncovered, s.Covered, s.Facts)
		}
		if s.ID != "" {
			sumMem += s.Memories
			sumCovered += s.Covered
			if s.Project != map[string]string{"S1": "kvstore", "S2": "webshop"}[s.ID] {
				t.Errorf("%s: recall project %q, want the project memtray gave its memories", s.ID, s.Project)
			}
		}
	}
	if sumCovered != o.Covered || o.Memories > sumMem {
		t.Errorf("overall covered %d (sessions %d), memories %d (sessions %d)", o.Covered, sumCovered, o.Memories, sumMem)
	}

	// --json's shape: the fields the issue names.
	data, err := json.Marshal(rep)
	if err != nil {
		t.Fatal(err)
	}
	var shape struct {
		Overall  map[string]any   `json:"overall"`
		Sessions []map[string]any `json:"sessions"`
	}
	if err := json.Unmarshal(data, &shape); err != nil {
		t.Fatal(err)
	}
	fields := []string{"facts", "covered", "coverage", "precision", "memories", "memories_per_turn", "traps", "traps_stored", "recall_at_5", "coverage_by_where"}
	for _, obj := range append(shape.Sessions, shape.Overall) {
		for _, f := range fields {
			if _, ok := obj[f]; !ok {
				t.Errorf("JSON object %v has no %q", obj["id"], f)
			}
		}
		byWhere, _ := obj["coverage_by_where"].(map[string]any)
		for _, w := range Wheres {
			c, _ := byWhere[w].(map[string]any)
			if _, ok := c["covered"]; !ok {
				t.Errorf("JSON object %v: coverage_by_where has no %s.covered", obj["id"], w)
			}
		}
	}
	for _, f := range []string{"unrelated_prompts", "unrelated_empty_rate"} {
		if _, ok := shape.Overall[f]; !ok {
			t.Errorf("overall has no %q", f)
		}
	}
	if shape.Sessions[0]["id"] != "S1" {
		t.Errorf("sessions[0].id = %v", shape.Sessions[0]["id"])
	}
	var table strings.Builder
	if err := rep.WriteTable(&table); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"overall", "S1", "S2", "coverage by where", "unrelated prompts"} {
		if !strings.Contains(table.String(), want) {
			t.Errorf("table has no %q:\n%s", want, table.String())
		}
	}
}

// TestRunSessionsUserPreferencesElsewhere runs testdata/sessions/prefs.json:
// a notes session in which the user states a preference of their own (never
// run git push) and the webshop session, whose user-stated rule is a
// convention of its project. The preference's two queries are asked again,
// as probes, with no project and from the webshop; memtray stores it as the
// user's, so recall reaches it from both, as it does in the notes project.
// The notes session's second preference (tabs) is said nowhere, so no
// memory covers it: its query is counted in every user-preference row, as
// a miss (the rows' query set is the labels', whatever the build covers).
// The webshop's convention is not asked elsewhere.
func TestRunSessionsUserPreferencesElsewhere(t *testing.T) {
	rep, err := RunSessions(context.Background(), filepath.Join("testdata", "sessions", "prefs.json"), SessionsOptions{TempDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	logTable(t, rep)
	n1, w1, o := rep.Sessions[0], rep.Sessions[1], rep.Overall
	if n1.Project != "notes" || w1.Project != "webshop" || n1.Covered != n1.Facts-1 || !slices.Equal(n1.Uncovered, []string{"F3"}) {
		t.Fatalf("the notes session: project %q (webshop %q), %d of %d facts covered, uncovered %v (want all but F3): %+v",
			n1.Project, w1.Project, n1.Covered, n1.Facts, n1.Uncovered, n1)
	}
	// Three queries (F2's two, the uncovered F3's one), counted with no
	// project once and from the one other project (webshop) once.
	if n1.UserPrefQueries != 3 || n1.UserPrefNoProjectQueries != 3 || n1.UserPrefOtherProjectQueries != 3 {
		t.Errorf("notes: user preference queries %d, with no project %d, from another project %d; want 3, 3, 3",
			n1.UserPrefQueries, n1.UserPrefNoProjectQueries, n1.UserPrefOtherProjectQueries)
	}
	if n1.UserPrefInProjectHits != 2 || n1.UserPrefNoProjectHits != 2 || n1.UserPrefOtherProjectHits != 2 || n1.UserPrefOtherProjectRecallAt5 != 2.0/3 {
		t.Errorf("notes: the user's own preference was not recalled everywhere: in its project %d/3, no project %d/3, from the webshop %d/3 (rate %.3f)",
			n1.UserPrefInProjectHits, n1.UserPrefNoProjectHits, n1.UserPrefOtherProjectHits, n1.UserPrefOtherProjectRecallAt5)
	}
	if w1.UserPrefQueries != 0 || w1.UserPrefNoProjectQueries != 0 || w1.UserPrefOtherProjectQueries != 0 {
		t.Errorf("webshop: a project convention was asked as a user preference: %+v", w1)
	}
	if o.UserPrefNoProjectQueries != 3 || o.UserPrefOtherProjectQueries != 3 || o.UserPrefNoProjectRecallAt5 != n1.UserPrefNoProjectRecallAt5 {
		t.Errorf("overall: %+v", o)
	}
	// The probes record nothing: every query of a covered fact was a hit
	// when probed and when asked (F3's, uncovered, is a miss), and the one
	// unrelated prompt got nothing.
	if o.QueryHits != o.Queries-1 || o.QueryHitsProbe != o.Queries-1 || o.UnrelatedEmpty != 1 {
		t.Errorf("overall recall %d/%d, probed %d, unrelated empty %d/1", o.QueryHits, o.Queries, o.QueryHitsProbe, o.UnrelatedEmpty)
	}
	data, err := json.Marshal(rep)
	if err != nil {
		t.Fatal(err)
	}
	var shape struct {
		Overall map[string]any `json:"overall"`
	}
	if err := json.Unmarshal(data, &shape); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"user_pref_queries", "user_pref_in_project_recall_at_5", "user_pref_no_project_queries",
		"user_pref_no_project_recall_at_5", "user_pref_other_project_queries", "user_pref_other_project_recall_at_5"} {
		if _, ok := shape.Overall[f]; !ok {
			t.Errorf("overall has no %q", f)
		}
	}
}

// TestRunSessionsSkips: an absent set, a set whose files are all absent,
// and sessions without a reader are skipped, not errors.
func TestRunSessionsSkips(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	absent := filepath.Join(dir, "nope.json")
	rep, err := RunSessions(ctx, absent, SessionsOptions{TempDir: dir})
	if err != nil || rep.Skipped != "skipped: "+absent+" not found" {
		t.Fatalf("absent set: %v, %+v", err, rep)
	}
	var table strings.Builder
	if err := rep.WriteTable(&table); err != nil || !strings.Contains(table.String(), "skipped: ") {
		t.Errorf("absent set's table: %q, %v", table.String(), err)
	}

	noFiles := filepath.Join(dir, "nofiles.json")
	writeFile(t, noFiles, `{"sessions":[{"id":"A","agent":"claude-code","file":"gone/a.jsonl","user_turns":1,
		"facts":[{"id":"F1","where":"user","keys":[["x"]],"queries":["q"]}]}]}`)
	rep, err = RunSessions(ctx, noFiles, SessionsOptions{TempDir: dir})
	if err != nil || !strings.HasPrefix(rep.Skipped, "skipped: ") || !strings.HasSuffix(rep.Skipped, "a.jsonl not found") {
		t.Fatalf("set without its files: %v, %+v", err, rep)
	}

	src, err := os.ReadFile(filepath.Join("testdata", "sessions", "webshop.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, "web.jsonl"), string(src))
	writeFile(t, filepath.Join(dir, "other.log"), "a session of an agent memtray cannot read\n")
	writeFile(t, filepath.Join(dir, "notes.aider.md"), "\n# aider chat started at 2025-03-02 10:00:00\n\n"+
		"#### Where does the notes app keep its search index?  \n\n"+
		"The search index lives in `var/index.sqlite`; it is rebuilt by `make reindex` whenever the schema changes.\n\n")
	mixed := filepath.Join(dir, "mixed.json")
	writeFile(t, mixed, `{"sessions":[
		{"id":"A","agent":"claude-code","file":"web.jsonl","user_turns":2,"facts":[{"id":"F1","where":"user","keys":[["stripe"]],"queries":["Can handlers call Stripe?"]}]},
		{"id":"B","agent":"no-such-agent","file":"other.log","user_turns":1,"facts":[{"id":"F1","where":"user","keys":[["x"]],"queries":["q"]}]},
		{"id":"C","agent":"claude-code","file":"missing.jsonl","user_turns":1,"facts":[{"id":"F1","where":"user","keys":[["x"]],"queries":["q"]}]},
		{"id":"D","agent":"aider","project":"notes","file":"notes.aider.md","user_turns":1,"facts":[{"id":"F1","where":"final-answer","keys":[["index.sqlite"]],"queries":["Where is the search index?"]}]}]}`)
	rep, err = RunSessions(ctx, mixed, SessionsOptions{TempDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Skipped != "" || rep.Overall.Sessions != 2 || rep.Overall.SessionsSkipped != 2 || rep.Overall.Facts != 2 {
		t.Errorf("mixed set: %+v", rep.Overall)
	}
	if !strings.Contains(rep.Sessions[1].Skipped, "reader missing") || !strings.Contains(rep.Sessions[2].Skipped, "not found") {
		t.Errorf("skip reasons: %q, %q", rep.Sessions[1].Skipped, rep.Sessions[2].Skipped)
	}
	// An Aider history whose location names no project gets the set's.
	if d := rep.Sessions[3]; d.Skipped != "" || d.Exchanges != 1 || d.Project != "notes" {
		t.Errorf("aider session: %+v", d)
	}
}

// TestRunSessionsBadSessionFile: a session file that is not of its agent's
// format is an error naming the session.
func TestRunSessionsBadSessionFile(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "bad.jsonl"), "not json\n")
	set := filepath.Join(dir, "set.json")
	writeFile(t, set, `{"sessions":[{"id":"A","agent":"claude-code","file":"bad.jsonl","user_turns":1,
		"facts":[{"id":"F1","where":"user","keys":[["x"]],"queries":["q"]}]}]}`)
	if _, err := RunSessions(context.Background(), set, SessionsOptions{TempDir: dir}); err == nil || !strings.Contains(err.Error(), "session A") {
		t.Errorf("err = %v, want one naming session A", err)
	}
}

func writeFile(t *testing.T, path, data string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestSessionsDevShared runs the shared labelled sessions (skipped when
// absent; set MEMTRAY_EVAL_LONG=1, it ingests real sessions).
func TestSessionsDevShared(t *testing.T) {
	if testing.Short() || os.Getenv("MEMTRAY_EVAL_LONG") == "" {
		t.Skip("set MEMTRAY_EVAL_LONG=1 to run the shared sessions")
	}
	for _, name := range []string{"eval/sessions-dev.json", "eval/sessions-dev-more.json"} {
		path := sharedFile(t, name)
		rep, err := RunSessions(context.Background(), path, SessionsOptions{TempDir: t.TempDir()})
		if err != nil {
			t.Fatal(err)
		}
		logTable(t, rep)
	}
}

// TestRunSessionsAfterSweep runs the tiny set with a day of the steward's
// hourly sweeps after it: the rows right after ingest stay what a run
// without sweeps gives, and the rows are measured again on the store the
// sweeps leave, asking the same queries (the second pass's recall sessions
// are its own: what the first pass gave is not withheld from it).
func TestRunSessionsAfterSweep(t *testing.T) {
	ctx := context.Background()
	set := filepath.Join("testdata", "sessions", "set.json")
	plain, err := RunSessions(ctx, set, SessionsOptions{TempDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	for _, apply := range [][]string{nil, {}, slices.Clone(config.StewardOps)} {
		rep, err := RunSessions(ctx, set, SessionsOptions{TempDir: t.TempDir(), SweepDays: 1, SweepApply: apply})
		if err != nil {
			t.Fatal(err)
		}
		logTable(t, rep)
		if !reflect.DeepEqual(rep.Overall, plain.Overall) {
			t.Errorf("apply %v: the rows after ingest moved:\n%+v\nwant\n%+v", apply, rep.Overall, plain.Overall)
		}
		a := rep.AfterSweep
		if a == nil || a.Sweep == nil {
			t.Fatalf("apply %v: no rows after the sweeps", apply)
		}
		if a.Sweep.Sweeps != 24 || a.Sweep.Days != 1 {
			t.Errorf("apply %v: %d sweeps over %d days, want 24 over 1", apply, a.Sweep.Sweeps, a.Sweep.Days)
		}
		wantApply := apply
		if apply == nil {
			wantApply = config.Default().Steward.AutoApply
		}
		if !slices.Equal(a.Sweep.Apply, wantApply) {
			t.Errorf("sweeps applied %v, want %v", a.Sweep.Apply, wantApply)
		}
		o := a.Overall
		if o.Facts != plain.Overall.Facts || o.Queries != plain.Overall.Queries || o.UnrelatedPrompts != plain.Overall.UnrelatedPrompts ||
			o.Memories > plain.Overall.Memories || o.Memories < plain.Overall.Memories-a.Sweep.Trashed {
			t.Errorf("apply %v: after the sweeps %+v (trashed %d), before %+v", apply, o, a.Sweep.Trashed, plain.Overall)
		}
		if plain.Overall.QueryHitsProbe > 0 && o.QueryHitsProbe == 0 {
			t.Errorf("apply %v: no probe hit after the sweeps: the first pass's recall withheld the second's answers", apply)
		}
	}
}

// TestRunSessionsSweepUse: the simulated implicit feedback reinforces
// the first pass's right memories once it is measured (its rows do not
// move); tokens reinforces no more than gold.
func TestRunSessionsSweepUse(t *testing.T) {
	ctx := context.Background()
	set := filepath.Join("testdata", "sessions", "set.json")
	plain, err := RunSessions(ctx, set, SessionsOptions{TempDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	used := map[string]int{}
	for _, use := range []string{UseGold, UseTokens} {
		rep, err := RunSessions(ctx, set, SessionsOptions{TempDir: t.TempDir(), SweepDays: 1, SweepApply: []string{}, SweepUse: use})
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(rep.Overall, plain.Overall) {
			t.Errorf("%s: the rows after ingest moved:\n%+v\nwant\n%+v", use, rep.Overall, plain.Overall)
		}
		if rep.AfterSweep == nil || rep.AfterSweep.Sweep == nil || rep.AfterSweep.Sweep.Use != use {
			t.Fatalf("%s: no sweep summary: %+v", use, rep.AfterSweep)
		}
		used[use] = rep.AfterSweep.Sweep.Used
	}
	if plain.Overall.QueryHits > 0 && used[UseGold] < plain.Overall.QueryHits {
		t.Errorf("gold reinforced %d, want at least the first pass's %d hits", used[UseGold], plain.Overall.QueryHits)
	}
	if used[UseTokens] > used[UseGold] {
		t.Errorf("tokens reinforced %d, more than gold's %d", used[UseTokens], used[UseGold])
	}
	if _, err := RunSessions(ctx, set, SessionsOptions{TempDir: t.TempDir(), SweepDays: 1, SweepUse: "all"}); err == nil {
		t.Error("sweep use all: no error")
	}
}
