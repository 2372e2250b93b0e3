package daemon

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/memtray/memtray/backend/httpapi"
	"github.com/memtray/memtray/backend/ingest"
	"github.com/memtray/memtray/backend/memory"
	"github.com/memtray/memtray/backend/polltest"
	"github.com/memtray/memtray/backend/store"
	"github.com/memtray/memtray/backend/tail"
	"github.com/memtray/memtray/backend/transcript"
)

// correctedID is the session of testdata/corrected_session.jsonl: three
// user turns; turn 1 states a cause between tool calls, turn 2 states a
// fact between tool calls, turn 3 corrects turn 1 (and narrates a change
// between tool calls: no memory).
const correctedID = "c0ffee00-3a1b-4c2d-8e9f-corrected0001"

func correctedExchanges(t *testing.T) []memory.Exchange {
	t.Helper()
	f, err := os.Open("testdata/corrected_session.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	exs, _, err := transcript.Parse(f, transcript.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(exs) != 8 || len(ingest.GroupTurns(exs)) != 3 {
		t.Fatalf("fixture: %d exchanges, %d turns", len(exs), len(ingest.GroupTurns(exs)))
	}
	return exs
}

// liveTexts lists the texts of the memories recall can find, sorted.
func liveTexts(t *testing.T, d *Daemon) []string {
	t.Helper()
	var out []string
	if err := d.Store().Iterate(context.Background(), store.Filter{}, func(m memory.Memory) error {
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

// replayThroughProxy sends the exchanges of a Claude Code session through
// the daemon's proxy to a loopback upstream that answers each request with
// the exchange's response, as Claude Code would send them.
func replayThroughProxy(t *testing.T, exs []memory.Exchange, cwd string) *Daemon {
	t.Helper()
	var mu sync.Mutex
	var answers []string
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		mu.Lock()
		a := answers[0]
		answers = answers[1:]
		mu.Unlock()
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, a)
	}))
	t.Cleanup(upstream.Close)
	cfg := testConfig(t)
	cfg.Capture.AnthropicUpstream = upstream.URL
	cfg.Capture.Transcripts.Enabled = false
	d, addr := serve(t, cfg)
	var messages []any
	for i, ex := range exs {
		if ex.ToolLoop {
			var blocks []any
			for _, r := range ex.ToolResults {
				blocks = append(blocks, map[string]any{"type": "tool_result", "tool_use_id": r.ToolUseID, "content": r.Content})
			}
			messages = append(messages, map[string]any{"role": "user", "content": blocks})
		} else {
			messages = append(messages, map[string]any{"role": "user", "content": ex.User})
		}
		var call memory.ToolCall
		if len(ex.ToolCalls) > 0 {
			call = ex.ToolCalls[0]
		}
		mu.Lock()
		answers = append(answers, sseAnswer(fmt.Sprintf("msg_%d", i), ex.Assistant, call.ID, call.Name, call.Input))
		mu.Unlock()
		body, _ := json.Marshal(map[string]any{"model": "claude-test", "max_tokens": 1024, "stream": true,
			"system":   "You are Claude Code, Anthropic's official CLI for Claude.\n<env>\nWorking directory: " + cwd + "\n</env>",
			"metadata": map[string]string{"user_id": "user_0123abcd_account_00000000-0000-0000-0000-000000000000_session_" + ex.SessionID},
			"messages": messages})
		resp, err := http.Post("http://"+addr+"/v1/messages", "application/json", bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("proxy answered %d", resp.StatusCode)
		}
		content := []any{}
		if ex.Assistant != "" {
			content = append(content, map[string]any{"type": "text", "text": ex.Assistant})
		}
		if call.ID != "" {
			content = append(content, map[string]any{"type": "tool_use", "id": call.ID, "name": call.Name, "input": json.RawMessage(call.Input)})
		}
		messages = append(messages, map[string]any{"role": "assistant", "content": content})
	}
	waitHandled(t, d, len(exs))
	return d
}

// TestLiveCaptureStoresWhatIngestStores is issue 19 item 1: a Claude Code
// session captured live, through the proxy or from its session file as
// it grows, leaves the store `memtray ingest` of its transcript leaves: a
// finding stated between tool calls is kept with its turn, and a
// statement a later turn corrects is not left standing.
func TestLiveCaptureStoresWhatIngestStores(t *testing.T) {
	t.Parallel()
	exs := correctedExchanges(t)
	ctx := context.Background()

	cfg := testConfig(t)
	cfg.Capture.Transcripts.Enabled = false
	batch, _ := serve(t, cfg)
	if _, err := batch.Feed().Ingest(ctx, httpapi.IngestRequest{Exchanges: exs}); err != nil {
		t.Fatal(err)
	}
	want := liveTexts(t, batch)
	if len(want) < 2 || !slices.ContainsFunc(want, func(s string) bool { return strings.Contains(s, "docs/api.md") }) ||
		slices.ContainsFunc(want, func(s string) bool { return strings.Contains(s, "real clock") || strings.Contains(s, "retryBudget") }) {
		t.Fatalf("ingest stored %q: want the tool-loop finding of turn 2 and the correction of turn 3, not what turn 3 corrects nor its narration", want)
	}

	t.Run("proxy", func(t *testing.T) {
		d := replayThroughProxy(t, exs, "/home/dev/shop")
		endLiveTurns(t, d)
		if got := liveTexts(t, d); !slices.Equal(got, want) {
			t.Errorf("live capture through the proxy stored\n%q\nmemtray ingest stored\n%q", got, want)
		}
		var revised bool
		for _, e := range d.decisions.Newest(100) {
			for _, c := range e.Candidates {
				revised = revised || (c.Origin == ingest.OriginEarlier && strings.Contains(c.Reason, "superseded by"))
			}
		}
		if !revised {
			t.Errorf("no decision shows turn 1's statement superseded: %+v", d.decisions.Newest(100))
		}
	})

	t.Run("transcript", func(t *testing.T) {
		cfg := testConfig(t)
		root := t.TempDir()
		cfg.Capture.Transcripts.ClaudeCodeDirs = []string{root}
		d, _ := serve(t, cfg)
		data, err := os.ReadFile("testdata/corrected_session.jsonl")
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(root, "-home-dev-shop", correctedID+".jsonl")
		os.MkdirAll(filepath.Dir(path), 0o700)
		lines := bytes.SplitAfter(data, []byte("\n"))
		cl := httpapi.NewClient(d.listen, d.Token())
		// The file grows a turn at a time; the Stop hook fires after each.
		written := 0
		for _, end := range []int{5, 13, len(lines)} {
			f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
			if err != nil {
				t.Fatal(err)
			}
			for _, l := range lines[written:end] {
				f.Write(l)
			}
			f.Close()
			written = end
			before := d.tail.Stats().Processed
			if got, err := cl.CaptureTranscript(ctx, httpapi.TranscriptRequest{Path: path, Event: tail.EventStop, SessionID: correctedID, CWD: "/home/dev/shop"}); err != nil || !got.Queued {
				t.Fatalf("hook: %+v %v", got, err)
			}
			waitTail(t, d, before+1)
		}
		if got := liveTexts(t, d); !slices.Equal(got, want) {
			t.Errorf("live capture from the session file stored\n%q\nmemtray ingest stored\n%q", got, want)
		}
	})
}

// waitTail waits (a deadline, not an assertion on time) until the tailer
// has done n reads and has none waiting.
func waitTail(t *testing.T, d *Daemon, n int) {
	t.Helper()
	polltest.Wait(t, fmt.Sprintf("the daemon to read the transcript (%d reads, none queued)", n), func() bool {
		st := d.tail.Stats()
		return st.Processed >= n && st.Queued == 0
	}, func() string { return fmt.Sprintf("%+v", d.tail.Stats()) })
}

// TestLiveTurnsSurviveRestart: the exchanges of a turn the proxy took are
// on disk, secrets masked, until the turn is decided; a daemon started on
// the data dir decides what an earlier run left.
func TestLiveTurnsSurviveRestart(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cfg := testConfig(t)
	cfg.Capture.Transcripts.Enabled = false
	d := openAt(t, cfg, &jumpClock{})
	exs := correctedExchanges(t)
	const secret = "ghp_Zq8Lm2Xr7Tv4Kp9Wd3Ny6Hb1Jc5Fs0Ge7Qa2"
	exs[0].User += " The token is " + secret + "."
	for _, ex := range exs[:1] { // turn 1's first response called a tool: the turn goes on
		if err := d.captureExchange(ctx, ex); err != nil {
			t.Fatal(err)
		}
	}
	if d.liveState() != 1 || d.Store().Count() != 0 || len(d.decisions.Newest(10)) != 0 {
		t.Fatalf("the turn was decided before it ended: %d live, %d memories", d.liveState(), d.Store().Count())
	}
	files, _ := filepath.Glob(filepath.Join(cfg.DataDir, LiveTurnsDir, "*.jsonl"))
	if len(files) != 1 {
		t.Fatalf("live turn files %v", files)
	}
	if data, _ := os.ReadFile(files[0]); bytes.Contains(data, []byte(secret)) {
		t.Fatal("a secret was written to disk")
	}
	d.Close()

	d2 := openAt(t, cfg, &jumpClock{})
	if d2.liveState() != 1 {
		t.Fatalf("%d live turns after the restart, want 1", d2.liveState())
	}
	// The rest of the turn comes after the restart: it ends the turn.
	for _, ex := range exs[1:2] {
		if err := d2.captureExchange(ctx, ex); err != nil {
			t.Fatal(err)
		}
	}
	feed := feedFor(d2, correctedID)
	if len(feed) != 1 || d2.liveState() != 0 {
		t.Fatalf("%d decisions, %d live turns: %+v", len(feed), d2.liveState(), feed)
	}
	if e := feed[0]; !e.Kept() || len(e.Candidates) < 2 || strings.Contains(e.User, secret) {
		t.Errorf("decision %+v", e)
	}
	if files, _ := filepath.Glob(filepath.Join(cfg.DataDir, LiveTurnsDir, "*.jsonl")); len(files) != 0 {
		t.Errorf("live turn files left: %v", files)
	}

	// A turn a kill left on disk is decided when the daemon starts.
	if err := d2.captureExchange(ctx, exs[2]); err != nil {
		t.Fatal(err)
	}
	d2.Close()
	d3 := openAt(t, cfg, &jumpClock{})
	runCtx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { d3.runLive(runCtx); close(done) }()
	polltest.Wait(t, "the turn left on disk to be decided at start", func() bool { return d3.liveState() == 0 }, nil)
	cancel()
	<-done
	// The feed keeps turn 1's decision across the restart (issue 21 bug 8),
	// and adds the turn decided at start.
	if got := feedFor(d3, correctedID); len(got) != 2 || got[0].Turn != 1 || got[1].Turn != 3 {
		t.Errorf("decisions after start: %+v", got)
	}
}

func FuzzParseLive(f *testing.F) {
	ex, _ := json.Marshal(memory.Exchange{SessionID: "s", User: "u", Assistant: "a"})
	f.Add(append(ex, '\n'))
	f.Add([]byte("{}\nnot json\n" + string(ex)))
	f.Add([]byte(`{"session_id":"s","user":"\u0000"}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		exs, bad := parseLive(data)
		if bad < 0 {
			t.Fatal("negative count")
		}
		for _, ex := range exs {
			if ex.SessionID != exs[0].SessionID || ingest.Validate(ex) != nil {
				t.Fatalf("invalid exchange kept: %+v", ex)
			}
		}
	})
}

// endLiveTurns ends every turn the proxy is assembling, as shutdown does.
func endLiveTurns(t *testing.T, d *Daemon) {
	t.Helper()
	if err := d.endLiveWhere(context.Background(), func(*liveSession) bool { return true }); err != nil {
		t.Fatal(err)
	}
}

// TestLiveTurnEndedByHooks: a Stop hook does not end a turn whose last
// response called a tool (its result is still coming); a SessionEnd hook
// ends it.
func TestLiveTurnEndedByHooks(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cfg := testConfig(t)
	cfg.Capture.Transcripts.Enabled = false
	d, addr := serve(t, cfg)
	cl := httpapi.NewClient(addr, d.Token())
	exs := correctedExchanges(t)
	if err := d.captureExchange(ctx, exs[0]); err != nil { // calls a tool
		t.Fatal(err)
	}
	hook := func(event string) {
		t.Helper()
		// Capture from session files is off: the request is refused, but
		// the proxy's turn of the session is told all the same.
		cl.CaptureTranscript(ctx, httpapi.TranscriptRequest{Path: "/nowhere.jsonl", Event: event, SessionID: correctedID})
	}
	hook(tail.EventStop)
	hook(tail.EventSessionEnd)
	polltest.Wait(t, "SessionEnd to end the turn", func() bool { return d.liveState() == 0 }, nil)
	if feed := feedFor(d, correctedID); len(feed) != 1 {
		t.Fatalf("%d decisions, want the turn's one", len(feed))
	}
}
