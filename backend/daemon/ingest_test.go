package daemon

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memtray/memtray/backend/httpapi"
	"github.com/memtray/memtray/backend/memory"
	"github.com/memtray/memtray/backend/noise"
)

// TestIngestAPI drives the write pipeline over real HTTP: ingest, the
// decision feed, keep, mark-as-noise and the noise state.
func TestIngestAPI(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cfg := testConfig(t)
	d, addr := serve(t, cfg)
	c := httpapi.NewClient(addr, d.Token())
	fact := "Staging deploys need `DEPLOY_ENV=staging` because the default config points at production; never deploy from a laptop."
	secret := "The CI bot authenticates with ghp_" + strings.Repeat("A1b2", 9) + " stored as `BOT_TOKEN`; we rotate it every 90 days because the org policy requires it."
	resp, err := c.Ingest(ctx, httpapi.IngestRequest{
		Exchanges: []memory.Exchange{
			{SessionID: "s1", Turn: 1, UserTurns: 1, User: "why the env var?", Assistant: fact},
			{SessionID: "s1", Turn: 2, UserTurns: 2, User: "how do retries work", Assistant: "Retries wait longer after each failure, with random jitter, so that many clients do not retry in lockstep and overload the service again."},
			{SessionID: "s1", Turn: 3, UserTurns: 3, User: "how does the bot log in", Assistant: secret},
		},
		Documents: []httpapi.Document{{Name: "DEPLOY.md", Text: "# Deploying\n\nRun `make deploy ENV=staging` from CI only. Production deploys need two approvals in the release channel."}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Decisions) != 4 {
		t.Fatalf("%d decisions, want 4", len(resp.Decisions))
	}
	if v := resp.Decisions[0].Verdict; v != memory.VerdictStored {
		t.Errorf("fact: %s (%s)", v, resp.Decisions[0].Reason)
	}
	if v := resp.Decisions[1].Verdict; v != memory.VerdictRejected {
		t.Errorf("generic: %s", v)
	}
	if v := resp.Decisions[3].Verdict; v != memory.VerdictStored {
		t.Errorf("document: %s", v)
	}
	// The secret never reaches the store, the feed or the preview.
	m, err := c.Get(ctx, resp.Decisions[2].MemoryIDs[0])
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(m.Text, "ghp_") || !strings.Contains(m.Text, "[REDACTED:") {
		t.Errorf("stored text not redacted: %q", m.Text)
	}
	feed, err := c.Decisions(ctx, 10)
	if err != nil || len(feed) != 4 {
		t.Fatalf("feed: %d entries (%v)", len(feed), err)
	}
	raw, _ := json.Marshal(feed)
	if bytes.Contains(raw, []byte("ghp_")) {
		t.Error("the decision feed shows the secret")
	}
	if feed[0].Source != "ingest:DEPLOY.md" || feed[3].Assistant != fact {
		t.Errorf("feed order or content: %q, %q", feed[0].Source, feed[3].Assistant)
	}
	doc, _ := c.Get(ctx, resp.Decisions[3].MemoryIDs[0])
	if doc.Source != "ingest:DEPLOY.md" {
		t.Errorf("document source %q", doc.Source)
	}

	// Keep the rejected exchange: it is stored; keeping a stored one is an error.
	kept, err := c.Keep(ctx, resp.Decisions[1].ID)
	if err != nil || !kept.Kept() {
		t.Fatalf("keep: %+v %v", kept, err)
	}
	if _, err := c.Keep(ctx, resp.Decisions[0].ID); !errors.Is(err, memory.ErrInvalid) || strings.Contains(err.Error(), "invalid input") ||
		!strings.Contains(err.Error(), resp.Decisions[0].MemoryIDs[0]) {
		t.Errorf("keep of a stored decision: %v; want what became of it, naming its memory", err)
	}
	if _, err := c.Keep(ctx, "nope"); !errors.Is(err, memory.ErrNotFound) {
		t.Errorf("keep of an unknown decision: %v", err)
	}

	// Mark the fact as noise: moved to the trash (Get no longer finds it),
	// and the noise model learns it.
	if err := c.MarkNoise(ctx, resp.Decisions[0].MemoryIDs[0]); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Get(ctx, resp.Decisions[0].MemoryIDs[0]); !errors.Is(err, memory.ErrNotFound) {
		t.Errorf("marked memory still there: %v", err)
	}
	ns, err := c.Noise(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var st noise.State
	if err := json.Unmarshal(ns.Scorer, &st); err != nil || st.BufferLen != 1 || st.Threshold != 0.35 {
		t.Errorf("noise state: %+v (%v)", st, err)
	}
	data, err := os.ReadFile(filepath.Join(cfg.DataDir, NoiseBufferFile))
	if err != nil || !bytes.Contains(data, []byte(`"source":"user"`)) {
		t.Errorf("buffer file: %s (%v)", data, err)
	}
	if ns.Judge != "" {
		t.Errorf("judge %q, want off by default", ns.Judge)
	}
}

// TestIngestAPIRejectsBadInput: invalid bodies get a clear 400 and change nothing.
func TestIngestAPIRejectsBadInput(t *testing.T) {
	t.Parallel()
	d, addr := serve(t, testConfig(t))
	bad := []string{
		`{}`,
		`{"exchanges":[{"assistant":"x","bogus":1}]}`,
		`{"exchanges":[{"assistant":"ok"},{"assistant":"x","turn":-1}]}`,
		`{"documents":[{"name":"","text":"x"}]}`,
		`not json`,
	}
	for _, body := range bad {
		req, _ := http.NewRequest("POST", "http://"+addr+"/api/ingest", strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+d.Token())
		req.Header.Set("Content-Type", "application/json")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != http.StatusBadRequest {
			t.Errorf("%s: status %d, want 400", body, res.StatusCode)
		}
	}
	if n := d.Store().Count(); n != 0 {
		t.Errorf("bad input stored %d memories", n)
	}
	feed, _ := d.Feed().Decisions(context.Background(), 10)
	if len(feed) != 0 {
		t.Errorf("bad input left %d decisions", len(feed))
	}
}

// TestIngestAPIAnswers: the user's answers posted with an exchange (an
// answer to the model's question, a refusal's words) are distilled as the
// transcript reader's are, from the JSON a client writes; an invalid
// answer is refused with a 400 that names it, and stores nothing.
func TestIngestAPIAnswers(t *testing.T) {
	t.Parallel()
	d, addr := serve(t, testConfig(t))
	post := func(body string) (int, string) {
		t.Helper()
		req, _ := http.NewRequest("POST", "http://"+addr+"/api/ingest", strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+d.Token())
		req.Header.Set("Content-Type", "application/json")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		var b bytes.Buffer
		b.ReadFrom(res.Body)
		return res.StatusCode, b.String()
	}
	turn := func(answers string) string {
		return `{"exchanges":[` +
			`{"session_id":"s-api","turn":1,"user_turns":1,"project":"mailer","user":"Fix the bounce handler in mailer/bounce.go.","assistant":"The handler treats SMTP 4xx replies as permanent failures.","tool_calls":[{"id":"e1","name":"Edit","input":"{}"}]},` +
			`{"session_id":"s-api","turn":2,"user_turns":1,"project":"mailer","tool_loop":true,"tool_results":[{"tool_use_id":"e1","name":"Edit","content":"rejected","is_error":true}],` +
			`"answers":` + answers + `,"assistant":"Requeueing soft bounces in mailer/bounce.go instead."}]}`
	}
	for _, bad := range []struct{ answers, want string }{
		{`[{"question":"","answer":"yes"}]`, "answers[0] has no question"},
		{`[{"question":"Which queue?","answer":" "}]`, "answers[0] has no answer"},
		{`[{"question":"Which queue?","answer":"redis","refused":true}]`, "answers[0] is refused and has a question"},
		{`[{"question":"Which queue?","answer":"redis","bogus":1}]`, "unknown field"},
	} {
		status, body := post(turn(bad.answers))
		if status != http.StatusBadRequest || !strings.Contains(body, bad.want) || !strings.Contains(body, "exchange 1") && bad.want != "unknown field" {
			t.Errorf("%s: %d %s", bad.answers, status, body)
		}
	}
	if n := d.Store().Count(); n != 0 {
		t.Fatalf("invalid answers stored %d memories", n)
	}

	status, body := post(turn(`[{"question":"Where should soft bounces go in mailer/bounce.go?","answer":"Back on the queue with a delay (the worker retries them)"},` +
		`{"answer":"Never retry inside the bounce handler: the worker owns retries and their backoff.","refused":true}]`))
	if status != http.StatusOK {
		t.Fatalf("%d %s", status, body)
	}
	var resp httpapi.IngestResponse
	if err := json.Unmarshal([]byte(body), &resp); err != nil || len(resp.Decisions) != 1 {
		t.Fatalf("%v: %s", err, body)
	}
	// Both reach the pipeline as the user's statements (whether the
	// answer passes the content gate is the gate's business); the
	// refusal's rule is stored.
	user := map[string]memory.CandidateVerdict{}
	for _, c := range resp.Decisions[0].Candidates {
		if c.Origin == "user" {
			user[c.Text] = c
		}
	}
	answer := "Q: Where should soft bounces go in mailer/bounce.go? A: Back on the queue with a delay (the worker retries them)"
	if c, ok := user[answer]; !ok || c.Class != "answer" {
		t.Errorf("the answer is no candidate of the user's: %+v", resp.Decisions[0].Candidates)
	}
	rule := "Never retry inside the bounce handler: the worker owns retries and their backoff."
	if c, ok := user[rule]; !ok || !c.Kept || c.Class != "preference" {
		t.Errorf("the refusal's rule is not kept as the user's: %+v", resp.Decisions[0].Candidates)
	}
}

// TestIngestAPICountsPrompts: POST /api/ingest of a session whose
// exchanges do not count the user's prompts (no user_turns) numbers its
// turns by the prompts they carry, when the request holds the session's
// start, so the feed names them as the user counts them ("turn 2", not
// "exchange 3"); a session sent from its middle keeps its exchange
// numbers, the prompts before it being unknown.
func TestIngestAPICountsPrompts(t *testing.T) {
	t.Parallel()
	d, addr := serve(t, testConfig(t))
	body := `{"exchanges":[` +
		`{"session_id":"s-full","turn":1,"user":"Why does the importer skip rows?","assistant":"Let me read the importer.","tool_calls":[{"id":"r1","name":"Read","input":"{}"}]},` +
		`{"session_id":"s-full","turn":2,"tool_loop":true,"tool_results":[{"tool_use_id":"r1","name":"Read","content":"..."}],"assistant":"The importer skips rows whose date column is empty because parseDate returns nil for blanks."},` +
		`{"session_id":"s-full","turn":3,"user":"Make it log them instead.","assistant":"The importer now logs each skipped row with its line number in importer/rows.go."},` +
		`{"session_id":"s-tail","turn":7,"user":"And the exporter?","assistant":"The exporter writes dates as RFC 3339 because the billing service parses nothing else."}]}`
	status, raw := apiCall(t, addr, d.Token(), "POST", "/api/ingest", json.RawMessage(body))
	var resp httpapi.IngestResponse
	if err := json.Unmarshal(raw, &resp); err != nil || status != http.StatusOK {
		t.Fatalf("status %d: %v", status, err)
	}
	var got []string
	for _, dec := range resp.Decisions {
		got = append(got, dec.TurnLabel())
	}
	want := []string{"turn 1", "turn 2", "exchange 7"}
	if strings.Join(got, ", ") != strings.Join(want, ", ") {
		t.Errorf("turns %q, want %q", got, want)
	}
	feed, err := httpapi.NewClient(addr, d.Token()).Decisions(context.Background(), 10)
	if err != nil || len(feed) != 3 {
		t.Fatalf("feed: %d entries (%v)", len(feed), err)
	}
	if feed[0].TurnLabel() != "exchange 7" || feed[1].TurnLabel() != "turn 2" || feed[1].Turn != 3 || feed[2].TurnLabel() != "turn 1" {
		t.Errorf("feed turns: %q (exchange %d), %q, %q", feed[0].TurnLabel(), feed[1].Turn, feed[1].TurnLabel(), feed[2].TurnLabel())
	}
}
