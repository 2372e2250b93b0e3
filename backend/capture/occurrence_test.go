package capture

import (
	"encoding/json"
	"net/http"
	"reflect"
	"strings"
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

// TestOpenAIOccurrence: the same count for the OpenAI APIs' histories
// (Chat Completions' messages, the Responses API's input items).
func TestOpenAIOccurrence(t *testing.T) {
	type obj = map[string]any
	chatTool := func(text, name string) obj {
		return obj{"role": "assistant", "content": text, "tool_calls": []obj{{"id": "c1", "type": "function", "function": obj{"name": name, "arguments": "{}"}}}}
	}
	item := func(role string, parts ...string) obj {
		var content []obj
		for _, p := range parts {
			typ := "output_text"
			if role == "user" {
				typ = "input_text"
			}
			content = append(content, obj{"type": typ, "text": p})
		}
		return obj{"type": "message", "role": role, "content": content}
	}
	call := func(name string) obj {
		return obj{"type": "function_call", "call_id": "c1", "name": name, "arguments": "{}"}
	}
	output := obj{"type": "function_call_output", "call_id": "c1", "output": "ok"}
	const chatAnswer, respAnswer = "Use `make test`.", "Tests live next to the code they test."
	tests := []struct {
		name      string
		responses bool
		history   []obj
		want      int
	}{
		{"chat first", false, []obj{{"role": "user", "content": "yes"}}, 0},
		{"chat second", false, []obj{{"role": "user", "content": "yes"}, chatTool(chatAnswer, "run"),
			{"role": "tool", "tool_call_id": "c1", "content": "ok"}, {"role": "assistant", "content": "done"}, {"role": "user", "content": " yes "}}, 2},
		{"chat answered with another tool", false, []obj{{"role": "user", "content": "yes"}, chatTool(chatAnswer, "ls"),
			{"role": "tool", "tool_call_id": "c1", "content": "ok"}, {"role": "assistant", "content": "done"}, {"role": "user", "content": "yes"}}, 0},
		{"responses first", true, []obj{item("user", "yes")}, 0},
		{"responses second", true, []obj{item("user", "yes"), {"type": "reasoning", "summary": []obj{}},
			item("assistant", "Tests live next to ", "the code they test."), call("shell"), output, item("assistant", "done"), item("user", "yes")}, 2},
		{"responses answered otherwise", true, []obj{item("user", "yes"), item("assistant", respAnswer), item("user", "yes")}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, harnessOpt{})
			path, fixture, answer := "/openai/v1/chat/completions", "openai_chat.sse", chatAnswer
			body := obj{"model": "m", "stream": true, "messages": tt.history}
			if tt.responses {
				path, fixture, answer = "/openai/v1/responses", "openai_responses.sse", respAnswer
				body = obj{"model": "m", "stream": true, "input": tt.history}
			}
			h.up.reply(200, sseHeader(), readFile(t, fixture))
			data, err := json.Marshal(body)
			if err != nil {
				t.Fatal(err)
			}
			h.post(t, path, http.Header{"Content-Type": {"application/json"}}, data)
			ex := h.sink.next(t)
			if ex.Assistant != answer || ex.ToolLoop {
				t.Fatalf("exchange %+v", ex)
			}
			if ex.Occurrence != tt.want {
				t.Errorf("occurrence %d, want %d (exchange %+v)", ex.Occurrence, tt.want, ex)
			}
		})
	}
}

// TestAlikeTurns: the one builder of request.alike reads, for each earlier
// prompt whose text is the user's (white space aside), the items after it
// as the API's part function classifies them: skipped, ending the walk
// before the response (unanswered: left out), part of the response, or
// its last part.
func TestAlikeTurns(t *testing.T) {
	// Items: "u" a user message, "s" skipped, "a:TEXT" more text, "t:NAME"
	// a tool call, "l:TEXT" the last part.
	part := func(it string, ts *turnStart, text *strings.Builder) alikePart {
		kind, v, _ := strings.Cut(it, ":")
		switch kind {
		case "u":
			return alikeEnd
		case "a":
			text.WriteString(v)
			return alikeMore
		case "t":
			ts.tools = append(ts.tools, v)
			return alikeMore
		case "l":
			text.WriteString(v)
			return alikeLast
		}
		return alikeSkip
	}
	for _, tc := range []struct {
		name    string
		items   []string
		prompts []prompt
		want    []turnStart
	}{
		{"no earlier prompt", []string{"u"}, nil, nil},
		{"another text", []string{"u", "l:ok"}, []prompt{{0, "no"}}, nil},
		{"unanswered", []string{"u", "s", "u"}, []prompt{{0, "yes"}}, nil},
		{"first message only", []string{"u", "s", "l:ok", "l:more", "u"}, []prompt{{0, " yes"}}, []turnStart{{assistant: "ok"}}},
		{"parts up to the end", []string{"u", "a:Tests ", "t:shell", "s", "a:pass.", "u", "a:late"}, []prompt{{0, "yes"}},
			[]turnStart{{assistant: "Tests pass.", tools: []string{"shell"}}}},
		{"a tool call alone", []string{"u", "t:ls"}, []prompt{{0, "yes"}}, []turnStart{{tools: []string{"ls"}}}},
		{"each earlier prompt", []string{"u", "l:one", "u", "l:two", "u", "u", "l:four"},
			[]prompt{{0, "yes"}, {2, "yes"}, {4, "no"}, {5, "yes"}},
			[]turnStart{{assistant: "one"}, {assistant: "two"}, {assistant: "four"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := alikeTurns(tc.items, tc.prompts, "yes", part); !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("alikeTurns = %+v, want %+v", got, tc.want)
			}
		})
	}
	for role, want := range map[string]alikePart{"user": alikeEnd, "assistant": alikeLast, "system": alikeSkip, "tool": alikeSkip} {
		if got := messageAlike(role); got != want {
			t.Errorf("messageAlike(%q) = %d, want %d", role, got, want)
		}
	}
}
