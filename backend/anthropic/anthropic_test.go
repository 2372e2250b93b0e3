package anthropic

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/memtray/memtray/backend/memory"
)

func TestBlocks(t *testing.T) {
	tests := []struct {
		name string
		raw  string
		want []Block
	}{
		{"empty", ``, nil},
		{"string", `"hello"`, []Block{{Type: "text", Text: "hello"}}},
		{"bad string", `"hel`, nil},
		{"array", `[{"type":"text","text":"a"},{"type":"tool_result","tool_use_id":"t1","content":"ok","is_error":true}]`,
			[]Block{{Type: "text", Text: "a"}, {Type: "tool_result", ToolUseID: "t1", Content: json.RawMessage(`"ok"`), IsError: true}}},
		{"web result", `[{"type":"web_search_result","title":"Go","url":"https://go.dev"}]`,
			[]Block{{Type: "web_search_result", Title: "Go", URL: "https://go.dev"}}},
		{"object", `{"type":"text"}`, nil},
		{"malformed", `[{"type":`, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Blocks(json.RawMessage(tt.raw)); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Blocks(%s) = %#v, want %#v", tt.raw, got, tt.want)
			}
		})
	}
}

func TestResponseUsage(t *testing.T) {
	var r Response
	body := `{"type":"message","model":"m","content":[{"type":"text","text":"hi"}],"stop_reason":"end_turn",
		"usage":{"input_tokens":3,"output_tokens":4,"cache_creation_input_tokens":5,"cache_read_input_tokens":6}}`
	if err := json.Unmarshal([]byte(body), &r); err != nil {
		t.Fatal(err)
	}
	want := memory.Usage{InputTokens: 3, OutputTokens: 4, CacheCreationInputTokens: 5, CacheReadInputTokens: 6}
	if got := r.Usage.Memory(); got != want || r.Content[0].Text != "hi" {
		t.Errorf("usage %+v, content %+v", got, r.Content)
	}
	var none *Usage
	if got := none.Memory(); got != (memory.Usage{}) {
		t.Errorf("nil usage = %+v", got)
	}
}

func FuzzBlocks(f *testing.F) {
	for _, s := range []string{`"x"`, `[{"type":"text","text":"a"}]`, `[{"type":"tool_use","id":"1","input":{}}]`, `[`, `null`, `""`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		blocks := Blocks(raw)
		var s string
		if json.Unmarshal(raw, &s) == nil && len(raw) > 0 && raw[0] == '"' {
			if len(blocks) != 1 || blocks[0].Type != "text" || blocks[0].Text != s {
				t.Fatalf("Blocks(%s) = %+v, want one text block %q", raw, blocks, s)
			}
		}
	})
}
