package daemon

// Bad input to the API and MCP (issue "Reliability and security", item
// 5): bodies over 32 MB, invalid UTF-8 and 100,000 nested arrays get a
// clear client error, in bounded memory, and lose nothing stored. (The
// proxy's side is in package capture: it forwards what the agent sends.)

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/memtray/memtray/backend/httpapi"
)

// filler is an endless reader of one byte.
type filler byte

func (f filler) Read(b []byte) (int, error) {
	for i := range b {
		b[i] = byte(f)
	}
	return len(b), nil
}

// peakHeap runs fn while sampling the heap and returns the peak growth.
func peakHeap(fn func()) int64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	before := m.HeapInuse
	var peak atomic.Uint64
	stop, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		var m runtime.MemStats
		for {
			runtime.ReadMemStats(&m)
			if m.HeapInuse > peak.Load() {
				peak.Store(m.HeapInuse)
			}
			select {
			case <-stop:
				return
			case <-time.After(5 * time.Millisecond):
			}
		}
	}()
	fn()
	close(stop)
	<-done
	return int64(peak.Load()) - int64(before)
}

// rawCall sends body to the daemon with the token and returns status and
// answer.
func rawCall(t *testing.T, addr, token, method, path string, body io.Reader, size int64, header map[string]string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, "http://"+addr+path, body)
	if err != nil {
		t.Fatal(err)
	}
	req.ContentLength = size
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	return resp.StatusCode, string(b)
}

// mcpSession opens an MCP session over streamable HTTP and returns its id.
func mcpSession(t *testing.T, addr, token string) string {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, "http://"+addr+"/mcp", strings.NewReader(
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"test","version":"1"}}}`))
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	id := resp.Header.Get("Mcp-Session-Id")
	if id == "" {
		t.Fatalf("no MCP session: %d", resp.StatusCode)
	}
	return id
}

func TestBadInputAPI(t *testing.T) {
	ctx := context.Background()
	d, addr := serve(t, testConfig(t))
	tok := d.Token()
	kept, err := d.Memories().Add(ctx, httpapi.AddRequest{Text: "The release branch is cut every second Tuesday from main after the freeze."})
	if err != nil {
		t.Fatal(err)
	}
	sid := mcpSession(t, addr, tok)
	mcpHeader := map[string]string{"Mcp-Session-Id": sid, "Accept": "application/json, text/event-stream", "Mcp-Protocol-Version": "2025-06-18"}

	// Bodies over 32 MB: refused once the route's limit is read, 413.
	const big = 40 << 20
	for _, tc := range []struct {
		path   string
		size   int64
		header map[string]string
	}{
		{"/api/memories", big, nil},
		{"/api/memories", -1, nil}, // chunked: refused once 1 MB is read
		{"/api/search", big, nil},
		{"/api/ingest", 80 << 20, nil},
		{"/mcp", big, mcpHeader},
	} {
		var status int
		var answer string
		start := time.Now()
		growth := peakHeap(func() {
			status, answer = rawCall(t, addr, tok, http.MethodPost, tc.path, io.LimitReader(filler('['), max(tc.size, big)), tc.size, tc.header)
		})
		t.Logf("%s, %d MB: %d in %v, peak heap growth %.1f MB: %.120s", tc.path, tc.size>>20, status, time.Since(start).Round(time.Millisecond), float64(growth)/(1<<20), answer)
		if status != http.StatusRequestEntityTooLarge {
			t.Errorf("%s with %d MB: status %d, want 413: %s", tc.path, tc.size>>20, status, answer)
		}
		if growth > 16<<20 {
			t.Errorf("%s: heap grew %d MB for a %d MB body", tc.path, growth>>20, tc.size>>20)
		}
	}

	// Invalid UTF-8 and 100,000 nested arrays: a clear 400 (MCP: a JSON-RPC
	// error), never a crash.
	deep := strings.Repeat("[", 100000) + strings.Repeat("]", 100000)
	for _, tc := range []struct {
		name, path, body string
		header           map[string]string
		want             string
	}{
		{"utf8 memory", "/api/memories", "{\"text\":\"a memory with \xff\xfe in it\"}", nil, "not valid UTF-8"},
		{"utf8 ingest", "/api/ingest", "{\"exchanges\":[{\"user\":\"q\",\"assistant\":\"\xc3\x28\"}]}", nil, "not valid UTF-8"},
		{"nested memory", "/api/memories", `{"text":` + deep + `}`, nil, "exceeded max depth"},
		{"nested search", "/api/search", `{"query":"x","kinds":` + deep + `}`, nil, "exceeded max depth"},
		{"nested ingest", "/api/ingest", `{"exchanges":` + deep + `}`, nil, "exceeded max depth"},
		{"nested recall", "/api/recall", `{"session_id":"s","prompt":` + deep + `}`, nil, "exceeded max depth"},
	} {
		status, answer := rawCall(t, addr, tok, http.MethodPost, tc.path, strings.NewReader(tc.body), int64(len(tc.body)), tc.header)
		if status != http.StatusBadRequest || !strings.Contains(answer, tc.want) {
			t.Errorf("%s: %d %.200s; want 400 saying %q", tc.name, status, answer, tc.want)
		}
	}
	// An import stream whose record is 100,000 arrays deep, or not UTF-8.
	var exp strings.Builder
	if err := d.Memories().Export(ctx, &exp); err != nil {
		t.Fatal(err)
	}
	header, _, _ := strings.Cut(exp.String(), "\n")
	header += "\n"
	for name, body := range map[string]string{
		"nested import": header + deep + "\n",
		"utf8 import":   header + "{\"id\":\"x\",\"text\":\"\xff\"}\n",
	} {
		status, answer := rawCall(t, addr, tok, http.MethodPost, "/api/import", strings.NewReader(body), int64(len(body)), map[string]string{"Content-Type": "application/x-ndjson"})
		if status != http.StatusBadRequest || !strings.Contains(answer, "line 2") {
			t.Errorf("%s: %d %.200s; want 400 naming line 2", name, status, answer)
		}
	}
	// MCP: nested tool arguments and invalid UTF-8 are JSON-RPC errors.
	for name, body := range map[string]string{
		"nested mcp": `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"memory_search","arguments":{"query":` + deep + `}}}`,
		"utf8 mcp":   "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\",\"params\":{\"name\":\"memory_store\",\"arguments\":{\"text\":\"\xff\xfe\"}}}",
	} {
		status, answer := rawCall(t, addr, tok, http.MethodPost, "/mcp", strings.NewReader(body), int64(len(body)), mcpHeader)
		ok := status == http.StatusBadRequest || strings.Contains(answer, `"error"`) || strings.Contains(answer, `"isError":true`)
		if !ok {
			t.Errorf("%s: %d %.300s; want an error", name, status, answer)
		}
		t.Logf("%s: %d %.160s", name, status, answer)
	}

	// Nothing stored was lost, and the daemon still works.
	if got, err := d.Memories().Get(ctx, kept.ID); err != nil || got.Text != kept.Text {
		t.Errorf("the stored memory after bad input: %v", err)
	}
	if n := d.Store().Count(); n != 1 {
		t.Errorf("bad input stored something: %d memories", n)
	}
	hits, err := d.Memories().Search(ctx, httpapi.SearchRequest{Query: "when is the release branch cut"})
	if err != nil || len(hits) != 1 {
		t.Errorf("search after bad input: %v %v", hits, err)
	}
	var st httpapi.Stats
	if status, answer := rawCall(t, addr, tok, http.MethodGet, "/api/stats", nil, 0, nil); status != 200 || json.Unmarshal([]byte(answer), &st) != nil {
		t.Errorf("stats after bad input: %d %s", status, answer)
	}
}
