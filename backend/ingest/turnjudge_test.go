package ingest

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/memtray/memtray/backend/judge"
	"github.com/memtray/memtray/backend/memory"
)

// judgeServer is a loopback server answering a turn judge with a recorded
// answer of package judge's testdata/ (Ollama /api/chat or the Anthropic
// Messages API, each in its exact format).
type judgeServer struct {
	srv  *httptest.Server
	body []byte

	mu       sync.Mutex
	requests [][]byte
}

func newJudgeServer(t *testing.T, file string, replace ...string) *judgeServer {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "judge", "testdata", file))
	if err != nil {
		t.Fatal(err)
	}
	b = []byte(strings.NewReplacer(replace...).Replace(string(b)))
	s := &judgeServer{body: b}
	s.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		req, _ := io.ReadAll(r.Body)
		s.mu.Lock()
		s.requests = append(s.requests, req)
		s.mu.Unlock()
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		w.Write(s.body)
	}))
	t.Cleanup(s.srv.Close)
	return s
}

// newTurnJudge builds the provider's judge, budgeted, against s.
func newTurnJudge(t *testing.T, provider string, s *judgeServer, perHour int) *judge.Budgeted {
	t.Helper()
	var inner memory.Judge
	var err error
	switch provider {
	case "ollama":
		inner, err = judge.NewOllama(judge.OllamaOptions{Host: s.srv.URL, Model: "llama3.2"})
	case "anthropic":
		inner, err = judge.NewAnthropic(judge.AnthropicOptions{BaseURL: s.srv.URL, Key: "test-key-not-secret", Model: "claude-haiku-4-5"})
	}
	if err != nil {
		t.Fatal(err)
	}
	b, err := judge.NewBudgeted(inner, perHour, 100, memory.FixedClock{T: t0})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// revisedTurn is a turn whose first finding the model revised two steps
// later, as the judge's recorded answers expect; secret sits in a tool
// result and in the user's words.
func revisedTurn(secret string) Turn {
	exs := sessionOf("s7", "Why does TestSync fail on CI every few runs? Fix it. The CI token is "+secret+".",
		"The flaky TestSync failure comes from the bbolt file lock held by the tail watcher between runs.",
		"Actually the bbolt lock is not the cause: TestSync fails because sync_test.go reads the wall clock, so two memories written in one second tie.",
		"TestSync was flaky because `backend/tail/sync_test.go` used the wall clock: memories written in the same second tied on their timestamp. The test now passes `memory.FixedClock` and advances it per write.")
	exs[1].ToolResults = []memory.ToolResult{{ToolUseID: "t", Name: "Bash", Content: "--- FAIL: TestSync\nGITHUB_TOKEN=" + secret}}
	return GroupTurns(exs)[0]
}

// testSecret is a GitHub token shape made at run time, so that no
// token-shaped string sits in the repository.
var testSecret = "ghp_" + strings.Repeat("R7mQ2vX9kL4pT8wZ1nB6", 2)[:36]

func TestProcessTurnJudge(t *testing.T) {
	const good = "TestSync in backend/tail was flaky because sync_test.go used the wall clock: memories written in the same second tied on their timestamp. The test now passes memory.FixedClock and advances it per write."
	tests := []struct {
		name, provider, file string
		perHour              int
		verdict              memory.Verdict
		stage                string
		stored               []string // the memories' texts; nil: the distiller's choice
		judgeError           bool
		refused              int
	}{
		{"good ollama", "ollama", "ollama_turn_good.json", 10, memory.VerdictStored, StageStore, []string{good}, false, 0},
		{"good anthropic", "anthropic", "anthropic_turn_good.json", 10, memory.VerdictStored, StageStore, []string{good}, false, 0},
		{"empty list rejects the turn", "ollama", "ollama_turn_empty.json", 10, memory.VerdictRejected, StageJudge, nil, false, 0},
		{"malformed: the distiller's choice stands", "ollama", "ollama_turn_malformed.json", 10, memory.VerdictStored, StageStore, nil, true, 0},
		{"wrong kind: the distiller's choice stands", "anthropic", "anthropic_turn_wrong_kind.json", 10, memory.VerdictStored, StageStore, nil, true, 0},
		{"oversized: the distiller's choice stands", "ollama", "ollama_turn_oversized.json", 10, memory.VerdictStored, StageStore, nil, true, 0},
		{"restated revision refused", "ollama", "ollama_turn_revised.json", 10, memory.VerdictStored, StageStore, []string{good}, false, 1},
		{"restated revision refused anthropic", "anthropic", "anthropic_turn_revised.json", 10, memory.VerdictStored, StageStore, []string{good}, false, 1},
		{"only a restated revision: the turn is rejected", "ollama", "ollama_turn_revised_only.json", 10, memory.VerdictRejected, StageJudge, nil, false, 1},
		{"budget exhausted: the distiller's choice stands", "ollama", "ollama_turn_good.json", 0, memory.VerdictStored, StageStore, nil, true, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			srv := newJudgeServer(t, tc.file)
			j := newTurnJudge(t, tc.provider, srv, tc.perHour)
			f := newFixture(t, j)
			turn := revisedTurn(testSecret)
			dec, held, err := f.p.ProcessTurn(ctx, turn, nil, SessionState{})
			if err != nil || held {
				t.Fatalf("process: %v (held %v)", err, held)
			}
			if dec.Verdict != tc.verdict || dec.Stage != tc.stage {
				t.Fatalf("verdict %s at %s (%s), want %s at %s; candidates %+v", dec.Verdict, dec.Stage, dec.Reason, tc.verdict, tc.stage, dec.Candidates)
			}
			if got := dec.Scores["judge_error"] == 1; got != tc.judgeError {
				t.Errorf("judge_error %v, want %v (scores %v)", got, tc.judgeError, dec.Scores)
			}
			skip := tc.stage == StageJudge && tc.refused == 0
			if learned := f.p.Scorer().State().BufferLen; (learned == 1) != skip || (dec.Scores["judge_skip"] == 1) != skip {
				t.Errorf("the scorer learned %d texts (judge_skip %v); a turn the judge keeps nothing of teaches it its answer as noise, nothing else does", learned, dec.Scores["judge_skip"])
			}
			if got := int(dec.Scores["judge_refused"]); got != tc.refused {
				t.Errorf("judge_refused %d, want %d", got, tc.refused)
			}
			wantCalls := 1
			if tc.perHour == 0 {
				wantCalls = 0
			}
			if len(srv.requests) != wantCalls {
				t.Fatalf("%d judge calls, want %d", len(srv.requests), wantCalls)
			}
			for _, req := range srv.requests {
				if bytes.Contains(req, []byte(testSecret)) {
					t.Error("the judge was sent the secret: the turn must be redacted before")
				}
				if !bytes.Contains(req, []byte("revised later")) {
					t.Error("the judge was not told which statement the turn revised")
				}
			}
			// Distillation drops the first finding as revised: the judge's
			// restatement of it must be refused by that.
			var revised, judged bool
			for _, c := range dec.Candidates {
				revised = revised || strings.HasPrefix(c.Reason, "revised later")
				if c.Origin == OriginJudge {
					judged = true
					if c.Kept && c.MemoryID == "" {
						t.Errorf("kept judge memory without a memory id: %+v", c)
					}
					if !c.Kept && !strings.HasPrefix(c.Reason, "restates a statement revised later") {
						t.Errorf("refused judge memory: %+v", c)
					}
				} else if c.Kept && (tc.stored != nil || tc.refused > 0) {
					t.Errorf("the distiller's candidate still kept beside the judge's: %+v", c)
				}
			}
			if !revised {
				t.Fatalf("distillation revised nothing: %+v", dec.Candidates)
			}
			if judged != (tc.stored != nil || tc.refused > 0) {
				t.Errorf("judge candidates in the decision: %v, want %v", judged, tc.stored != nil)
			}
			ms, err := f.st.GetMany(ctx, dec.MemoryIDs)
			if err != nil {
				t.Fatal(err)
			}
			var texts []string
			var first memory.Memory
			for i, id := range dec.MemoryIDs {
				m := ms[id]
				if i == 0 {
					first = m
				}
				texts = append(texts, m.Text)
				if strings.Contains(m.Text, "bbolt file lock") && !strings.Contains(m.Text, "not the cause") {
					t.Errorf("stored the revised finding: %q", m.Text)
				}
			}
			if tc.stored != nil {
				if strings.Join(texts, "|") != strings.Join(tc.stored, "|") {
					t.Errorf("stored %q, want %q", texts, tc.stored)
				}
				if first.Kind != memory.KindDebugging || first.Type != memory.TypeProject {
					t.Errorf("kind %s, type %s", first.Kind, first.Type)
				}
			}
		})
	}
}

// TestProcessTurnJudgeRedacts: a judge's memory is redacted again before
// it is stored.
func TestProcessTurnJudgeRedacts(t *testing.T) {
	ctx := context.Background()
	srv := newJudgeServer(t, "ollama_turn_secret.json", "{{SECRET}}", testSecret)
	f := newFixture(t, newTurnJudge(t, "ollama", srv, 10))
	dec, _, err := f.p.ProcessTurn(ctx, revisedTurn("none"), nil, SessionState{})
	if err != nil || dec.Verdict != memory.VerdictStored {
		t.Fatalf("%+v, %v", dec, err)
	}
	ms, err := f.st.GetMany(ctx, dec.MemoryIDs)
	if err != nil || len(ms) != 1 {
		t.Fatalf("%d memories, %v", len(ms), err)
	}
	m := ms[dec.MemoryIDs[0]]
	if strings.Contains(m.Text, testSecret) || !strings.Contains(m.Text, "[REDACTED") || m.Kind != memory.KindConfig {
		t.Errorf("stored %q (%s)", m.Text, m.Kind)
	}
	if dec.Scores["redactions"] < 1 {
		t.Errorf("redactions %v", dec.Scores["redactions"])
	}
}

func TestRestatesRevised(t *testing.T) {
	revised := newCandidate("The flaky TestSync failure comes from the bbolt file lock held by the tail watcher.", OriginToolLoop, ClassFinding, false,
		"revised later: Actually the bbolt lock is not the cause: TestSync fails because sync_test.go reads the wall clock.")
	kept := newCandidate("TestSync was flaky because sync_test.go used the wall clock.", OriginFinal, ClassFinding, true, "")
	undone := newCandidate("The nightly job prunes `var/spool/` entries older than 7 days with `spool.Prune`.", OriginToolLoop, ClassFinding, false,
		"undone later: I removed `spool.Prune` from the nightly job.")
	guess := newCandidate("The webhook retries probably fail because the signing secret rotates hourly.", OriginToolLoop, ClassFinding, false,
		reasonGuess+": The webhook retries probably fail because the signing secret rotates hourly.")
	cands := []Candidate{revised, kept, undone, guess}
	tests := []struct {
		text    string
		refused bool
	}{
		{"TestSync fails because the tail watcher holds the bbolt file lock.", true},
		{"The flaky TestSync failure comes from the bbolt file lock held by the tail watcher between runs.", true},
		{"TestSync was flaky because sync_test.go used the wall clock; it now uses memory.FixedClock.", false},
		{"The bbolt file lock is not what makes TestSync flaky: sync_test.go read the wall clock.", false},
		{"Webhooks retry 5 times because the provider rate-limits us.", false},
		// undone later is a revision too
		{"The nightly job prunes var/spool/ entries older than 7 days through spool.Prune.", true},
		// an unconfirmed guess is not: the judge reads the turn that may bear it out
		{"The webhook retries fail because the signing secret rotates hourly.", false},
	}
	for _, tc := range tests {
		c := newCandidate(tc.text, OriginJudge, ClassFinding, true, "")
		if got := restatesRevised(c, cands) != ""; got != tc.refused {
			t.Errorf("%q: refused %v, want %v", tc.text, got, tc.refused)
		}
	}
}
