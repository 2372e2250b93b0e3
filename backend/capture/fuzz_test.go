package capture

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/memtray/memtray/backend/config"
	"github.com/memtray/memtray/backend/memory"
)

// sharedStreams returns the recorded Anthropic streams of sharedSSE (the
// *.sse files and the event-stream bodies of the go-vcr cassettes), as
// seeds; none when the directory is absent. They are read, never copied
// into testdata.
func sharedStreams() [][]byte {
	var out [][]byte
	files, _ := filepath.Glob(filepath.Join(sharedSSE, "*.sse"))
	for _, name := range files {
		if b, err := os.ReadFile(name); err == nil {
			out = append(out, b)
		}
	}
	cassettes, _ := filepath.Glob(filepath.Join(sharedSSE, "*.yaml"))
	for _, name := range cassettes {
		b, err := os.ReadFile(name)
		if err != nil {
			continue
		}
		for _, body := range literalBodies(string(b)) {
			if strings.HasPrefix(body, "event: ") {
				out = append(out, []byte(body))
			}
		}
	}
	return out
}

// sharedBodies returns the JSON bodies (requests and whole answers) of the
// go-vcr cassettes of sharedSSE, as seeds; none when it is absent.
func sharedBodies() [][]byte {
	var out [][]byte
	cassettes, _ := filepath.Glob(filepath.Join(sharedSSE, "*.yaml"))
	for _, name := range cassettes {
		b, err := os.ReadFile(name)
		if err != nil {
			continue
		}
		out = append(out, quotedBodies(string(b))...)
	}
	return out
}

// quotedBodies returns the single-quoted "body: '...'" scalars of a YAML
// document, folded as YAML folds them (line breaks become spaces, two
// single quotes are one): close enough for seeds.
func quotedBodies(doc string) [][]byte {
	var out [][]byte
	lines := strings.Split(doc, "\n")
	for i := 0; i < len(lines); i++ {
		rest, ok := strings.CutPrefix(strings.TrimSpace(lines[i]), "body: '")
		if !ok {
			continue
		}
		var b strings.Builder
		b.WriteString(rest)
		for !closed(b.String()) && i+1 < len(lines) {
			i++
			b.WriteString(" " + strings.TrimSpace(lines[i]))
		}
		body := strings.TrimSuffix(b.String(), "'")
		out = append(out, []byte(strings.ReplaceAll(body, "''", "'")))
	}
	return out
}

// closed reports whether a single-quoted scalar's text ends its quote: an
// odd run of quotes at its end.
func closed(s string) bool {
	n := len(s) - len(strings.TrimRight(s, "'"))
	return n%2 == 1
}

// FuzzSSE: the SSE parser and the three stream assemblers never panic, never
// emit an event over the bound and keep bounded memory, however the bytes
// are cut.
func FuzzSSE(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "*.sse"))
	for _, name := range files {
		b, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b, uint8(0))
		f.Add(b, uint8(6))
	}
	f.Add([]byte("data: a\r\n\r\ndata: b\r\rdata:\n\n:comment\nevent\n\n"), uint8(1))
	f.Add([]byte("event: error\ndata: {\"type\":\"error\"\n\n"), uint8(2))
	f.Add([]byte("data: {\"type\":\"content_block_delta\",\"index\":-1,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"x\"}}\n\n"), uint8(3))
	f.Add([]byte("data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":99999999}]}}]}\n\n"), uint8(0))
	for _, b := range sharedStreams() {
		f.Add(b, uint8(0))
	}
	f.Fuzz(func(t *testing.T, data []byte, split uint8) {
		const max = 512
		parsers := []responseParser{newAnthParser(max), newChatParser(max), newResponsesParser(max)}
		p := newSSEParser(max, func(name string, d []byte) {
			if len(d) > max {
				t.Fatalf("event of %d bytes over the bound", len(d))
			}
			for _, rp := range parsers {
				rp.event(name, d)
			}
		})
		n := int(split) + 1
		for b := data; len(b) > 0; {
			k := min(n, len(b))
			p.Write(b[:k])
			b = b[k:]
			if len(p.line) > max || len(p.data) > max {
				t.Fatalf("parser holds line %d, data %d", len(p.line), len(p.data))
			}
		}
		for _, rp := range parsers {
			a := rp.result()
			if a.kept > max || a.text.Len() > max {
				t.Fatalf("answer keeps %d bytes", a.kept)
			}
			for _, c := range a.toolCalls() {
				if !memory.ValidUTF8(c.Input) || !memory.ValidUTF8(c.Name) {
					t.Fatalf("invalid UTF-8 in %+v", c)
				}
			}
		}
	})
}

// FuzzRequest: request parsing (Anthropic, chat completions, Responses) and
// whole-body response parsing never panic, and every text they return is
// valid UTF-8 without NUL.
func FuzzRequest(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "*.json"))
	for _, name := range files {
		b, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte(`{"messages":[{"role":"user","content":"\u0000<system-reminder>x"}],"metadata":{"user_id":"{\"session_id\":\"\\u0000\"}"}}`))
	f.Add([]byte(`{"input":[{"type":"function_call_output","output":[{"type":"input_text","text":"\xff"}]}]}`))
	f.Add([]byte(`{"content":[{"type":"tool_use","input":null}],"choices":[{"message":{"tool_calls":[{}]}}],"output":[{"type":"function_call"}]}`))
	for _, b := range sharedBodies() {
		f.Add(b)
	}
	// Turns that begin alike (occurrence), in each API's history.
	f.Add([]byte(`{"messages":[{"role":"user","content":"yes"},{"role":"assistant","content":[{"type":"text","text":"ok"},{"type":"tool_use","id":"t","name":"Bash"}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"t"}]},{"role":"assistant","content":"a"},{"role":"user","content":"yes"}]}`))
	f.Add([]byte(`{"messages":[{"role":"user","content":"yes"},{"role":"assistant","content":"ok","tool_calls":[{"id":"c","function":{"name":"run"}}]},{"role":"user","content":"yes"}]}`))
	f.Add([]byte(`{"input":[{"type":"message","role":"user","content":"yes"},{"type":"message","role":"assistant","content":[{"type":"output_text","text":"ok"}]},{"type":"function_call","name":"shell"},{"type":"message","role":"user","content":"yes"}]}`))
	// A refusal with the user's words, and one without.
	f.Add([]byte(`{"messages":[{"role":"user","content":"go"},{"role":"assistant","content":[{"type":"tool_use","id":"t","name":"Bash"}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"t","is_error":true,"content":"The user doesn't want to proceed with this tool use. To tell you how to proceed, the user said:\nuse make\n\nNote: The user's next message may contain a correction or preference."}]}]}`))
	f.Add([]byte(`{"messages":[{"role":"user","content":"go"},{"role":"assistant","content":[{"type":"tool_use","id":"t","name":"Bash"}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"t","is_error":true,"content":[{"type":"text","text":"Permission for this tool use was denied. The user said:\n"}]}]}]}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		for _, parse := range []func([]byte) (request, error){parseAnthropicRequest, parseChatRequest, parseResponsesRequest} {
			r, err := parse(body)
			if err != nil {
				continue
			}
			texts := []string{r.user, r.sessionID}
			for _, a := range r.answers {
				// What ingest.Validate asks of an answer.
				if strings.TrimSpace(a.Answer) == "" || a.Refused != (strings.TrimSpace(a.Question) == "") {
					t.Fatalf("answer %+v", a)
				}
				texts = append(texts, a.Question, a.Answer)
			}
			for _, tr := range r.toolResults {
				texts = append(texts, tr.Content, tr.Name, tr.ToolUseID)
				if len(tr.Content) > memory.MaxToolResultBytes {
					t.Fatalf("tool result of %d bytes", len(tr.Content))
				}
			}
			for _, s := range texts {
				if !memory.ValidUTF8(s) {
					t.Fatalf("invalid text %q", s)
				}
			}
			if r.turn < 1 || r.userTurns < 0 {
				t.Fatalf("turn %d, user turns %d", r.turn, r.userTurns)
			}
			if len(r.alike) >= max(r.userTurns, 1) || (r.toolLoop && len(r.alike) > 0) {
				t.Fatalf("%d earlier turns alike of %d prompts (tool loop %v)", len(r.alike), r.userTurns, r.toolLoop)
			}
			for _, ts := range r.alike {
				if n := r.occurrence(ts.assistant, nil); n < 1 || n > len(r.alike)+1 {
					t.Fatalf("occurrence %d of %d alike", n, len(r.alike))
				}
				for _, s := range append([]string{ts.assistant}, ts.tools...) {
					if !memory.ValidUTF8(s) {
						t.Fatalf("invalid text %q", s)
					}
				}
			}
		}
		for _, rp := range []responseParser{newAnthParser(1 << 10), newChatParser(1 << 10), newResponsesParser(1 << 10)} {
			rp.whole(body)
			a := rp.result()
			for _, c := range a.toolCalls() {
				if !memory.ValidUTF8(c.Input) {
					t.Fatalf("invalid input %q", c.Input)
				}
			}
		}
	})
}

// proxyCase is what the fuzzed upstream expects and answers.
type proxyCase struct {
	req, answer []byte
	sse         bool
}

// FuzzProxy sends any request body through the real proxy to an upstream
// answering any body (as an event stream or as JSON) and checks, end to
// end: the upstream gets the request byte for byte, the agent gets the
// answer byte for byte, and turning whatever was queued into an Exchange
// never panics (built here, without the workers' recover) and yields valid
// UTF-8.
func FuzzProxy(f *testing.F) {
	reqs, _ := filepath.Glob(filepath.Join("testdata", "*.json"))
	answers, _ := filepath.Glob(filepath.Join("testdata", "*.sse"))
	for i, r := range reqs {
		rb, _ := os.ReadFile(r)
		ab, _ := os.ReadFile(answers[i%len(answers)])
		f.Add(uint8(i), rb, ab, true)
	}
	for i, b := range sharedStreams() {
		f.Add(uint8(0), readFile(f, "claude_code_prompt.json"), b, i%2 == 0)
	}
	f.Add(uint8(1), []byte(`{"messages":[{"role":"user","content":"x"}],"stream":true}`), []byte("data: [DONE]\n\n"), true)
	f.Add(uint8(2), []byte(`{"input":"x"}`), []byte(`{"output":[{"type":"message","content":[{"type":"output_text","text":"y"}]}]}`), false)
	h := newHarness(f, harnessOpt{noRun: true, cfg: func(c *config.Capture) { c.QueueSize = 4; c.MaxCaptureBytes = 64 << 10 }})
	var cur atomic.Pointer[proxyCase]
	h.up.srv.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c := cur.Load()
		got, _ := io.ReadAll(r.Body)
		if !bytes.Equal(got, c.req) {
			w.WriteHeader(599)
			return
		}
		if c.sse {
			w.Header().Set("Content-Type", "text/event-stream")
		} else {
			w.Header().Set("Content-Type", "application/json")
		}
		w.Write(c.answer)
	})
	paths := []string{"/v1/messages", "/openai/v1/chat/completions", "/openai/v1/responses"}
	f.Fuzz(func(t *testing.T, which uint8, req, answer []byte, sse bool) {
		cur.Store(&proxyCase{req: req, answer: answer, sse: sse})
		resp, got := h.post(t, paths[int(which)%len(paths)], claudeHeader(), req)
		if resp.StatusCode != 200 || !bytes.Equal(got, answer) {
			t.Fatalf("status %d (599: the upstream got another request); answer %d bytes, want %d", resp.StatusCode, len(got), len(answer))
		}
		for {
			select {
			case pd := <-h.p.queue:
				h.p.queuedBytes.Add(-pd.size)
				ex, _, err := h.p.build(pd)
				if err != nil {
					continue
				}
				for _, s := range []string{ex.User, ex.Assistant, ex.Model, ex.SessionID, ex.Project} {
					if !memory.ValidUTF8(s) {
						t.Fatalf("captured invalid text %q", s)
					}
				}
				for _, c := range ex.ToolCalls {
					if !memory.ValidUTF8(c.Input) || !memory.ValidUTF8(c.Name) {
						t.Fatalf("captured invalid tool call %+v", c)
					}
				}
			default:
				return
			}
		}
	})
}

// TestSharedSeeds checks the fuzz seeds read from sharedSSE: the streams
// are found and the cassettes' JSON bodies come out as JSON.
func TestSharedSeeds(t *testing.T) {
	if _, err := os.Stat(sharedSSE); err != nil {
		t.Skipf("no recorded streams: %v", err)
	}
	streams, bodies := sharedStreams(), sharedBodies()
	valid := 0
	for _, b := range bodies {
		if json.Valid(b) {
			valid++
		}
	}
	t.Logf("%d streams, %d JSON bodies (%d valid JSON) as seeds", len(streams), len(bodies), valid)
	if len(streams) == 0 || len(bodies) == 0 || valid < len(bodies)*9/10 {
		t.Errorf("%d streams, %d bodies, %d valid", len(streams), len(bodies), valid)
	}
}
