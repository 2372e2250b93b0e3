package capture

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/memtray/memtray/backend/memory"
	"github.com/memtray/memtray/backend/transcript"
)

func TestParseAnthropicRequestPrompt(t *testing.T) {
	r, err := parseAnthropicRequest(readFile(t, "claude_code_prompt.json"))
	if err != nil {
		t.Fatal(err)
	}
	want := request{model: "claude-sonnet-4-5-20250929", stream: true, sessionID: "9b2f4c1e-7a3d-4e8b-9c0d-1f2e3a4b5c6d",
		user: "and why did we pick bbolt?", userTurns: 2, turn: 2, dir: "/home/dev/src/memtray"}
	if !reflect.DeepEqual(r, want) {
		t.Errorf("got %+v\nwant %+v", r, want)
	}
}

func TestParseAnthropicRequestCases(t *testing.T) {
	msgs := func(m ...string) string { return `{"model":"m","messages":[` + strings.Join(m, ",") + `]}` }
	u := func(content string) string { return `{"role":"user","content":` + content + `}` }
	a := func(content string) string { return `{"role":"assistant","content":` + content + `}` }
	tests := []struct {
		name string
		body string
		want request
	}{
		{"string content, hashed session", msgs(u(`"first question"`)),
			request{model: "m", sessionID: hashID("first question"), user: "first question", userTurns: 1, turn: 1}},
		{"session from first prompt, not the reminder", msgs(u(`[{"type":"text","text":"<system-reminder>ctx</system-reminder>"},{"type":"text","text":"q1"}]`), a(`"a1"`), u(`"q2"`)),
			request{model: "m", sessionID: hashID("q1"), user: "q2", userTurns: 2, turn: 2}},
		{"tool loop", msgs(u(`"q"`), a(`[{"type":"tool_use","id":"t1","name":"Bash","input":{}},{"type":"tool_use","id":"t2","name":"Grep","input":{}}]`),
			u(`[{"type":"tool_result","tool_use_id":"t1","content":"ok"},{"type":"tool_result","tool_use_id":"t2","is_error":true,"content":[{"type":"text","text":"no"},{"type":"image","source":{}}]}]`)),
			request{model: "m", sessionID: hashID("q"), userTurns: 1, turn: 2, toolLoop: true, toolResults: []memory.ToolResult{
				{ToolUseID: "t1", Name: "Bash", Content: "ok"}, {ToolUseID: "t2", Name: "Grep", Content: "no", IsError: true}}}},
		{"tool results with typed text are a prompt", msgs(u(`"q"`), a(`[{"type":"tool_use","id":"t1","name":"Bash","input":{}}]`),
			u(`[{"type":"tool_result","tool_use_id":"t1","content":"ok"},{"type":"text","text":"also, stop"}]`)),
			request{model: "m", sessionID: hashID("q"), user: "also, stop", userTurns: 2, turn: 2, toolResults: []memory.ToolResult{{ToolUseID: "t1", Name: "Bash", Content: "ok"}}}},
		{"interrupt marker is no prompt", msgs(u(`"q"`), a(`"a"`), u(`[{"type":"text","text":"[Request interrupted by user]"},{"type":"text","text":"go on"}]`)),
			request{model: "m", sessionID: hashID("q"), user: "go on", userTurns: 2, turn: 2}},
		{"user_id without session is hashed", `{"model":"m","metadata":{"user_id":"plain-user"},"messages":[{"role":"user","content":"q"}]}`,
			request{model: "m", sessionID: hashID("plain-user"), user: "q", userTurns: 1, turn: 1}},
		{"json user_id", `{"model":"m","metadata":{"user_id":"{\"device_id\":\"d\",\"account_uuid\":\"a\",\"session_id\":\"s-123\"}"},"messages":[{"role":"user","content":"q"}]}`,
			request{model: "m", sessionID: "s-123", user: "q", userTurns: 1, turn: 1}},
		{"non-string user_id ignored", `{"model":"m","metadata":{"user_id":42},"messages":[{"role":"user","content":"q"}]}`,
			request{model: "m", sessionID: hashID("q"), user: "q", userTurns: 1, turn: 1}},
		{"working dir in a reminder", msgs(u(`[{"type":"text","text":"<system-reminder>\nWorking directory: /srv/x/api/\n</system-reminder>"},{"type":"text","text":"q"}]`)),
			request{model: "m", sessionID: hashID("q"), user: "q", userTurns: 1, turn: 1, dir: "/srv/x/api/"}},
		{"agent sdk system prompt is headless", `{"model":"m","system":"You are a Claude agent, built on Anthropic's Claude Agent SDK.","messages":[{"role":"user","content":"q"}]}`,
			request{model: "m", sessionID: hashID("q"), user: "q", userTurns: 1, turn: 1, headless: true}},
		{"no messages", `{"model":"m","messages":[]}`, request{model: "m", turn: 1}},
	}
	for _, tt := range tests {
		got, err := parseAnthropicRequest([]byte(tt.body))
		if err != nil {
			t.Errorf("%s: %v", tt.name, err)
			continue
		}
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s:\n got %+v\nwant %+v", tt.name, got, tt.want)
		}
	}
	for _, bad := range []string{"", "{", "[]", `{"messages":{}}`, `{"stream":"yes"}`} {
		if _, err := parseAnthropicRequest([]byte(bad)); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func TestToolResultBounded(t *testing.T) {
	long := "start " + strings.Repeat("é", memory.MaxToolResultBytes) + " the end"
	body, _ := json.Marshal(map[string]any{"model": "m", "messages": []any{
		map[string]any{"role": "user", "content": []any{map[string]any{"type": "tool_result", "tool_use_id": "x", "content": long}}},
	}})
	r, err := parseAnthropicRequest(body)
	if err != nil || len(r.toolResults) != 1 {
		t.Fatal(err, r)
	}
	if c := r.toolResults[0].Content; len(c) > memory.MaxToolResultBytes || !memory.ValidUTF8(c) {
		t.Errorf("content %d bytes, valid %v", len(c), memory.ValidUTF8(c))
	}
	// Its start and its end are kept, and it says it was cut.
	if c := r.toolResults[0].Content; !strings.HasPrefix(c, "start ") || !strings.HasSuffix(c, " the end") || !strings.Contains(c, "bytes cut by memtray") {
		t.Errorf("content %.40q ... %q", c, c[len(c)-20:])
	}
}

func TestParseChatRequest(t *testing.T) {
	r, err := parseChatRequest(readFile(t, "openai_chat_request.json"))
	if err != nil {
		t.Fatal(err)
	}
	want := request{model: "gpt-4.1-mini", stream: true, sessionID: hashID("how do I run the tests?"), userTurns: 1, turn: 2,
		toolLoop: true, dir: "/work/app", toolResults: []memory.ToolResult{{ToolUseID: "call_memtray_0", Name: "ls", Content: "Makefile\nmain.go"}}}
	if !reflect.DeepEqual(r, want) {
		t.Errorf("got %+v\nwant %+v", r, want)
	}
	r, err = parseChatRequest([]byte(`{"model":"m","metadata":{"session_id":"abc","n":1},"messages":[{"role":"user","content":[{"type":"text","text":"hi"},{"type":"image_url","image_url":{"url":"x"}}]}]}`))
	if err != nil || r.sessionID != "abc" || r.user != "hi" || r.toolLoop {
		t.Errorf("%+v %v", r, err)
	}
	r, _ = parseChatRequest([]byte(`{"model":"m","user":"u-1","messages":[]}`))
	if r.sessionID != hashID("u-1") {
		t.Errorf("user fallback: %+v", r)
	}
}

func TestParseResponsesRequest(t *testing.T) {
	r, err := parseResponsesRequest(readFile(t, "openai_responses_request.json"))
	if err != nil {
		t.Fatal(err)
	}
	want := request{model: "gpt-5-codex", stream: true, sessionID: "0199a8d2-1c3b-7f00-8e8e-3d2c1b0a9f8e", user: "where do tests live?",
		userTurns: 1, turn: 1, dir: "/home/dev/src/codexed"}
	if !reflect.DeepEqual(r, want) {
		t.Errorf("got %+v\nwant %+v", r, want)
	}
	r, err = parseResponsesRequest([]byte(`{"model":"m","input":"just a string"}`))
	if err != nil || r.user != "just a string" || r.sessionID != hashID("just a string") {
		t.Errorf("%+v %v", r, err)
	}
	r, err = parseResponsesRequest([]byte(`{"model":"m","input":[{"role":"user","content":"q"},{"type":"message","role":"assistant","content":[{"type":"output_text","text":"a"}]},{"type":"function_call","call_id":"c1","name":"shell","arguments":"{}"},{"type":"function_call_output","call_id":"c1","output":"done"}]}`))
	wantLoop := request{model: "m", sessionID: hashID("q"), userTurns: 1, turn: 2, toolLoop: true,
		toolResults: []memory.ToolResult{{ToolUseID: "c1", Name: "shell", Content: "done"}}}
	if err != nil || !reflect.DeepEqual(r, wantLoop) {
		t.Errorf("tool loop: %+v %v", r, err)
	}
}

func TestResponseParsersWhole(t *testing.T) {
	chat := newChatParser(1 << 20)
	chat.whole([]byte(`{"model":"gpt-x","choices":[{"index":0,"message":{"role":"assistant","content":"hello","tool_calls":[{"id":"c","type":"function","function":{"name":"f","arguments":"{\"a\":1}"}}]},"finish_reason":"stop"}],"usage":{"prompt_tokens":3,"completion_tokens":2}}`))
	a := chat.result()
	if a.text.String() != "hello" || !a.done || a.model != "gpt-x" || len(a.toolCalls()) != 1 || a.usage.OutputTokens != 2 {
		t.Errorf("chat: %+v", a)
	}
	resp := newResponsesParser(1 << 20)
	resp.whole([]byte(`{"model":"gpt-y","status":"completed","output":[{"type":"reasoning"},{"type":"message","role":"assistant","content":[{"type":"output_text","text":"hi"},{"type":"output_text","text":" there"}]}],"usage":{"input_tokens":5,"output_tokens":1}}`))
	if a := resp.result(); a.text.String() != "hi there" || !a.done || a.isErr {
		t.Errorf("responses: %+v", a)
	}
	refused := newChatParser(1 << 20)
	refused.whole([]byte(`{"choices":[{"index":0,"message":{"content":null,"refusal":"no"}}]}`))
	if !refused.result().isErr {
		t.Error("refusal not an error")
	}
}

func TestAnswerBudget(t *testing.T) {
	p := newAnthParser(10)
	p.event("content_block_delta", []byte(`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"12345"}}`))
	p.event("content_block_delta", []byte(`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"678901"}}`))
	p.event("message_stop", []byte(`{"type":"message_stop"}`))
	if a := p.result(); !a.tooLarge || a.text.String() != "12345" {
		t.Errorf("%+v", a)
	}
}

func TestWorkingDirAndHeadless(t *testing.T) {
	for in, want := range map[string]string{
		"<env>\nWorking directory: /a/b\nIs directory a git repo: Yes": "/a/b",
		"Working directory: /a/b c\r\nx":                               "/a/b c",
		"Working directory:   \n":                                      "",
		"<environment_context><cwd>/x/y</cwd></environment_context>":   "/x/y",
		"nothing": "",
	} {
		if got := workingDir(in); got != want {
			t.Errorf("workingDir(%q) = %q, want %q", in, got, want)
		}
	}
	if isHeadless("You are Claude Code, Anthropic's official CLI for Claude.") {
		t.Error("interactive CLI marked headless")
	}
	if !isHeadless("You are Claude Code, Anthropic's official CLI for Claude, running within the Claude Agent SDK.") {
		t.Error("print mode not headless")
	}
}

func TestExcluded(t *testing.T) {
	entries := []string{"secret-client", "/home/dev/work/"}
	for _, tt := range []struct {
		project, dir string
		want         bool
	}{
		{"secret-client", "/anywhere/secret-client", true},
		{"api", "/home/dev/work/api", true},
		{"work", "/home/dev/work", true},
		{"workshop", "/home/dev/workshop", false},
		{"memtray", "/home/dev/src/memtray", false},
		{"", "", false},
		// A name excluded before projects were repositories names a
		// directory: still excluded when the directory is a worktree of
		// another repository's project.
		{"spotter", "/home/dev/src/secret-client", true},
	} {
		if got := excluded(entries, tt.project, tt.dir); got != tt.want {
			t.Errorf("excluded(%q, %q) = %v", tt.project, tt.dir, got)
		}
	}
}

func TestSessionFromUserID(t *testing.T) {
	for in, want := range map[string]string{
		"user_abc_account_def_session_0a1b2c3d-0000-4000-8000-000000000000": "0a1b2c3d-0000-4000-8000-000000000000",
		`{"session_id":"s1"}`: "s1",
		"user_abc":            hashID("user_abc"),
		"x_session_":          hashID("x_session_"),
		"":                    "",
	} {
		if got := sessionFromUserID(in); got != want {
			t.Errorf("sessionFromUserID(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestParseAnthropicRequestAnswers: the user's answers to AskUserQuestion
// in the request's last message (the tool_result's text; the request has
// no toolUseResult) become the exchange's Answers, as the transcript
// reader gives them; the request stays a tool-loop iteration.
func TestParseAnthropicRequestAnswers(t *testing.T) {
	q := "Which delimiter should the CSV export use?"
	input := `{"questions":[{"question":"` + q + `","header":"CSV","multiSelect":false,"options":[` +
		`{"label":"Comma","description":"RFC 4180"},{"label":"Semicolon","description":"what Excel expects in German locales"}]}]}`
	result := `User has answered your questions: "` + q + `"="Semicolon" notes: our customers are in Germany. You can now continue with the user's answers in mind.`
	msgs := []map[string]any{
		{"role": "user", "content": "Add a CSV export to the reports page."},
		{"role": "assistant", "content": []map[string]any{
			{"type": "text", "text": "One choice decides the format."},
			{"type": "tool_use", "id": "toolu_a", "name": "AskUserQuestion", "input": json.RawMessage(input)},
			{"type": "tool_use", "id": "toolu_b", "name": "Read", "input": json.RawMessage(`{"file_path":"reports.go"}`)},
		}},
		{"role": "user", "content": []map[string]any{
			{"type": "tool_result", "tool_use_id": "toolu_a", "content": result},
			{"type": "tool_result", "tool_use_id": "toolu_b", "content": `"=" is not an answer`},
		}},
	}
	body, err := json.Marshal(map[string]any{"model": "claude-sonnet-4-5", "max_tokens": 100, "messages": msgs})
	if err != nil {
		t.Fatal(err)
	}
	r, err := parseAnthropicRequest(body)
	if err != nil {
		t.Fatal(err)
	}
	want := []memory.Answer{{Question: q, Answer: "Semicolon (what Excel expects in German locales); note: our customers are in Germany"}}
	if !r.toolLoop || r.user != "" || !reflect.DeepEqual(r.answers, want) {
		t.Fatalf("tool loop %v, user %q, answers %+v", r.toolLoop, r.user, r.answers)
	}
	if got := transcript.Answers(input, result, false, nil); !reflect.DeepEqual(got, want) {
		t.Fatalf("the transcript reader gives %+v", got)
	}
}

// TestParseAnthropicRequestRefusal: the words the user typed when refusing
// a tool call, in the request's last message, become an Answer with
// Refused set, as the transcript reader gives them; a refusal without
// words, a result that is no error and an earlier message's refusal give
// none, and the request stays a tool-loop iteration.
func TestParseAnthropicRequestRefusal(t *testing.T) {
	const said = "The user doesn't want to proceed with this tool use. The tool use was rejected (eg. if it was a file edit, the new_string was NOT written to the file). To tell you how to proceed, the user said:\n"
	const stop = "The user doesn't want to proceed with this tool use. The tool use was rejected (eg. if it was a file edit, the new_string was NOT written to the file). STOP what you are doing and wait for the user to tell you how to proceed."
	call := func(id, name string) map[string]any {
		return map[string]any{"role": "assistant", "content": []map[string]any{{"type": "tool_use", "id": id, "name": name, "input": json.RawMessage(`{}`)}}}
	}
	result := func(id, content string, isError bool) map[string]any {
		return map[string]any{"role": "user", "content": []map[string]any{{"type": "tool_result", "tool_use_id": id, "content": content, "is_error": isError}}}
	}
	prompt := map[string]any{"role": "user", "content": "Publish the docs site."}
	tests := []struct {
		name string
		msgs []map[string]any
		want []memory.Answer
	}{
		{"words", []map[string]any{prompt, call("t1", "Bash"), result("t1", said+"Publish from CI only; the deploy key is not on laptops.", true)},
			[]memory.Answer{{Answer: "Publish from CI only; the deploy key is not on laptops.", Refused: true}}},
		{"plan feedback", []map[string]any{prompt, call("t1", "ExitPlanMode"), result("t1", said+"Build with hugo, not jekyll.\n\nNote: The user's next message may contain a correction or preference. Pay close attention.", true)},
			[]memory.Answer{{Answer: "Build with hugo, not jekyll.", Refused: true}}},
		{"no words", []map[string]any{prompt, call("t1", "Bash"), result("t1", stop, true)}, nil},
		{"not an error", []map[string]any{prompt, call("t1", "Read"), result("t1", said+"quoted in a file", false)}, nil},
		{"an earlier message's", []map[string]any{prompt, call("t1", "Bash"), result("t1", said+"not this way", true), call("t2", "Bash"), result("t2", "ok", false)}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			body, err := json.Marshal(map[string]any{"model": "claude-sonnet-4-5", "max_tokens": 100, "messages": tt.msgs})
			if err != nil {
				t.Fatal(err)
			}
			r, err := parseAnthropicRequest(body)
			if err != nil {
				t.Fatal(err)
			}
			if !r.toolLoop || r.user != "" {
				t.Errorf("not a tool-loop iteration: toolLoop %v, user %q", r.toolLoop, r.user)
			}
			if !reflect.DeepEqual(r.answers, tt.want) {
				t.Errorf("answers:\n got %+v\nwant %+v", r.answers, tt.want)
			}
		})
	}
	// Claude Code's message about the plan the user rejected is no prompt:
	// the plan in it is the agent's.
	plan := map[string]any{"role": "user", "content": "The agent proposed a plan that was rejected by the user. The user chose to stay in plan mode rather than proceed with implementation.\n\nRejected plan:\n1. Use jekyll"}
	body, err := json.Marshal(map[string]any{"model": "claude-sonnet-4-5", "max_tokens": 100,
		"messages": []map[string]any{prompt, call("t1", "ExitPlanMode"), result("t1", stop, true), plan}})
	if err != nil {
		t.Fatal(err)
	}
	r, err := parseAnthropicRequest(body)
	if err != nil {
		t.Fatal(err)
	}
	if r.user != "" || r.userTurns != 1 {
		t.Errorf("the rejected plan read as a prompt: user %q, %d user turns", r.user, r.userTurns)
	}
}
