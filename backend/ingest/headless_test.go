package ingest

import (
	"context"
	"strings"
	"testing"

	"github.com/memtray/memtray/backend/memory"
)

// TestProcessSessionHeadless: a headless turn of a session under the count
// is held while the session may grow, passes once the session reached the
// count, and is rejected once it ended.
func TestProcessSessionHeadless(t *testing.T) {
	long := "The payments service retries webhooks with exponential backoff because the provider rate-limits us; keep `RETRY_MAX=6` in `payments/config.yaml` or deliveries get dropped."
	turn := func(n int) memory.Exchange {
		return memory.Exchange{SessionID: "s1", Turn: n, UserTurns: n, Headless: true, User: "why the retries?", Assistant: long}
	}
	tests := []struct {
		name    string
		ex      memory.Exchange
		st      SessionState
		held    bool
		verdict memory.Verdict
		stage   string
	}{
		{"first turn held", turn(1), SessionState{}, true, "", StageHeadless},
		{"second turn held", turn(2), SessionState{UserTurns: 2}, true, "", StageHeadless},
		{"held turn once the session reached 3", turn(1), SessionState{UserTurns: 3}, false, memory.VerdictStored, StageStore},
		{"third turn", turn(3), SessionState{}, false, memory.VerdictStored, StageStore},
		{"ended under the count", turn(2), SessionState{UserTurns: 2, Ended: true}, false, memory.VerdictRejected, StageHeadless},
		{"no session id", func() memory.Exchange { ex := turn(1); ex.SessionID = ""; return ex }(), SessionState{}, false, memory.VerdictRejected, StageHeadless},
		{"interactive", func() memory.Exchange { ex := turn(1); ex.Headless = false; return ex }(), SessionState{}, false, memory.VerdictStored, StageStore},
		{"tool-loop iteration is not held", func() memory.Exchange {
			ex := turn(1)
			ex.ToolLoop, ex.ToolCalls = true, []memory.ToolCall{{Name: "Edit"}}
			return ex
		}(), SessionState{}, false, memory.VerdictRejected, StageSource},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, nil)
			dec, kept, held, err := f.p.ProcessSession(context.Background(), tt.ex, tt.st)
			if err != nil {
				t.Fatal(err)
			}
			if held != tt.held || dec.Verdict != tt.verdict || dec.Stage != tt.stage {
				t.Fatalf("held %v, %q at %s (%s); want held %v, %q at %s", held, dec.Verdict, dec.Stage, dec.Reason, tt.held, tt.verdict, tt.stage)
			}
			if held && (kept.Assistant != long || kept.SessionID != "s1" || kept.UserTurns != tt.ex.UserTurns) {
				t.Errorf("kept %+v", kept)
			}
			if n := f.st.Count(); tt.verdict != memory.VerdictStored && n != 0 {
				t.Errorf("%d memories after a turn that was not stored", n)
			}
		})
	}
}

// TestProcessSessionKeepsNoSecret: what the caller keeps of a held turn is
// what the stages saw, secrets masked everywhere (it is written to disk).
func TestProcessSessionKeepsNoSecret(t *testing.T) {
	secret := "ghp_" + "Zq8Lm3Rt7Vx2Nc5Pw9Ks4Hd6Fg1Jb0Ye7Ua3"
	ex := memory.Exchange{SessionID: "s", UserTurns: 1, Headless: true, User: "token " + secret,
		Assistant: "Set GITHUB_TOKEN=" + secret + " in `.env` because the deploy script reads it from there at startup.",
		ToolCalls: []memory.ToolCall{{Name: "Bash", Input: `{"cmd":"echo ` + secret + `"}`}}, ToolResults: []memory.ToolResult{{Content: secret}}}
	f := newFixture(t, nil)
	_, kept, held, err := f.p.ProcessSession(context.Background(), ex, SessionState{})
	if err != nil || !held {
		t.Fatalf("held %v, %v", held, err)
	}
	for _, s := range []string{kept.User, kept.Assistant, kept.ToolCalls[0].Input, kept.ToolResults[0].Content} {
		if strings.Contains(s, secret) {
			t.Errorf("kept a secret: %q", s)
		}
	}
	if ex.ToolCalls[0].Input == kept.ToolCalls[0].Input {
		t.Error("the caller's exchange and the kept one share their tool calls")
	}
}

func TestProcessSessionValidates(t *testing.T) {
	f := newFixture(t, nil)
	if _, _, _, err := f.p.ProcessSession(context.Background(), memory.Exchange{Assistant: "x"}, SessionState{UserTurns: -1}); err == nil {
		t.Fatal("negative session turns accepted")
	}
	if _, _, _, err := f.p.ProcessSession(context.Background(), memory.Exchange{Assistant: "\xff"}, SessionState{}); err == nil {
		t.Fatal("invalid UTF-8 accepted")
	}
}
