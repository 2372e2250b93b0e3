package capture

import (
	"reflect"
	"strings"
	"testing"

	"github.com/memtray/memtray/backend/memory"
)

// The fixtures claude_code_2.1.332_*.json are request bodies Claude Code
// 2.1.332 (claude -p) sent to a local fake upstream, with the tool list
// and long prompt texts trimmed and the device id and session replaced:
// the environment block is a messages[] entry with role "system" (blocks
// in the first request, a string in the second), after the first user
// message.
func TestParseClaudeCode2132(t *testing.T) {
	const session, dir = "00000000-0000-4000-8000-000000000332", "/tmp/ccproj/myproject"
	r, err := parseAnthropicRequest(readFile(t, "claude_code_2.1.332_prompt.json"))
	if err != nil {
		t.Fatal(err)
	}
	want := request{model: "claude-opus-5-5", stream: true, sessionID: session, user: "use a tool to read README.md",
		userTurns: 1, turn: 1, dir: dir, headless: true}
	if !reflect.DeepEqual(r, want) {
		t.Errorf("prompt:\n got %+v\nwant %+v", r, want)
	}
	r, err = parseAnthropicRequest(readFile(t, "claude_code_2.1.332_toolloop.json"))
	if err != nil {
		t.Fatal(err)
	}
	want = request{model: "claude-opus-5-5", stream: true, sessionID: session, userTurns: 1, turn: 2, dir: dir, headless: true,
		toolLoop: true, toolResults: []memory.ToolResult{{ToolUseID: "toolu_01", Name: "Read", Content: "1\t# My project\n2\t"}}}
	if !reflect.DeepEqual(r, want) {
		t.Errorf("tool loop:\n got %+v\nwant %+v", r, want)
	}
}

// TestAnthropicWorkingDirEverywhere: the directory is found wherever
// current and older Claude Code versions put it, and a system message
// changes nothing else.
func TestAnthropicWorkingDirEverywhere(t *testing.T) {
	const env = `# Environment\nYou have been invoked in the following environment: \n - Primary working directory: /srv/a/proj\n - Is a git repository: true`
	body := func(system string, msgs ...string) string {
		s := `{"model":"m","messages":[` + strings.Join(msgs, ",") + `]`
		if system != "" {
			s += `,"system":` + system
		}
		return s + "}"
	}
	u := func(content string) string { return `{"role":"user","content":` + content + `}` }
	a := func(content string) string { return `{"role":"assistant","content":` + content + `}` }
	sys := func(content string) string { return `{"role":"system","content":` + content + `}` }
	plain := request{model: "m", sessionID: hashID("q"), user: "q", userTurns: 1, turn: 1, dir: "/srv/a/proj"}
	tests := []struct {
		name string
		body string
		want request
	}{
		{"system message, string", body("", u(`"q"`), sys(`"`+env+`"`)), plain},
		{"system message, blocks", body("", u(`"q"`), sys(`[{"type":"text","text":"`+env+`"}]`)), plain},
		{"system message before the prompt", body("", sys(`"`+env+`"`), u(`"q"`)), plain},
		{"system prompt string, <env>", body(`"You are Claude Code.\n<env>\nWorking directory: /srv/a/proj\nPlatform: linux\n</env>"`, u(`"q"`)), plain},
		{"system prompt blocks", body(`[{"type":"text","text":"x"},{"type":"text","text":"<env>Working directory: /srv/a/proj\n</env>"}]`, u(`"q"`)), plain},
		{"lower case label", body(`"working directory: /srv/a/proj"`, u(`"q"`)), plain},
		{"list marker", body(`"Env:\n  * Working directory: /srv/a/proj"`, u(`"q"`)), plain},
		{"reminder in a user message", body("", u(`[{"type":"text","text":"<system-reminder>\n - Primary working directory: /srv/a/proj\n</system-reminder>"},{"type":"text","text":"q"}]`)), plain},
		{"system prompt wins over a system message", body(`"Working directory: /srv/a/proj"`, u(`"q"`), sys(`" - Primary working directory: /other"`)), plain},
		{"a system message is not user text", body("", u(`"q"`), a(`"a"`), sys(`"`+env+`\nplease answer"`)),
			request{model: "m", sessionID: hashID("q"), user: "q", userTurns: 1, turn: 2, dir: "/srv/a/proj"}},
		{"tool loop with a system message after it", body("", u(`"q"`), a(`[{"type":"tool_use","id":"t1","name":"Bash","input":{}}]`),
			u(`[{"type":"tool_result","tool_use_id":"t1","content":"ok"}]`), sys(`"`+env+`"`)),
			request{model: "m", sessionID: hashID("q"), userTurns: 1, turn: 2, dir: "/srv/a/proj", toolLoop: true,
				toolResults: []memory.ToolResult{{ToolUseID: "t1", Name: "Bash", Content: "ok"}}}},
		{"label inside a sentence is no directory", body("", u(`"what is the Working directory: /etc of this?"`)),
			request{model: "m", sessionID: hashID("what is the Working directory: /etc of this?"), user: "what is the Working directory: /etc of this?", userTurns: 1, turn: 1}},
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
}

func TestWorkingDirLabels(t *testing.T) {
	for in, want := range map[string]string{
		" - Primary working directory: /tmp/p\n - Is a git repository: true": "/tmp/p",
		"PRIMARY WORKING DIRECTORY: /tmp/p":                                  "/tmp/p",
		"• Current working directory: /tmp/p":                                "/tmp/p",
		"- Working directory:\n - Primary working directory: /tmp/q":         "/tmp/q",
		"the Working directory: /tmp/p":                                      "",
		"Working dir: /tmp/p":                                                "",
		"Working directory: " + strings.Repeat("a", 4097):                    "",
	} {
		if got := workingDir(in); got != want {
			t.Errorf("workingDir(%q) = %q, want %q", in, got, want)
		}
	}
}

// codex_0.171_request.json is the body Codex 0.171 (codex exec) posted to
// /v1/responses of a local fake upstream, long texts trimmed and ids
// replaced: the working directory is the <cwd> of the
// <environment_context> user message, which is no prompt.
func TestParseCodex0171(t *testing.T) {
	r, err := parseResponsesRequest(readFile(t, "codex_0.171_request.json"))
	if err != nil {
		t.Fatal(err)
	}
	want := request{model: "gpt-5-codex", stream: true, sessionID: "00000000-0000-7000-8000-000000000171", user: "say ok",
		userTurns: 1, turn: 1, dir: "/tmp/ccproj/cxproj", headless: true} // codex exec (headless.go)
	if !reflect.DeepEqual(r, want) {
		t.Errorf("got %+v\nwant %+v", r, want)
	}
}
