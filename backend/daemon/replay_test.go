package daemon

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/memtray/memtray/backend/httpapi"
	"github.com/memtray/memtray/backend/memory"
	"github.com/memtray/memtray/backend/polltest"
	"github.com/memtray/memtray/backend/search"
)

// sseAnswer renders one Anthropic Messages stream: optional text, then an
// optional tool call, in the API's exact event format.
func sseAnswer(id, text, toolID, toolName, toolInput string) string {
	var b strings.Builder
	ev := func(name string, v any) {
		data, _ := json.Marshal(v)
		fmt.Fprintf(&b, "event: %s\ndata: %s\n\n", name, data)
	}
	ev("message_start", map[string]any{"type": "message_start", "message": map[string]any{
		"id": id, "type": "message", "role": "assistant", "model": "claude-test", "content": []any{},
		"stop_reason": nil, "usage": map[string]int{"input_tokens": 100, "output_tokens": 1}}})
	idx := 0
	if text != "" {
		ev("content_block_start", map[string]any{"type": "content_block_start", "index": idx, "content_block": map[string]any{"type": "text", "text": ""}})
		ev("ping", map[string]any{"type": "ping"})
		for _, part := range strings.SplitAfter(text, " ") {
			ev("content_block_delta", map[string]any{"type": "content_block_delta", "index": idx, "delta": map[string]any{"type": "text_delta", "text": part}})
		}
		ev("content_block_stop", map[string]any{"type": "content_block_stop", "index": idx})
		idx++
	}
	stop := "end_turn"
	if toolID != "" {
		stop = "tool_use"
		ev("content_block_start", map[string]any{"type": "content_block_start", "index": idx, "content_block": map[string]any{"type": "tool_use", "id": toolID, "name": toolName, "input": map[string]any{}}})
		ev("content_block_delta", map[string]any{"type": "content_block_delta", "index": idx, "delta": map[string]any{"type": "input_json_delta", "partial_json": toolInput}})
		ev("content_block_stop", map[string]any{"type": "content_block_stop", "index": idx})
	}
	ev("message_delta", map[string]any{"type": "message_delta", "delta": map[string]any{"stop_reason": stop}, "usage": map[string]int{"output_tokens": 50}})
	ev("message_stop", map[string]any{"type": "message_stop"})
	return b.String()
}

// replayTurn is one user turn: the prompt, the tool-loop iterations (each
// a narration, a tool call and the tool's result) and the final answer.
type replayTurn struct {
	prompt string
	loop   []replayStep
	final  string
}

type replayStep struct{ narration, tool, input, result string }

var replaySession = []replayTurn{
	{
		prompt: "How does the TLE fetcher cache element sets, and how long may ORBIT_TLE_CACHE_TTL be?",
		loop: []replayStep{
			{"Let me look at the fetcher first (LOOPNARR1).", "Read", `{"file_path":"/home/dev/orbit/internal/tle/fetcher.go"}`,
				"TOOLRESULT1 package tle\n// Fetcher pulls element sets from CelesTrak\nfunc (f *Fetcher) Refresh(ctx context.Context) error { return f.cache.Set(ctx, key, sets, ttl) }"},
			{"Now the config loader (LOOPNARR2).", "Grep", `{"pattern":"ORBIT_TLE_CACHE_TTL"}`,
				"TOOLRESULT2 internal/config/config.go:41: TLECacheTTL time.Duration `env:\"ORBIT_TLE_CACHE_TTL\" default:\"6h\"`"},
		},
		final: "The TLE fetcher caches element sets in Redis under tle:{norad_id}, and ORBIT_TLE_CACHE_TTL defaults to 6h. It must never exceed 24h because element sets go stale after a day, so keep the limit in config validation.",
	},
	{
		prompt: "Where do ground station coordinates live and in what datum?",
		loop: []replayStep{
			{"Searching for the stations table (LOOPNARR3).", "Grep", `{"pattern":"CREATE TABLE stations"}`,
				"TOOLRESULT3 migrations/0003_stations.sql: CREATE TABLE stations (lat double precision CHECK (lat BETWEEN -90 AND 90), lon double precision, alt_m double precision);"},
			{"Checking the model (LOOPNARR4).", "Read", `{"file_path":"/home/dev/orbit/internal/station/station.go"}`,
				"TOOLRESULT4 type Station struct { Lat, Lon, AltM float64 } // WGS84"},
			{"And the API layer (LOOPNARR5).", "Read", `{"file_path":"/home/dev/orbit/internal/http/stations.go"}`,
				"TOOLRESULT5 func toDegrees(rad float64) float64 { return rad * 180 / math.Pi }"},
		},
		final: "Ground stations are stored in the stations table as WGS84 geodetic latitude, longitude and altitude in metres, with a check constraint on the latitude range; convert to degrees only in the HTTP layer.",
	},
	{
		prompt: "Again: how long may ORBIT_TLE_CACHE_TTL be, and what caches the TLE element sets?",
		loop: []replayStep{
			{"Re-reading the fetcher (LOOPNARR6).", "Read", `{"file_path":"/home/dev/orbit/internal/tle/fetcher.go"}`, "TOOLRESULT6 unchanged"},
		},
		final: "Nothing changed since: the fetcher keeps element sets in Redis and the TTL stays at most 24h.",
	},
}

// TestReplaySessionThroughProxy drives a multi-step agent session through
// the daemon's real proxy to a loopback upstream speaking the Messages
// API, with the recall a Claude Code integration makes: the prompt hook at
// each user turn, plus (as a careless client would) a recall request on
// every tool-loop iteration. Recall must search once per user turn and
// never give a memory twice; no memory may come from a tool-loop iteration
// or a tool result; the turns' answers must be captured.
func TestReplaySessionThroughProxy(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var answers []string
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		mu.Lock()
		a := answers[0]
		answers = answers[1:]
		mu.Unlock()
		w.Header().Set("Content-Type", "text/event-stream")
		w.Header().Set("request-id", "req_test")
		fl := w.(http.Flusher)
		for _, ev := range strings.SplitAfter(a, "\n\n") {
			io.WriteString(w, ev)
			fl.Flush()
		}
	}))
	defer upstream.Close()

	cfg := testConfig(t)
	cfg.Capture.AnthropicUpstream = upstream.URL
	d, addr := serve(t, cfg)
	ctx := context.Background()
	seed := []string{
		"TLE element sets are cached in Redis; ORBIT_TLE_CACHE_TTL defaults to 6h and must never exceed 24h because element sets go stale.",
		"Ground station coordinates are WGS84 geodetic latitude, longitude and altitude in metres; the stations table checks the latitude range.",
		"All angles inside orbit are radians; convert to degrees only in the HTTP layer, never in the propagator.",
		"Pass predictions use SGP4 propagation from two-line element sets refreshed from CelesTrak every 6 hours.",
	}
	for _, s := range seed {
		if _, err := d.Memories().Add(ctx, httpapi.AddRequest{Text: s, Kind: "decision", Project: "orbit"}); err != nil {
			t.Fatal(err)
		}
	}
	client := httpapi.NewClient(addr, d.Token())
	const session = "5b0e7c1e-0000-4000-8000-00000000abcd"
	system := "You are Claude Code, Anthropic's official CLI for Claude.\n<env>\nWorking directory: /home/dev/orbit\nIs directory a git repo: Yes\n</env>"
	var messages []any
	given := map[string]bool{}
	requests, loopRecalls := 0, 0
	post := func(t *testing.T) {
		t.Helper()
		body, _ := json.Marshal(map[string]any{"model": "claude-test", "max_tokens": 1024, "stream": true, "system": system,
			"metadata": map[string]string{"user_id": "user_0123abcd_account_00000000-0000-0000-0000-000000000000_session_" + session},
			"messages": messages})
		req, _ := http.NewRequest(http.MethodPost, "http://"+addr+"/v1/messages?beta=true", bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("x-api-key", "sk-ant-test")
		req.Header.Set("anthropic-version", "2023-06-01")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		data, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || !bytes.Contains(data, []byte("message_stop")) {
			t.Fatalf("proxy answered %d: %.200s", resp.StatusCode, data)
		}
		requests++
	}
	recall := func(t *testing.T, req search.RecallRequest) {
		t.Helper()
		got, err := client.Recall(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		for _, h := range got.Hits {
			if given[h.Memory.ID] {
				t.Errorf("memory %s given twice in one session", h.Memory.ID)
			}
			given[h.Memory.ID] = true
		}
	}
	for ti, turn := range replaySession {
		// The UserPromptSubmit hook, once per user turn.
		recall(t, search.RecallRequest{SessionID: session, Prompt: turn.prompt, Project: "orbit"})
		messages = append(messages, map[string]any{"role": "user", "content": []any{
			map[string]any{"type": "text", "text": "<system-reminder>Today is a day.</system-reminder>"},
			map[string]any{"type": "text", "text": turn.prompt}}})
		for si, st := range turn.loop {
			toolID := fmt.Sprintf("toolu_%d_%d", ti, si)
			mu.Lock()
			answers = append(answers, sseAnswer(fmt.Sprintf("msg_%d_%d", ti, si), st.narration, toolID, st.tool, st.input))
			mu.Unlock()
			post(t)
			var input any
			json.Unmarshal([]byte(st.input), &input)
			messages = append(messages,
				map[string]any{"role": "assistant", "content": []any{
					map[string]any{"type": "text", "text": st.narration},
					map[string]any{"type": "tool_use", "id": toolID, "name": st.tool, "input": input}}},
				map[string]any{"role": "user", "content": []any{
					map[string]any{"type": "tool_result", "tool_use_id": toolID, "content": st.result}}})
			// A careless integration asks on every request: refused.
			recall(t, search.RecallRequest{SessionID: session, Prompt: st.result, Project: "orbit", ToolLoop: true})
			loopRecalls++
		}
		mu.Lock()
		answers = append(answers, sseAnswer(fmt.Sprintf("msg_%d_end", ti), turn.final, "", "", ""))
		mu.Unlock()
		post(t)
		messages = append(messages, map[string]any{"role": "assistant", "content": []any{map[string]any{"type": "text", "text": turn.final}}})
	}

	// Wait for the pipeline to take every captured exchange.
	var st httpapi.Stats
	var cs struct {
		Captured, Finished int64
		InFlight           int64 `json:"in_flight"`
		HandlerErrors      int64 `json:"handler_errors"` // untagged, it was never read
	}
	polltest.Wait(t, fmt.Sprintf("the pipeline to take all %d requests", requests), func() bool {
		var err error
		if st, err = client.Stats(ctx); err != nil {
			t.Fatal(err)
		}
		json.Unmarshal(st.Capture.Stats, &cs)
		return cs.Captured == int64(requests) && cs.InFlight == 0 && cs.Finished == cs.Captured
	}, func() string { return fmt.Sprintf("capture stats %s", st.Capture.Stats) })
	if cs.HandlerErrors > 0 {
		t.Fatalf("pipeline errors: %s", st.Capture.Stats)
	}
	if st.Recall.Searches != int64(len(replaySession)) || st.Recall.SkippedToolLoop != int64(loopRecalls) {
		t.Errorf("recall searched %d times for %d user turns (tool-loop recalls skipped %d of %d)",
			st.Recall.Searches, len(replaySession), st.Recall.SkippedToolLoop, loopRecalls)
	}
	if len(given) == 0 {
		t.Error("recall gave nothing in the whole session")
	}

	var all []memory.Memory
	list, err := client.List(ctx, httpapi.ListRequest{Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	for _, lm := range list.Memories {
		all = append(all, lm.Memory)
	}
	captured := 0
	for _, m := range all {
		if m.Source != memory.SourceCapture {
			continue
		}
		captured++
		if strings.Contains(m.Text, "TOOLRESULT") || strings.Contains(m.Text, "LOOPNARR") {
			t.Errorf("memory formed from a tool loop or a tool result: %q", m.Text)
		}
		if m.Project != "orbit" {
			t.Errorf("captured memory has project %q, want orbit", m.Project)
		}
	}
	for _, dec := range mustDecisions(t, client) {
		t.Logf("decision %s %s %s turn %d: %.80s", dec.Verdict, dec.Stage, dec.Reason, dec.Turn, dec.Assistant)
	}
	t.Logf("given %d, captured memories %d", len(given), captured)
	if captured == 0 {
		t.Errorf("no turn's answer was captured; decisions: %+v", mustDecisions(t, client))
	}
	for _, dec := range mustDecisions(t, client) {
		if dec.Kept() && (strings.Contains(dec.Assistant, "LOOPNARR") || strings.Contains(dec.Assistant, "TOOLRESULT")) {
			t.Errorf("a tool-loop exchange was kept: %+v", dec)
		}
		if dec.SessionID != session {
			t.Errorf("decision session %q, want %q", dec.SessionID, session)
		}
	}
}

func mustDecisions(t *testing.T, c *httpapi.Client) []httpapi.DecisionEntry {
	t.Helper()
	ds, err := c.Decisions(context.Background(), 100)
	if err != nil {
		t.Fatal(err)
	}
	return ds
}
