package daemon

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/memtray/memtray/backend/config"
	"github.com/memtray/memtray/backend/httpapi"
	"github.com/memtray/memtray/backend/memory"
	"github.com/memtray/memtray/backend/polltest"
)

// serveWith opens a daemon with opts and serves it until the test ends.
func serveWith(t testing.TB, opts Options) (*Daemon, string) {
	t.Helper()
	d, addr, stop := startServing(t, opts)
	t.Cleanup(stop)
	return d, addr
}

// startServing opens a daemon with opts and serves it until stop is
// called; stop reports an error of Serve or Close on t.
func startServing(t testing.TB, opts Options) (d *Daemon, addr string, stop func()) {
	t.Helper()
	d, err := Open(context.Background(), opts)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	addrc := make(chan string, 1)
	done := make(chan error, 1)
	go func() { done <- d.Serve(ctx, func(a string) { addrc <- a }) }()
	select {
	case addr = <-addrc:
	case err := <-done:
		t.Fatalf("Serve: %v", err)
	}
	return d, addr, func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Serve returned %v", err)
		}
		if err := d.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	}
}

// sseEvent is one event read off the stream.
type sseEvent struct {
	ID   string
	Type string
	Data string
}

// openFeed opens GET /api/events and parses it into a channel, closed
// when the stream ends.
func openFeed(t *testing.T, ctx context.Context, addr, token, lastID string) <-chan sseEvent {
	t.Helper()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/api/events", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	if lastID != "" {
		req.Header.Set("Last-Event-ID", lastID)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("GET /api/events: %v", err)
	}
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		t.Fatalf("GET /api/events: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	out := make(chan sseEvent, 1024)
	go func() {
		defer close(out)
		defer resp.Body.Close()
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		var e sseEvent
		for sc.Scan() {
			line := sc.Text()
			switch {
			case line == "":
				if e.Type != "" {
					out <- e
				}
				e = sseEvent{}
			case strings.HasPrefix(line, "id: "):
				e.ID = line[4:]
			case strings.HasPrefix(line, "event: "):
				e.Type = line[7:]
			case strings.HasPrefix(line, "data: "):
				e.Data = line[6:]
			}
		}
	}()
	return out
}

// await reads the feed until an event of typ for which ok holds.
func await(t *testing.T, feed <-chan sseEvent, typ string, ok func(sseEvent) bool) sseEvent {
	t.Helper()
	timeout := time.After(testWait)
	for {
		select {
		case e, open := <-feed:
			if !open {
				t.Fatalf("stream ended waiting for %s", typ)
			}
			if e.Type == typ && (ok == nil || ok(e)) {
				return e
			}
		case <-timeout:
			t.Fatalf("gave up after %s waiting for a %s event", testWait, typ)
		}
	}
}

func TestEventStream(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d, addr := serveWith(t, Options{Config: testConfig(t), Heartbeat: 50 * time.Millisecond,
		CaptureTick: 20 * time.Millisecond, StatsTick: 50 * time.Millisecond})
	c := httpapi.NewClient(addr, d.Token())
	fctx, stop := context.WithCancel(ctx)
	feed := openFeed(t, fctx, addr, d.Token(), "")

	t.Run("heartbeat", func(t *testing.T) {
		e := await(t, feed, httpapi.EventPing, nil)
		var p httpapi.PingEvent
		if e.ID != "" || json.Unmarshal([]byte(e.Data), &p) != nil || p.At.IsZero() {
			t.Fatalf("ping = %+v", e)
		}
		await(t, feed, httpapi.EventStats, nil)
	})
	t.Run("decision after ingest", func(t *testing.T) {
		fact := "Staging deploys need `DEPLOY_ENV=staging` because the default config points at production; never deploy from a laptop."
		if _, err := c.Ingest(ctx, httpapi.IngestRequest{Exchanges: []memory.Exchange{
			{SessionID: "s1", Turn: 1, UserTurns: 1, User: "why the env var?", Assistant: fact}}}); err != nil {
			t.Fatal(err)
		}
		e := await(t, feed, httpapi.EventDecision, nil)
		var de httpapi.DecisionEntry
		if err := json.Unmarshal([]byte(e.Data), &de); err != nil || de.Verdict != memory.VerdictStored || e.ID == "" {
			t.Fatalf("decision event %+v: %v", e, err)
		}
		await(t, feed, httpapi.EventMemory, func(e sseEvent) bool { return strings.Contains(e.Data, `"op":"added"`) })
	})
	var lastID string
	t.Run("memory after add", func(t *testing.T) {
		m, err := c.Add(ctx, httpapi.AddRequest{Text: "The billing service retries webhooks 5 times with exponential backoff capped at 10 minutes."})
		if err != nil {
			t.Fatal(err)
		}
		e := await(t, feed, httpapi.EventMemory, func(e sseEvent) bool { return strings.Contains(e.Data, m.ID) })
		var me httpapi.MemoryEvent
		if err := json.Unmarshal([]byte(e.Data), &me); err != nil || me.Op != httpapi.MemoryAdded || me.Memory == nil || me.Memory.Embedding != nil {
			t.Fatalf("memory event %s: %v", e.Data, err)
		}
		lastID = e.ID
	})
	t.Run("capture on change", func(t *testing.T) {
		off := false
		if _, err := c.SetCapture(ctx, httpapi.CaptureUpdate{Enabled: &off}); err != nil {
			t.Fatal(err)
		}
		await(t, feed, httpapi.EventCapture, func(e sseEvent) bool { return strings.Contains(e.Data, `"enabled":false`) })
	})
	t.Run("ends when the client goes away", func(t *testing.T) {
		stop()
		polltest.Wait(t, "no subscriber left after the client went away", func() bool { return d.Status().Events().Subscribers() == 0 },
			func() string { return fmt.Sprintf("%d subscribers left", d.Status().Events().Subscribers()) })
	})
	t.Run("resume with Last-Event-ID", func(t *testing.T) {
		m, err := c.Add(ctx, httpapi.AddRequest{Text: "Feature flags live in flags.yaml and are read once at start; changing one needs a restart."})
		if err != nil {
			t.Fatal(err)
		}
		rctx, rstop := context.WithCancel(ctx)
		defer rstop()
		again := openFeed(t, rctx, addr, d.Token(), lastID)
		e := await(t, again, httpapi.EventMemory, func(e sseEvent) bool { return strings.Contains(e.Data, m.ID) })
		if e.ID <= lastID && len(e.ID) == len(lastID) {
			t.Fatalf("replayed id %s not after %s", e.ID, lastID)
		}
	})
	t.Run("reset when too old", func(t *testing.T) {
		rctx, rstop := context.WithCancel(ctx)
		defer rstop()
		old := openFeed(t, rctx, addr, d.Token(), "1")
		await(t, old, httpapi.EventReset, nil)
	})
	t.Run("bad Last-Event-ID", func(t *testing.T) {
		req, _ := http.NewRequest(http.MethodGet, "http://"+addr+"/api/events", nil)
		req.Header.Set("Authorization", "Bearer "+d.Token())
		req.Header.Set("Last-Event-ID", "x")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusBadRequest {
			t.Fatalf("status %d", resp.StatusCode)
		}
	})
	t.Run("token required", func(t *testing.T) {
		resp, err := http.Get("http://" + addr + "/api/events")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized {
			t.Fatalf("status %d", resp.StatusCode)
		}
	})
	t.Run("slow subscriber does not block publishers", func(t *testing.T) {
		slow := d.Status().Events().Subscribe(1)
		defer slow.Close()
		// A stream client that never reads: its TCP buffers fill.
		sctx, sstop := context.WithCancel(ctx)
		defer sstop()
		req, _ := http.NewRequestWithContext(sctx, http.MethodGet, "http://"+addr+"/api/events", nil)
		req.Header.Set("Authorization", "Bearer "+d.Token())
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		big := strings.Repeat("x", 4096)
		start := time.Now()
		for i := range 5000 {
			d.Status().Events().Publish("test", map[string]any{"i": i, "pad": big})
		}
		if el := time.Since(start); el > 2*time.Second {
			t.Fatalf("5000 publishes took %v with stalled subscribers", el)
		}
		if slow.Dropped() == 0 {
			t.Fatal("the slow subscriber dropped nothing")
		}
	})
}

func TestEditListHistory(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d, addr := serve(t, testConfig(t))
	c := httpapi.NewClient(addr, d.Token())
	m, err := c.Add(ctx, httpapi.AddRequest{Text: "The API gateway times out upstream calls after 30 seconds.", Kind: "config", Project: "api"})
	if err != nil {
		t.Fatal(err)
	}
	imp := 0.9
	proj := "gateway"
	res, err := c.Edit(ctx, m.ID, httpapi.MemoryPatch{Importance: &imp, Project: &proj})
	if err != nil || res.Memory.ID != m.ID || res.Memory.Importance != 0.9 || res.Memory.Project != "gateway" || res.Previous != "" {
		t.Fatalf("in-place edit = %+v, %v", res, err)
	}
	text := "The API gateway times out upstream calls after 45 seconds since the 2026 load test."
	res, err = c.Edit(ctx, m.ID, httpapi.MemoryPatch{Text: &text})
	if err != nil || res.Memory.ID == m.ID || res.Previous != m.ID || res.Memory.Text != text || res.Memory.Importance != 0.9 {
		t.Fatalf("text edit = %+v, %v", res, err)
	}
	h, err := c.History(ctx, m.ID)
	if err != nil || len(h.Versions) != 2 || h.Versions[0].ID != m.ID || h.Versions[1].ID != res.Memory.ID {
		t.Fatalf("history = %+v, %v", h, err)
	}
	hits, err := c.Search(ctx, httpapi.SearchRequest{Query: "gateway timeout seconds"})
	if err != nil || len(hits) == 0 || hits[0].Memory.ID != res.Memory.ID {
		t.Fatalf("search after edit = %+v, %v", hits, err)
	}
	listSupersededVersions(t, addr, d.Token(), m.ID, res.Memory.ID)

	bad := []struct {
		name  string
		body  string
		field string
	}{
		{"importance", `{"importance":2}`, "importance"},
		{"kind", `{"kind":"gossip"}`, "kind"},
		{"empty text", `{"text":"  "}`, "text"},
		{"type", `{"type":"x","importance":-1}`, "type"},
	}
	for _, tt := range bad {
		t.Run(tt.name, func(t *testing.T) {
			req, _ := http.NewRequest(http.MethodPatch, "http://"+addr+"/api/memories/"+res.Memory.ID, strings.NewReader(tt.body))
			req.Header.Set("Authorization", "Bearer "+d.Token())
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			var eb httpapi.ErrorBody
			json.NewDecoder(resp.Body).Decode(&eb)
			if resp.StatusCode != 400 || eb.Code != "invalid" || eb.Fields[tt.field] == "" {
				t.Fatalf("%s: %d %+v", tt.body, resp.StatusCode, eb)
			}
		})
	}
	if _, err := c.Edit(ctx, m.ID, httpapi.MemoryPatch{Importance: &imp}); !errors.Is(err, memory.ErrInvalid) {
		t.Fatalf("editing a superseded version: %v", err)
	}
	var fe *httpapi.FieldErrors
	big := 3.0
	if _, err := c.Edit(ctx, res.Memory.ID, httpapi.MemoryPatch{Importance: &big}); !errors.As(err, &fe) || fe.Fields["importance"] == "" {
		t.Fatalf("client field errors: %v", err)
	}
}

// listSupersededVersions: GET /api/memories lists the current versions
// only unless superseded=include asks for the old ones too (each with the
// id of the version that replaced it), and its facets count what it lists.
func listSupersededVersions(t *testing.T, addr, token, old, cur string) {
	t.Helper()
	for _, tc := range []struct {
		query     string
		oldListed bool
	}{
		{"", false},
		{"&superseded=exclude", false},
		{"&superseded=include", true},
	} {
		req, _ := http.NewRequest(http.MethodGet, "http://"+addr+"/api/memories?facets=true"+tc.query, nil)
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var lr httpapi.ListResponse
		err = json.NewDecoder(resp.Body).Decode(&lr)
		resp.Body.Close()
		if err != nil || resp.StatusCode != http.StatusOK || lr.Facets == nil {
			t.Fatalf("GET /api/memories?facets=true%s: %d %v", tc.query, resp.StatusCode, err)
		}
		by := map[string]string{} // id: superseded_by
		for _, lm := range lr.Memories {
			by[lm.ID] = lm.SupersededBy
		}
		want := 1
		if tc.oldListed {
			want = 2
		}
		oldBy, oldListed := by[old]
		if curBy, ok := by[cur]; !ok || curBy != "" || oldListed != tc.oldListed || (oldListed && oldBy != cur) ||
			lr.Total != want || lr.Facets.Projects["gateway"] != want {
			t.Errorf("GET /api/memories?facets=true%s: total %d, listed %v, facets %v; want %d, %s current, %s listed %v (superseded by %s)",
				tc.query, lr.Total, by, lr.Facets.Projects, want, cur, old, tc.oldListed, cur)
		}
	}
}

func TestListSortFilterPage(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d, addr := serve(t, testConfig(t))
	c := httpapi.NewClient(addr, d.Token())
	// Enough for pages of 100 at offsets to 300 and every sort key to
	// take many values (fillStore cycles them by 3..100); 3000 added
	// nothing any check reads but time under -race.
	const n = 1000
	fillStore(t, d, n)
	// "SERVICE 7" matches the memories of service 7 (fillStore: i%27).
	service7 := 0
	for i := range n {
		if i%27 == 7 {
			service7++
		}
	}
	if _, err := d.Feedback().Snooze(ctx, mustList(t, c, httpapi.ListRequest{Limit: 1}).Memories[0].ID, 7); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name  string
		req   httpapi.ListRequest
		total int
		check func(a, b httpapi.ListedMemory) bool // holds for neighbours
	}{
		{"default newest first", httpapi.ListRequest{Limit: 100}, n, func(a, b httpapi.ListedMemory) bool { return !a.CreatedAt.Before(b.CreatedAt) }},
		{"importance asc", httpapi.ListRequest{Sort: "importance", Order: "asc", Limit: 100, Offset: 50}, n, func(a, b httpapi.ListedMemory) bool { return a.Importance <= b.Importance }},
		{"access desc", httpapi.ListRequest{Sort: "access", Limit: 100}, n, func(a, b httpapi.ListedMemory) bool { return a.AccessCount >= b.AccessCount }},
		{"stickiness desc", httpapi.ListRequest{Sort: "stickiness", Limit: 100}, n, func(a, b httpapi.ListedMemory) bool { return a.Stickiness >= b.Stickiness }},
		{"project asc", httpapi.ListRequest{Sort: "project", Order: "asc", Limit: 100}, n, func(a, b httpapi.ListedMemory) bool { return a.Project <= b.Project }},
		{"q", httpapi.ListRequest{Q: "SERVICE 7", Limit: 1000}, service7, nil},
		{"snoozed only", httpapi.ListRequest{Snoozed: "only"}, 1, func(a, b httpapi.ListedMemory) bool { return a.Snoozed }},
		{"snoozed exclude", httpapi.ListRequest{Snoozed: "exclude", Limit: 10}, n - 1, nil},
		{"kind and project", httpapi.ListRequest{Kind: "decision", Project: "p0", Limit: 1000}, n / 10, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := mustList(t, c, tt.req)
			if res.Total != tt.total {
				t.Fatalf("total %d, want %d", res.Total, tt.total)
			}
			for i := 1; tt.check != nil && i < len(res.Memories); i++ {
				if !tt.check(res.Memories[i-1], res.Memories[i]) {
					t.Fatalf("order broken at %d: %+v then %+v", i, res.Memories[i-1].Memory, res.Memories[i].Memory)
				}
			}
			for _, m := range res.Memories {
				if m.Embedding != nil || m.AgeDays < 0 {
					t.Fatalf("listed %+v", m)
				}
			}
		})
	}
	// Pages do not overlap.
	seen := map[string]bool{}
	for off := 0; off < 300; off += 100 {
		for _, m := range mustList(t, c, httpapi.ListRequest{Sort: "kind", Limit: 100, Offset: off}).Memories {
			if seen[m.ID] {
				t.Fatalf("%s on two pages", m.ID)
			}
			seen[m.ID] = true
		}
	}
	for _, bad := range []httpapi.ListRequest{{Sort: "color"}, {Order: "up"}, {Snoozed: "maybe"}, {Q: strings.Repeat("q", 201)}, {Kind: "gossip"}} {
		if _, err := c.List(ctx, bad); !errors.Is(err, memory.ErrInvalid) {
			t.Errorf("List(%+v) = %v, want invalid", bad, err)
		}
	}
}

func mustList(t *testing.T, c *httpapi.Client, req httpapi.ListRequest) httpapi.ListResponse {
	t.Helper()
	res, err := c.List(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// fillStore puts n synthetic memories in d's store in batches: kinds
// cycle every 10, projects p0..p4, importance and access vary.
func fillStore(t testing.TB, d *Daemon, n int) {
	t.Helper()
	ctx := context.Background()
	for start := 0; start < n; start += 500 {
		var ms []memory.Memory
		var texts []string
		for i := start; i < min(n, start+500); i++ {
			text := fmt.Sprintf("Memory %d about service %d: the worker pool of node %d holds %d slots.", i, i%27, i*7, i%13)
			texts = append(texts, text)
			ms = append(ms, memory.Memory{Text: text, Kind: memory.Kinds[i%10], Type: memory.TypeProject,
				Project: fmt.Sprintf("p%d", i%5), Importance: float64(i%100) / 100, AccessCount: i % 17, ReinforcedCount: i % 3})
		}
		vecs, err := d.Embedder().Embed(ctx, texts)
		if err != nil {
			t.Fatal(err)
		}
		for i := range ms {
			ms[i].Embedding = vecs[i]
		}
		if _, err := d.Store().PutBatch(ctx, ms); err != nil {
			t.Fatal(err)
		}
	}
}

func TestOverview(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d, addr := serve(t, testConfig(t))
	c := httpapi.NewClient(addr, d.Token())
	fillStore(t, d, 60)
	if _, err := c.Ingest(ctx, httpapi.IngestRequest{Exchanges: []memory.Exchange{
		{SessionID: "s", Turn: 1, UserTurns: 1, User: "ok", Assistant: "Sure, let me look at that."},
		{SessionID: "s", Turn: 2, UserTurns: 2, User: "why?", Assistant: "Staging deploys need `DEPLOY_ENV=staging` because the default config points at production; never deploy from a laptop."},
	}}); err != nil {
		t.Fatal(err)
	}
	o, err := c.Overview(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if o.Memories < 60 || len(o.ByKind) != 10 || len(o.ByProject) == 0 || o.StoreBytes == 0 {
		t.Fatalf("counts: %+v", o)
	}
	if len(o.CreatedPerDay) != 30 || o.CreatedPerDay[29].Count < 60 {
		t.Fatalf("per day: %+v", o.CreatedPerDay)
	}
	if len(o.Filter) != 48 || o.Filter[47].Total != 2 || o.Filter[47].Rejected == nil {
		t.Fatalf("filter buckets: last %+v", o.Filter[len(o.Filter)-1])
	}
	if o.Embedder.Model == "" || o.Embedder.Degraded || o.Warnings == nil {
		t.Fatalf("status: %+v %+v", o.Embedder, o.Warnings)
	}
}

func TestConfigAPI(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cfg := testConfig(t)
	cfg.Judge.AnthropicKey = "sk-ant-secret"
	path := filepath.Join(t.TempDir(), "config.json")
	if err := os.WriteFile(path, []byte(`{"log_level":"debug"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	d, addr := serveWith(t, Options{Config: cfg, ConfigPath: path})
	c := httpapi.NewClient(addr, d.Token())
	v, err := c.Config(ctx)
	if err != nil || v.Config.Judge.AnthropicKey != "********" || v.Path != path || len(v.Runtime) == 0 {
		t.Fatalf("GET config = %+v, %v", v, err)
	}
	up, err := c.SetConfig(ctx, json.RawMessage(`{"steward":{"every":"2h","auto_apply":["merge"]},"ingest":{"content_threshold":0.4},"recall":{"k":2}}`))
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(up.Applied) != "[recall.k steward.auto_apply steward.every]" || fmt.Sprint(up.NeedsRestart) != "[ingest.content_threshold]" || !up.Saved {
		t.Fatalf("PUT config = applied %v, restart %v, saved %v", up.Applied, up.NeedsRestart, up.Saved)
	}
	if up.Config.Judge.AnthropicKey != "********" || time.Duration(up.Config.Steward.Every) != 2*time.Hour {
		t.Fatalf("answer config: %+v", up.Config.Steward)
	}
	data, _ := os.ReadFile(path)
	loaded, err := config.Load(path)
	if err != nil || loaded.LogLevel != "debug" || loaded.Ingest.ContentThreshold != 0.4 || loaded.Recall.K != 2 || strings.Contains(string(data), "sk-ant") {
		t.Fatalf("saved file %s: %v", data, err)
	}
	if d.settings.Live().Steward.AutoApply[0] != "merge" || d.cfg.Steward.AutoApply == nil && false {
		t.Fatal("not applied")
	}
	bad := []struct{ body, field string }{
		{`{"listen":"0.0.0.0:7432"}`, "listen"},
		{`{"capture":{"anthropic_upstream":"ftp://x"}}`, "capture.anthropic_upstream"},
		{`{"data_dir":"/tmp/x"}`, "data_dir"},
		{`{"judge":{"anthropic_key":"x"}}`, "judge.anthropic_key"},
		{`{"recall":{"k":99}}`, "recall.k"},
		{`{"steward":{"auto_apply":["nap"]}}`, "steward.auto_apply"},
	}
	for _, tt := range bad {
		_, err := c.SetConfig(ctx, json.RawMessage(tt.body))
		var fe *httpapi.FieldErrors
		if !errors.As(err, &fe) || fe.Fields[tt.field] == "" {
			t.Errorf("PUT %s = %v, want a field error on %s", tt.body, err, tt.field)
		}
	}
	if _, err := c.SetConfig(ctx, json.RawMessage(`{"recall":{"k":"many"}}`)); !errors.Is(err, memory.ErrInvalid) {
		t.Errorf("wrong type: %v", err)
	}

	// Address and upstreams: saved, in effect after a restart.
	up, err = c.SetConfig(ctx, json.RawMessage(`{"listen":"127.0.0.1:7999","capture":{"openai_upstream":"http://127.0.0.1:9/v1"}}`))
	if err != nil || fmt.Sprint(up.NeedsRestart) != "[capture.openai_upstream listen]" || !up.Saved {
		t.Fatalf("PUT listen = %+v, %v", up, err)
	}
	if loaded, err := config.Load(path); err != nil || loaded.Listen != "127.0.0.1:7999" || loaded.Capture.OpenAIUpstream != "http://127.0.0.1:9/v1" {
		t.Fatalf("saved listen: %+v, %v", loaded.Capture, err)
	}

	// Config.File that does not exist yet (a first change from the UI):
	// the file is created, 0600.
	cfg3 := testConfig(t)
	cfg3.File = filepath.Join(t.TempDir(), "sub", "config.json")
	d3, addr3 := serve(t, cfg3)
	up, err = httpapi.NewClient(addr3, d3.Token()).SetConfig(ctx, json.RawMessage(`{"recall":{"k":3}}`))
	if err != nil || !up.Saved || up.Path != cfg3.File {
		t.Fatalf("new file: %+v, %v", up, err)
	}
	if fi, err := os.Stat(cfg3.File); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("new config file: %v, %v", fi, err)
	}
	if loaded, err := config.Load(cfg3.File); err != nil || loaded.Recall.K != 3 {
		t.Fatalf("new config file: %+v, %v", loaded.Recall, err)
	}

	// Runtime-only without a config file.
	d2, addr2 := serve(t, testConfig(t))
	up, err = httpapi.NewClient(addr2, d2.Token()).SetConfig(ctx, json.RawMessage(`{"steward":{"every":"0s"}}`))
	if err != nil || up.Saved || up.Note == "" || len(up.Applied) != 1 {
		t.Fatalf("runtime-only: %+v, %v", up, err)
	}
}

func TestPreviewThreshold(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d, addr := serve(t, testConfig(t))
	c := httpapi.NewClient(addr, d.Token())
	var exs []memory.Exchange
	for i, a := range []string{
		"Staging deploys need `DEPLOY_ENV=staging` because the default config points at production; never deploy from a laptop.",
		"Retries wait longer after each failure, with random jitter, so that many clients do not retry in lockstep and overload the service again.",
		"The billing service retries webhooks 5 times with exponential backoff capped at 10 minutes, then parks them in the dead letter queue.",
		"I looked through the files and everything seems to be in order now; let me know if there is anything else you would like me to do.",
	} {
		exs = append(exs, memory.Exchange{SessionID: "s", Turn: i + 1, UserTurns: i + 1, User: "tell me", Assistant: a})
	}
	if _, err := c.Ingest(ctx, httpapi.IngestRequest{Exchanges: exs}); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		threshold float64
		rejected  bool
	}{{1, true}, {0, false}} {
		pv, err := c.PreviewThreshold(ctx, httpapi.ThresholdPreviewRequest{ContentThreshold: tt.threshold})
		if err != nil || pv.Scored == 0 {
			t.Fatalf("preview %v = %+v, %v", tt.threshold, pv, err)
		}
		if tt.rejected && (pv.NowRejected == 0 || pv.NowPassed != 0 || len(pv.RejectedExamples) == 0) {
			t.Errorf("threshold 1: %+v", pv)
		}
		if !tt.rejected && pv.NowRejected != 0 {
			t.Errorf("threshold 0: %+v", pv)
		}
	}
	if _, err := c.PreviewThreshold(ctx, httpapi.ThresholdPreviewRequest{ContentThreshold: 1.5}); !errors.Is(err, memory.ErrInvalid) {
		t.Fatalf("threshold 1.5: %v", err)
	}
}

// TestCountsLeaveSupersededOut: the Overview's count and the sidebar's
// (the stats event's) count what the Memories list shows by default: an
// edit's old version, kept as history, is counted apart as superseded, not
// as one more memory (a new user saw 107 beside a list of 105).
func TestCountsLeaveSupersededOut(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d, addr := serve(t, testConfig(t))
	c := httpapi.NewClient(addr, d.Token())
	fillStore(t, d, 12)
	page, err := c.List(ctx, httpapi.ListRequest{Limit: 1})
	if err != nil || len(page.Memories) != 1 {
		t.Fatalf("list: %+v, %v", page, err)
	}
	text := "The worker pool of every node now holds 64 slots, set in deploy/pool.yaml."
	if _, err := c.Edit(ctx, page.Memories[0].ID, httpapi.MemoryPatch{Text: &text}); err != nil {
		t.Fatal(err)
	}
	listed, err := c.List(ctx, httpapi.ListRequest{Limit: 1})
	if err != nil || listed.Total != 12 {
		t.Fatalf("list after the edit: total %d, %v; want 12", listed.Total, err)
	}
	o, err := c.Overview(ctx)
	if err != nil {
		t.Fatal(err)
	}
	kinds, projects := 0, 0
	for _, k := range o.ByKind {
		kinds += k.Count
	}
	for _, p := range o.ByProject {
		projects += p.Count
	}
	if o.Memories != listed.Total || o.Superseded != 1 || kinds != listed.Total || projects+o.OtherMemories != listed.Total {
		t.Fatalf("overview: %d memories, %d superseded, %d by kind, %d by project; want %d, 1, %d, %d",
			o.Memories, o.Superseded, kinds, projects+o.OtherMemories, listed.Total, listed.Total, listed.Total)
	}
	if g := o.Growth.Series; len(g) == 0 {
		t.Fatal("no growth series")
	} else {
		held := 0
		for _, s := range g {
			held += s.Counts[len(s.Counts)-1]
		}
		if held != listed.Total {
			t.Fatalf("growth ends at %d memories held; want %d", held, listed.Total)
		}
	}
	if ev := d.statsEvent(ctx); ev.Memories != listed.Total {
		t.Fatalf("stats event: %d memories; want %d", ev.Memories, listed.Total)
	}
}
