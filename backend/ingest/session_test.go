package ingest

import (
	"context"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
	"testing"
	"unsafe"

	"github.com/memtray/memtray/backend/memory"
	"github.com/memtray/memtray/backend/store"
)

// correctedSession is three turns of one session: turn 1 states a cause,
// turn 2 something unrelated, turn 3 corrects turn 1.
func correctedSession(id string, keepRevision bool) []Turn {
	fix := "Actually the `payments/retry.go` backoff was not the cause: `TestCheckout` fails because the `orders/lock.go` mutex is held across the webhook call, so the handler waits for the 30 s lock timeout."
	if !keepRevision {
		fix = "The `TestCheckout` failure still shows up with the `payments/retry.go` backoff disabled."
	}
	return threeTurns(id,
		[]string{"why is TestCheckout flaky?", "Let me look at the test.", "The flaky `TestCheckout` failure comes from the `payments/retry.go` backoff, which sleeps on the real clock instead of the injected `Clock`."},
		[]string{"it still fails sometimes", "Let me rerun it with -count=50.", fix})
}

// undoneSession is three turns of one session: turn 1 states what a
// config flag does, turn 2 something unrelated, turn 3 undoes the flag:
// the model reports removing it (how), in a statement of its own or in
// passing, or the user asks for its removal.
func undoneSession(id, how string) []Turn {
	third := map[string][]string{
		"report":  {"we no longer need the old importer", "Let me check where the flag is read.", "I removed the `legacy_sync` flag from `config/app.toml`; the importer now always calls the `sync/v2` endpoint with its batch size of 500."},
		"passing": {"ok, go ahead", "Let me edit the config.", "Done, I removed the `legacy_sync` flag."},
		"request": {"Remove the `legacy_sync` flag from `config/app.toml`.", "Let me look at the importer.", "Done."},
	}[how]
	return threeTurns(id,
		[]string{"what does legacy_sync do?", "Let me read the config.", "The `legacy_sync` flag in `config/app.toml` switches the importer to the old `sync/v1` endpoint, which ignores the batch size."},
		third)
}

// threeTurns is a session of turn 1, an unrelated turn 2 and turn 3,
// each a prompt followed by the model's texts.
func threeTurns(id string, first, third []string) []Turn {
	var exs []memory.Exchange
	for i, tt := range [][]string{
		first,
		{"where is the API documented?", "The `docs/api.md` page lists every endpoint of the shop with its request schema and error codes."},
		third,
	} {
		for _, ex := range sessionOf(id, tt[0], tt[1:]...) {
			ex.Turn, ex.UserTurns = len(exs)+1, i+1 // a session counts its exchanges from 1 (memory.Exchange.Turn)
			exs = append(exs, ex)
		}
	}
	return GroupTurns(exs)
}

// liveTexts lists the texts of the memories recall sees, sorted.
func liveTexts(t *testing.T, st *store.Store) []string {
	t.Helper()
	var out []string
	if err := st.Iterate(context.Background(), store.Filter{}, func(m memory.Memory) error {
		if !m.Superseded() {
			out = append(out, m.Text)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	slices.Sort(out)
	return out
}

// replayBoth distils a session's turns twice, each into its own store:
// as batch ingest does (every turn knowing the session's later texts, the
// session ended) and as live capture does (turn by turn, nothing later
// known). It returns both fixtures, the decision live capture made for
// each turn, and the texts both stores leave standing (liveTexts), after
// failing the test when they differ: live capture stores what ingest
// stores.
func replayBoth(t *testing.T, turns []Turn) (batch, live *fixture, decs []memory.Decision, texts []string) {
	t.Helper()
	return replayBothEach(t, turns, nil)
}

// replayBothEach is replayBoth calling each, when not nil, after live
// capture decides each turn i (dec), before the next turn: a test acts
// there as the user would between turns (rates a memory, ...).
func replayBothEach(t *testing.T, turns []Turn, each func(i int, live *fixture, dec memory.Decision)) (batch, live *fixture, decs []memory.Decision, texts []string) {
	t.Helper()
	ctx := context.Background()
	batch, live = newFixture(t, nil), newFixture(t, nil)
	for i, tn := range turns {
		if _, _, err := batch.p.ProcessTurn(ctx, tn, LaterTexts(turns[i+1:], tn.SessionID), SessionState{Ended: true}); err != nil {
			t.Fatal(err)
		}
		dec, _, err := live.p.ProcessTurn(ctx, tn, nil, SessionState{})
		if err != nil {
			t.Fatal(err)
		}
		decs = append(decs, dec)
		if each != nil {
			each(i, live, dec)
		}
	}
	want, got := liveTexts(t, batch.st), liveTexts(t, live.st)
	if !slices.Equal(want, got) {
		t.Fatalf("live store differs from batch:\nbatch %q\nlive  %q", want, got)
	}
	return batch, live, decs, got
}

// TestReviseEarlierTurns: a session distilled turn by turn as it happens
// (live: later turns unknown) ends with the memories of the same session
// distilled knowing every turn (batch): the statement of turn 1 that turn
// 3 corrects (a revision cue) or undoes (evidence.go's undo check: a
// removal reported, or asked for by the user) is superseded by turn 3's
// kept statement, or trashed when turn 3 kept none of its own.
func TestReviseEarlierTurns(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name       string
		turns      []Turn
		gone       string // what turn 1 said that must not be left standing
		superseded bool
	}{
		{"superseded", correctedSession("s-superseded", true), "sleeps on the real clock", true},
		{"trashed", correctedSession("s-trashed", false), "sleeps on the real clock", false},
		{"undone-reported", undoneSession("s-undone-reported", "report"), "old `sync/v1` endpoint", true},
		{"undone-in-passing", undoneSession("s-undone-in-passing", "passing"), "old `sync/v1` endpoint", false},
		{"undone-asked", undoneSession("s-undone-asked", "request"), "old `sync/v1` endpoint", false}, // the request is the turn's work, not a memory: trashed
	} {
		t.Run(tc.name, func(t *testing.T) {
			turns := tc.turns
			if len(turns) != 3 {
				t.Fatalf("%d turns", len(turns))
			}
			_, live, decs, got := replayBoth(t, turns)
			first, last := decs[0], decs[len(decs)-1]
			if !slices.ContainsFunc(first.Candidates, func(c memory.CandidateVerdict) bool { return c.Kept && strings.Contains(c.Text, tc.gone) }) {
				t.Fatalf("live turn 1 did not store %q: %+v", tc.gone, first.Candidates)
			}
			if len(got) == 0 || slices.ContainsFunc(got, func(s string) bool { return strings.Contains(s, tc.gone) }) {
				t.Fatalf("store %q", got)
			}
			var rev *memory.CandidateVerdict
			for i, c := range last.Candidates {
				if c.Origin == OriginEarlier {
					rev = &last.Candidates[i]
				}
			}
			if rev == nil || rev.MemoryID == "" || !strings.Contains(last.Reason, "revised 1 memories") {
				t.Fatalf("turn 3 decision does not show the revision: %q %+v", last.Reason, last.Candidates)
			}
			// Turn 3 is the user's third prompt, whatever its first
			// exchange's number (4: turn 2 has a tool-loop iteration).
			if want := "revised in turn 3: "; turns[2].UserTurns != 3 || turns[2].Turn == 3 || !strings.HasPrefix(rev.Reason, want) {
				t.Fatalf("revision %q (exchange %d), want it to name the turn as the user counts it (%q)", rev.Reason, turns[2].Turn, want)
			}
			trash, err := live.st.Trash(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if tc.superseded {
				if !strings.Contains(rev.Reason, "superseded by") || len(trash) != 0 {
					t.Fatalf("revision %+v, trash %d", rev, len(trash))
				}
				old, err := live.st.Get(ctx, rev.MemoryID)
				if err != nil || old.SupersededBy == "" {
					t.Fatalf("old memory %+v, %v", old, err)
				}
			} else if !strings.Contains(rev.Reason, "trash") || len(trash) != 1 || trash[0].Memory.ID != rev.MemoryID {
				t.Fatalf("revision %+v, trash %+v", rev, trash)
			}
		})
	}
}

// TestReviseEarlierTurnKeepsTheRest: a memory that joined two
// statements of turn 1 (two paragraphs of its answer), one of which turn 3
// corrects, is not left standing live; the other statement is stored, as
// batch ingest, which drops the corrected one before joining, stores it.
// Revising the joined memory as a whole (its subject is both statements')
// lost the statement nothing corrected.
func TestReviseEarlierTurnKeepsTheRest(t *testing.T) {
	turns := threeTurns("s-joined",
		[]string{"why is the nightly import slow?", "Let me read the importer.",
			"The importer holds the `db/pool.go` connection for the whole batch instead of per row.\n\nThe `sync/v2` endpoint caps one request at 500 records, so a nightly job makes about 40 requests."},
		[]string{"it is still slow", "Let me profile the import.",
			"Actually the `db/pool.go` connection is released after every row; the time goes into the `index/rebuild.go` pass that runs after the import."})
	_, _, decs, got := replayBoth(t, turns)
	if !slices.ContainsFunc(decs[0].Candidates, func(c memory.CandidateVerdict) bool {
		return c.Kept && strings.Contains(c.Text, "whole batch") && strings.Contains(c.Text, "500 records")
	}) {
		t.Fatalf("live turn 1 did not join its two statements: %+v", decs[0].Candidates)
	}
	if !slices.ContainsFunc(got, func(s string) bool { return strings.Contains(s, "500 records") && !strings.Contains(s, "whole batch") }) {
		t.Fatalf("both kept %q: want the statement turn 3 does not correct, alone", got)
	}
}

// TestLiveTurnContinued: a turn the agent carries on after its Stop (a
// background task's notification came in: the session file's next read
// begins with tool-loop responses) is one turn for batch ingest. Live, the
// continuation is taken into the turn it goes on, which is distilled
// again with it: a statement the continuation restates is stored once, in
// its settled version, as batch stores it, not once per read.
func TestLiveTurnContinued(t *testing.T) {
	ctx := context.Background()
	const id = "s-continued"
	turn1 := sessionOf(id, "why is the ledger import slow?", "Let me time the writer.",
		"The `ledger/wal.go` writer calls fsync after every record, which caps the import at 200 records per second.")
	cont := []memory.Exchange{
		{SessionID: id, Turn: 3, UserTurns: 1, Project: "shop", ToolLoop: true, Assistant: "The background benchmark finished.",
			ToolCalls: []memory.ToolCall{{ID: "b", Name: "Bash", Input: `{"command":"cat bench.out"}`}}},
		{SessionID: id, Turn: 4, UserTurns: 1, Project: "shop", ToolLoop: true, ToolResults: []memory.ToolResult{{ToolUseID: "b", Content: "200 rec/s"}},
			Assistant: "The `ledger/wal.go` writer calls fsync after every record: the benchmark confirms the import tops out at 200 records per second."},
	}
	all := append(append([]memory.Exchange{}, turn1...), cont...)
	if n := len(GroupTurns(all)); n != 1 {
		t.Fatalf("batch reads %d turns, want 1", n)
	}
	batch, live := newFixture(t, nil), newFixture(t, nil)
	if _, _, err := batch.p.ProcessTurn(ctx, GroupTurns(all)[0], nil, SessionState{Ended: true}); err != nil {
		t.Fatal(err)
	}
	for _, part := range [][]memory.Exchange{turn1, cont, cont} { // the continuation read twice: once counts
		if _, _, err := live.p.ProcessTurn(ctx, GroupTurns(part)[0], nil, SessionState{}); err != nil {
			t.Fatal(err)
		}
	}
	want, got := liveTexts(t, batch.st), liveTexts(t, live.st)
	if len(want) == 0 || !slices.Equal(want, got) {
		t.Fatalf("live store differs from batch:\nbatch %q\nlive  %q", want, got)
	}
}

// TestUserMemoryRevisable: a memory made of the user's words is settled
// like the model's when the turn is distilled again: what batch ingest
// would not keep in that form is not left standing.
func TestUserMemoryRevisable(t *testing.T) {
	ctx := context.Background()
	turns := threeTurns("s-user", []string{"Always run `make lint` before pushing to the `release/1.x` branch.", "Noted."},
		[]string{"thanks", "You are welcome."})
	live := newFixture(t, nil)
	dec, _, err := live.p.ProcessTurn(ctx, turns[0], nil, SessionState{})
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(dec.Candidates, func(c memory.CandidateVerdict) bool { return c.Kept && c.Origin == OriginUser })
	if i < 0 || dec.Candidates[i].MemoryID == "" {
		t.Fatalf("turn 1 stored no memory of the user's words: %+v", dec.Candidates)
	}
	recent := live.p.recent.turns("s-user")
	if len(recent) != 1 {
		t.Fatalf("%d recent turns", len(recent))
	}
	// Distilled again, the turn keeps nothing (as if a later turn had
	// revised all of it): its memories go.
	var later memory.Decision
	if _, err := live.p.settle(ctx, turns[2], &recent[0], nil, nil, nil, 0, &later); err != nil {
		t.Fatal(err)
	}
	if got := liveTexts(t, live.st); slices.ContainsFunc(got, func(s string) bool { return strings.Contains(s, "make lint") }) {
		t.Fatalf("the user's memory turn 1 no longer keeps is left standing: %q", got)
	}
}

// TestRedistillFrom: a new turn distils again the newest earlier turns
// whose text and what followed them fit maxRedistillBytes: a long
// session's turns are not all distilled again at each new turn.
func TestRedistillFrom(t *testing.T) {
	turns := func(sizes ...int) []recentTurn {
		out := make([]recentTurn, len(sizes))
		for i, n := range sizes {
			out[i].size = n
		}
		return out
	}
	u := maxRedistillBytes / 4
	for _, tc := range []struct {
		name    string
		earlier []recentTurn
		n, want int
	}{
		{"none", nil, 10, 0},
		{"small", turns(100, 100, 100), 100, 0},
		// the last costs u + 1 KiB, the one before 2u + 1 KiB, the next
		// 3u + 1 KiB: over.
		{"big", turns(u, u, u, u), 1024, 2},
		{"new turn alone over", turns(10), maxRedistillBytes, 1},
	} {
		if got := redistillFrom(tc.earlier, tc.n); got != tc.want {
			t.Errorf("%s: redistillFrom = %d, want %d", tc.name, got, tc.want)
		}
	}
	// Many small turns: the work stays within the bound.
	many := turns(slices.Repeat([]int{4 << 10}, 5000)...)
	from := redistillFrom(many, 4<<10)
	cost, after := 0, 4<<10
	for i := len(many) - 1; i >= from; i-- {
		cost += many[i].size + after
		after += many[i].size
	}
	if from == 0 || cost > maxRedistillBytes {
		t.Errorf("from %d of %d, cost %d", from, len(many), cost)
	}
}

// TestRecentTurnsBounds: the per-session memory forgets the least
// recently used session, a session's turns no later text reaches any more
// (LaterTexts' bound), and sessions beyond the bytes kept in all.
func TestRecentTurnsBounds(t *testing.T) {
	var r recentTurns
	for i := range maxRecentSessions + 1 {
		r.set(string(rune('a'+i%26))+strings.Repeat("x", i), []recentTurn{{size: 1}})
		if i == 0 {
			continue
		}
		r.turns("a") // keep the first one in use
	}
	if len(r.sessions) != maxRecentSessions || len(r.turns("a")) != 1 {
		t.Fatalf("%d sessions; first kept %d", len(r.sessions), len(r.turns("a")))
	}
	half := maxLaterBytes / 2
	turns := []recentTurn{{size: half, turn: Turn{Turn: 1}}, {size: half, turn: Turn{Turn: 2}}, {size: half, turn: Turn{Turn: 3}}, {size: half, turn: Turn{Turn: 4}}}
	r.set("a", turns)
	if got := r.turns("a"); len(got) != 3 || got[0].turn.Turn != 2 {
		t.Fatalf("kept %d turns, the first %+v; want turns 2 to 4 (turn 1 is followed by more than LaterTexts reads)", len(got), got[0].turn)
	}
	for i := range maxRecentBytes/half + 1 {
		r.set(fmt.Sprintf("big%d", i), []recentTurn{{size: half}})
	}
	if r.size > maxRecentBytes || len(r.turns("a")) != 0 || len(r.turns(fmt.Sprintf("big%d", maxRecentBytes/half))) != 1 {
		t.Fatalf("%d bytes kept in %d sessions", r.size, len(r.sessions))
	}
}

// TestRecentTurnsBoundCountsSaid: what a turn said, kept for the held
// test (recentTurn.said: about three times the turn's text), and what
// earlier turns said that a recent turn was distilled with (Turn.held: a
// window of the session's record, reaching turns forgotten since) count
// toward maxRecentBytes with the turn's text, each entry of the record
// once: the sessions kept stay within the bound with them counted.
func TestRecentTurnsBoundCountsSaid(t *testing.T) {
	var b strings.Builder
	for i := range 300 {
		fmt.Fprintf(&b, "The loader in pkg%[1]d/config.go reads `defaults%[1]d.yaml` before the environment, so a variable set in the shell overrides the file. The worker pool is capped at %[1]d goroutines because the database driver opens one connection per worker.\n\n", i)
	}
	text := b.String()
	said := saidBlocks(Turn{Steps: []Step{{Text: text}}})
	if heldSize(said) < 2*len(text) {
		t.Fatalf("the fixture says %d bytes for the held test, want about three times its %d", heldSize(said), len(text))
	}
	for _, tc := range []struct {
		name  string
		turn  Turn
		turns int // turns of each session, each distilled with what the session said before it
	}{
		{"text only", Turn{Turn: 1, Steps: []Step{{Text: "Done."}}, User: []string{text}}, 1},
		{"said", Turn{Turn: 1, Steps: []Step{{Text: text}}}, 1},
		{"said and held", Turn{Turn: 2, Steps: []Step{{Text: text}}}, 20}, // the oldest ones forgotten (maxLaterBytes), what they said still held
	} {
		var base recentTurn
		base.setTurn(tc.turn)
		base.setSaid(tc.turn)
		sessions := maxRecentSessions
		if tc.turns > 1 {
			sessions = 2*maxRecentBytes/(tc.turns*heldSize(said)) + 2 // more than the bound holds
		}
		var r recentTurns
		for i := range sessions {
			id := fmt.Sprintf("s%d", i)
			for range tc.turns {
				rt := base
				if tc.turns > 1 { // each turn's own blocks, told apart below
					rt.said = slices.Clone(rt.said)
					for j := range rt.said {
						rt.said[j].subject = maps.Clone(rt.said[j].subject)
					}
				}
				rt.turn.held = r.held(id)
				r.set(id, append(r.turns(id), rt))
			}
		}
		// Each block the kept sessions said, reachable from a turn's own
		// said or its held window, counted once (told by its subject map).
		kept := 0
		for _, s := range r.sessions {
			seen := map[unsafe.Pointer]bool{}
			for _, e := range s.turns {
				kept += e.textBytes() + e.callSize
				for _, hs := range [][]heldText{e.said, e.turn.held} {
					for i := range hs {
						if p := reflect.ValueOf(hs[i].subject).UnsafePointer(); !seen[p] {
							seen[p] = true
							kept += heldSize(hs[i : i+1])
						}
					}
				}
			}
		}
		if kept > maxRecentBytes || kept != r.size {
			t.Errorf("%s: %d sessions keep %d bytes (%d counted), bound %d", tc.name, len(r.sessions), kept, r.size, maxRecentBytes)
		}
		if tc.turns > 1 && len(r.sessions) > maxRecentBytes/(tc.turns*heldSize(said)/2) {
			t.Errorf("%s: %d sessions kept: what their turns held is not counted", tc.name, len(r.sessions))
		}
	}
}

// TestRedistillListsCuts: when a later turn distils an earlier one again
// and a statement of it is stored now with a piece cut out (a sentence the
// later turn undid), the later turn's decision lists that piece as a cut
// of the earlier turn, with the cut's reason, after the statement kept
// now, as the earlier turn's own decision lists its cuts.
func TestRedistillListsCuts(t *testing.T) {
	last := recutLive(t)
	keptNow, cut := -1, -1
	for i, c := range last.Candidates {
		switch {
		case c.Origin == OriginEarlier && c.Kept && strings.Contains(c.Text, "batches 500 rows"):
			keptNow = i
		case c.Cut && strings.Contains(c.Text, "retries a failed batch 3 times"):
			cut = i
		}
	}
	if keptNow < 0 {
		t.Fatalf("turn 3's decision does not store turn 1's statement again: %+v", last.Candidates)
	}
	if cut < keptNow {
		t.Fatalf("turn 3's decision does not list the piece cut out of it after it (kept now at %d, cut at %d): %+v", keptNow, cut, last.Candidates)
	}
	c := last.Candidates[cut]
	if c.Kept || c.MemoryID != "" || c.Origin != OriginEarlier || c.Class != last.Candidates[keptNow].Class || !strings.HasPrefix(c.Reason, "undone later: I removed `retryBatch`") {
		t.Errorf("cut %+v", c)
	}
}

// recutLive processes live a session whose turn 3 undoes a sentence of
// a statement turn 1 kept (turn 1 is distilled again, the statement
// stored again without the sentence) and returns turn 3's decision.
func recutLive(t *testing.T) memory.Decision {
	t.Helper()
	turns := threeTurns("s-recut",
		[]string{"how does the importer write rows?", "Let me read the importer.",
			"The importer batches 500 rows per insert in `internal/importer/batch.go` because SQLite caps bound variables. The importer retries a failed batch 3 times with `retryBatch` in `internal/importer/retry.go`."},
		[]string{"drop the retries", "Let me edit the importer.",
			"I removed `retryBatch` from `internal/importer/retry.go`; a failed batch now aborts the import."})
	f := newFixture(t, nil)
	var last memory.Decision
	for _, tn := range turns {
		dec, _, err := f.p.ProcessTurn(context.Background(), tn, nil, SessionState{})
		if err != nil {
			t.Fatal(err)
		}
		last = dec
	}
	return last
}

// TestRevisedWhyNamesCuts: the earlier memory a re-distillation no longer
// keeps whole because it cut a sentence out of it is revised for that
// cut's reason (the later turn's undoing sentence), not an anonymous "a
// later turn revised it".
func TestRevisedWhyNamesCuts(t *testing.T) {
	last := recutLive(t)
	var rev *memory.CandidateVerdict
	for i, c := range last.Candidates {
		if c.Origin == OriginEarlier && !c.Kept && !c.Cut && strings.Contains(c.Text, "retries a failed batch") {
			rev = &last.Candidates[i]
		}
	}
	if rev == nil {
		t.Fatalf("turn 3's decision does not revise turn 1's memory: %+v", last.Candidates)
	}
	if !strings.Contains(rev.Reason, "undone later: I removed `retryBatch`") {
		t.Errorf("revision reason %q, want the cut's reason", rev.Reason)
	}
}

// TestRecentTurnsBoundCountsMaps: a recent turn's kept, from, restated and
// untested maps count toward maxRecentBytes, each at least the bytes of
// its strings.
func TestRecentTurnsBoundCountsMaps(t *testing.T) {
	stmt := func(i int) string {
		return fmt.Sprintf("The importer in pkg%[1]d/load.go skips a row whose account id is empty, so totals of batch %[1]d exclude it.", i)
	}
	for _, tc := range []struct {
		name string
		fill func(e *recentTurn, i int) int // adds entry i, returns the bytes of its strings
	}{
		{"kept", func(e *recentTurn, i int) int {
			id := fmt.Sprintf("mem-%04d", i)
			e.kept[stmt(i)] = id
			return len(stmt(i)) + len(id)
		}},
		{"from", func(e *recentTurn, i int) int {
			s := stmt(i)
			e.from[s] = keptFrom{origin: OriginFinal, class: ClassFinding, subject: subjectOf(s), lowered: lower(s), tokens: namedTokens(s)}
			n := 2*len(s) + len(OriginFinal) + len(ClassFinding)
			for w := range subjectOf(s) {
				n += len(w)
			}
			for _, tok := range namedTokens(s) {
				n += len(tok)
			}
			return n
		}},
		{"restated", func(e *recentTurn, i int) int {
			id, old := fmt.Sprintf("mem-%04d", i), fmt.Sprintf("old-%04d", i)
			e.restated[id] = []string{old}
			return len(id) + len(old)
		}},
		{"untested", func(e *recentTurn, i int) int {
			id := fmt.Sprintf("mem-%04d", i)
			e.markUntested(id)
			return len(id)
		}},
	} {
		e := recentTurn{size: 100, kept: map[string]string{}, from: map[string]keptFrom{}, restated: map[string][]string{}}
		strs := 0
		for i := range 50 {
			strs += tc.fill(&e, i)
		}
		var r recentTurns
		r.set("s", []recentTurn{e})
		if r.size < e.size+strs {
			t.Errorf("%s: counted %d bytes, want at least the text's %d and the maps' strings' %d", tc.name, r.size, e.size, strs)
		}
	}
}

// TestRecentTurnsSharedUntilWritten: the turns recentTurns hands out share
// their maps with the remembered ones until written; each writer copies
// them first, so the remembered turns stay as they were until set.
func TestRecentTurnsSharedUntilWritten(t *testing.T) {
	const text = "The importer in pkg/load.go skips a row whose account id is empty."
	remembered := func() recentTurn {
		return recentTurn{size: 10, kept: map[string]string{text: "m2"}, from: map[string]keptFrom{text: {origin: OriginFinal, class: ClassFinding}},
			restated: map[string][]string{"m2": {"m1", "m0"}}}
	}
	for _, tc := range []struct {
		name  string
		write func(turns []recentTurn)
	}{
		{"markUntested", func(turns []recentTurn) { turns[0].markUntested("m2") }},
		{"forgetRestated", func(turns []recentTurn) { forgetRestated("m1", turns) }},
		{"own, then any map", func(turns []recentTurn) {
			turns[0].own()
			turns[0].kept["another"] = "m3"
			delete(turns[0].from, text)
			turns[0].restated["m3"] = []string{"m2"}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var r recentTurns
			r.set("s", []recentTurn{remembered()})
			tc.write(r.turns("s"))
			got, want := r.turns("s")[0], remembered()
			if !maps.Equal(got.kept, want.kept) || !maps.EqualFunc(got.from, want.from, func(a, b keptFrom) bool { return a.origin == b.origin && a.class == b.class }) || len(got.untested) != 0 ||
				!maps.EqualFunc(got.restated, want.restated, slices.Equal) {
				t.Fatalf("remembered turn written through a handed-out copy: kept %v from %v restated %v untested %v", got.kept, got.from, got.restated, got.untested)
			}
		})
	}
}
