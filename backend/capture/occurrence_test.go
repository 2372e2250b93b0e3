package capture

import (
	"encoding/json"
	"testing"
)

// TestAnthropicOccurrence: the proxy numbers a turn that begins as an
// earlier turn of the request's history did (the same user text, the same
// first response: its text and tool names, white space aside), so the
// daemon keeps the user's second "yes" apart from the first instead of
// skipping it as stored already. The count comes from the history alone:
// a retried request (the same body again) gets the same number.
func TestAnthropicOccurrence(t *testing.T) {
	const answer = "We chose bbolt as the store of record because it survives kill -9." // anthropic_text.sse
	u := func(content any) map[string]any { return map[string]any{"role": "user", "content": content} }
	a := func(content any) map[string]any { return map[string]any{"role": "assistant", "content": content} }
	text := func(s string) map[string]any { return map[string]any{"type": "text", "text": s} }
	tool := func(id, name string) map[string]any {
		return map[string]any{"type": "tool_use", "id": id, "name": name, "input": map[string]any{}}
	}
	result := func(id string) map[string]any {
		return map[string]any{"type": "tool_result", "tool_use_id": id, "content": "ok"}
	}
	tests := []struct {
		name string
		msgs []map[string]any
		want int // 0: the first (not counted)
	}{
		{"first", []map[string]any{u("yes")}, 0},
		{"second, answered alike", []map[string]any{u("yes"), a(answer), u("and the index?"), a("bleve."), u("yes")}, 2},
		{"answered alike after a tool loop", []map[string]any{
			u("yes"), a([]any{text(answer)}), u("go on"), a([]any{tool("t1", "Read")}), u([]any{result("t1")}), a("done"), u("yes")}, 2},
		{"third, white space and blocks aside", []map[string]any{
			u("yes"), a(answer), u(" yes\n"), a([]any{text("We chose bbolt as the store"), text(" of record  because it survives kill -9.")}),
			u([]any{text("<system-reminder>today is Monday</system-reminder>"), text("yes")})}, 3},
		{"earlier answered otherwise", []map[string]any{u("yes"), a("No, wait."), u("yes")}, 0},
		{"earlier answered alike with a tool call", []map[string]any{u("yes"), a([]any{text(answer), tool("t1", "Read")}), u([]any{result("t1")}), a("ok"), u("yes")}, 0},
		{"earlier prompt differs", []map[string]any{u("yes please"), a(answer), u("yes")}, 0},
		{"earlier yes never answered", []map[string]any{u("yes"), u("yes")}, 0},
		{"tool loop is not counted", []map[string]any{u("yes"), a(answer), u("yes"), a([]any{tool("t2", "Read")}), u([]any{result("t2")})}, 0},
	}
	h := newHarness(t, harnessOpt{})
	h.up.reply(200, sseHeader(), readFile(t, "anthropic_text.sse"))
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			body, err := json.Marshal(map[string]any{"model": "m", "stream": true,
				"metadata": map[string]string{"user_id": "user_x_account_y_session_occ-" + tt.name}, "messages": tt.msgs})
			if err != nil {
				t.Fatal(err)
			}
			for try := range 2 { // the second is a retry of the same request
				h.post(t, "/v1/messages", claudeHeader(), body)
				ex := h.sink.next(t)
				if ex.Assistant != answer {
					t.Fatalf("assistant %q", ex.Assistant)
				}
				if ex.Occurrence != tt.want {
					t.Errorf("try %d: occurrence %d, want %d (exchange %+v)", try+1, ex.Occurrence, tt.want, ex)
				}
			}
		})
	}
}
