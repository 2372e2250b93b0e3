package memory

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestCutMiddle(t *testing.T) {
	cases := []struct {
		name       string
		in         string
		max        int
		head, tail string // what the result starts and ends with
		marker     bool
	}{
		{"fits", "short text", 100, "short text", "short text", false},
		{"ascii", "HEAD" + strings.Repeat("x", 10000) + "TAIL", 1000, "HEAD", "TAIL", true},
		{"runes", "é" + strings.Repeat("é", 5000) + "ü", 999, "é", "ü", true},
		{"max under the marker", strings.Repeat("ab", 100), 10, "ababababab", "ababababab", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := CutMiddle(tc.in, tc.max)
			if len(got) > tc.max || !utf8.ValidString(got) {
				t.Fatalf("%d bytes (max %d), valid %v", len(got), tc.max, utf8.ValidString(got))
			}
			if !strings.HasPrefix(got, tc.head) || !strings.HasSuffix(got, tc.tail) {
				t.Errorf("got %.40q...%q", got, got[max(0, len(got)-20):])
			}
			if strings.Contains(got, "cut by memtray") != tc.marker {
				t.Errorf("marker: %v, want %v", !tc.marker, tc.marker)
			}
			if tc.marker && !strings.Contains(got, "bytes cut by memtray") {
				t.Errorf("no byte count: %q", got)
			}
		})
	}
}

func toolTotal(ex Exchange) int { return ToolBytes(&ex) }

func TestBoundExchange(t *testing.T) {
	big := func(n int) string { return "start " + strings.Repeat("y", n) + " end" }
	write := func(n int) string {
		b, _ := json.Marshal(map[string]any{"file_path": "src/app.go", "content": big(n), "n": 3})
		return string(b)
	}
	cases := []struct {
		name  string
		ex    Exchange
		cut   bool
		check func(t *testing.T, ex Exchange)
	}{
		{"within the bounds: untouched", Exchange{User: "hi", Assistant: "a reply", ToolCalls: []ToolCall{{Name: "Write", Input: write(100 << 10)}},
			ToolResults: []ToolResult{{Content: strings.Repeat("r", MaxToolResultBytes)}}}, false,
			func(t *testing.T, ex Exchange) {
				if len(ex.ToolCalls[0].Input) < 100<<10 {
					t.Error("a tool call input within the bounds was cut")
				}
			}},
		{"a tool result over 8 KiB", Exchange{Assistant: "found it", ToolResults: []ToolResult{{Name: "Bash", Content: big(3 << 20)}, {Content: "ok"}}}, true,
			func(t *testing.T, ex Exchange) {
				r := ex.ToolResults[0].Content
				if len(r) > MaxToolResultBytes || !strings.HasPrefix(r, "start ") || !strings.HasSuffix(r, " end") || !strings.Contains(r, "cut by memtray") {
					t.Errorf("result %d bytes: %.30q", len(r), r)
				}
				if ex.ToolResults[1].Content != "ok" || ex.Assistant != "found it" {
					t.Error("what fits was changed")
				}
			}},
		{"texts over 1 MiB", Exchange{User: big(2 << 20), Assistant: big(MaxExchangeTextBytes), Summary: "s"}, true,
			func(t *testing.T, ex Exchange) {
				for _, s := range []string{ex.User, ex.Assistant} {
					if len(s) > MaxExchangeTextBytes || !strings.HasSuffix(s, " end") || !strings.Contains(s, "cut by memtray") {
						t.Errorf("text %d bytes", len(s))
					}
				}
				if ex.Summary != "s" {
					t.Error("summary changed")
				}
			}},
		{"tool call inputs over 4 MiB stay JSON", Exchange{ToolCalls: []ToolCall{{Name: "Write", Input: write(3 << 20)}, {Name: "Write", Input: write(2 << 20)}, {Name: "Read", Input: `{"file_path":"a.go"}`}}}, true,
			func(t *testing.T, ex Exchange) {
				if toolTotal(ex) > MaxExchangeToolBytes {
					t.Fatalf("still %d bytes", toolTotal(ex))
				}
				var v map[string]any
				if err := json.Unmarshal([]byte(ex.ToolCalls[0].Input), &v); err != nil || v["file_path"] != "src/app.go" || !strings.Contains(v["content"].(string), "cut by memtray") {
					t.Errorf("input %v: %.80q", err, ex.ToolCalls[0].Input)
				}
				if ex.ToolCalls[2].Input != `{"file_path":"a.go"}` {
					t.Error("a small input was changed")
				}
			}},
		{"a non-JSON input", Exchange{ToolCalls: []ToolCall{{Name: "apply_patch", Input: big(5 << 20)}}}, true,
			func(t *testing.T, ex Exchange) {
				if in := ex.ToolCalls[0].Input; len(in) > MaxToolResultBytes || !strings.HasSuffix(in, " end") {
					t.Errorf("input %d bytes", len(in))
				}
			}},
		{"many results: an equal share", Exchange{ToolResults: func() []ToolResult {
			rs := make([]ToolResult, 900)
			for i := range rs {
				rs[i].Content = big(20 << 10)
			}
			return rs
		}()}, true,
			func(t *testing.T, ex Exchange) {
				if toolTotal(ex) > MaxExchangeToolBytes {
					t.Errorf("still %d bytes", toolTotal(ex))
				}
			}},
		{"long names", Exchange{SessionID: strings.Repeat("s", 300), Project: strings.Repeat("é", 200), Model: "m"}, true,
			func(t *testing.T, ex Exchange) {
				if len(ex.SessionID) != MaxExchangeNameBytes || len(ex.Project) > MaxExchangeNameBytes || !utf8.ValidString(ex.Project) || ex.Model != "m" {
					t.Errorf("%d %d %q", len(ex.SessionID), len(ex.Project), ex.Model)
				}
			}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			calls := append([]ToolCall(nil), tc.ex.ToolCalls...)
			ex := tc.ex
			if got := BoundExchange(&ex); got != tc.cut {
				t.Errorf("cut %v, want %v", got, tc.cut)
			}
			for i := range calls {
				if tc.ex.ToolCalls[i] != calls[i] {
					t.Error("the caller's tool calls were changed in place")
				}
			}
			tc.check(t, ex)
		})
	}
}
