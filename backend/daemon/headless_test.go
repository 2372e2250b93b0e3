package daemon

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/memtray/memtray/backend/config"
	"github.com/memtray/memtray/backend/httpapi"
	"github.com/memtray/memtray/backend/ingest"
	"github.com/memtray/memtray/backend/memory"
	"github.com/memtray/memtray/backend/polltest"
)

// headlessFacts are the answers of a headless session's turns: each one a
// memory of its own.
var headlessFacts = []string{
	"The billing worker reads `BILLING_QUEUE=billing-v2` from `deploy/worker.env` because the v1 queue is drained and kept only for replays.",
	"Our integration tests need Postgres on port 55432, not 5432, because `docker-compose.test.yml` maps it there to avoid the developer's own database.",
	"The release script signs tags with the key in `release/signing.pub`; we never sign from a laptop because the key lives only on the CI runner.",
	"Feature flags live in `config/flags.yaml` and are read once at startup, so a flag change needs a rolling restart of the api pods.",
}

// headlessTurn is the n-th user turn (from 1) of the headless session id.
func headlessTurn(id string, n int) memory.Exchange {
	return memory.Exchange{SessionID: id, Turn: 2*n - 1, UserTurns: n, Headless: true, Source: "capture",
		User: fmt.Sprintf("question %d about the setup", n), Assistant: headlessFacts[(n-1)%len(headlessFacts)]}
}

// feedFor lists the logged decisions of a session, oldest first.
func feedFor(d *Daemon, session string) []httpapi.DecisionEntry {
	var out []httpapi.DecisionEntry
	all := d.decisions.Newest(1000)
	for i := len(all) - 1; i >= 0; i-- {
		if all[i].SessionID == session {
			out = append(out, all[i])
		}
	}
	return out
}

// TestHeadlessSessionGrowsThroughProxy is issue 24 item 5: the first turns
// of a `claude -p --continue` session were rejected for good; once the
// session reaches 3 user turns every turn of it forms memories, the first
// ones included, in order.
func TestHeadlessSessionGrowsThroughProxy(t *testing.T) {
	t.Parallel()
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Messages []json.RawMessage `json:"messages"`
		}
		json.NewDecoder(r.Body).Decode(&req)
		w.Header().Set("Content-Type", "text/event-stream")
		n := (len(req.Messages) + 1) / 2 // user, assistant, user, ...
		io.WriteString(w, sseAnswer(fmt.Sprintf("msg_%d", n), headlessFacts[n-1], "", "", ""))
	}))
	defer upstream.Close()
	cfg := testConfig(t)
	cfg.Capture.AnthropicUpstream = upstream.URL
	d, addr := serve(t, cfg)
	const session = "0b7d3c7e-4a61-4f0e-9d0a-5c1f2b7e9a11"
	var messages []map[string]string
	send := func(n int) {
		t.Helper()
		if n > 1 {
			messages = append(messages, map[string]string{"role": "assistant", "content": headlessFacts[n-2]})
		}
		messages = append(messages, map[string]string{"role": "user", "content": fmt.Sprintf("question %d about the setup", n)})
		body, _ := json.Marshal(map[string]any{"model": "m", "max_tokens": 100, "stream": true,
			"system":   "You are a Claude agent, built on Anthropic's Claude Agent SDK.\nWorking directory: /home/dev/billing",
			"metadata": map[string]string{"user_id": "user_abc_account_def_session_" + session},
			"messages": messages})
		resp, err := http.Post("http://"+addr+"/v1/messages", "application/json", strings.NewReader(string(body)))
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("proxy: %d", resp.StatusCode)
		}
		waitHandled(t, d, n)
	}
	send(1)
	send(2)
	if st, held := d.holdState(); held != 2 || st.Held != 2 || d.store.Count() != 0 || len(feedFor(d, session)) != 0 {
		t.Fatalf("before the 3rd turn: %d held (%+v), %d memories, feed %+v", held, st, d.store.Count(), feedFor(d, session))
	}
	send(3)
	feed := feedFor(d, session)
	if len(feed) != 3 {
		t.Fatalf("feed has %d decisions of the session, want 3: %+v", len(feed), feed)
	}
	for i, e := range feed {
		if e.Verdict != memory.VerdictStored || e.Turn != i+1 {
			t.Errorf("decision %d: turn %d %s at %s (%s)", i, e.Turn, e.Verdict, e.Stage, e.Reason)
		}
	}
	if st, held := d.holdState(); held != 0 || st.Released != 2 {
		t.Errorf("after the 3rd turn: %d held, %+v", held, st)
	}
	if entries, _ := os.ReadDir(filepath.Join(cfg.DataDir, HeadlessHoldDir)); len(entries) != 0 {
		t.Errorf("hold files left: %v", entries)
	}
}

// waitHandled waits until the proxy's worker has taken n exchanges.
func waitHandled(t *testing.T, d *Daemon, n int) {
	t.Helper()
	handled := func() float64 {
		var m map[string]any
		raw, _ := json.Marshal(d.proxy.Stats())
		json.Unmarshal(raw, &m)
		h, _ := m["handled"].(float64)
		return h
	}
	polltest.Wait(t, fmt.Sprintf("the proxy to handle %d exchanges", n), func() bool { return int(handled()) >= n },
		func() string { return fmt.Sprintf("%v handled", handled()) })
}

// openAt opens a daemon (not serving) on cfg with a clock the test moves.
func openAt(t *testing.T, cfg config.Config, clock memory.Clock) *Daemon {
	t.Helper()
	d, err := Open(context.Background(), Options{Config: cfg, Clock: clock})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return d
}

// TestHeadlessHoldSurvivesRestart: turns held before a restart are
// released when the session reaches the count after it, or rejected when
// it ends under the count.
func TestHeadlessHoldSurvivesRestart(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, grows := range []bool{true, false} {
		t.Run(fmt.Sprintf("grows=%v", grows), func(t *testing.T) {
			cfg := testConfig(t)
			clock := &jumpClock{}
			d := openAt(t, cfg, clock)
			for n := 1; n <= 2; n++ {
				if err := d.process(ctx, headlessTurn("s1", n)); err != nil {
					t.Fatal(err)
				}
			}
			d.Close()
			d2 := openAt(t, cfg, clock)
			if _, held := d2.holdState(); held != 2 {
				t.Fatalf("%d turns held after the restart, want 2", held)
			}
			want := memory.VerdictStored
			if grows {
				if err := d2.process(ctx, headlessTurn("s1", 3)); err != nil {
					t.Fatal(err)
				}
			} else {
				clock.jump(time.Duration(cfg.Ingest.HeadlessIdle))
				if err := d2.expireHold(ctx); err != nil {
					t.Fatal(err)
				}
				want = memory.VerdictRejected
			}
			feed := feedFor(d2, "s1")
			if n := 2 + map[bool]int{true: 1}[grows]; len(feed) != n {
				t.Fatalf("%d decisions, want %d: %+v", len(feed), n, feed)
			}
			for i, e := range feed[:2] {
				if e.Verdict != want || e.Turn != 2*i+1 || e.Assistant != headlessFacts[i] {
					t.Errorf("held turn %d: turn %d %s (%s)", i+1, e.Turn, e.Verdict, e.Reason)
				}
				if !grows && (e.Stage != ingest.StageHeadless || e.Reason != "headless session with 2 user turns (fewer than 3)") {
					t.Errorf("held turn %d: rejected at %s: %q", i+1, e.Stage, e.Reason)
				}
			}
			if _, held := d2.holdState(); held != 0 {
				t.Errorf("%d turns still held", held)
			}
		})
	}
}

// TestHeadlessHoldIdle: a session is ended only by headless_idle without a
// turn of it; a new turn starts the wait again.
func TestHeadlessHoldIdle(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cfg := testConfig(t)
	clock := &jumpClock{}
	d := openAt(t, cfg, clock)
	idle := time.Duration(cfg.Ingest.HeadlessIdle)
	d.process(ctx, headlessTurn("s1", 1))
	clock.jump(idle - time.Minute)
	d.process(ctx, headlessTurn("s1", 2))
	clock.jump(2 * time.Minute)
	if err := d.expireHold(ctx); err != nil {
		t.Fatal(err)
	}
	if _, held := d.holdState(); held != 2 {
		t.Fatalf("%d held: the session ended while it still had turns coming", held)
	}
	clock.jump(idle)
	if err := d.expireHold(ctx); err != nil {
		t.Fatal(err)
	}
	if st, held := d.holdState(); held != 0 || st.Expired != 2 {
		t.Fatalf("%d held, %+v", held, st)
	}
}

// TestHeadlessHoldBounds: past its bounds the hold drops the oldest turn,
// of the session and then of all, rejected with a reason and counted.
func TestHeadlessHoldBounds(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cfg := testConfig(t)
	cfg.Ingest.HeadlessMinUserTurns, cfg.Ingest.HeadlessHoldTurns, cfg.Ingest.HeadlessHoldTotal = 10, 2, 3
	clock := &jumpClock{}
	d := openAt(t, cfg, clock)
	for _, ex := range []memory.Exchange{headlessTurn("a", 1), headlessTurn("a", 2), headlessTurn("a", 3), headlessTurn("b", 1), headlessTurn("b", 2)} {
		clock.jump(time.Second)
		if err := d.process(ctx, ex); err != nil {
			t.Fatal(err)
		}
	}
	st, held := d.holdState()
	if held != 3 || st.Dropped != 2 {
		t.Fatalf("%d held, %+v; want 3 held and 2 dropped", held, st)
	}
	feed := feedFor(d, "a")
	if len(feed) != 2 || feed[0].Turn != 1 || feed[1].Turn != 3 {
		t.Fatalf("dropped: %+v", feed)
	}
	for _, e := range feed {
		if e.Verdict != memory.VerdictRejected || !strings.Contains(e.Reason, "headless hold full") {
			t.Errorf("dropped turn %d: %s %q", e.Turn, e.Verdict, e.Reason)
		}
	}
	// What is left on disk is what is held.
	d.Close()
	d2 := openAt(t, cfg, clock)
	if _, held := d2.holdState(); held != 3 {
		t.Errorf("%d held after a restart, want 3", held)
	}
	if s := d2.hold.sessions["a"]; s == nil || len(s.turns) != 1 || s.turns[0].Exchange.UserTurns != 3 {
		t.Errorf("session a after a restart: %+v", s)
	}
}

// TestHeadlessIngestComplete: the exchanges of an ingest request are all
// there is of their sessions: a headless transcript that reaches 3 user
// turns keeps its first turns, one that does not is rejected at once.
func TestHeadlessIngestComplete(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d := openAt(t, testConfig(t), &jumpClock{})
	resp, err := d.Feed().Ingest(ctx, httpapi.IngestRequest{Exchanges: []memory.Exchange{
		headlessTurn("grown", 1), headlessTurn("grown", 2), headlessTurn("grown", 3), headlessTurn("short", 1)}})
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []memory.Verdict{memory.VerdictStored, memory.VerdictStored, memory.VerdictStored, memory.VerdictRejected} {
		if dec := resp.Decisions[i]; dec.Verdict != want && !(want == memory.VerdictStored && dec.Kept()) {
			t.Errorf("exchange %d: %s at %s (%s), want %s", i, dec.Verdict, dec.Stage, dec.Reason, want)
		}
	}
	if _, held := d.holdState(); held != 0 {
		t.Errorf("an ingest request left %d turns held", held)
	}
}

// FuzzParseHold: a hold file of any content gives valid headless turns of
// one session, or none, and never panics.
func FuzzParseHold(f *testing.F) {
	line, _ := json.Marshal(heldTurn{Exchange: headlessTurn("s", 1), HeldAt: time.Unix(0, 0)})
	f.Add(string(line) + "\n")
	f.Add(string(line) + "\n{\"exchange\":{\"session_id\":\"t\",\"headless\":true}}\n")
	f.Add("{\n")
	f.Add(`{"exchange":{"session_id":"s","headless":true,"user_turns":-1}}`)
	f.Fuzz(func(t *testing.T, data string) {
		turns, _ := parseHold([]byte(data))
		for _, h := range turns {
			if h.Exchange.SessionID != turns[0].Exchange.SessionID || !h.Exchange.Headless || ingest.Validate(h.Exchange) != nil {
				t.Fatalf("invalid turn kept: %+v", h.Exchange)
			}
		}
	})
}

// TestRedactExchangeAnswers: the user's answers are masked like the rest
// of an exchange kept on disk.
func TestRedactExchangeAnswers(t *testing.T) {
	t.Parallel()
	const token = "ghp_u8jzPde0IgxLd6GncfBAepfJBd0Kh8oOOL8d"
	ex := memory.Exchange{User: "deploy", Answers: []memory.Answer{{Question: "Which token, " + token + "?", Answer: "use " + token}}}
	got := redactExchange(ex)
	if len(got.Answers) != 1 || strings.Contains(got.Answers[0].Question, token) || strings.Contains(got.Answers[0].Answer, token) {
		t.Fatalf("answers not masked: %+v", got.Answers)
	}
	if !strings.Contains(ex.Answers[0].Answer, token) {
		t.Fatal("the caller's exchange was changed")
	}
	refused := redactExchange(memory.Exchange{User: "deploy", Answers: []memory.Answer{{Answer: "push with " + token, Refused: true}}})
	if a := refused.Answers[0]; !a.Refused || strings.Contains(a.Answer, token) {
		t.Fatalf("a refusal's words: %+v", a)
	}
}
