package ingest

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/memtray/memtray/backend/memory"
	"github.com/memtray/memtray/backend/store"
)

// twoTurns is a session of two turns, each a prompt followed by the
// model's texts.
func twoTurns(id string, first, second []string) []Turn {
	var exs []memory.Exchange
	for i, tt := range [][]string{first, second} {
		for _, ex := range sessionOf(id, tt[0], tt[1:]...) {
			ex.Turn, ex.UserTurns = len(exs)+1, i+1 // a session counts its exchanges from 1 (memory.Exchange.Turn)
			exs = append(exs, ex)
		}
	}
	return GroupTurns(exs)
}

// allMemories returns every memory of the store, superseded ones too.
func allMemories(t *testing.T, st *store.Store) []memory.Memory {
	t.Helper()
	var out []memory.Memory
	if err := st.Iterate(context.Background(), store.Filter{IncludeSuperseded: true}, func(m memory.Memory) error {
		out = append(out, m)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestSupersedeRestatedAcrossTurns: a memory turn 1 stored that turn 2
// says again (names every load-bearing token of it, about the same
// subject) is superseded by turn 2's memory, in batch ingest and live
// capture alike; one turn 2 says with a name left out stands.
func TestSupersedeRestatedAcrossTurns(t *testing.T) {
	first := []string{"why does the nightly export fail?", "Let me look at the job.",
		"The nightly export fails because `export/job.go` opens `reports.db` without `busy_timeout`, so its writes collide with the `vacuum` cron entry."}
	for _, tc := range []struct {
		name     string
		second   string
		restated bool
	}{
		{"restated", "Confirmed with the lock trace from the staging host: `export/job.go` opens `reports.db` without `busy_timeout`, and the `vacuum` cron entry holds the write lock for minutes, so the nightly export fails; `busy_timeout=5000` in the DSN fixes it.", true},
		{"a name left out", "Confirmed with the lock trace from the staging host: `export/job.go` opens `reports.db` without `busy_timeout`, and another cron entry holds the write lock for minutes, so the nightly export fails; `busy_timeout=5000` in the DSN fixes it.", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			turns := twoTurns("s-"+strings.ReplaceAll(tc.name, " ", "-"), first,
				[]string{"does the export still fail?", "Let me read the lock trace.", tc.second})
			if len(turns) != 2 {
				t.Fatalf("%d turns", len(turns))
			}
			batch, live, _, _ := replayBoth(t, turns)
			for name, f := range map[string]*fixture{"batch": batch, "live": live} {
				ms := allMemories(t, f.st)
				i1 := slices.IndexFunc(ms, func(m memory.Memory) bool { return strings.Contains(m.Text, "its writes collide") })
				i2 := slices.IndexFunc(ms, func(m memory.Memory) bool { return strings.Contains(m.Text, "lock trace") })
				if i1 < 0 || i2 < 0 {
					t.Fatalf("%s: turn 1 or turn 2 stored no memory of its own: %+v", name, ms)
				}
				m1, m2 := ms[i1], ms[i2]
				if m2.Superseded() {
					t.Fatalf("%s: turn 2's memory is superseded by %s", name, m2.SupersededBy)
				}
				switch {
				case tc.restated && (m1.SupersededBy != m2.ID || m2.Supersedes != m1.ID):
					t.Fatalf("%s: turn 1's memory superseded by %q (want %s), turn 2's supersedes %q", name, m1.SupersededBy, m2.ID, m2.Supersedes)
				case !tc.restated && m1.Superseded():
					t.Fatalf("%s: turn 1's memory superseded by %s, but turn 2 left a name of it out", name, m1.SupersededBy)
				}
			}
		})
	}
}

// TestUnrestate: when a memory that superseded an earlier one as its
// restatement is revised itself, the earlier one stands again.
func TestUnrestate(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, nil)
	ids := map[string]string{}
	for _, text := range []string{"The `sync/v2` importer batches 500 rows per request.", "The `sync/v2` importer batches 500 rows per request and retries twice."} {
		d, err := f.p.Write(ctx, WriteRequest{Memory: memory.Memory{Text: text, Project: "shop"}})
		if err != nil {
			t.Fatal(err)
		}
		ids[text[len(text)-8:]] = d.Memory.ID
	}
	old, next := ids["request."], ids["s twice."]
	if ok, err := f.p.supersede(ctx, old, next); err != nil || !ok {
		t.Fatalf("supersede: %v %v", ok, err)
	}
	restated := map[string][]string{next: {old}}
	e := &recentTurn{restated: restated}
	if err := f.p.unrestate(ctx, next, e); err != nil {
		t.Fatal(err)
	}
	ms, err := f.st.GetMany(ctx, []string{old, next})
	if err != nil {
		t.Fatal(err)
	}
	if mo, mn := ms[old], ms[next]; mo.Superseded() || mn.Supersedes != "" || len(restated) != 0 || !e.untested[old] {
		t.Fatalf("old superseded by %q, next supersedes %q, restated %v, untested %v", mo.SupersededBy, mn.Supersedes, restated, e.untested)
	}
}

// TestRestatedRetested: the restatement test weighs only the pairs with a
// member it has not weighed yet, so a memory whose standing changed is
// weighed again: one a revision let stand again (unrestate), one a later
// distillation of an earlier turn stored (settle). Either is superseded by
// a later memory that restates it, as a test of every pair supersedes it.
func TestRestatedRetested(t *testing.T) {
	ctx := context.Background()
	const (
		a     = "The nightly export fails because `export/job.go` opens `reports.db` without `busy_timeout`, so its writes collide with the `vacuum` cron entry."
		first = "Checked on the staging host: `export/job.go` opens `reports.db` without `busy_timeout`, and the `vacuum` cron entry holds the write lock for minutes, so the nightly export fails."
		next  = "Confirmed with the lock trace: the nightly export fails since `export/job.go` opens `reports.db` without `busy_timeout` while the `vacuum` cron entry writes to it."
		other = "The `billing` worker retries its calls three times because the upstream API of the payment provider rate-limits bursts."
	)
	for _, b := range []string{first, next} {
		ca, cb := newCandidate(a, OriginToolLoop, ClassFinding, true, ""), newCandidate(b, OriginToolLoop, ClassFinding, true, "")
		if !mayRestate(ca, cb) || !namesAll(lower(b), namedTokens(a)) {
			t.Fatalf("fixture: %q does not restate %q", b, a)
		}
	}
	from := func(texts ...string) map[string]keptFrom {
		out := map[string]keptFrom{}
		for _, text := range texts {
			out[text] = keptFrom{origin: OriginToolLoop, class: ClassFinding}
		}
		return out
	}
	for _, tc := range []string{"a revision let it stand again", "a later distillation stored the restating memory"} {
		t.Run(tc, func(t *testing.T) {
			f := newFixture(t, nil)
			ids := map[string]string{}
			for _, text := range []string{a, first, next, other} {
				d, err := f.p.Write(ctx, WriteRequest{Memory: memory.Memory{Text: text, Project: "shop"}})
				if err != nil {
					t.Fatal(err)
				}
				ids[text] = d.Memory.ID
			}
			turns := []recentTurn{
				{turn: Turn{Turn: 1}, kept: map[string]string{a: ids[a]}, from: from(a), restated: map[string][]string{}},
				{turn: Turn{Turn: 2}, kept: map[string]string{first: ids[first]}, from: from(first), restated: map[string][]string{}},
				{turn: Turn{Turn: 3}, kept: map[string]string{other: ids[other]}, from: from(other), restated: map[string][]string{}},
			}
			dec := &memory.Decision{}
			switch tc {
			case "a revision let it stand again":
				// Turn 2 stored both restatements; the first superseded a.
				turns[1].kept[next], turns[1].from[next] = ids[next], from(next)[next]
				if ok, err := f.p.supersede(ctx, ids[a], ids[first]); err != nil || !ok {
					t.Fatalf("supersede: %v %v", ok, err)
				}
				turns[1].restated[ids[first]] = []string{ids[a]}
				// Turn 3 revises the first restatement.
				if ok, err := f.p.supersede(ctx, ids[first], ids[other]); err != nil || !ok {
					t.Fatalf("supersede: %v %v", ok, err)
				}
				if err := f.p.unrestate(ctx, ids[first], &turns[1]); err != nil {
					t.Fatal(err)
				}
			case "a later distillation stored the restating memory":
				// Turn 2 is distilled again and keeps next now, stored as a
				// new memory (the one written above, by its text).
				e := &turns[1]
				e.turn = GroupTurns(sessionOf("s", "why does the export fail?", "Let me look.", next))[0]
				if _, err := f.p.settle(ctx, Turn{Turn: 3}, e, nil, []Candidate{newCandidate(first, OriginToolLoop, ClassFinding, true, ""), newCandidate(next, OriginToolLoop, ClassFinding, true, "")}, nil, 0, dec); err != nil {
					t.Fatal(err)
				}
				if e.kept[next] == "" {
					t.Fatalf("settle stored no memory for the statement kept now: %v", e.kept)
				}
				ids[next] = e.kept[next]
			}
			turns[2].markUntested(ids[other])
			if err := f.p.supersedeRestated(ctx, Turn{SessionID: "s", Turn: 3}, turns, dec); err != nil {
				t.Fatal(err)
			}
			ms, err := f.st.GetMany(ctx, []string{ids[a]})
			if err != nil {
				t.Fatal(err)
			}
			if got := ms[ids[a]].SupersededBy; got != ids[next] {
				t.Fatalf("the restated memory is superseded by %q, want %q (the restatement that stands)", got, ids[next])
			}
			for i, rt := range turns {
				if len(rt.untested) != 0 {
					t.Errorf("turn %d: untested marks left: %v", i+1, rt.untested)
				}
			}
		})
	}
}

// Words the synthetic long session draws its findings from, so that no
// two turns' findings are near-duplicates (dedup would join them).
var (
	benchParts  = []string{"billing", "search", "invoice", "upload", "auth", "report", "ledger", "export", "mailer", "scheduler", "thumbnail", "webhook", "quota", "audit", "tenant", "pricing", "sitemap"}
	benchCauses = []string{"the upstream API rate-limits bursts", "the Postgres pool holds ten connections", "the S3 client times out after 30 s", "Redis evicts keys under memory pressure", "the CDN caches 404 answers", "the cron runner overlaps on slow days", "the JSON decoder rejects trailing commas", "the TLS handshake to the vendor is slow"}
	benchTools  = []string{"retries", "batches", "throttles", "memoizes", "shards", "debounces", "queues"}
)

// benchFinding is turn k's finding: a cause, a file and a setting of its
// own.
func benchFinding(k int) string {
	part, cause, verb := benchParts[k%len(benchParts)], benchCauses[(k/3)%len(benchCauses)], benchTools[(k/5)%len(benchTools)]
	return fmt.Sprintf("The `%s_%d` worker %s its calls because %s; `config/%s_%d.exs` sets `max_attempts` to %d.", part, k, verb, cause, part, k, 3+k%7)
}

// sessionTurns is a session of n turns captured live, numbered from
// from on: each turn's tool loop finds something of its own (by its
// number), and every fourth turn's final answer says the finding of the
// turn before it again (a restatement across turns, superseding it).
func sessionTurns(id string, from, n int) []Turn {
	var exs []memory.Exchange
	for k := range n {
		g := from + k
		part := benchParts[g%len(benchParts)]
		final := fmt.Sprintf("Done. The `%s_%d` worker now logs each attempt in `lib/app/%s_%d.ex`.", part, g, part, g)
		if k%4 == 3 {
			final = "Confirmed with the staging logs of this morning: " + benchFinding(g-1)
		}
		texts := []string{fmt.Sprintf("Let me read `lib/app/%s_%d.ex` and its tests.", part, g), benchFinding(g), final}
		for _, ex := range sessionOf(id, fmt.Sprintf("why does the %s worker %d fail at night?", part, g), texts...) {
			ex.Turn, ex.UserTurns = len(exs)+1, k+1
			exs = append(exs, ex)
		}
	}
	return GroupTurns(exs)
}

// TestSessionTurnsFixture: the long session of the benchmark stores
// memories of each turn and supersedes the restated ones, so
// BenchmarkSessionTurns measures the restatement test at work.
func TestSessionTurnsFixture(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, nil)
	turns := sessionTurns("fixture", 0, 16)
	if len(turns) != 16 {
		t.Fatalf("%d turns, want 16", len(turns))
	}
	for _, tn := range turns {
		if _, _, err := f.p.ProcessTurn(ctx, tn, nil, SessionState{}); err != nil {
			t.Fatal(err)
		}
	}
	superseded := 0
	ms := allMemories(t, f.st)
	for _, m := range ms {
		if m.Superseded() {
			superseded++
		}
	}
	if len(ms) < 24 || superseded < 3 {
		t.Fatalf("%d memories, %d superseded; want at least 24, and 3 superseded (restated by every fourth turn; one restatement is a duplicate)", len(ms), superseded)
	}
}

// BenchmarkSessionTurns measures the turns of live sessions (the pipeline
// remembers each session's recent turns and weighs what a new one
// restates of them): 128 turns per op, as 16 sessions of 8 turns, 4 of 32
// or one of 128, every turn's statements its own, so the store grows
// alike and only the session's length differs. A cost that grows with
// what the session said before shows as ns/turn growing with it.
func BenchmarkSessionTurns(b *testing.B) {
	const total = 128
	for _, n := range []int{8, 32, 128} {
		b.Run(fmt.Sprintf("turns=%d", n), func(b *testing.B) {
			ctx := context.Background()
			f := newFixture(b, nil)
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				for s := range total / n {
					for _, tn := range sessionTurns(fmt.Sprintf("long-%d-%d", i, s), s*n, n) {
						if _, _, err := f.p.ProcessTurn(ctx, tn, nil, SessionState{}); err != nil {
							b.Fatal(err)
						}
					}
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*total), "ns/turn")
		})
	}
}

// TestRevisedWhileRestated: a memory a later turn revises while a later
// memory supersedes it as its restatement stays revised when that
// restatement is revised in turn (unrestate): it does not stand again.
func TestRevisedWhileRestated(t *testing.T) {
	ctx := context.Background()
	const (
		a     = "The nightly export fails because `export/job.go` opens `reports.db` without `busy_timeout`, so its writes collide with the `vacuum` cron entry."
		first = "Checked on the staging host: `export/job.go` opens `reports.db` without `busy_timeout`, and the `vacuum` cron entry holds the write lock for minutes, so the nightly export fails."
		fix   = "The nightly export no longer collides with the cron entry: `busy_timeout=5000` is set in the DSN of `reports.db`."
		other = "The `billing` worker retries its calls three times because the upstream API of the payment provider rate-limits bursts."
	)
	f := newFixture(t, nil)
	ids := map[string]string{}
	for _, text := range []string{a, first, fix, other} {
		d, err := f.p.Write(ctx, WriteRequest{Memory: memory.Memory{Text: text, Project: "shop"}})
		if err != nil {
			t.Fatal(err)
		}
		ids[text] = d.Memory.ID
	}
	from := func(text string) map[string]keptFrom {
		return map[string]keptFrom{text: {origin: OriginToolLoop, class: ClassFinding}}
	}
	turns := []recentTurn{
		{turn: Turn{Turn: 1}, kept: map[string]string{a: ids[a]}, from: from(a), restated: map[string][]string{}},
		{turn: Turn{Turn: 2}, kept: map[string]string{first: ids[first]}, from: from(first), restated: map[string][]string{ids[first]: {ids[a]}}},
	}
	if ok, err := f.p.supersede(ctx, ids[a], ids[first]); err != nil || !ok {
		t.Fatalf("supersede: %v %v", ok, err)
	}
	// Turn 3 revises what turn 1 said, and stores the revising statement;
	// turn 1's memory is superseded already, as restated by turn 2's.
	dec := &memory.Decision{Candidates: []memory.CandidateVerdict{{Kept: true, MemoryID: ids[fix]}}}
	now := []Candidate{{Text: a, Reason: "revised later: " + fix}}
	cands := []Candidate{newCandidate(fix, OriginToolLoop, ClassFinding, true, "")}
	if _, err := f.p.settle(ctx, Turn{SessionID: "s", Turn: 3}, &turns[0], turns[1:], now, cands, 0, dec); err != nil {
		t.Fatal(err)
	}
	// Turn 4 revises turn 2's restatement.
	if ok, err := f.p.supersede(ctx, ids[first], ids[other]); err != nil || !ok {
		t.Fatalf("supersede: %v %v", ok, err)
	}
	if err := f.p.unrestate(ctx, ids[first], &turns[1]); err != nil {
		t.Fatal(err)
	}
	ms, err := f.st.GetMany(ctx, []string{ids[a]})
	if err != nil {
		t.Fatal(err)
	}
	if m := ms[ids[a]]; !m.Superseded() {
		t.Fatalf("the memory turn 3 revised stands again once its restatement is revised")
	}
}

// TestRestatedByForm: a later turn's memory supersedes an earlier one as
// its restatement only when it states at least what the earlier one
// states: the rules the earlier one states as rules (statesRules: a
// report of one run of a command is no restatement of the rule for
// using it), and the user's words, or what the user taught, in the same
// voice (sameVoice: the model's narration and an instruction file do
// not supersede the user's words).
func TestRestatedByForm(t *testing.T) {
	const (
		userRule = "Work on bead spotter-4te. Run `bd show spotter-4te` to see the issue details and `bd ready` to find available subtasks."
		report   = "`bd show spotter-4te` revealed an epic with six subtasks of the tracing work, and `bd ready` showed 8 ready issues, with spotter-4te.1 the first one to claim for the issue details."
		restated = "Run `bd show spotter-4te` to see the issue details of the tracing epic and `bd ready` to find available subtasks; claim one with `bd update` before starting it."
		seedRule = "Run `make seed` to load the fixtures of the `billing` schema into the local `shop_dev` database."
		seedRun  = "`make seed` loaded the fixtures of the `billing` schema into the local `shop_dev` database: 40 rows in 3 tables."
		seedLint = "Always run `make seed` before the tests: it loads the fixtures of the `billing` schema into the local `shop_dev` database."
		fact     = "The `billing` worker retries its calls three times because the upstream API of the payment provider rate-limits bursts."
		factToo  = "Confirmed in the logs: the `billing` worker retries its calls three times, since the upstream API of the payment provider rate-limits bursts."
	)
	type said struct {
		text, origin string
		taught       bool
	}
	for _, tc := range []struct {
		name          string
		earlier, next said
		superseded    bool
	}{
		{"the user's command rule, a summary's report of one run", said{userRule, OriginUser, false}, said{report, OriginSummary, false}, false},
		{"the user's command rule, the model saying the rule again", said{userRule, OriginUser, false}, said{restated, OriginFinal, false}, false},
		{"the user's command rule, an instruction file saying it again", said{userRule, OriginUser, false}, said{restated, OriginInstruction, false}, false},
		{"the user's command rule, the user saying it again", said{userRule, OriginUser, false}, said{restated, OriginUser, false}, true},
		{"what the user taught, the model's own rule", said{seedRule, OriginFinal, true}, said{seedLint, OriginFinal, false}, false},
		{"what the user taught, taught again", said{seedRule, OriginFinal, true}, said{seedLint, OriginFinal, true}, true},
		{"the model's command rule, a report of one run", said{seedRule, OriginFinal, false}, said{seedRun, OriginToolLoop, false}, false},
		{"the model's command rule, said again as a rule", said{seedRule, OriginFinal, false}, said{seedLint, OriginToolLoop, false}, true},
		{"a finding, said again", said{fact, OriginToolLoop, false}, said{factToo, OriginFinal, false}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			f := newFixture(t, nil)
			ids := map[string]string{}
			for _, text := range []string{tc.earlier.text, tc.next.text} {
				vecs, err := f.emb.Embed(ctx, []string{text})
				if err != nil {
					t.Fatal(err)
				}
				m, err := f.st.Put(ctx, memory.Memory{Text: text, Project: "shop", Embedding: vecs[0]}) // as two turns stored them, each its own memory
				if err != nil {
					t.Fatal(err)
				}
				ids[text] = m.ID
			}
			turn := func(n int, s said) recentTurn {
				return recentTurn{turn: Turn{Turn: n}, kept: map[string]string{s.text: ids[s.text]},
					from: map[string]keptFrom{s.text: {origin: s.origin, class: ClassFinding, taught: s.taught}}, restated: map[string][]string{}}
			}
			turns := []recentTurn{turn(1, tc.earlier), turn(2, tc.next)}
			turns[1].markUntested(ids[tc.next.text])
			if err := f.p.supersedeRestated(ctx, Turn{SessionID: "s", Turn: 2}, turns, &memory.Decision{}); err != nil {
				t.Fatal(err)
			}
			ms, err := f.st.GetMany(ctx, []string{ids[tc.earlier.text]})
			if err != nil {
				t.Fatal(err)
			}
			if got := ms[ids[tc.earlier.text]].SupersededBy == ids[tc.next.text]; got != tc.superseded {
				t.Fatalf("superseded: %v, want %v", got, tc.superseded)
			}
		})
	}
}

// TestDropRestatedByForm: within a turn too, a report of one run of a
// command does not restate the rule for using it (statesRules), and the
// rule said again as a rule does.
func TestDropRestatedByForm(t *testing.T) {
	const (
		rule  = "Run `make seed` to load the fixtures of the `billing` schema into the local `shop_dev` database."
		run   = "`make seed` loaded the fixtures of the `billing` schema into the local `shop_dev` database: 40 rows in 3 tables."
		again = "Always run `make seed` before the tests: it loads the fixtures of the `billing` schema into the local `shop_dev` database."
	)
	for _, tc := range []struct {
		later string
		kept  bool
	}{{run, true}, {again, false}} {
		cands := []Candidate{newCandidate(rule, OriginFinal, ClassFinding, true, ""), newCandidate(tc.later, OriginFinal, ClassFinding, true, "")}
		dropRestated(cands)
		if cands[0].Keep != tc.kept || !cands[1].Keep {
			t.Errorf("later %q: the rule kept %v (%s), want %v; the later kept %v", tc.later, cands[0].Keep, cands[0].Reason, tc.kept, cands[1].Keep)
		}
	}
}
