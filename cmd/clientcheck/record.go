package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
)

// Fixture folders below the repository, one subfolder per client and
// version (claude-code-2.1.332, codex-0.171.0):
//
//	backend/capture/testdata/clients/  model requests (bodies, headers,
//	                                   Codex's WebSocket handshake and frame)
//	backend/cli/testdata/clients/      hook stdin JSON, one file per event
//	                                   and the MCP exchange (mcp-client.jsonl, mcp-server.jsonl)
const (
	captureFixtures = "backend/capture/testdata/clients"
	hookFixtures    = "backend/cli/testdata/clients"
	mcpFixtures     = hookFixtures
)

// fixtureHome is what the world's temporary HOME becomes in a fixture, so
// fixtures do not change with every recording and name no real user.
const fixtureHome = "/home/user"

// secretHeaders are replaced by "REDACTED" (the run used dummy keys; a
// fixture never carries a credential anyway).
var secretHeaders = []string{"X-Api-Key", "Authorization", "Cookie", "Proxy-Authorization"}

// dropHeaders differ with every run or machine and say nothing about the
// wire format.
var dropHeaders = []string{"Content-Length", "Sec-Websocket-Key", "Host"}

// userHash is the account hash in Claude Code's metadata.user_id; the
// session ids and request ids are kept (random, not secrets).
var userHash = regexp.MustCompile(`user_[0-9a-f]{64}`)

// tempName is the temporary root's random name wherever it is left.
var tempName = regexp.MustCompile(`clientcheck-[0-9]+`)

// scrub makes a recorded text machine-independent: the temporary root and
// HOME become fixed paths, the loopback ports fixed, the account hash of
// metadata.user_id a constant.
func (k *checker) scrub(b []byte) []byte {
	w := k.w
	b = bytes.ReplaceAll(b, []byte(w.home), []byte(fixtureHome))
	// Claude Code's project folder name: the path with "/" as "-".
	b = bytes.ReplaceAll(b, []byte(strings.ReplaceAll(w.home, "/", "-")), []byte(strings.ReplaceAll(fixtureHome, "/", "-")))
	b = bytes.ReplaceAll(b, []byte(w.root), []byte("/tmp/clientcheck"))
	for _, u := range []string{w.tap.url, w.anth.url, w.oai.url} {
		b = bytes.ReplaceAll(b, []byte(strings.TrimPrefix(u, "http://")), []byte("127.0.0.1:7432"))
	}
	b = tempName.ReplaceAll(b, []byte("clientcheck"))
	return userHash.ReplaceAll(b, []byte("user_"+strings.Repeat("0", 64)))
}

func (k *checker) fixtureDir(base string) (string, error) {
	d := filepath.Join(k.record, base, k.c.Name+"-"+k.c.Version)
	if err := os.MkdirAll(d, 0o755); err != nil {
		return "", fmt.Errorf("fixtures: %w", err)
	}
	return d, nil
}

// writeFixture writes a scrubbed fixture: the bytes as the client sent
// them (only the scrubbed strings differ), except the headers files
// (clientcheck's own format), indented for review.
func (k *checker) writeFixture(dir, name string, b []byte) error {
	b = k.scrub(b)
	if strings.HasSuffix(name, "-headers.json") || strings.HasSuffix(name, "-handshake.json") {
		var buf bytes.Buffer
		if json.Indent(&buf, b, "", "  ") == nil {
			b = append(buf.Bytes(), '\n')
		}
	}
	if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
		return fmt.Errorf("fixture %s: %w", name, err)
	}
	return nil
}

// headerJSON is a request's method, path and headers, secrets redacted.
func headerJSON(ex *exchange) []byte {
	h := http.Header{}
	for k, v := range ex.Header {
		h[k] = v
	}
	for _, s := range secretHeaders {
		if h.Get(s) != "" {
			h.Set(s, "REDACTED")
		}
	}
	for _, d := range dropHeaders {
		h.Del(d)
	}
	path := ex.Path
	if ex.RawQuery != "" {
		path += "?" + ex.RawQuery
	}
	b, _ := json.Marshal(map[string]any{"method": ex.Method, "path": path, "headers": h})
	return b
}

// recordRequests writes the model requests of the README run: for Claude
// Code the first request (the prompt) and the next (the tool result), for
// Codex the WebSocket handshake and its frames.
func (k *checker) recordRequests() error {
	dir, err := k.fixtureDir(captureFixtures)
	if err != nil {
		return err
	}
	switch k.c.Name {
	case "claude-code":
		var turns []*exchange
		for _, ex := range k.w.anth.requests() {
			if ex.Path == "/v1/messages" && bytes.Contains(ex.Body, []byte(`"tools"`)) && bytes.Contains(ex.Body, []byte("Read README.md")) {
				turns = append(turns, ex)
			}
		}
		if len(turns) < 2 {
			return fmt.Errorf("record: want the prompt and the tool-result request, got %d", len(turns))
		}
		for name, b := range map[string][]byte{
			"messages-first.json":      turns[0].Body,
			"messages-toolresult.json": turns[1].Body,
			"messages-headers.json":    headerJSON(turns[0]),
			"messages-answer.sse":      turns[0].Answer,
		} {
			if err := k.writeFixture(dir, name, b); err != nil {
				return err
			}
		}
	case "codex":
		for _, ex := range k.w.oai.requests() {
			if ex.Frames == nil {
				continue
			}
			if err := k.writeFixture(dir, "responses-ws-handshake.json", headerJSON(ex)); err != nil {
				return err
			}
			// Every client frame, one a line (Codex's first is a prewarm,
			// "generate":false; the turn follows).
			return k.writeFixture(dir, "responses-ws-frames.jsonl", append(bytes.Join(ex.Frames, []byte("\n")), '\n'))
		}
		return fmt.Errorf("record: Codex opened no WebSocket with a frame")
	}
	return nil
}

// recordCodexHTTP writes Codex's Responses request over HTTPS (a POST).
func (k *checker) recordCodexHTTP() error {
	dir, err := k.fixtureDir(captureFixtures)
	if err != nil {
		return err
	}
	for _, ex := range k.w.oai.requests() {
		if ex.Method == "POST" && ex.Path == "/v1/responses" {
			if err := k.writeFixture(dir, "responses-http.json", ex.Body); err != nil {
				return err
			}
			if err := k.writeFixture(dir, "responses-http-headers.json", headerJSON(ex)); err != nil {
				return err
			}
			return k.writeFixture(dir, "responses-answer.sse", ex.Answer)
		}
	}
	return fmt.Errorf("record: Codex sent no POST /v1/responses with WebSockets off")
}

// addRecordHooks adds, for the recording only, hooks memtray does not
// install (Stop, SessionEnd where the client has it) that only record
// their stdin, so the fixtures show every event the client fires.
func (k *checker) addRecordHooks() error {
	var path string
	var events []string
	switch k.c.Name {
	case "claude-code":
		path, events = filepath.Join(k.w.home, ".claude", "settings.json"), []string{"Stop"}
	case "codex":
		path, events = filepath.Join(k.w.home, ".codex", "hooks.json"), []string{"Stop"}
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("record hooks: %w", err)
	}
	var root map[string]any
	if err := json.Unmarshal(b, &root); err != nil {
		return fmt.Errorf("record hooks: %s: %w", path, err)
	}
	hooks, _ := root["hooks"].(map[string]any)
	if hooks == nil {
		hooks = map[string]any{}
		root["hooks"] = hooks
	}
	for _, ev := range events {
		entry := map[string]any{"hooks": []any{map[string]any{"type": "command", "command": k.w.wrapper + " hook record-only-" + ev, "timeout": 3}}}
		list, _ := hooks[ev].([]any)
		hooks[ev] = append(list, entry)
	}
	out, _ := json.MarshalIndent(root, "", "  ")
	if err := os.WriteFile(path, out, 0o600); err != nil {
		return fmt.Errorf("record hooks: %w", err)
	}
	return nil
}

// recordHooksAndMCP writes the first stdin of each hook event and the
// first complete MCP session.
func (k *checker) recordHooksAndMCP() error {
	dir, err := k.fixtureDir(hookFixtures)
	if err != nil {
		return err
	}
	seen := map[string]bool{}
	var events []string
	for _, h := range k.hookCalls() {
		ev := strings.TrimPrefix(h.event, "record-only-")
		if seen[ev] || strings.TrimSpace(h.in) == "" {
			continue
		}
		seen[ev] = true
		events = append(events, ev)
		if err := k.writeFixture(dir, "hook-"+ev+".json", []byte(h.in)); err != nil {
			return err
		}
	}
	sort.Strings(events)
	fmt.Fprintf(os.Stderr, "clientcheck: recorded %s hook inputs: %s\n", k.c.Name, list(events))

	// The MCP session: the one that got furthest (tools/list answered,
	// else tools/list asked, else initialize asked).
	ins, _ := filepath.Glob(filepath.Join(k.w.recDir, "mcp-*.in"))
	sort.Strings(ins)
	best, bestScore := "", 0
	for _, in := range ins {
		req, _ := os.ReadFile(in)
		resp, _ := os.ReadFile(strings.TrimSuffix(in, ".in") + ".out")
		score := 0
		switch {
		case bytes.Contains(resp, []byte("memory_search")):
			score = 3
		case bytes.Contains(req, []byte(`"tools/list"`)):
			score = 2
		case bytes.Contains(req, []byte(`"initialize"`)):
			score = 1
		}
		if score > bestScore {
			best, bestScore = in, score
		}
	}
	if best == "" {
		fmt.Fprintf(os.Stderr, "clientcheck: %s: no MCP session to record\n", k.c.Name)
		return nil
	}
	if bestScore < 3 {
		fmt.Fprintf(os.Stderr, "clientcheck: %s: memtray mcp did not list its tools; recording the client's side only\n", k.c.Name)
	}
	mdir, err := k.fixtureDir(mcpFixtures)
	if err != nil {
		return err
	}
	req, _ := os.ReadFile(best)
	resp, _ := os.ReadFile(strings.TrimSuffix(best, ".in") + ".out")
	if err := k.writeFixture(mdir, "mcp-client.jsonl", req); err != nil {
		return err
	}
	return k.writeFixture(mdir, "mcp-server.jsonl", resp)
}
