package mcp_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/memtray/memtray/backend/config"
	"github.com/memtray/memtray/backend/daemon"
	"github.com/memtray/memtray/backend/mcp"
)

// openDaemon opens a real daemon on a private data dir with the built-in embedder.
func openDaemon(t *testing.T) *daemon.Daemon {
	t.Helper()
	t.Setenv("XDG_DATA_HOME", t.TempDir())
	t.Setenv("OLLAMA_HOST", "http://127.0.0.1:1")
	cfg := config.Default()
	cfg.DataDir = t.TempDir()
	cfg.Listen = "127.0.0.1:0"
	cfg.Embedder.Provider = "builtin"
	d, err := daemon.Open(context.Background(), daemon.Options{Config: cfg, Version: "test"})
	if err != nil {
		t.Fatalf("open daemon: %v", err)
	}
	t.Cleanup(func() { d.Close() })
	return d
}

// serveHTTP serves the daemon's MCP handler on a loopback test server.
func serveHTTP(t *testing.T, d *daemon.Daemon) string {
	t.Helper()
	srv := httptest.NewServer(d.MCPHandler())
	t.Cleanup(srv.Close)
	return srv.URL
}

// connectHTTP opens an SDK client session over streamable HTTP.
func connectHTTP(t *testing.T, url string) *sdk.ClientSession {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c := sdk.NewClient(&sdk.Implementation{Name: "memtray-test", Version: "1"}, nil)
	cs, err := c.Connect(ctx, &sdk.StreamableClientTransport{Endpoint: url, MaxRetries: -1}, nil)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// connectInMemory serves the tools on an in-memory transport (a stdio-like
// connection without a session id) and connects a client to it.
func connectInMemory(t *testing.T, b mcp.Backend) *sdk.ClientSession {
	t.Helper()
	ctx := context.Background()
	st, ct := sdk.NewInMemoryTransports()
	ss, err := mcp.NewServer(b, mcp.Options{Version: "test"}).Connect(ctx, st, nil)
	if err != nil {
		t.Fatalf("server connect: %v", err)
	}
	t.Cleanup(func() { ss.Close() })
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "memtray-test", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatalf("client connect: %v", err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// call calls a tool that must succeed and decodes its structured answer into out.
func call(t *testing.T, cs *sdk.ClientSession, name string, args any, out any) string {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s %v: protocol error %v", name, args, err)
	}
	txt := textOf(res)
	if res.IsError {
		t.Fatalf("%s %v: tool error %q", name, args, txt)
	}
	if out != nil {
		data, err := json.Marshal(res.StructuredContent)
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(data, out); err != nil {
			t.Fatalf("%s: structured content %s: %v", name, data, err)
		}
	}
	return txt
}

// callErr calls a tool that must fail with a tool error (not a protocol
// error) and returns the error text.
func callErr(t *testing.T, cs *sdk.ClientSession, name string, args any) string {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s %v: want a tool error, got protocol error %v", name, args, err)
	}
	if !res.IsError {
		t.Fatalf("%s %v: want a tool error, got %q", name, args, textOf(res))
	}
	return textOf(res)
}

func textOf(res *sdk.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*sdk.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

func TestToolsList(t *testing.T) {
	d := openDaemon(t)
	for name, cs := range map[string]*sdk.ClientSession{
		"http":      connectHTTP(t, serveHTTP(t, d)),
		"in-memory": connectInMemory(t, d.MCPBackend()),
	} {
		t.Run(name, func(t *testing.T) {
			init := cs.InitializeResult()
			if init == nil || init.ServerInfo == nil || init.ServerInfo.Name != "memtray" || init.ServerInfo.Version != "test" {
				t.Fatalf("initialize: %+v", init)
			}
			if !strings.Contains(init.Instructions, "memory_search") {
				t.Errorf("instructions do not mention memory_search: %q", init.Instructions)
			}
			res, err := cs.ListTools(context.Background(), nil)
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, tool := range res.Tools {
				names = append(names, tool.Name)
				schema, _ := tool.InputSchema.(map[string]any)
				if schema == nil || schema["type"] != "object" {
					t.Errorf("%s: input schema %v", tool.Name, tool.InputSchema)
				}
				if tool.OutputSchema == nil {
					t.Errorf("%s: no output schema", tool.Name)
				}
				if len(tool.Description) < 80 {
					t.Errorf("%s: description too thin to tell an agent when to use it: %q", tool.Name, tool.Description)
				}
			}
			slices.Sort(names)
			want := slices.Sorted(slices.Values(mcp.ToolNames))
			if !slices.Equal(names, want) {
				t.Fatalf("tools %v, want %v", names, want)
			}
		})
	}
	// The descriptions say when to call the tools that are easy to forget.
	res, _ := connectInMemory(t, d.MCPBackend()).ListTools(context.Background(), nil)
	for _, tool := range res.Tools {
		switch tool.Name {
		case mcp.ToolSearch:
			if !strings.Contains(tool.Description, "BEFORE answering") {
				t.Errorf("memory_search description: %q", tool.Description)
			}
		case mcp.ToolRate:
			if !strings.Contains(tool.Description, "AFTER you used") {
				t.Errorf("memory_rate_context description: %q", tool.Description)
			}
		}
	}
}

func TestToolsHappyPath(t *testing.T) {
	d := openDaemon(t)
	url := serveHTTP(t, d)
	cs := connectHTTP(t, url)

	const fact = "The payments service retries webhook deliveries with exponential backoff capped at 15 minutes, configured in config/webhooks.yaml."
	var st mcp.StoreResult
	call(t, cs, mcp.ToolStore, map[string]any{"text": fact, "kind": "config", "project": "payments", "importance": 0.8}, &st)
	if st.Result != "created" || len(st.IDs) != 1 {
		t.Fatalf("store: %+v", st)
	}
	id := st.IDs[0]

	// The same text again is a duplicate of the same memory.
	var dup mcp.StoreResult
	txt := call(t, cs, mcp.ToolStore, map[string]any{"text": fact, "project": "payments"}, &dup)
	if dup.Result != "duplicate" || !slices.Contains(dup.IDs, id) || !strings.Contains(txt, "duplicate") {
		t.Fatalf("store again: %+v %q", dup, txt)
	}

	// Search finds it, in a session of its own.
	var found mcp.SearchResult
	txt = call(t, connectHTTP(t, url), mcp.ToolSearch, map[string]any{"query": "how are webhook deliveries retried", "limit": 5, "project": "payments"}, &found)
	if len(found.Hits) == 0 || found.Hits[0].ID != id || found.Hits[0].Kind != "config" || found.Hits[0].Project != "payments" {
		t.Fatalf("search: %+v", found)
	}
	if !strings.Contains(txt, id) || !strings.Contains(txt, "15 minutes") || !strings.Contains(txt, "memory_rate_context") {
		t.Fatalf("search text: %q", txt)
	}
	// A kind filter that excludes it finds nothing.
	var none mcp.SearchResult
	call(t, connectHTTP(t, url), mcp.ToolSearch, map[string]any{"query": "how are webhook deliveries retried", "kind": "decision"}, &none)
	if slices.ContainsFunc(none.Hits, func(h mcp.SearchHit) bool { return h.ID == id }) {
		t.Fatalf("kind filter ignored: %+v", none)
	}

	// Reinforce counts up (the duplicate above may have counted already).
	var first mcp.MemoryResult
	call(t, cs, mcp.ToolReinforce, map[string]any{"id": id}, &first)
	for want := first.ReinforcedCount + 1; want <= first.ReinforcedCount+2; want++ {
		var m mcp.MemoryResult
		call(t, cs, mcp.ToolReinforce, map[string]any{"id": id}, &m)
		if m.ID != id || m.ReinforcedCount != want {
			t.Fatalf("reinforce: %+v, want count %d", m, want)
		}
	}

	// Rating changes the feedback.
	var rated mcp.RateResult
	call(t, cs, mcp.ToolRate, map[string]any{"ids": []string{id}, "score": -1, "reason": "stale"}, &rated)
	if len(rated.Rated) != 1 || rated.Rated[0].FeedbackN != 1 || rated.Rated[0].FeedbackSum != -1 {
		t.Fatalf("rate: %+v", rated)
	}
	call(t, cs, mcp.ToolRate, map[string]any{"ids": []string{id}, "score": 1}, &rated)
	if rated.Rated[0].FeedbackN != 2 || rated.Rated[0].FeedbackSum != 0 {
		t.Fatalf("rate again: %+v", rated)
	}

	// Snoozed, it is out of search; woken, it is back.
	searchFinds := func() bool {
		var r mcp.SearchResult
		call(t, connectHTTP(t, url), mcp.ToolSearch, map[string]any{"query": "webhook deliveries retry backoff"}, &r)
		return slices.ContainsFunc(r.Hits, func(h mcp.SearchHit) bool { return h.ID == id })
	}
	var sn mcp.MemoryResult
	call(t, cs, mcp.ToolSnooze, map[string]any{"id": id, "days": 30}, &sn)
	if sn.SnoozedUntil == "" {
		t.Fatalf("snooze: %+v", sn)
	}
	if searchFinds() {
		t.Fatal("a snoozed memory was returned by search")
	}
	var woke mcp.MemoryResult
	call(t, cs, mcp.ToolSnooze, map[string]any{"id": id, "days": 0}, &woke)
	if woke.SnoozedUntil != "" {
		t.Fatalf("wake: %+v", woke)
	}
	if !searchFinds() {
		t.Fatal("a woken memory was not found again")
	}

	// Ingest a text and a file.
	var ing mcp.IngestResult
	doc := "# Release process\n\nReleases are cut from main every second Tuesday. The release manager tags vX.Y.Z and " +
		"the pipeline publishes the .deb and the AppImage.\n\nHotfixes branch from the last tag and are merged back into main."
	txt = call(t, cs, mcp.ToolIngest, map[string]any{"text": doc, "name": "RELEASING.md", "project": "memtray"}, &ing)
	if ing.Chunks < 1 || len(ing.IDs) == 0 || ing.Name != "RELEASING.md" || !strings.Contains(txt, "chunk") {
		t.Fatalf("ingest text: %+v %q", ing, txt)
	}
	path := filepath.Join(t.TempDir(), "adr-7.md")
	os.WriteFile(path, []byte("ADR 7: the store of record is bbolt; chromem-go is only the in-memory vector index, rebuilt from it at start."), 0o600)
	call(t, cs, mcp.ToolIngest, map[string]any{"path": path}, &ing)
	if ing.Chunks < 1 || ing.Name != "adr-7.md" || ing.Result != "created" {
		t.Fatalf("ingest file: %+v", ing)
	}

	// Status counts them.
	var status mcp.StatusResult
	txt = call(t, cs, mcp.ToolStatus, map[string]any{}, &status)
	if status.Total < 3 || status.Version != "test" || status.StoreBytes == 0 || !strings.Contains(txt, "payments") {
		t.Fatalf("status: %+v\n%s", status, txt)
	}

	// Delete, then it is gone.
	var del mcp.DeleteResult
	txt = call(t, cs, mcp.ToolDelete, map[string]any{"id": id}, &del)
	if del.Deleted != id || !del.Trashed || !strings.Contains(txt, "memtray trash restore "+id) {
		t.Fatalf("delete: %+v %q", del, txt)
	}
	if trash, err := d.Store().Trash(context.Background()); err != nil || len(trash) != 1 || trash[0].Memory.ID != id {
		t.Fatalf("trash after memory_delete = %+v, %v; want %s", trash, err, id)
	}
	if e := callErr(t, cs, mcp.ToolReinforce, map[string]any{"id": id}); !strings.Contains(e, "no memory has id") {
		t.Fatalf("reinforce after delete: %q", e)
	}
}

func TestSearchNeverRepeatsInASession(t *testing.T) {
	d := openDaemon(t)
	url := serveHTTP(t, d)
	writer := connectInMemory(t, d.MCPBackend())
	for _, text := range deployFacts {
		var st mcp.StoreResult
		call(t, writer, mcp.ToolStore, map[string]any{"kind": "convention", "project": "api", "text": text}, &st)
		if st.Result != "created" {
			t.Fatalf("store %q: %+v", text, st)
		}
	}
	for name, cs := range map[string]*sdk.ClientSession{"http": connectHTTP(t, url), "in-memory": connectInMemory(t, d.MCPBackend())} {
		t.Run(name, func(t *testing.T) {
			seen := map[string]bool{}
			var note string
			for range 6 {
				var r mcp.SearchResult
				call(t, cs, mcp.ToolSearch, map[string]any{"query": "how do we deploy the api service", "limit": 3}, &r)
				for _, h := range r.Hits {
					if seen[h.ID] {
						t.Fatalf("memory %s returned twice in one session", h.ID)
					}
					seen[h.ID] = true
				}
				if r.Note != "" {
					note = r.Note
				}
			}
			if len(seen) < 3 {
				t.Fatalf("only %d memories found", len(seen))
			}
			if !strings.Contains(note, "given") {
				t.Errorf("no note about memories already given: %q", note)
			}
		})
	}
}

var deployFacts = []string{
	"Deploys of the api service go through the staging cluster first; production needs two approvals in the deploy channel.",
	"The api deploy pipeline builds the container with ko and pushes it to the internal registry before the rollout.",
	"Rolling back an api deploy means re-running the previous pipeline; never kubectl edit the deployment by hand.",
	"Database migrations for the api run as a separate job before the deploy, and must stay backwards compatible for one release.",
	"Api deploys are frozen on Fridays after 15:00 and during the last week of December.",
	"Feature flags for the api live in LaunchDarkly; a deploy never changes a flag, flags change separately.",
	"After an api deploy, watch the p99 latency dashboard for ten minutes before calling it done.",
	"The api service deploys to three regions in order: eu-west, us-east, ap-south, each after the previous is healthy.",
}

func TestStatusBounded(t *testing.T) {
	d := openDaemon(t)
	cs := connectHTTP(t, serveHTTP(t, d))
	for i := range 60 {
		call(t, cs, mcp.ToolStore, map[string]any{"project": fmt.Sprintf("project-%02d", i), "kind": string(kindOf(i)),
			"text": fmt.Sprintf("Service %d of the fleet listens on port %d and logs to /var/log/svc%d.log.", i, 9000+i, i)}, nil)
	}
	var st mcp.StatusResult
	txt := call(t, cs, mcp.ToolStatus, nil, &st)
	if n := strings.Count(txt, "\n") + 1; n > 40 {
		t.Fatalf("status is %d lines:\n%s", n, txt)
	}
	if st.Total != 60 || st.ProjectCount != 60 || len(st.Projects) != 10 || st.OtherProjects.Names != 50 || st.OtherProjects.Memories != 50 {
		t.Fatalf("status: %+v", st)
	}
	if !strings.Contains(txt, "50 more projects") {
		t.Fatalf("status text does not sum the rest:\n%s", txt)
	}
}

func kindOf(i int) string {
	return []string{"fact", "config", "decision", "convention"}[i%4]
}

func TestBadArguments(t *testing.T) {
	d := openDaemon(t)
	cs := connectHTTP(t, serveHTTP(t, d))
	var st mcp.StoreResult
	call(t, cs, mcp.ToolStore, map[string]any{"text": "The CI cache key includes go.sum and the Go version."}, &st)
	dir := t.TempDir()
	big := filepath.Join(dir, "big.txt")
	os.WriteFile(big, []byte(strings.Repeat("x", mcp.MaxFileBytes+1)), 0o600)
	bin := filepath.Join(dir, "bin.dat")
	os.WriteFile(bin, []byte{0xff, 0xfe, 0, 1, 2}, 0o600)

	cases := []struct {
		tool string
		args any
		want string // in the error text
	}{
		{mcp.ToolSearch, map[string]any{}, "query"},
		{mcp.ToolSearch, map[string]any{"query": ""}, "query"},
		{mcp.ToolSearch, map[string]any{"query": "   "}, "query is empty"},
		{mcp.ToolSearch, map[string]any{"query": 42}, "query"},
		{mcp.ToolSearch, map[string]any{"query": "x", "limit": 0}, "limit"},
		{mcp.ToolSearch, map[string]any{"query": "x", "limit": 51}, "limit"},
		{mcp.ToolSearch, map[string]any{"query": "x", "limit": "ten"}, "limit"},
		{mcp.ToolSearch, map[string]any{"query": "x", "kind": "gossip"}, "kind"},
		{mcp.ToolSearch, map[string]any{"query": "x", "k": 3}, "k"},
		{mcp.ToolStore, map[string]any{}, "text"},
		{mcp.ToolStore, map[string]any{"text": " \n "}, "text is empty"},
		{mcp.ToolStore, map[string]any{"text": "ok", "kind": "gossip"}, "kind"},
		{mcp.ToolStore, map[string]any{"text": "ok", "type": "forever"}, "type"},
		{mcp.ToolStore, map[string]any{"text": "ok", "importance": 1.5}, "importance"},
		{mcp.ToolStore, map[string]any{"text": "ok", "importance": -0.1}, "importance"},
		{mcp.ToolStore, map[string]any{"text": []string{"a"}}, "text"},
		{mcp.ToolDelete, map[string]any{}, "id"},
		{mcp.ToolDelete, map[string]any{"id": "  "}, "id is empty"},
		{mcp.ToolDelete, map[string]any{"id": "no-such-memory"}, "no memory has id"},
		{mcp.ToolIngest, map[string]any{}, "path"},
		{mcp.ToolIngest, map[string]any{"text": "some document"}, "name is required"},
		{mcp.ToolIngest, map[string]any{"text": "doc", "name": "n", "path": big}, "not both"},
		{mcp.ToolIngest, map[string]any{"path": "notes/relative.md"}, "absolute"},
		{mcp.ToolIngest, map[string]any{"path": filepath.Join(dir, "missing.md")}, "no file"},
		{mcp.ToolIngest, map[string]any{"path": dir}, "not a regular file"},
		{mcp.ToolIngest, map[string]any{"path": big}, "1 MiB"},
		{mcp.ToolIngest, map[string]any{"path": bin}, "not UTF-8"},
		{mcp.ToolReinforce, map[string]any{"id": ""}, "id"},
		{mcp.ToolReinforce, map[string]any{"id": "nope"}, "no memory has id"},
		{mcp.ToolRate, map[string]any{"score": 1}, "ids"},
		{mcp.ToolRate, map[string]any{"ids": []string{}, "score": 1}, "ids"},
		{mcp.ToolRate, map[string]any{"ids": []string{st.IDs[0]}, "score": 2}, "score"},
		{mcp.ToolRate, map[string]any{"ids": []string{st.IDs[0]}, "score": 0}, "score"},
		{mcp.ToolRate, map[string]any{"ids": []string{st.IDs[0]}}, "score"},
		{mcp.ToolRate, map[string]any{"ids": st.IDs[0], "score": 1}, "ids"},
		{mcp.ToolRate, map[string]any{"ids": []string{st.IDs[0], "missing"}, "score": 1}, "missing"},
		{mcp.ToolSnooze, map[string]any{"id": st.IDs[0]}, "days"},
		{mcp.ToolSnooze, map[string]any{"id": st.IDs[0], "days": -1}, "days"},
		{mcp.ToolSnooze, map[string]any{"id": st.IDs[0], "days": 3651}, "days"},
		{mcp.ToolSnooze, map[string]any{"id": "gone", "days": 1}, "no memory has id"},
		{mcp.ToolStatus, map[string]any{"verbose": true}, "verbose"},
	}
	for _, c := range cases {
		t.Run(c.tool, func(t *testing.T) {
			got := callErr(t, cs, c.tool, c.args)
			if !strings.Contains(got, c.want) {
				t.Errorf("%s %v: error %q does not mention %q", c.tool, c.args, got, c.want)
			}
			t.Logf("%s %v -> %s", c.tool, c.args, got)
		})
	}
	// A failed rating changed nothing.
	var m mcp.MemoryResult
	call(t, cs, mcp.ToolReinforce, map[string]any{"id": st.IDs[0]}, &m)
	if m.FeedbackN != 0 {
		t.Fatalf("a rejected rating was applied: %+v", m)
	}
}
