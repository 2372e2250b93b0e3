package capture

import (
	"bytes"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memtray/memtray/backend/memory"
)

// The fixtures in testdata/clients/<client>-<version>/ are what the real
// clients sent (build/record-clients.sh re-records them; cmd/clientcheck
// documents how): Claude Code's Messages requests (the prompt, then the
// tool result of the Read it asked for) with their headers, Codex's
// Responses request over HTTPS and its WebSocket handshake and frames, and the answers the fake upstream streamed. Each client ran in
// /home/user/src/demo-app on the prompt clientPrompt. A client that
// changes its wire format fails these tests at the next refresh.

// clientPrompt is the prompt of the recorded requests; clientProject the
// project of the directory the clients ran in.
const (
	clientPrompt  = "Read README.md and tell me what the service is called."
	clientProject = "demo-app"
)

// clientDirs lists the recorded versions of a client (claude-code, codex).
func clientDirs(t *testing.T, client string) []string {
	t.Helper()
	dirs, err := filepath.Glob(filepath.Join("testdata", "clients", client+"-*"))
	if err != nil || len(dirs) == 0 {
		t.Fatalf("no recorded %s fixtures in testdata/clients (build/record-clients.sh): %v", client, err)
	}
	return dirs
}

func readClientFile(t *testing.T, dir, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// recordedRequest is a *-headers.json / *-handshake.json fixture.
type recordedRequest struct {
	Method  string      `json:"method"`
	Path    string      `json:"path"`
	Headers http.Header `json:"headers"`
}

func readRecordedRequest(t *testing.T, dir, name string) recordedRequest {
	t.Helper()
	var r recordedRequest
	if err := json.Unmarshal(readClientFile(t, dir, name), &r); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return r
}

// sseData returns the data lines of an SSE stream, one per event.
func sseData(b []byte) [][]byte {
	var out [][]byte
	for line := range strings.Lines(string(b)) {
		if d, ok := strings.CutPrefix(strings.TrimRight(line, "\r\n"), "data: "); ok {
			out = append(out, []byte(d))
		}
	}
	return out
}

// TestClientsClaudeCode: Claude Code's recorded requests pass the proxy
// unchanged (body, path and query, headers) and give an Exchange with the
// prompt and the project, then a tool-loop Exchange for the tool result.
func TestClientsClaudeCode(t *testing.T) {
	for _, dir := range clientDirs(t, "claude-code") {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			rec := readRecordedRequest(t, dir, "messages-headers.json")
			h := newHarness(t, harnessOpt{})
			h.up.reply(http.StatusOK, sseHeader(), readClientFile(t, dir, "messages-answer.sse"))

			first := readClientFile(t, dir, "messages-first.json")
			resp, got := h.post(t, rec.Path, rec.Headers, first)
			if resp.StatusCode != http.StatusOK || !bytes.Equal(got, readClientFile(t, dir, "messages-answer.sse")) {
				t.Fatalf("answer %d, %d bytes: not the upstream's", resp.StatusCode, len(got))
			}
			seen := h.up.requests()[0]
			if !bytes.Equal(seen.Body, first) || seen.Path+"?"+seen.RawQuery != rec.Path {
				t.Errorf("upstream got %s?%s, %d bytes; want %s, %d bytes as sent", seen.Path, seen.RawQuery, len(seen.Body), rec.Path, len(first))
			}
			for _, k := range []string{"Anthropic-Version", "Anthropic-Beta", "X-Api-Key", "User-Agent", "X-App", "X-Claude-Code-Session-Id"} {
				if want := rec.Headers.Get(k); want == "" || seen.Header.Get(k) != want {
					t.Errorf("header %s: upstream got %q, sent %q", k, seen.Header.Get(k), want)
				}
			}
			ex := h.sink.next(t)
			if ex.User != clientPrompt || ex.ToolLoop || ex.SessionID == "" || ex.Turn != 1 || ex.Source != "capture" {
				t.Errorf("first turn: user %q, tool loop %v, session %q, turn %d, source %q", ex.User, ex.ToolLoop, ex.SessionID, ex.Turn, ex.Source)
			}
			if ex.Project != clientProject {
				t.Errorf("first turn: project %q, want %q (from the role-system environment message)", ex.Project, clientProject)
			}
			if len(ex.ToolCalls) != 1 || ex.ToolCalls[0].Name != "Read" {
				t.Errorf("first turn: tool calls %+v, want the Read", ex.ToolCalls)
			}

			h.post(t, rec.Path, rec.Headers, readClientFile(t, dir, "messages-toolresult.json"))
			loop := h.sink.next(t)
			if !loop.ToolLoop || loop.User != "" || loop.Project != clientProject || loop.SessionID != ex.SessionID || loop.Turn != 2 {
				t.Errorf("tool result: tool loop %v, user %q, project %q, session %q (first %q), turn %d",
					loop.ToolLoop, loop.User, loop.Project, loop.SessionID, ex.SessionID, loop.Turn)
			}
			if len(loop.ToolResults) != 1 || loop.ToolResults[0].Name != "Read" {
				t.Errorf("tool result: results %+v, want one of Read", loop.ToolResults)
			}
		})
	}
}

// TestClientsCodexHTTP: Codex's Responses request over HTTPS passes
// unchanged and gives the prompt and the project.
func TestClientsCodexHTTP(t *testing.T) {
	for _, dir := range clientDirs(t, "codex") {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			rec := readRecordedRequest(t, dir, "responses-http-headers.json")
			h := newHarness(t, harnessOpt{})
			answer := readClientFile(t, dir, "responses-answer.sse")
			h.up.reply(http.StatusOK, http.Header{"Content-Type": {"text/event-stream"}}, answer)
			body := readClientFile(t, dir, "responses-http.json")
			resp, got := h.post(t, "/openai"+rec.Path, rec.Headers, body)
			if resp.StatusCode != http.StatusOK || !bytes.Equal(got, answer) {
				t.Fatalf("answer %d, %d bytes: not the upstream's", resp.StatusCode, len(got))
			}
			seen := h.up.requests()[0]
			if !bytes.Equal(seen.Body, body) || seen.Path != rec.Path {
				t.Errorf("upstream got %s, %d bytes; want %s, %d bytes as sent", seen.Path, len(seen.Body), rec.Path, len(body))
			}
			checkCodexExchange(t, h.sink.next(t), answer)
		})
	}
}

// TestClientsCodexWebSocket: Codex's WebSocket handshake and its
// response.create frames (a prewarm with "generate":false, then the turn)
// pass unchanged and give one Exchange, the same as over HTTPS.
func TestClientsCodexWebSocket(t *testing.T) {
	for _, dir := range clientDirs(t, "codex") {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			rec := readRecordedRequest(t, dir, "responses-ws-handshake.json")
			frames := bytes.Split(bytes.TrimSpace(readClientFile(t, dir, "responses-ws-frames.jsonl")), []byte("\n"))
			answer := readClientFile(t, dir, "responses-answer.sse")
			events := sseData(answer)
			h, ws := wsHarness(t, events, "", nil)
			hdr := http.Header{}
			for k, v := range rec.Headers {
				switch http.CanonicalHeaderKey(k) {
				case "Upgrade", "Connection", "Sec-Websocket-Version", "Sec-Websocket-Extensions":
					// wsDial's own handshake (no extension: frames stay plain)
				default:
					hdr[k] = v
				}
			}
			conn, br, resp := wsDial(t, h.url, "/openai"+rec.Path, hdr)
			if resp.StatusCode != http.StatusSwitchingProtocols {
				t.Fatalf("handshake: status %d", resp.StatusCode)
			}
			up := recv(t, ws.header)
			for _, k := range []string{"Authorization", "Openai-Beta", "Session-Id", "Originator", "User-Agent"} {
				if want := rec.Headers.Get(k); want == "" || up.Get(k) != want {
					t.Errorf("handshake header %s: upstream got %q, sent %q", k, up.Get(k), want)
				}
			}
			for n, frame := range frames {
				if _, err := conn.Write(clientFrame(true, wsText, frame)); err != nil {
					t.Fatal(err)
				}
				if f := recv(t, ws.frames); !bytes.Equal(f.payload, frame) {
					t.Errorf("frame %d at the upstream: %d bytes, want the %d sent", n, len(f.payload), len(frame))
				}
				for i := range events {
					if f, err := readFrame(br); err != nil || !bytes.Equal(f.payload, events[i]) {
						t.Fatalf("frame %d, event %d: %q %v", n, i, f.payload, err)
					}
				}
			}
			checkCodexExchange(t, h.sink.next(t), answer)
			h.sink.none(t, h.p) // the prewarm is no turn
		})
	}
}

func checkCodexExchange(t *testing.T, ex memory.Exchange, answer []byte) {
	t.Helper()
	if ex.User != clientPrompt || ex.ToolLoop || ex.SessionID == "" || ex.Source != "capture" {
		t.Errorf("user %q, tool loop %v, session %q, source %q", ex.User, ex.ToolLoop, ex.SessionID, ex.Source)
	}
	if ex.Project != clientProject {
		t.Errorf("project %q, want %q (the cwd of Codex's environment_context)", ex.Project, clientProject)
	}
	if ex.Assistant == "" || !bytes.Contains(answer, []byte(ex.Assistant)) {
		t.Errorf("assistant %q: not the streamed answer", ex.Assistant)
	}
}
