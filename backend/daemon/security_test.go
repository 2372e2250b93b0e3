//go:build unix

package daemon

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/memtray/memtray/backend/config"
	"github.com/memtray/memtray/backend/embed"
	"github.com/memtray/memtray/backend/httpapi"
	"github.com/memtray/memtray/backend/memory"
	"github.com/memtray/memtray/backend/polltest"
	"github.com/memtray/memtray/backend/steward"
)

// The tests of this file prove the access control of a real daemon on
// loopback, as docs/security.md states it: every /api/ route
// but health and /mcp need the install token; Host must be a loopback
// name with the daemon's port (DNS rebinding); a foreign Origin is refused
// on every request, the live feed included; no answer carries a CORS
// header, not even one the proxy's upstream sent; the login cookie is
// HttpOnly and SameSite=Strict and is not the token; the proxy, which takes
// no token, stores nothing of a request a web page could forge; and
// everything memtray writes in its data dir is 0600 in 0700 folders.

// corsUpstream is a provider that sends CORS headers with every answer
// and answers /v1/messages with status (a stream when 200).
type corsUpstream struct {
	*httptest.Server
	status atomic.Int32
	calls  atomic.Int64
}

func newCORSUpstream(t *testing.T) *corsUpstream {
	u := &corsUpstream{}
	u.status.Store(200)
	u.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u.calls.Add(1)
		io.Copy(io.Discard, r.Body)
		h := w.Header()
		h.Set("Access-Control-Allow-Origin", "*")
		h.Set("Access-Control-Allow-Credentials", "true")
		h.Set("Access-Control-Allow-Headers", "x-api-key, authorization")
		h.Set("Access-Control-Expose-Headers", "request-id")
		if r.URL.Path != "/v1/messages" {
			h.Set("Content-Type", "application/json")
			io.WriteString(w, `{"data":[]}`)
			return
		}
		if s := int(u.status.Load()); s != 200 {
			h.Set("Content-Type", "application/json")
			w.WriteHeader(s)
			io.WriteString(w, `{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}`)
			return
		}
		h.Set("Content-Type", "text/event-stream")
		io.WriteString(w, sseAnswer("msg_sec", "The deploy pipeline publishes images to registry.internal:5000 and tags them with the git SHA, never latest, because rollbacks pick images by SHA.", "", "", ""))
	}))
	t.Cleanup(u.Close)
	return u
}

// messagesBody is a Messages API request as Claude Code sends it.
const messagesBody = `{"model":"claude-test","max_tokens":100,"stream":true,"system":"You are Claude Code, Anthropic's official CLI for Claude.\nWorking directory: /home/dev/web","messages":[{"role":"user","content":"Where do the deploy images go and how are they tagged? Explain the reasoning too."}]}`

func TestSecurityAccessControl(t *testing.T) {
	t.Parallel()
	up := newCORSUpstream(t)
	cfg := testConfig(t)
	cfg.Capture.AnthropicUpstream, cfg.Capture.OpenAIUpstream = up.URL, up.URL
	d, addr := serve(t, cfg)
	_, port, _ := net.SplitHostPort(addr)
	tok := d.Token()
	m, err := d.Memories().Add(context.Background(), httpapi.AddRequest{Text: "The nightly backup job copies the billing database to the cold bucket at 02:00 UTC."})
	if err != nil {
		t.Fatal(err)
	}

	cookie, resp := login(t, addr, tok)
	t.Run("login cookie flags", func(t *testing.T) {
		raw := resp.Header.Get("Set-Cookie")
		if resp.StatusCode != http.StatusSeeOther || !cookie.HttpOnly || cookie.SameSite != http.SameSiteStrictMode || cookie.Path != "/" ||
			cookie.MaxAge <= 0 || cookie.MaxAge > 24*3600 || !strings.Contains(raw, "HttpOnly") || !strings.Contains(raw, "SameSite=Strict") {
			t.Fatalf("login answered %d, Set-Cookie %q", resp.StatusCode, raw)
		}
		if strings.Contains(cookie.Value, tok) || cookie.Value == "" {
			t.Fatal("the cookie carries the install token (browsers send localhost cookies to every port)")
		}
	})

	const (
		none        = ""
		wrongBearer = "wrong bearer"
		wrongCookie = "wrong cookie"
		tokenCookie = "the raw token as cookie"
		bearerTok   = "bearer"
		sessionCk   = "session cookie"
	)
	type request struct {
		name, method, path, host, origin, auth, body string
		header                                       map[string]string
		want                                         int
	}
	var cases []request
	// Every kind of route refuses a request without the token, or with a
	// wrong one, whatever the method.
	guarded := []struct{ method, path, body string }{
		{"GET", "/api/stats", ""}, {"GET", "/api/memories", ""}, {"POST", "/api/memories", `{"text":"a memory from nowhere, long enough to store"}`},
		{"PATCH", "/api/memories/" + m.ID, `{"text":"changed"}`}, {"DELETE", "/api/memories/" + m.ID, ""},
		{"GET", "/api/events", ""}, {"GET", "/api/export", ""}, {"POST", "/api/import", "{}"}, {"POST", "/api/ingest", "{}"},
		{"GET", "/api/config", ""}, {"PUT", "/api/config", `{"log_level":"debug"}`}, {"POST", "/api/capture", `{"enabled":false}`},
		{"POST", "/api/setup/claude-code/apply", `{"files":[]}`}, {"PUT", "/api/autostart", `{"enabled":true}`},
		{"POST", "/api/export/file", `{}`}, {"POST", "/api/import/job", "x"}, {"POST", "/api/welcome/done", ""},
		{"POST", "/api/token/rotate", ""},
		{"POST", "/api/steward/plan", "{}"}, {"GET", "/api/steward/runs", ""}, {"POST", "/api/steward/undo", ""},
		{"POST", "/api/embedder/pull", "{}"}, {"GET", "/api/decisions", ""},
		{"POST", "/mcp", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`}, {"GET", "/mcp", ""}, {"DELETE", "/mcp", ""},
	}
	for _, g := range guarded {
		for _, auth := range []string{none, wrongBearer, wrongCookie, tokenCookie} {
			cases = append(cases, request{name: fmt.Sprintf("%s %s, %s", g.method, g.path, or(auth, "no token")),
				method: g.method, path: g.path, body: g.body, auth: auth, want: http.StatusUnauthorized})
		}
	}
	cases = append(cases,
		request{name: "health needs no token", method: "GET", path: "/api/health", want: 200},
		request{name: "the UI page needs no token", method: "GET", path: "/", want: 200},
		request{name: "the token opens the API", method: "GET", path: "/api/stats", auth: bearerTok, want: 200},
		request{name: "the session cookie opens the API", method: "GET", path: "/api/stats", auth: sessionCk, want: 200},
		request{name: "the session cookie opens MCP", method: "POST", path: "/mcp", auth: sessionCk,
			body:   `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`,
			header: map[string]string{"Accept": "application/json, text/event-stream"}, want: 200},
		request{name: "the proxy needs no token", method: "GET", path: "/v1/models", want: 200},
	)
	// DNS rebinding: a page of an attacker's domain that resolves to
	// 127.0.0.1 sends its own name as Host.
	for _, host := range []string{"evil.com", "evil.com:" + port, "localhost.evil.com:" + port, "127.0.0.1.nip.io:" + port,
		"attacker.127.0.0.1.sslip.io:" + port, "0.0.0.0:" + port, "127.0.0.2:" + port, "127.0.0.1:1", "localhost", "[::ffff:127.0.0.1]:" + port} {
		for _, r := range []struct{ method, path, auth string }{
			{"GET", "/api/stats", bearerTok}, {"GET", "/api/health", none}, {"GET", "/", none}, {"POST", "/mcp", bearerTok},
			{"POST", "/v1/messages", none}, {"GET", "/v1/models", none}, {"POST", "/openai/v1/chat/completions", none},
		} {
			cases = append(cases, request{name: fmt.Sprintf("Host %s, %s %s", host, r.method, r.path), method: r.method, path: r.path,
				host: host, auth: r.auth, body: messagesBody, want: http.StatusMisdirectedRequest})
		}
	}
	for _, host := range []string{"localhost:" + port, "LOCALHOST:" + port, "[::1]:" + port, "127.0.0.1:" + port} {
		cases = append(cases, request{name: "Host " + host + " is ours", method: "GET", path: "/api/stats", host: host, auth: bearerTok, want: 200})
	}
	// A foreign Origin is refused on every state-changing request and on
	// the live feed, token or not.
	for _, origin := range []string{"https://evil.example", "http://evil.example:" + port, "null", "http://localhost:3000",
		"http://127.0.0.1:1", "file://", "chrome-extension://abcdefghijklmnop"} {
		for _, r := range []struct{ method, path, auth, body string }{
			{"POST", "/api/memories", bearerTok, `{"text":"a memory a web page wants to plant in the store"}`},
			{"PUT", "/api/config", bearerTok, `{"log_level":"debug"}`},
			{"PATCH", "/api/memories/" + m.ID, bearerTok, `{"text":"a web page rewrote this memory"}`},
			{"DELETE", "/api/memories/" + m.ID, bearerTok, ""},
			{"GET", "/api/events", bearerTok, ""},
			{"GET", "/api/events", sessionCk, ""},
			{"GET", "/api/export", sessionCk, ""},
			{"POST", "/api/capture", sessionCk, `{"enabled":false}`},
			{"POST", "/mcp", bearerTok, `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`},
			{"POST", "/v1/messages", none, messagesBody},
			{"POST", "/openai/v1/chat/completions", none, `{"model":"x","messages":[]}`},
			{"OPTIONS", "/api/memories", none, ""},
			{"OPTIONS", "/v1/messages", none, ""},
		} {
			cases = append(cases, request{name: fmt.Sprintf("Origin %s, %s %s", origin, r.method, r.path), method: r.method, path: r.path,
				origin: origin, auth: r.auth, body: r.body, want: http.StatusForbidden,
				header: map[string]string{"Access-Control-Request-Method": "POST", "Sec-Fetch-Site": "cross-site"}})
		}
	}
	cases = append(cases,
		request{name: "our own Origin", method: "POST", path: "/api/capture", origin: "http://" + addr, auth: sessionCk, body: `{"enabled":true}`, want: 200},
		request{name: "our own Origin, localhost", method: "GET", path: "/api/events?probe=1", origin: "http://localhost:" + port, auth: sessionCk, want: 200},
		request{name: "the proxy passes an answer with CORS headers on, without them", method: "POST", path: "/v1/messages",
			header: map[string]string{"x-api-key": "sk-ant-test"}, body: messagesBody, want: 200},
		request{name: "the OpenAI route likewise", method: "GET", path: "/openai/v1/models", want: 200},
	)

	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			req, _ := http.NewRequestWithContext(ctx, tc.method, "http://"+addr+tc.path, strings.NewReader(tc.body))
			if tc.body != "" {
				req.Header.Set("Content-Type", "application/json")
			}
			if tc.host != "" {
				req.Host = tc.host
			}
			if tc.origin != "" {
				req.Header.Set("Origin", tc.origin)
			}
			for k, v := range tc.header {
				req.Header.Set(k, v)
			}
			switch tc.auth {
			case bearerTok:
				req.Header.Set("Authorization", "Bearer "+tok)
			case wrongBearer:
				req.Header.Set("Authorization", "Bearer "+strings.Repeat("0", 64))
			case sessionCk:
				req.AddCookie(cookie)
			case wrongCookie:
				req.AddCookie(&http.Cookie{Name: cookie.Name, Value: strings.Repeat("a", len(cookie.Value))})
			case tokenCookie:
				req.AddCookie(&http.Cookie{Name: cookie.Name, Value: tok})
			}
			resp, err := noRedirect.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
				cancel() // the live feed never ends by itself
			} else {
				io.Copy(io.Discard, resp.Body)
			}
			if resp.StatusCode != tc.want {
				t.Errorf("status %d, want %d", resp.StatusCode, tc.want)
			}
			if tc.want == http.StatusUnauthorized && resp.Header.Get("WWW-Authenticate") == "" {
				t.Error("a 401 without WWW-Authenticate")
			}
			for k := range resp.Header {
				if strings.HasPrefix(strings.ToLower(k), "access-control-") {
					t.Errorf("CORS header %s: %q", k, resp.Header.Get(k))
				}
			}
		})
	}
	if got, err := d.Memories().Get(context.Background(), m.ID); err != nil || got.Text != m.Text {
		t.Errorf("the memory changed under refused requests: %+v %v", got, err)
	}
	if st, _ := d.Services().Settings.Capture(context.Background()); !st.Enabled {
		t.Error("a refused request switched capture off")
	}
}

// TestSecurityForgedProxyRequests: a web page cannot read the proxy's
// answers and cannot send it the agent's API key, so what it can do is
// post a request whose upstream answer is an error. Those store nothing;
// with the page's Origin on, they never reach the upstream.
// TestSecurityTokenRotation: POST /api/token/rotate switches the running
// daemon to a new token at once. The old token, the session cookies
// issued for it and its health proof are refused from the next request;
// the browser that rotated gets a new cookie; MCP takes the new token; the
// token file holds it (0600).
func TestSecurityTokenRotation(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t)
	d, addr := serve(t, cfg)
	ctx := context.Background()
	old := d.Token()
	loginCookie := func(tok string) *http.Cookie {
		t.Helper()
		c, _ := login(t, addr, tok)
		return c
	}
	do := func(method, path string, bearer string, cookie *http.Cookie) (*http.Response, []byte) {
		t.Helper()
		req, _ := http.NewRequest(method, "http://"+addr+path, nil)
		if bearer != "" {
			req.Header.Set("Authorization", "Bearer "+bearer)
		}
		if cookie != nil {
			req.AddCookie(cookie)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp, body
	}
	oldCookie, otherBrowser := loginCookie(old), loginCookie(old)

	// The browser rotates with its cookie (the UI's way).
	resp, body := do("POST", "/api/token/rotate", "", oldCookie)
	var tr httpapi.TokenResponse
	if resp.StatusCode != 200 || json.Unmarshal(body, &tr) != nil || len(tr.Token) != 64 || tr.Token == old || tr.Token != d.Token() {
		t.Fatalf("rotate answered %d %s; daemon holds %q", resp.StatusCode, body, d.Token())
	}
	if len(resp.Cookies()) != 1 || resp.Cookies()[0].Value == oldCookie.Value || !resp.Cookies()[0].HttpOnly {
		t.Fatalf("rotate by cookie set cookies %v", resp.Cookies())
	}
	newCookie := resp.Cookies()[0]
	if f, err := ReadToken(cfg.DataDir); err != nil || f != tr.Token {
		t.Fatalf("token file %q, %v", f, err)
	}
	if fi, err := os.Stat(filepath.Join(cfg.DataDir, TokenFile)); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("token file mode %v, %v", fi.Mode(), err)
	}
	for _, c := range []struct {
		name   string
		bearer string
		cookie *http.Cookie
		path   string
		want   int
	}{
		{"old token", old, nil, "/api/stats", 401},
		{"old token, MCP", old, nil, "/mcp", 401},
		{"cookie of the old token", "", oldCookie, "/api/stats", 401},
		{"another browser's cookie of the old token", "", otherBrowser, "/api/stats", 401},
		{"new token", tr.Token, nil, "/api/stats", 200},
		{"the rotating browser's new cookie", "", newCookie, "/api/stats", 200},
		{"the login link of the new token", "", loginCookie(tr.Token), "/api/stats", 200},
	} {
		method := "GET"
		if c.path == "/mcp" {
			method = "DELETE"
		}
		if resp, body := do(method, c.path, c.bearer, c.cookie); resp.StatusCode != c.want {
			t.Errorf("%s: %d %s, want %d", c.name, resp.StatusCode, body, c.want)
		}
	}
	if resp, _ := noRedirect.Get("http://" + addr + "/login?token=" + old); resp == nil || resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("login with the old token: %v", resp)
	}
	if _, ok := httpapi.Probe(ctx, addr, old, 2*time.Second); ok {
		t.Error("the daemon proves it holds the old token")
	}
	// A client with the bearer token rotates too, and gets no cookie.
	tok2, err := httpapi.NewClient(addr, tr.Token).RotateToken(ctx)
	if err != nil || tok2 == tr.Token || tok2 != d.Token() {
		t.Fatalf("rotate by bearer: %q %v", tok2, err)
	}
	if _, err := httpapi.NewClient(addr, tr.Token).Stats(ctx); err == nil {
		t.Error("the token of the first rotation still works after the second")
	}
}

// noRedirect is a client that does not follow redirects (the login link
// answers with one).
var noRedirect = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

// login follows the browser UI's login link with tok and returns the one
// cookie it sets, and its answer.
func login(t *testing.T, addr, tok string) (*http.Cookie, *http.Response) {
	t.Helper()
	resp, err := noRedirect.Get("http://" + addr + "/login?token=" + tok)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if len(resp.Cookies()) != 1 {
		t.Fatalf("login set %d cookies", len(resp.Cookies()))
	}
	return resp.Cookies()[0], resp
}

func TestSecurityForgedProxyRequests(t *testing.T) {
	t.Parallel()
	up := newCORSUpstream(t)
	cfg := testConfig(t)
	cfg.Capture.AnthropicUpstream, cfg.Capture.OpenAIUpstream = up.URL, up.URL
	d, addr := serve(t, cfg)
	ctx := context.Background()
	forged := []struct {
		name, ct, origin string
		status           int
		want             int
	}{
		{"fetch with the page's Origin", "application/json", "https://evil.example", 200, http.StatusForbidden},
		{"a form post (text/plain) with its Origin", "text/plain", "https://evil.example", 200, http.StatusForbidden},
		{"an Origin of null (sandboxed frame)", "text/plain", "null", 200, http.StatusForbidden},
		{"no Origin, upstream 401 (no API key)", "text/plain", "", 401, 401},
		{"no Origin, upstream 400", "application/json", "", 400, 400},
		{"no Origin, upstream 403", "application/json", "", 403, 403},
		{"no Origin, upstream 429", "application/json", "", 429, 429},
		{"no Origin, upstream 500", "application/json", "", 500, 500},
		{"no Origin, upstream 529 (overloaded)", "application/json", "", 529, 529},
	}
	reached := int64(0)
	for _, f := range forged {
		up.status.Store(int32(f.status))
		before := up.calls.Load()
		req, _ := http.NewRequest(http.MethodPost, "http://"+addr+"/v1/messages", strings.NewReader(messagesBody))
		req.Header.Set("Content-Type", f.ct)
		if f.origin != "" {
			req.Header.Set("Origin", f.origin)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("%s: %v", f.name, err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != f.want {
			t.Errorf("%s: status %d, want %d", f.name, resp.StatusCode, f.want)
		}
		if f.origin != "" && up.calls.Load() != before {
			t.Errorf("%s: reached the upstream", f.name)
		}
		reached += up.calls.Load() - before
	}
	// The genuine agent request after them is captured: the pipeline was
	// running all along.
	up.status.Store(200)
	req, _ := http.NewRequest(http.MethodPost, "http://"+addr+"/v1/messages", strings.NewReader(messagesBody))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("x-api-key", "sk-ant-test")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	var s struct {
		Captured, Handled int64
		NotCaptured       int64 `json:"not_captured_status"`
	}
	polltest.Wait(t, "the genuine exchange to be handled", func() bool {
		st, _ := d.Services().Settings.Capture(ctx)
		json.Unmarshal(st.Stats, &s)
		return s.Handled >= 1
	}, func() string { return fmt.Sprintf("capture stats %+v", s) })
	if s.Captured != 1 || s.Handled != 1 || s.NotCaptured != reached {
		t.Errorf("capture stats %+v: want the 1 genuine exchange captured and the %d error answers not", s, reached)
	}
	decs, _ := d.Feed().Decisions(ctx, 100)
	if len(decs) != 1 {
		t.Errorf("%d decisions: the forged requests reached the pipeline", len(decs))
	}
	for _, dec := range decs {
		if !strings.Contains(dec.Assistant, "registry.internal:5000") {
			t.Errorf("a decision not of the genuine exchange: %+v", dec.Decision)
		}
	}
}

// TestSecurityDataDirModes runs a busy session with the process umask at
// 0, so nothing is private by accident, then walks the data dir (and the
// config file's folder): every folder 0700, every file 0600.
func TestSecurityDataDirModes(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no POSIX modes")
	}
	old := syscall.Umask(0)
	t.Cleanup(func() { syscall.Umask(old) })
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, ".config"))
	t.Setenv("APPIMAGE", "")
	os.MkdirAll(filepath.Join(home, ".claude"), 0o700)
	os.WriteFile(filepath.Join(home, ".claude", "settings.json"), []byte("{\n  \"model\": \"opus\"\n}\n"), 0o600)
	defaultBinary := setupBinary
	setupBinary = func() (string, []string, error) { return "/opt/memtray/bin/memtray", nil, nil }
	t.Cleanup(func() { setupBinary = defaultBinary })

	up := newCORSUpstream(t)
	cfg := testConfig(t)
	if err := os.Chmod(cfg.DataDir, 0o777); err != nil { // as a careless tool would leave it
		t.Fatal(err)
	}
	cfgDir := filepath.Join(t.TempDir(), "memtray-config")
	cfg.File = filepath.Join(cfgDir, "config.json")
	cfg.Capture.AnthropicUpstream = up.URL
	cfg.Steward.Every = 0
	d, addr := serve(t, cfg)
	c := httpapi.NewClient(addr, d.Token())
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	must := func(what string, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	// add, edit, ingest, capture
	var ids []string
	for i := range 5 {
		m, err := c.Add(ctx, httpapi.AddRequest{Text: fmt.Sprintf("Service %d listens on port %d and logs to /var/log/svc%d.log; restart it with systemctl restart svc%d.", i, 8000+i, i, i)})
		must("add", err)
		ids = append(ids, m.ID)
	}
	text := "Service 0 moved to port 9000 in March because 8000 clashed with the metrics exporter."
	_, err := c.Edit(ctx, ids[0], httpapi.MemoryPatch{Text: &text})
	must("edit", err)
	_, err = c.Ingest(ctx, httpapi.IngestRequest{Exchanges: []memory.Exchange{{SessionID: "s", Turn: 1, User: "why is the cache cold after deploys?",
		Assistant: "The cache is cold after deploys because the warmup job runs only at 03:00; we decided to trigger it from the deploy script instead."}}})
	must("ingest", err)
	req, _ := http.NewRequest(http.MethodPost, "http://"+addr+"/v1/messages", strings.NewReader(messagesBody))
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	must("proxy", err)
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	// steward: an old, unimportant memory to prune into the trash, then undo
	emb := embed.NewBuiltin()
	oldText := "The old staging host was called stg-legacy-01 and ran CentOS 7."
	v, _ := emb.Embed(ctx, []string{oldText})
	_, err = d.Store().PutBatch(ctx, []memory.Memory{{ID: "prune-me", Text: oldText, Kind: memory.KindFact, Type: memory.TypeProject,
		Importance: 0.02, CreatedAt: time.Now().AddDate(0, 0, -200), Embedding: v[0]}})
	must("put", err)
	plan, err := c.StewardPlan(ctx, steward.PlanOptions{})
	must("steward plan", err)
	_, err = c.StewardApply(ctx, httpapi.ApplyRequest{PlanID: plan.ID})
	must("steward apply", err)
	// noise, capture pause, config change, welcome, setup, autostart, token
	must("mark noise", c.MarkNoise(ctx, ids[1]))
	hour := config.Duration(time.Hour)
	_, err = c.SetCapture(ctx, httpapi.CaptureUpdate{PauseFor: &hour})
	must("capture pause", err)
	_, err = c.SetConfig(ctx, json.RawMessage(`{"recall":{"k":4}}`))
	must("config", err)
	_, err = c.FinishWelcome(ctx)
	must("welcome", err)
	pv, err := c.SetupPreview(ctx, "claude-code", httpapi.SetupOptions{})
	must("setup preview", err)
	_, err = c.SetupApply(ctx, "claude-code", httpapi.SetupApplyRequest{Files: pv.Hashes()})
	must("setup apply", err)
	as, err := c.SetAutostart(ctx, httpapi.AutostartRequest{Enabled: true})
	must("autostart", err)
	// export to a file, then import it (spooled in the data dir)
	exportDir := filepath.Join(home, "Downloads")
	os.Mkdir(exportDir, 0o755)
	j, err := c.ExportFile(ctx, httpapi.ExportFileRequest{Dir: exportDir})
	if err == nil {
		j, err = c.WaitJob(ctx, j.ID, 20*time.Millisecond, nil)
	}
	must("export file", err)
	data, err := os.ReadFile(j.Target)
	must("read export", err)
	ij, err := c.ImportJob(ctx, bytes.NewReader(data))
	if err == nil {
		ij, err = c.WaitJob(ctx, ij.ID, 20*time.Millisecond, nil)
	}
	must("import job", err)
	if _, err := RotateToken(cfg.DataDir); err != nil {
		t.Fatal(err)
	}

	var files, dirs int
	for _, root := range []string{cfg.DataDir, cfgDir} {
		err := filepath.WalkDir(root, func(p string, e fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			fi, err := e.Info()
			if err != nil {
				return err
			}
			switch {
			case fi.IsDir():
				dirs++
				if fi.Mode().Perm() != 0o700 {
					t.Errorf("folder %s is %v, want 0700", p, fi.Mode().Perm())
				}
			case fi.Mode().IsRegular():
				files++
				if fi.Mode().Perm() != 0o600 {
					t.Errorf("file %s is %v, want 0600", p, fi.Mode().Perm())
				}
			default:
				t.Errorf("%s is a %v", p, fi.Mode().Type())
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	for _, want := range []string{TokenFile, RuntimeFile, CaptureStateFile, WelcomeFile, NoiseBufferFile, StoreDir} {
		if _, err := os.Stat(filepath.Join(cfg.DataDir, want)); err != nil {
			t.Errorf("the session did not write %s: %v", want, err)
		}
	}
	if _, err := os.Stat(cfg.File); err != nil {
		t.Errorf("the config change was not saved: %v", err)
	}
	// Outside the data dir: the export is the user's but private; the
	// autostart entry is the desktop's and may be world-readable, never
	// writable by others.
	if fi, err := os.Stat(j.Target); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("export file %s: %v %v", j.Target, fi.Mode().Perm(), err)
	}
	if fi, err := os.Stat(as.Path); err != nil || fi.Mode().Perm()&0o022 != 0 {
		t.Errorf("autostart entry %s: %v %v", as.Path, fi.Mode().Perm(), err)
	}
	t.Logf("%d folders and %d files checked after add, edit, ingest, capture, steward, noise, pause, config, welcome, setup, autostart, export and import", dirs, files)
}

// TestSecurityNonLoopbackListen: a non-loopback listen address is refused
// unless forced; forced, the Host check still answers loopback names only.
func TestSecurityNonLoopbackListen(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t)
	cfg.Listen = "0.0.0.0:0"
	if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), "--insecure-non-loopback") {
		t.Fatalf("Validate of 0.0.0.0 = %v, want a refusal that names the force", err)
	}
	if _, err := Open(context.Background(), Options{Config: cfg}); err == nil {
		t.Fatal("Open accepted a non-loopback listen address")
	}
	cfg.InsecureNonLoopback = true
	if err := cfg.Validate(); err != nil {
		t.Fatalf("forced: %v", err)
	}
	if data, _ := json.Marshal(cfg); strings.Contains(string(data), "insecure") {
		t.Fatal("the force is written to config files")
	}
	var logs syncBuf
	d, addr := serveWith(t, Options{Config: cfg, Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	if !strings.Contains(logs.String(), "INSECURE") {
		t.Errorf("no warning logged: %s", logs.String())
	}
	_, port, _ := net.SplitHostPort(addr)
	for host, want := range map[string]int{"127.0.0.1:" + port: 200, "192.168.1.5:" + port: http.StatusMisdirectedRequest, "memtray.lan:" + port: http.StatusMisdirectedRequest} {
		req, _ := http.NewRequest("GET", "http://127.0.0.1:"+port+"/api/stats", nil)
		req.Host = host
		req.Header.Set("Authorization", "Bearer "+d.Token())
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("Host %s: %d, want %d", host, resp.StatusCode, want)
		}
	}
}

func or(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
