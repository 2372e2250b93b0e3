package daemon

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/memtray/memtray/backend/httpapi"
	"github.com/memtray/memtray/backend/judge"
	"github.com/memtray/memtray/backend/memory"
)

// TestIngestTurnJudge: with judge.provider ollama the daemon's pipeline
// asks the judge once per user turn (the request carries the answer's
// schema as format) and stores the judge's memory.
func TestIngestTurnJudge(t *testing.T) {
	t.Parallel()
	body, err := os.ReadFile(filepath.Join("..", "judge", "testdata", "ollama_turn_good.json"))
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var requests [][]byte
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		requests = append(requests, b)
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		w.Write(body)
	}))
	defer srv.Close()
	cfg := testConfig(t)
	cfg.Judge.Provider, cfg.Judge.OllamaHost, cfg.Judge.OllamaModel = "ollama", srv.URL, "llama3.2"
	d, addr := serve(t, cfg)
	c := httpapi.NewClient(addr, d.Token())
	ex := func(turn int, user, text string, loop bool) memory.Exchange {
		return memory.Exchange{SessionID: "s1", Turn: turn, UserTurns: 1, Project: "memtray", Source: "api", User: user, Assistant: text, ToolLoop: loop}
	}
	resp, err := c.Ingest(context.Background(), httpapi.IngestRequest{Exchanges: []memory.Exchange{
		ex(1, "Why does TestSync fail on CI every few runs? Fix it.", "The flaky TestSync failure comes from the bbolt file lock held by the tail watcher between runs.", false),
		ex(2, "", "Actually the bbolt lock is not the cause: TestSync fails because sync_test.go reads the wall clock.", true),
		ex(3, "", "TestSync was flaky because `backend/tail/sync_test.go` used the wall clock. The test now passes `memory.FixedClock`.", true),
	}})
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Decisions) != 1 || resp.Decisions[0].Verdict != memory.VerdictStored {
		t.Fatalf("decisions %+v", resp.Decisions)
	}
	if len(requests) != 1 {
		t.Fatalf("%d judge calls for one turn", len(requests))
	}
	var req struct {
		Format json.RawMessage `json:"format"`
	}
	if err := json.Unmarshal(requests[0], &req); err != nil || !bytes.Contains(req.Format, []byte(`"memories"`)) {
		t.Errorf("the judge was not asked for the turn's JSON answer: %s", requests[0])
	}
	m, err := c.Get(context.Background(), resp.Decisions[0].MemoryIDs[0])
	if err != nil || m.Kind != memory.KindDebugging {
		t.Fatalf("memory %+v, %v", m, err)
	}
	if st := d.judge.(*judge.Budgeted).Stats(); st.Calls != 1 || st.Keeps != 1 {
		t.Errorf("judge stats %+v", st)
	}
}
