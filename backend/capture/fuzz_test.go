package capture

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/memtray/memtray/backend/memory"
)

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
	f.Fuzz(func(t *testing.T, body []byte) {
		for _, parse := range []func([]byte) (request, error){parseAnthropicRequest, parseChatRequest, parseResponsesRequest} {
			r, err := parse(body)
			if err != nil {
				continue
			}
			texts := []string{r.user, r.sessionID}
			for _, tr := range r.toolResults {
				texts = append(texts, tr.Content, tr.Name, tr.ToolUseID)
				if len(tr.Content) > maxToolResultBytes {
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
