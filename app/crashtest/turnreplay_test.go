package crashtest

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/memtray/memtray/backend/daemon"
	"github.com/memtray/memtray/backend/httpapi"
	"github.com/memtray/memtray/backend/memory"
	"github.com/memtray/memtray/backend/polltest"
	"github.com/memtray/memtray/backend/store"
)

// replaySession is the id of the session file TestKill9MidTurnNoReinforce
// writes.
const replaySession = "5b0e2f1a-7c44-4d1e-8f2a-replay000001"

// replayTranscript returns the lines of a Claude Code session file of
// turns user turns, one string per turn, each answered by statements
// findings of their own words (no two are near duplicates under the
// fake's bag-of-words vectors).
func replayTranscript(t *testing.T, turns, statements int) []string {
	t.Helper()
	var out []string
	var b strings.Builder
	line := func(v map[string]any) {
		data, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		b.Write(data)
		b.WriteByte('\n')
	}
	at := time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)
	for i := range turns {
		common := map[string]any{"sessionId": replaySession, "cwd": "/home/dev/src/replayd", "version": "2.1.40", "isSidechain": false, "userType": "external"}
		u := map[string]any{"type": "user", "uuid": fmt.Sprintf("u%d", i), "timestamp": at.Add(time.Duration(2*i) * time.Minute).Format(time.RFC3339),
			"message": map[string]any{"role": "user", "content": fmt.Sprintf("Why does the zq%dprompt job stall on startup?", i)}}
		var sents []string
		for j := range statements {
			w := func(k int) string { return fmt.Sprintf("zq%dx%dy%d", i, j, k) }
			// Long enough to be a memory of its own (two do not fit in
			// one), and mostly words of its own.
			var tail []string
			for k := 7; k < 40; k++ {
				tail = append(tail, w(k))
			}
			sents = append(sents, fmt.Sprintf("The %s worker in `%s/%s.go` retries %s because %s drops %s when %s.",
				w(1), w(2), w(3), w(4), w(5), w(6), strings.Join(tail, " ")))
		}
		a := map[string]any{"type": "assistant", "uuid": fmt.Sprintf("a%d", i), "timestamp": at.Add(time.Duration(2*i+1) * time.Minute).Format(time.RFC3339),
			"requestId": fmt.Sprintf("req_%d", i), "message": map[string]any{"model": "claude-sonnet-4-5", "id": fmt.Sprintf("msg_%d", i), "type": "message", "role": "assistant",
				"content": []map[string]any{{"type": "text", "text": strings.Join(sents, "\n\n")}}, "stop_reason": "end_turn",
				"usage": map[string]int{"input_tokens": 10, "output_tokens": 60}}}
		for k, v := range common {
			u[k], a[k] = v, v
		}
		line(u)
		line(a)
		out = append(out, b.String())
		b.Reset()
	}
	return out
}

// appendFile appends text to the file at path, creating it.
func appendFile(t *testing.T, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(text); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestKill9MidTurnNoReinforce kills `memtray serve` with SIGKILL at random
// moments while it captures a session file of many turns of several
// statements each (a kill lands mid-turn: some statements stored, the
// tailer's cursor and fingerprints not saved), restarts it each time, and
// at the end checks that every statement is stored once and none was
// reinforced by the turns run again after a kill.
func TestKill9MidTurnNoReinforce(t *testing.T) {
	if testing.Short() {
		t.Skip("starts memtray serve several times")
	}
	o := newFakeOllama(t)
	in := newInstall(t, o.URL(), "crash-a")
	sessions := filepath.Join(in.root, "claude")
	var cfg map[string]any
	raw, err := os.ReadFile(in.cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, &cfg); err != nil {
		t.Fatal(err)
	}
	// The fake's vectors mean nothing to the content score gate (a 0 here
	// would be read as unset: the default).
	cfg["ingest"] = map[string]any{"content_threshold": 0.0001}
	cfg["capture"] = map[string]any{"transcripts": map[string]any{"enabled": true, "claude_code_dirs": []string{sessions}}}
	raw, _ = json.Marshal(cfg)
	if err := os.WriteFile(in.cfgPath, raw, 0o600); err != nil {
		t.Fatal(err)
	}
	const turns, statements = 16, 5
	path := filepath.Join(sessions, "-home-dev-src-replayd", replaySession+".jsonl")
	blocks := replayTranscript(t, turns+1, statements)
	appendFile(t, path, strings.Join(blocks[:turns], ""))
	hook := func(p *proc) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if _, err := p.client.CaptureTranscript(ctx, httpapi.TranscriptRequest{Path: path, Event: "session-end", SessionID: replaySession, CWD: "/home/dev/src/replayd"}); err != nil {
			t.Fatalf("hook: %v", err)
		}
	}
	seed := uint64(time.Now().UnixNano())
	t.Logf("kill moments: seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 7))
	kills := 8
	if raceBuild {
		kills = 5
	}
	for i := range kills {
		p, err := in.start()
		if err != nil {
			t.Fatal(err)
		}
		hook(p)
		time.Sleep(time.Duration(rng.IntN(400)) * time.Millisecond) // a random moment, not a wait for an outcome
		p.kill()
		t.Logf("life %d killed", i)
	}
	// The last life reads the file to its end, and a last turn after the
	// others: once its statement is stored, every turn is decided.
	appendFile(t, path, blocks[turns])
	sentinel := fmt.Sprintf("zq%dx0y1", turns)
	p, err := in.start()
	if err != nil {
		t.Fatal(err)
	}
	hook(p)
	// Each look reads every memory: the looks back off (polltest), so a
	// slow last life is not slowed further by them.
	var live int
	if !polltest.Until(func() bool {
		now, _, err := read(context.Background(), p.client)
		if err != nil {
			t.Fatal(err)
		}
		live = len(now.live)
		for _, m := range now.live {
			if strings.Contains(m.Text, sentinel) {
				return true
			}
		}
		return false
	}) {
		ds, _ := p.client.Decisions(context.Background(), 100)
		for _, d := range ds {
			t.Logf("decision %s %s %s", d.Decision.Verdict, d.Decision.Stage, d.Decision.Reason)
		}
		st, _ := p.client.Stats(context.Background())
		t.Logf("%+v", st.Transcripts)
		t.Fatalf("the last life did not read the file to its end: %d memories", live)
	}
	if err := p.stop(); err != nil {
		t.Fatal(err)
	}
	if r := p.raced(); r != "" {
		t.Fatal(r)
	}
	s, err := store.Open(context.Background(), store.Options{Dir: filepath.Join(in.dataDir, daemon.StoreDir)})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	seen := map[string]int{}
	if err := s.Iterate(context.Background(), store.Filter{IncludeSnoozed: true, IncludeSuperseded: true}, func(m memory.Memory) error {
		seen[m.Text]++
		if m.ReinforcedCount != 0 || m.Superseded() {
			t.Errorf("memory %q: reinforced %d, superseded %v: a turn run again after a kill counted it twice", m.Text, m.ReinforcedCount, m.Superseded())
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if len(seen) < (turns+1)*statements/2 {
		t.Errorf("%d memories of %d statements: the session file was not captured", len(seen), (turns+1)*statements)
	}
	for text, n := range seen {
		if n != 1 {
			t.Errorf("memory %q stored %d times", text, n)
		}
	}
}
