package daemon

import (
	"bytes"
	"context"
	"errors"
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
	"github.com/memtray/memtray/backend/memory"
)

// testConfig is a config on a temporary data dir with the built-in embedder
// and a free loopback port.
func testConfig(t *testing.T) config.Config {
	t.Helper()
	cfg := config.Default()
	cfg.DataDir = t.TempDir()
	cfg.Listen = "127.0.0.1:0"
	cfg.Embedder.Provider = "builtin"
	// Session folders of our own: the defaults under $HOME would let a
	// live agent session on this machine reach the test's store.
	cfg.Capture.Transcripts.ClaudeCodeDirs = []string{t.TempDir()}
	cfg.Capture.Transcripts.CodexDirs = []string{t.TempDir()}
	return cfg
}

// serve opens a daemon on cfg and serves it until the test ends.
func serve(t *testing.T, cfg config.Config) (*Daemon, string) {
	t.Helper()
	return serveWith(t, Options{Config: cfg, Version: "test"})
}

func TestClientRoundTrip(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d, addr := serve(t, testConfig(t))
	if h, ok := httpapi.Probe(ctx, addr, d.Token(), time.Second); !ok || h.Service != "memtray" {
		t.Fatalf("Probe = %+v, %v", h, ok)
	}
	if _, ok := httpapi.Probe(ctx, addr, strings.Repeat("f", 64), time.Second); ok {
		t.Fatal("Probe accepted a daemon that cannot prove it holds our token")
	}
	impostor := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(`{"service":"memtray","version":"x","pid":1,"proof":"00"}`))
	}))
	defer impostor.Close()
	if _, ok := httpapi.Probe(ctx, strings.TrimPrefix(impostor.URL, "http://"), d.Token(), time.Second); ok {
		t.Fatal("Probe trusted an impostor on the port")
	}
	c := httpapi.NewClient(addr, d.Token())
	texts := []string{
		"We pin Postgres to 16.4 because 16.5 broke logical replication slots in the billing service.",
		"The frontend uses pnpm workspaces; never run npm install in packages/web.",
		"Rate limiting lives in middleware/ratelimit.go and uses a token bucket of 50 requests per second.",
	}
	var ids []string
	for _, tx := range texts {
		m, err := c.Add(ctx, httpapi.AddRequest{Text: tx, Kind: "decision", Project: "api"})
		if err != nil {
			t.Fatalf("Add: %v", err)
		}
		if m.ID == "" || m.Embedding != nil {
			t.Fatalf("Add returned %+v", m)
		}
		ids = append(ids, m.ID)
	}
	again, err := c.Add(ctx, httpapi.AddRequest{Text: "  " + texts[0] + "\n", Project: "api"})
	if err != nil || again.ID != ids[0] {
		t.Fatalf("adding the same text again = %s, %v; want the existing %s", again.ID, err, ids[0])
	}
	hits, err := c.Search(ctx, httpapi.SearchRequest{Query: "which Postgres version is pinned", Project: "api"})
	if err != nil {
		t.Fatalf("Search: %v", err)
	}
	if len(hits) == 0 || hits[0].Memory.ID != ids[0] {
		t.Fatalf("Search top hit = %+v, want %s", hits, ids[0])
	}
	if hits[0].Breakdown.Composite == 0 || hits[0].Breakdown.KindBoost != 1.5 {
		t.Errorf("breakdown not filled: %+v", hits[0].Breakdown)
	}
	got, err := c.Get(ctx, ids[1])
	if err != nil || got.Text != texts[1] {
		t.Fatalf("Get = %+v, %v", got, err)
	}
	list, err := c.List(ctx, httpapi.ListRequest{Project: "api", Limit: 2})
	if err != nil || list.Total != 3 || len(list.Memories) != 2 {
		t.Fatalf("List = %d of %d, %v", len(list.Memories), list.Total, err)
	}
	st, err := c.Stats(ctx)
	if err != nil || st.Store.Count != 3 || st.ByKind["decision"] != 3 || st.Embedder == "" {
		t.Fatalf("Stats = %+v, %v", st, err)
	}

	var exp bytes.Buffer
	if err := c.Export(ctx, &exp); err != nil {
		t.Fatalf("Export: %v", err)
	}
	if err := c.Delete(ctx, ids[2]); err != nil {
		t.Fatalf("Delete: %v", err)
	}
	if _, err := c.Get(ctx, ids[2]); !errors.Is(err, memory.ErrNotFound) {
		t.Fatalf("Get after Delete: %v, want ErrNotFound across the wire", err)
	}
	rep, err := c.Import(ctx, bytes.NewReader(exp.Bytes()))
	if err != nil || rep.Imported != 1 || rep.Duplicates != 2 {
		t.Fatalf("Import = %+v, %v; want 1 imported, 2 duplicates", rep, err)
	}
	if _, err := c.Import(ctx, strings.NewReader("{not json\n")); !errors.Is(err, memory.ErrInvalid) {
		t.Fatalf("Import of garbage: %v, want ErrInvalid", err)
	}
	if n := d.Store().Count(); n != 3 {
		t.Fatalf("after the bad import the store holds %d, want 3", n)
	}
}

func TestAPISecurity(t *testing.T) {
	t.Parallel()
	d, addr := serve(t, testConfig(t))
	_, port, _ := strings.Cut(addr, ":")
	tok := d.Token()
	cases := []struct {
		name, method, path, host, origin, auth, body string
		want                                         int
	}{
		{"health needs no token", "GET", "/api/health", "", "", "", "", 200},
		{"stats without token", "GET", "/api/stats", "", "", "", "", 401},
		{"stats with wrong token", "GET", "/api/stats", "", "", "Bearer " + strings.Repeat("0", 64), "", 401},
		{"stats with token", "GET", "/api/stats", "", "", "Bearer " + tok, "", 200},
		{"localhost host", "GET", "/api/stats", "localhost:" + port, "", "Bearer " + tok, "", 200},
		{"rebinding host", "GET", "/api/stats", "evil.example:" + port, "", "Bearer " + tok, "", 421},
		{"wrong port host", "GET", "/api/health", "127.0.0.1:1", "", "", "", 421},
		{"foreign origin", "POST", "/api/memories", "", "http://evil.example", "Bearer " + tok, `{"text":"hello there, this is a memory"}`, 403},
		{"same origin", "POST", "/api/memories", "", "http://" + addr, "Bearer " + tok, `{"text":"hello there, this is a memory"}`, 201},
		{"malformed json", "POST", "/api/memories", "", "", "Bearer " + tok, `{"text":`, 400},
		{"unknown field", "POST", "/api/memories", "", "", "Bearer " + tok, `{"txt":"x"}`, 400},
		{"empty text", "POST", "/api/memories", "", "", "Bearer " + tok, `{"text":"   "}`, 400},
		{"invalid utf8", "POST", "/api/memories", "", "", "Bearer " + tok, "{\"text\":\"ab\xff\xfecd\"}", 400},
		{"bad kind", "POST", "/api/memories", "", "", "Bearer " + tok, `{"text":"a real memory text","kind":"gossip"}`, 400},
		{"huge body", "POST", "/api/memories", "", "", "Bearer " + tok, `{"text":"` + strings.Repeat("a", httpapi.MaxJSONBody) + `"}`, 413},
		{"bad k", "GET", "/api/search?q=x&k=-1", "", "", "Bearer " + tok, "", 400},
		{"unknown id", "GET", "/api/memories/nope", "", "", "Bearer " + tok, "", 404},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			req, _ := http.NewRequest(tc.method, "http://"+addr+tc.path, strings.NewReader(tc.body))
			if tc.host != "" {
				req.Host = tc.host
			}
			if tc.origin != "" {
				req.Header.Set("Origin", tc.origin)
			}
			if tc.auth != "" {
				req.Header.Set("Authorization", tc.auth)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tc.want {
				t.Fatalf("status %d, want %d: %s", resp.StatusCode, tc.want, body)
			}
			if resp.Header.Get("Access-Control-Allow-Origin") != "" {
				t.Fatal("CORS header sent")
			}
		})
	}
	if n := d.Store().Count(); n != 1 {
		t.Fatalf("store holds %d memories after the table, want 1", n)
	}
}

func TestLoginCookie(t *testing.T) {
	t.Parallel()
	d, addr := serve(t, testConfig(t))
	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := noRedirect.Get("http://" + addr + "/login?token=" + d.Token())
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	cookies := resp.Cookies()
	if resp.StatusCode != http.StatusSeeOther || len(cookies) != 1 || !cookies[0].HttpOnly || cookies[0].SameSite != http.SameSiteStrictMode {
		t.Fatalf("login answered %d with cookies %+v", resp.StatusCode, cookies)
	}
	if strings.Contains(cookies[0].Value, d.Token()) {
		t.Fatal("the cookie carries the install token; browsers send it to every localhost port")
	}
	req, _ := http.NewRequest("GET", "http://"+addr+"/api/stats", nil)
	req.AddCookie(cookies[0])
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("cookie auth: %d", resp.StatusCode)
	}
	req, _ = http.NewRequest("GET", "http://"+addr+"/api/stats", nil)
	req.AddCookie(&http.Cookie{Name: cookies[0].Name, Value: d.Token()})
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("a cookie holding the raw token: %d, want 401", resp.StatusCode)
	}
	resp, err = noRedirect.Get("http://" + addr + "/login?token=wrong")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized || len(resp.Cookies()) != 0 {
		t.Fatalf("wrong token login answered %d", resp.StatusCode)
	}
}

func TestServeRefusesNonLoopback(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t)
	d, err := Open(context.Background(), Options{Config: cfg})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	d.cfg.Listen = "0.0.0.0:0"
	if err := d.Serve(context.Background(), nil); err == nil || !strings.Contains(err.Error(), "loopback") {
		t.Fatalf("Serve on 0.0.0.0 = %v, want a loopback error", err)
	}
}

func TestTokenFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	a, err := LoadOrCreateToken(dir)
	if err != nil || len(a) != 64 {
		t.Fatalf("token %q, %v", a, err)
	}
	b, _ := LoadOrCreateToken(dir)
	if a != b {
		t.Fatal("token changed between loads")
	}
	c, _ := RotateToken(dir)
	if c == a {
		t.Fatal("rotate kept the token")
	}
	fi, err := os.Stat(filepath.Join(dir, TokenFile))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("token file: %v, %v", fi, err)
	}
}

func TestConcurrentAddsOfOneTextStoreOnce(t *testing.T) {
	t.Parallel()
	d, err := Open(context.Background(), Options{Config: testConfig(t)})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	const n = 8
	ids := make(chan string, n)
	for i := 0; i < n; i++ {
		go func() {
			m, err := d.Memories().Add(context.Background(), httpapi.AddRequest{Text: "Feature flags are read from flags.yaml at start and never hot-reloaded."})
			if err != nil {
				t.Error(err)
			}
			ids <- m.ID
		}()
	}
	first := <-ids
	for i := 1; i < n; i++ {
		if id := <-ids; id != first {
			t.Fatalf("concurrent adds stored %s and %s", first, id)
		}
	}
	if c := d.Store().Count(); c != 1 {
		t.Fatalf("store holds %d copies", c)
	}
}
