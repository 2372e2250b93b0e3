package ingest

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/memtray/memtray/backend/memory"
)

// cutTurns are turns in which distillation keeps a statement but cuts a
// piece of it as revised: a clause placing a file a later call moved
// (dropRelocated), a sentence a later turn undid (dropUndone), a sentence
// the statement itself corrects (dropSelfCorrected).
var cutTurns = map[string]struct {
	turn  Turn
	later []string
}{
	"moved": {
		turn: movedTurn([]string{
			"The retry helper lives in `tools/retry_helper.sh`, and it backs off exponentially up to 30 seconds because the payments API rate-limits bursts.",
			"Moving it."}, [][]memory.ToolCall{nil, {bashCall("m", "mkdir -p /r/scripts/ci && mv /r/tools/retry_helper.sh /r/scripts/ci/retry_helper.sh")}}),
	},
	"undone": {
		turn: movedTurn([]string{"The importer batches 500 rows per insert in `internal/importer/batch.go` because SQLite caps bound variables. " +
			"The importer retries a failed batch 3 times with `retryBatch` in `internal/importer/retry.go`."}, nil),
		later: []string{"I removed `retryBatch` from `internal/importer/retry.go`; a failed batch now aborts the import."},
	},
	"self-corrected": {
		turn: loopTurn("The thumbnailer caches resized images under `var/thumbs/` keyed by the source file's SHA-256 digest. " +
			"The cache is never pruned, so `var/thumbs/` grows without bound on busy hosts. " +
			"That was wrong: `thumbs.Sweep` runs nightly from `cmd/thumbd` and deletes entries older than 14 days."),
	},
}

// TestDecisionListsCuts: the Decision lists each piece distillation cut
// out of a statement it kept, as a dropped verdict with the cut's reason
// and its statement's origin and class, after the turn's statements.
func TestDecisionListsCuts(t *testing.T) {
	tests := []struct {
		turn, piece, reason string
	}{
		{"moved", "lives in `tools/retry_helper.sh`", "revised later: mv /r/tools/retry_helper.sh"},
		{"undone", "retries a failed batch 3 times", "undone later: I removed `retryBatch`"},
		{"self-corrected", "is never pruned", "revised later: That was wrong"},
	}
	for _, tc := range tests {
		t.Run(tc.turn, func(t *testing.T) {
			ct := cutTurns[tc.turn]
			f := newFixture(t, nil)
			dec, _, err := f.p.ProcessTurn(context.Background(), ct.turn, modelSaid(ct.later...), SessionState{})
			if err != nil {
				t.Fatal(err)
			}
			cands := Distill(ct.turn, modelSaid(ct.later...))
			var found *memory.CandidateVerdict
			for i, cv := range dec.Candidates {
				if cv.Cut != (i >= len(cands)) {
					t.Errorf("verdict %d cut %v: the pieces follow the %d statements; %+v", i, cv.Cut, len(cands), cv)
				}
				if cv.Cut && strings.Contains(cv.Text, tc.piece) {
					found = &dec.Candidates[i]
				}
			}
			if found == nil {
				t.Fatalf("no cut piece %q in the decision: %+v", tc.piece, dec.Candidates)
			}
			if found.Kept || found.MemoryID != "" || !strings.HasPrefix(found.Reason, tc.reason) {
				t.Errorf("cut piece %+v, want dropped with reason %q", *found, tc.reason)
			}
			var owner *Candidate
			for i, c := range cands {
				if c.Keep && len(c.cuts) > 0 {
					owner = &cands[i]
				}
			}
			if owner == nil || found.Origin != owner.Origin || found.Class != owner.Class {
				t.Errorf("cut piece %s/%s, its statement %+v", found.Origin, found.Class, owner)
			}
			if owner != nil && strings.Contains(owner.Text, tc.piece) {
				t.Errorf("the statement kept the piece cut: %q", owner.Text)
			}
		})
	}
}

// TestJudgeRefusesCutRevision: a judge memory that mainly restates a piece
// distillation cut out of a kept statement as revised (a file's old place,
// a sentence a later turn undid) is refused as a whole statement dropped
// as revised is; one of what the session kept is stored.
func TestJudgeRefusesCutRevision(t *testing.T) {
	tests := []struct {
		name, turn, memory string
		refused            bool
	}{
		{"the moved file's old place", "moved", "The retry helper script lives in tools/retry_helper.sh at the top level.", true},
		{"what the moved file does", "moved", "The retry helper backs off exponentially up to 30 seconds because the payments API rate-limits bursts.", false},
		{"the undone retry", "undone", "The importer retries a failed batch 3 times through retryBatch in internal/importer/retry.go.", true},
		{"the batching that stands", "undone", "The importer batches 500 rows per insert in internal/importer/batch.go because SQLite caps bound variables.", false},
		{"the corrected claim", "self-corrected", "The thumbnail cache under var/thumbs/ is never pruned and grows without bound on busy hosts.", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ct := cutTurns[tc.turn]
			srv := newJudgeServer(t, "ollama_turn_memory.json", "{{MEMORY}}", tc.memory)
			f := newFixture(t, newTurnJudge(t, "ollama", srv, 10))
			dec, _, err := f.p.ProcessTurn(context.Background(), ct.turn, modelSaid(ct.later...), SessionState{})
			if err != nil {
				t.Fatal(err)
			}
			if len(srv.requests) != 1 || dec.Scores["judge_error"] != 0 {
				t.Fatalf("%d judge calls, scores %v", len(srv.requests), dec.Scores)
			}
			var judged *memory.CandidateVerdict
			for i, cv := range dec.Candidates {
				if cv.Origin == OriginJudge {
					judged = &dec.Candidates[i]
				}
			}
			if judged == nil {
				t.Fatalf("no judge memory in the decision: %+v", dec.Candidates)
			}
			if refused := !judged.Kept; refused != tc.refused {
				t.Fatalf("judge memory %+v: refused %v, want %v", *judged, refused, tc.refused)
			}
			if tc.refused && (dec.Verdict != memory.VerdictRejected || dec.Stage != StageJudge || dec.Scores["judge_refused"] != 1 ||
				!strings.HasPrefix(judged.Reason, "restates a statement revised later")) {
				t.Errorf("%s at %s (%s), refused %v: %+v", dec.Verdict, dec.Stage, dec.Reason, dec.Scores["judge_refused"], *judged)
			}
			if !tc.refused && (dec.Verdict != memory.VerdictStored || len(dec.MemoryIDs) != 1) {
				t.Errorf("%s (%s): %d memories", dec.Verdict, dec.Reason, len(dec.MemoryIDs))
			}
		})
	}
}

// TestMergeKeepsCuts: candidates joined by mergeSteps or mergeBySubject
// keep the pieces cut out of each, in order.
func TestMergeKeepsCuts(t *testing.T) {
	a := newCandidate("The sync worker writes `state/sync.db` after every batch of events.", OriginToolLoop, ClassFinding, true, "")
	a.cuts = []cutPiece{{"It used `state/old.db` first.", "revised later: mv state/old.db state/sync.db"}}
	b := newCandidate("The sync worker compacts `state/sync.db` nightly because the file grows fast.", OriginToolLoop, ClassFinding, true, "")
	b.cuts = []cutPiece{{"Compaction runs hourly.", "undone later: I removed the hourly compaction."}}
	other := newCandidate("The webhook handler retries 5 times because the provider drops requests.", OriginFinal, ClassFinding, true, "")
	filler := newCandidate("The exporter writes `build/report.csv` with a header row for spreadsheets.", OriginFinal, ClassFinding, true, "")
	filler2 := newCandidate("The CLI reads `~/.acme/config.toml` before the flags are parsed.", OriginFinal, ClassFinding, true, "")
	tests := []struct {
		name  string
		merge func([]Candidate) []Candidate
		in    []Candidate
	}{
		{"mergeSteps", mergeSteps, []Candidate{a, b}},
		{"mergeBySubject", mergeBySubject, []Candidate{a, other, b, filler, filler2, other}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var in []Candidate
			for _, c := range tc.in {
				c.subject = subjectOf(c.Text)
				in = append(in, c)
			}
			out := tc.merge(in)
			if len(out) != len(tc.in)-1 || !strings.Contains(out[0].Text, "compacts") {
				t.Fatalf("not joined: %+v", out)
			}
			if got := out[0].cuts; len(got) != 2 || got[0] != a.cuts[0] || got[1] != b.cuts[0] {
				t.Errorf("cuts %q, want %q then %q", got, a.cuts, b.cuts)
			}
			if len(in[0].cuts) != 1 {
				t.Errorf("joining changed the first candidate's own cuts: %q", in[0].cuts)
			}
		})
	}
}

// TestJudgeSeesCuts: the turn judge (the real Ollama client, against a
// loopback server answering with a recorded answer) is sent each piece
// distillation cut out of a statement it kept, under that statement's
// line, as "cut: <reason>: <text>".
func TestJudgeSeesCuts(t *testing.T) {
	tests := []struct {
		turn, line string
	}{
		{"moved", "    cut: revised later: mv /r/tools/retry_helper.sh"},
		{"undone", "    cut: undone later: I removed `retryBatch`"},
		{"self-corrected", "    cut: revised later: That was wrong"},
	}
	for _, tc := range tests {
		t.Run(tc.turn, func(t *testing.T) {
			ct := cutTurns[tc.turn]
			srv := newJudgeServer(t, "ollama_turn_memory.json", "{{MEMORY}}", "The importer batches 500 rows per insert because SQLite caps bound variables.")
			f := newFixture(t, newTurnJudge(t, "ollama", srv, 10))
			if _, _, err := f.p.ProcessTurn(context.Background(), ct.turn, modelSaid(ct.later...), SessionState{}); err != nil {
				t.Fatal(err)
			}
			if len(srv.requests) != 1 {
				t.Fatalf("%d judge calls, want 1", len(srv.requests))
			}
			var req struct {
				Messages []struct{ Content string } `json:"messages"`
			}
			if err := json.Unmarshal(srv.requests[0], &req); err != nil || len(req.Messages) != 2 {
				t.Fatalf("request %s: %v", srv.requests[0], err)
			}
			prompt := req.Messages[1].Content
			var pieces []string
			for _, c := range Distill(ct.turn, modelSaid(ct.later...)) {
				for _, k := range c.cuts {
					pieces = append(pieces, k.text)
				}
			}
			if len(pieces) == 0 {
				t.Fatal("distillation cut nothing")
			}
			for _, line := range strings.Split(prompt, "\n") {
				if strings.HasPrefix(line, tc.line) {
					for _, p := range pieces {
						if strings.HasSuffix(line, ": "+p) {
							return
						}
					}
				}
			}
			t.Errorf("no line %q...: <a piece cut> in the prompt:\n%s", tc.line, prompt)
		})
	}
}

// TestTurnInputRedactsCuts: a piece cut out of a candidate is redacted
// before the judge sees it, as the turn's texts are.
func TestTurnInputRedactsCuts(t *testing.T) {
	c := newCandidate("The deploy script reads the token from `~/.config/deploy/env`.", OriginFinal, ClassFinding, true, "")
	c.cuts = []cutPiece{{"The token is " + testSecret + " in `deploy.sh`.", "revised later: moved the token to `~/.config/deploy/env` (" + testSecret + ")"}}
	in := turnInput(Turn{}, []Candidate{c})
	if len(in.Candidates) != 1 || len(in.Candidates[0].Cuts) != 1 {
		t.Fatalf("candidates %+v", in.Candidates)
	}
	k := in.Candidates[0].Cuts[0]
	if strings.Contains(k.Text+k.Reason, testSecret) || !strings.Contains(k.Text, "[REDACTED") || !strings.HasPrefix(k.Reason, "revised later: ") {
		t.Errorf("cut %+v", k)
	}
}
