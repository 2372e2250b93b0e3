package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/memtray/memtray/backend/config"
	"github.com/memtray/memtray/backend/httpapi"
	"github.com/memtray/memtray/backend/mcp"
	"github.com/memtray/memtray/backend/memory"
	"github.com/memtray/memtray/backend/search"
)

// heldStandIn is the stand-in's backend (mcp.Unavailable) whose every
// call says on entered that it came, then waits for gate to close before
// answering with its error: calls held in flight on the stand-in.
type heldStandIn struct {
	mcp.Unavailable
	entered chan<- string
	gate    <-chan struct{}
}

func (h heldStandIn) hold(ctx context.Context, what string) {
	h.entered <- what
	select {
	case <-h.gate:
	case <-ctx.Done():
	}
}

func (h heldStandIn) Recall(ctx context.Context, r search.RecallRequest) (search.Recalled, error) {
	h.hold(ctx, "recall")
	return h.Unavailable.Recall(ctx, r)
}

func (h heldStandIn) Remember(ctx context.Context, m memory.Memory) (memory.Decision, error) {
	h.hold(ctx, "remember")
	return h.Unavailable.Remember(ctx, m)
}

func (h heldStandIn) Delete(ctx context.Context, id string) error {
	h.hold(ctx, "delete")
	return h.Unavailable.Delete(ctx, id)
}

func (h heldStandIn) IngestDocument(ctx context.Context, name, project, text string) (memory.Decision, error) {
	h.hold(ctx, "ingest")
	return h.Unavailable.IngestDocument(ctx, name, project, text)
}

func (h heldStandIn) Reinforce(ctx context.Context, id string) (memory.Memory, error) {
	h.hold(ctx, "reinforce")
	return h.Unavailable.Reinforce(ctx, id)
}

func (h heldStandIn) Rate(ctx context.Context, ids []string, score int, reason string) ([]memory.Memory, error) {
	h.hold(ctx, "rate")
	return h.Unavailable.Rate(ctx, ids, score, reason)
}

func (h heldStandIn) Snooze(ctx context.Context, id string, days float64) (memory.Memory, error) {
	h.hold(ctx, "snooze")
	return h.Unavailable.Snooze(ctx, id, days)
}

func (h heldStandIn) Status(ctx context.Context) (mcp.Status, error) {
	h.hold(ctx, "status")
	return h.Unavailable.Status(ctx)
}

// switchFacts are stored by calls in flight at the switch: one memory
// each, on unrelated subjects, so none is a duplicate of another.
var switchFacts = []string{
	"The billing service rounds invoice totals half-even, never half-up.",
	"Staging deploys need the VPN profile named corp-east before kubectl works.",
	"The mobile app pins TLS certificates; rotating them needs an app release first.",
	"Flaky test TestUploadResume fails when TMPDIR is on tmpfs; it needs a real disk.",
	"Grafana dashboards live in ops/dashboards as JSON and are provisioned on boot.",
	"The search API caps page size at 200; clients must follow the next cursor.",
}

// TestMCPSwitchKeepsCallsInFlight: calls the agent made while `memtray
// mcp` served its stand-in (no daemon could start), still unanswered there
// when a daemon came and the bridge moved to it, are carried out by the
// daemon: every one succeeds, and each write is applied once (each fact
// stored once, the reinforced memory reinforced once). Before, each got
// "the connection to the daemon broke while the call ran". Calls of every
// kind, at once: stores, a reinforce, searches, statuses, tools/list.
func TestMCPSwitchKeepsCallsInFlight(t *testing.T) {
	cfg := mcpIsolate(t)
	ctx := context.Background()
	_, stop := runDaemon(t, cfg)
	seed, err := liveClient(t, cfg.DataDir).Add(ctx, httpapi.AddRequest{Text: "Release branches are cut on Thursdays after the freeze call.", Kind: "fact"})
	if err != nil {
		t.Fatal(err)
	}
	stop()

	oldStart, oldEvery, oldBackend := startDaemon, recoverEvery, standInBackend
	t.Cleanup(func() { startDaemon, recoverEvery, standInBackend = oldStart, oldEvery, oldBackend })
	startDaemon = func(config.Config, string) (<-chan error, error) {
		return nil, errors.New("no memtray executable here")
	}
	recoverEvery = 1e9 * 3600 // an hour: only the daemon answering ends the stand-in
	entered, gate := make(chan string, 64), make(chan struct{})
	standInBackend = func(why error) mcp.Backend {
		return heldStandIn{Unavailable: mcp.Unavailable{Err: why}, entered: entered, gate: gate}
	}

	a := agentWire(t, nil, "--data-dir", cfg.DataDir)
	type call struct {
		name string
		args map[string]any
	}
	var calls []call
	for _, f := range switchFacts {
		calls = append(calls, call{mcp.ToolStore, map[string]any{"text": f, "kind": "fact"}})
	}
	calls = append(calls, call{mcp.ToolReinforce, map[string]any{"id": seed.ID}})
	for range 3 {
		calls = append(calls,
			call{mcp.ToolSearch, map[string]any{"query": "when are release branches cut"}},
			call{mcp.ToolStatus, nil})
	}
	results := make([]*sdk.CallToolResult, len(calls))
	errs := make([]error, len(calls))
	var wg sync.WaitGroup
	for i, c := range calls {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i], errs[i] = a.cs.CallTool(t.Context(), &sdk.CallToolParams{Name: c.name, Arguments: c.args})
		}()
	}
	for i := range calls {
		waitRecv(t, fmt.Sprintf("call %d/%d held on the stand-in", i+1, len(calls)), entered)
	}

	// A daemon comes; the next call finds it and moves the bridge to it
	// while every call above is still in flight on the stand-in.
	runDaemon(t, cfg)
	listed := make(chan error, 1)
	go func() {
		_, err := a.cs.ListTools(t.Context(), nil)
		listed <- err
	}()
	var st mcp.Status
	if res := callTool(t, a.cs, mcp.ToolStatus, nil, &st); res.IsError || st.Version == "" {
		t.Fatalf("status once the daemon runs: %s\n%s", toolText(res), a.stderr.String())
	}
	close(gate)
	wg.Wait()
	if err := waitRecv(t, "tools/list", listed); err != nil {
		t.Errorf("tools/list across the switch: %v", err)
	}

	for i, c := range calls {
		switch {
		case errs[i] != nil:
			t.Errorf("%s in flight at the switch: %v", c.name, errs[i])
		case results[i].IsError:
			t.Errorf("%s in flight at the switch: tool error %s", c.name, toolText(results[i]))
		case c.name == mcp.ToolStore:
			var out mcp.StoreResult
			if data, ok := results[i].StructuredContent.(map[string]any); ok {
				out.Result, _ = data["result"].(string)
			}
			if out.Result != "created" {
				t.Errorf("store of %q: %s, want created", c.args["text"], toolText(results[i]))
			}
		}
	}
	cl := liveClient(t, cfg.DataDir)
	got, err := cl.Get(ctx, seed.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.ReinforcedCount != 1 {
		t.Errorf("the memory reinforced by one call was reinforced %d times", got.ReinforcedCount)
	}
	list, err := cl.List(ctx, httpapi.ListRequest{Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	stored := map[string]int{}
	for _, m := range list.Memories {
		stored[m.Text]++
	}
	for _, f := range switchFacts {
		if stored[f] != 1 {
			t.Errorf("%q stored %d times, want once", f, stored[f])
		}
	}
	if list.Total != 1+len(switchFacts) {
		t.Errorf("%d memories, want %d (the seed and one a fact)", list.Total, 1+len(switchFacts))
	}
	if n := strings.Count(a.stderr.String(), "answers: serving memtray's tools through it"); n != 1 {
		t.Errorf("moved to the daemon %d times, want 1:\n%s", n, a.stderr.String())
	}
	a.cs.Close()
	if code := waitExit(t, a.code); code != 0 {
		t.Errorf("exit code %d, want 0", code)
	}
	checkExchange(t, a)
}

// TestRepeatable: which calls, left unanswered by a daemon whose session
// broke, the bridge sends again. Every tool the server lists is in the
// table, so a new tool must be classified here: only memory_status
// changes nothing (memory_search records an access to what it returns).
func TestRepeatable(t *testing.T) {
	tools := map[string]bool{
		mcp.ToolSearch: false, mcp.ToolStore: false, mcp.ToolDelete: false, mcp.ToolIngest: false,
		mcp.ToolReinforce: false, mcp.ToolRate: false, mcp.ToolSnooze: false, mcp.ToolStatus: true,
	}
	up, err := standIn(t.Context(), &whyDown{err: errors.New("test")})
	if err != nil {
		t.Fatal(err)
	}
	defer up.conn.Close()
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "t", Version: "1"}, nil).Connect(t.Context(), inMemoryPair(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	listed, err := cs.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range listed.Tools {
		if _, ok := tools[tool.Name]; !ok {
			t.Errorf("tool %s is not classified", tool.Name)
		}
	}
	call := func(method, params string) *jsonrpc.Request {
		return &jsonrpc.Request{Method: method, Params: json.RawMessage(params)}
	}
	for name, want := range tools {
		if got := repeatable(call("tools/call", `{"name":"`+name+`","arguments":{}}`)); got != want {
			t.Errorf("%s: repeatable %v, want %v", name, got, want)
		}
		if !mayRepeat(up, call("tools/call", `{"name":"`+name+`"}`)) {
			t.Errorf("%s on the stand-in, which carries nothing out: not repeated", name)
		}
	}
	for _, c := range []struct {
		method, params string
		want           bool
	}{
		{"tools/list", `{}`, true},
		{"ping", `{}`, true},
		{"tools/call", `{"name":"memory_unknown"}`, false},
		{"tools/call", `not json`, false},
	} {
		if got := repeatable(call(c.method, c.params)); got != c.want {
			t.Errorf("%s %s: repeatable %v, want %v", c.method, c.params, got, c.want)
		}
	}
}

// inMemoryPair serves memtray's tools over mcp.Unavailable in memory and
// returns the client's end.
func inMemoryPair(t *testing.T) sdk.Transport {
	t.Helper()
	client, server := sdk.NewInMemoryTransports()
	srv := mcp.NewServer(mcp.Unavailable{Err: errors.New("test")}, mcp.Options{Version: "test"})
	ss, err := srv.Connect(t.Context(), server, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	return client
}
