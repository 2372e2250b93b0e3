package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/memtray/memtray/backend/config"
	"github.com/memtray/memtray/backend/daemon"
	"github.com/memtray/memtray/backend/httpapi"
	"github.com/memtray/memtray/backend/polltest"
	"github.com/memtray/memtray/backend/refuse"
)

// hookMemories are the memories startHookDaemon stores: a few of project
// "webapp".
var hookMemories = []httpapi.AddRequest{
	{Text: "The staging database runs PostgreSQL 16 on port 5433; use the read-only role for ad-hoc queries.", Kind: "config", Project: "webapp"},
	{Text: "We decided to use sqlc instead of an ORM for all database access in webapp, for type-checked SQL.", Kind: "decision", Project: "webapp"},
	{Text: "Release builds strip symbols with -ldflags '-s -w' to keep the binary small.", Kind: "convention", Project: "cli"},
}

// startHookDaemon serves a real daemon on loopback over a temp data dir
// holding hookMemories; it returns the data dir.
func startHookDaemon(t *testing.T) string {
	t.Helper()
	return startDaemonWith(t, hookMemories)
}

// startDaemonWith serves a real daemon on loopback over a temp data dir
// holding memories; it returns the data dir.
func startDaemonWith(t *testing.T, memories []httpapi.AddRequest) string {
	t.Helper()
	cfg := config.Default()
	cfg.DataDir = t.TempDir()
	cfg.Listen = "127.0.0.1:0"
	cfg.Embedder.Provider = "builtin"
	ctx, cancel := context.WithCancel(context.Background())
	d, err := daemon.Open(ctx, daemon.Options{Config: cfg, Version: "test"})
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	for _, m := range memories {
		if _, err := d.Memories().Add(ctx, m); err != nil {
			cancel()
			d.Close()
			t.Fatal(err)
		}
	}
	ready := make(chan string, 1)
	served := make(chan error, 1)
	go func() { served <- d.Serve(ctx, func(addr string) { ready <- addr }) }()
	select {
	case <-ready:
	case err := <-served:
		cancel()
		d.Close()
		t.Fatalf("serve: %v", err)
	case <-time.After(testWait): // a failure guard
		cancel()
		t.Fatalf("daemon did not start within %s", testWait)
	}
	t.Cleanup(func() {
		cancel()
		<-served
		d.Close()
	})
	return cfg.DataDir
}

func hookStdin(t *testing.T, fields map[string]any) string {
	t.Helper()
	b, err := json.Marshal(fields)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// checkHookOutput validates out against Claude Code's documented hook
// output: one JSON object of the known top-level keys, hookSpecificOutput
// naming the event and carrying additionalContext as a string. It returns
// the additional context.
func checkHookOutput(t *testing.T, out, event string) string {
	t.Helper()
	if !strings.HasSuffix(out, "\n") || strings.Count(out, "\n") != 1 {
		t.Fatalf("hook output is not one line: %q", out)
	}
	dec := json.NewDecoder(strings.NewReader(out))
	var top map[string]json.RawMessage
	if err := dec.Decode(&top); err != nil {
		t.Fatalf("hook output is not a JSON object: %v: %q", err, out)
	}
	if dec.More() {
		t.Fatalf("data after the hook output's object: %q", out)
	}
	types := map[string]string{"continue": "bool", "suppressOutput": "bool", "stopReason": "string",
		"decision": "string", "reason": "string", "systemMessage": "string", "hookSpecificOutput": "object"}
	for k, v := range top {
		want, ok := types[k]
		if !ok {
			t.Fatalf("hook output has key %q, not in Claude Code's schema: %s", k, out)
		}
		var got string
		switch v[0] {
		case 't', 'f':
			got = "bool"
		case '"':
			got = "string"
		case '{':
			got = "object"
		}
		if got != want {
			t.Fatalf("hook output %s is %s, want %s", k, v, want)
		}
	}
	raw, ok := top["hookSpecificOutput"]
	if !ok {
		t.Fatalf("no hookSpecificOutput: %s", out)
	}
	var hso map[string]json.RawMessage
	if err := json.Unmarshal(raw, &hso); err != nil {
		t.Fatal(err)
	}
	var name, ctx string
	for k, v := range hso {
		switch k {
		case "hookEventName":
			if err := json.Unmarshal(v, &name); err != nil {
				t.Fatalf("hookEventName %s: %v", v, err)
			}
		case "additionalContext":
			if err := json.Unmarshal(v, &ctx); err != nil {
				t.Fatalf("additionalContext %s is not a string: %v", v, err)
			}
		default:
			t.Fatalf("hookSpecificOutput has key %q, not in %s's schema", k, event)
		}
	}
	if name != event {
		t.Fatalf("hookEventName %q, want %q", name, event)
	}
	if ctx == "" {
		t.Fatalf("empty additionalContext printed: %s", out)
	}
	return ctx
}

func TestHookAgainstDaemon(t *testing.T) {
	isolate(t)
	dir := startHookDaemon(t)
	ctx := context.Background()
	const (
		port    = "5433"
		decided = "sqlc instead of an ORM"
	)
	prompt := "which port does the staging database listen on?"
	steps := []struct {
		name   string
		event  string
		stdin  map[string]any
		want   []string // substrings of additionalContext; nil: no output
		absent []string
	}{
		{"start of a session: the project's decisions", "session-start",
			map[string]any{"session_id": "s1", "cwd": "/home/me/src/webapp", "hook_event_name": "SessionStart", "source": "startup"},
			[]string{decided}, []string{"-ldflags"}},
		{"first prompt recalls the memory", "user-prompt-submit",
			map[string]any{"session_id": "s1", "cwd": "/home/me/src/webapp", "hook_event_name": "UserPromptSubmit", "prompt": prompt, "transcript_path": "/tmp/x.jsonl"},
			[]string{port, "<memtray-context"}, nil},
		{"the same prompt again: nothing", "user-prompt-submit",
			map[string]any{"session_id": "s1", "cwd": "/home/me/src/webapp", "prompt": prompt},
			nil, nil},
		{"another prompt on the same subject: not the same memory twice", "user-prompt-submit",
			map[string]any{"session_id": "s1", "cwd": "/home/me/src/webapp", "prompt": "remind me of the staging database port and PostgreSQL version"},
			nil, []string{port}},
		{"/clear resets the session, and briefs again", "session-start",
			map[string]any{"session_id": "s1", "cwd": "/home/me/src/webapp", "hook_event_name": "SessionStart", "source": "clear"},
			[]string{decided}, nil},
		{"after /clear the memory comes back", "user-prompt-submit",
			map[string]any{"session_id": "s1", "cwd": "/home/me/src/webapp", "prompt": prompt},
			[]string{port}, nil},
		{"pre-compact prints nothing", "pre-compact",
			map[string]any{"session_id": "s1", "cwd": "/home/me/src/webapp", "hook_event_name": "PreCompact", "trigger": "auto"},
			nil, nil},
		{"after compaction the memory comes back", "user-prompt-submit",
			map[string]any{"session_id": "s1", "cwd": "/home/me/src/webapp", "prompt": prompt},
			[]string{port}, nil},
		{"resume does not reset", "session-start",
			map[string]any{"session_id": "s1", "cwd": "/home/me/src/webapp", "source": "resume"},
			nil, nil},
		{"session-end prints nothing", "session-end",
			map[string]any{"session_id": "s1", "cwd": "/home/me/src/webapp", "hook_event_name": "SessionEnd", "reason": "logout"},
			nil, nil},
		{"after the end the session starts afresh", "user-prompt-submit",
			map[string]any{"session_id": "s1", "cwd": "/home/me/src/webapp", "prompt": prompt},
			[]string{port}, nil},
		{"in another project, webapp's memory is not recalled", "user-prompt-submit",
			map[string]any{"session_id": "s2", "cwd": "/home/me/src/billing", "prompt": prompt},
			nil, nil},
		{"in another project, a prompt naming webapp recalls it", "user-prompt-submit",
			map[string]any{"session_id": "s2", "cwd": "/home/me/src/billing", "prompt": "which port does the webapp staging database listen on?"},
			[]string{port}, nil},
	}
	for _, s := range steps {
		code, out, errs := run(t, ctx, hookStdin(t, s.stdin), "hook", s.event, "--data-dir", dir, "--timeout", "20s", "--debug")
		if code != 0 {
			t.Fatalf("%s: exit %d %s", s.name, code, errs)
		}
		if s.want == nil && s.absent == nil {
			if out != "" {
				t.Fatalf("%s: want no output, got %q", s.name, out)
			}
			continue
		}
		if s.want == nil && out == "" {
			continue
		}
		got := checkHookOutput(t, out, hookEvents[s.event])
		for _, w := range s.want {
			if !strings.Contains(got, w) {
				t.Fatalf("%s: additionalContext lacks %q:\n%s\n(stderr %s)", s.name, w, got, errs)
			}
		}
		for _, a := range s.absent {
			if strings.Contains(got, a) {
				t.Fatalf("%s: additionalContext has %q:\n%s", s.name, a, got)
			}
		}
	}
}

// TestHookDeadline: a "daemon" that proves it holds the token and then
// never answers the recall cannot hold the hook past its deadline.
func TestHookDeadline(t *testing.T) {
	isolate(t)
	dir := t.TempDir()
	tok, err := daemon.LoadOrCreateToken(dir)
	if err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	var answerAfter atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/api/health":
			json.NewEncoder(w).Encode(httpapi.Health{Service: "memtray", Version: "fake", PID: os.Getpid(),
				Proof: httpapi.Proof(tok, r.URL.Query().Get("challenge"))})
		case "/api/recall":
			if d := time.Duration(answerAfter.Load()); d > 0 {
				time.Sleep(d)
				io.WriteString(w, `{"hits":[],"context":"<memtray-context>late but in time</memtray-context>","given":1}`)
				return
			}
			fallthrough
		default: // accept the request, never answer
			select {
			case <-r.Context().Done():
			case <-stop:
			}
		}
	}))
	t.Cleanup(func() { close(stop); srv.Close() })
	addr := strings.TrimPrefix(srv.URL, "http://")
	rt, _ := json.Marshal(daemon.Runtime{PID: os.Getpid(), Listen: addr})
	if err := os.WriteFile(filepath.Join(dir, daemon.RuntimeFile), rt, 0o600); err != nil {
		t.Fatal(err)
	}
	// The fake passes remote()'s token proof: without that the test would
	// prove nothing.
	cfg := config.Default()
	cfg.DataDir = dir
	if _, ok := remote(context.Background(), cfg); !ok {
		t.Fatal("the fake daemon does not pass the token proof")
	}
	cfgPath := filepath.Join(t.TempDir(), "config.json")
	os.WriteFile(cfgPath, []byte(`{"recall": {"hook_timeout": "400ms"}}`), 0o600)
	stdin := hookStdin(t, map[string]any{"session_id": "s1", "cwd": "/w/webapp", "prompt": "which port does staging use?", "source": "startup"})
	cases := []struct {
		name     string
		args     []string
		deadline time.Duration
	}{
		{"--timeout", []string{"hook", "user-prompt-submit", "--data-dir", dir, "--timeout", "300ms"}, 300 * time.Millisecond},
		{"config recall.hook_timeout", []string{"hook", "user-prompt-submit", "--data-dir", dir, "--config", cfgPath}, 400 * time.Millisecond},
		{"default deadline", []string{"hook", "session-start", "--data-dir", dir}, 1500 * time.Millisecond},
		{"--timeout shorter than the probe", []string{"hook", "session-start", "--data-dir", dir, "--timeout", "50ms"}, 50 * time.Millisecond},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			start := time.Now()
			code, out, errs := run(t, context.Background(), stdin, tc.args...)
			took := time.Since(start)
			if code != 0 || out != "" || errs != "" {
				t.Fatalf("exit %d, stdout %q, stderr %q; want 0 and nothing", code, out, errs)
			}
			if limit := 3 * tc.deadline; took > limit {
				t.Fatalf("the hook took %v; its deadline is %v (bound %v)", took, tc.deadline, limit)
			}
		})
	}
	// A config deadline longer than the default is honoured: a recall
	// answered after 2s still reaches the agent when the deadline is 4s.
	answerAfter.Store(int64(2 * time.Second))
	slow := filepath.Join(t.TempDir(), "config.json")
	os.WriteFile(slow, []byte(`{"recall": {"hook_timeout": "4s"}}`), 0o600)
	code, out, errs := run(t, context.Background(), stdin, "hook", "user-prompt-submit", "--data-dir", dir, "--config", slow)
	if code != 0 || !strings.Contains(out, "late but in time") {
		t.Fatalf("a 4s config deadline: exit %d stdout %q stderr %q", code, out, errs)
	}
	answerAfter.Store(0)
	// With --debug it says why, on stderr only.
	_, out, errs = run(t, context.Background(), stdin, "hook", "user-prompt-submit", "--data-dir", dir, "--timeout", "200ms", "--debug")
	if out != "" || !strings.Contains(errs, "deadline") {
		t.Fatalf("--debug at the deadline: stdout %q stderr %q", out, errs)
	}
}

func TestHookNeverBreaksTheAgent(t *testing.T) {
	isolate(t)
	noDaemon := t.TempDir()
	if _, err := daemon.LoadOrCreateToken(noDaemon); err != nil {
		t.Fatal(err)
	}
	// A runtime file naming a port where nothing listens.
	dead := refuse.New(t).HostPort
	rt, _ := json.Marshal(daemon.Runtime{PID: 1, Listen: dead})
	os.WriteFile(filepath.Join(noDaemon, daemon.RuntimeFile), rt, 0o600)
	good := `{"session_id":"s1","cwd":"/w/webapp","prompt":"which port does staging use?"}`
	missing := filepath.Join(t.TempDir(), "does", "not", "exist")
	cases := []struct {
		name, stdin string
		args        []string
	}{
		{"daemon down", good, []string{"user-prompt-submit", "--data-dir", noDaemon}},
		{"daemon down, session start", `{"session_id":"s1","source":"clear"}`, []string{"session-start", "--data-dir", noDaemon}},
		{"daemon down, pre-compact", good, []string{"pre-compact", "--data-dir", noDaemon}},
		{"daemon down, stop", `{"session_id":"s1","transcript_path":"/home/me/.claude/projects/p/s1.jsonl"}`, []string{"stop", "--data-dir", noDaemon}},
		{"data dir missing", good, []string{"user-prompt-submit", "--data-dir", missing}},
		{"garbage", "this is not JSON at all", []string{"user-prompt-submit", "--data-dir", noDaemon}},
		{"empty stdin", "", []string{"user-prompt-submit", "--data-dir", noDaemon}},
		{"array", `[{"session_id":"s1"}]`, []string{"user-prompt-submit", "--data-dir", noDaemon}},
		{"wrong types", `{"session_id": 7, "prompt": ["x"]}`, []string{"user-prompt-submit", "--data-dir", noDaemon}},
		{"two objects", good + good, []string{"user-prompt-submit", "--data-dir", noDaemon}},
		{"truncated", good[:20], []string{"user-prompt-submit", "--data-dir", noDaemon}},
		{"too large", `{"session_id":"s1","prompt":"` + strings.Repeat("a", HookMaxInput) + `"}`, []string{"user-prompt-submit", "--data-dir", noDaemon}},
		{"no session id", `{"prompt":"which port?"}`, []string{"user-prompt-submit", "--data-dir", noDaemon}},
		{"100,000 nested arrays", `{"session_id":"s1","prompt":` + strings.Repeat("[", 100000) + strings.Repeat("]", 100000) + `}`, []string{"user-prompt-submit", "--data-dir", noDaemon}},
		{"invalid UTF-8", "{\"session_id\":\"s1\",\"prompt\":\"which port \xff\xfe?\"}", []string{"user-prompt-submit", "--data-dir", noDaemon}},
		{"40 MB", `{"session_id":"s1","prompt":"` + strings.Repeat("a", 40<<20), []string{"user-prompt-submit", "--data-dir", noDaemon}},
		{"bad config", good, []string{"user-prompt-submit", "--data-dir", noDaemon, "--config", "/dev/null/x.json"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			start := time.Now()
			code, out, errs := run(t, context.Background(), tc.stdin, append([]string{"hook"}, tc.args...)...)
			if code != 0 || out != "" || errs != "" {
				t.Fatalf("exit %d, stdout %q, stderr %q; want 0 and nothing", code, out, errs)
			}
			if took := time.Since(start); took > 3*1500*time.Millisecond {
				t.Fatalf("took %v", took)
			}
			// --debug explains, in one line, on stderr only.
			code, out, errs = run(t, context.Background(), tc.stdin, append([]string{"hook", "--debug"}, tc.args...)...)
			if code != 0 || out != "" || strings.Count(errs, "\n") != 1 {
				t.Fatalf("--debug: exit %d, stdout %q, stderr %q; want one line on stderr", code, out, errs)
			}
		})
	}
	// Mistakes in the command line (a person's, not the agent's) are said
	// on stderr, still with exit 0 so an agent is never blocked.
	for _, args := range [][]string{{"hook"}, {"hook", "explode"}, {"hook", "--frobnicate", "session-end"}, {"hook", "stop", "--agent", "vim"}} {
		code, out, errs := run(t, context.Background(), good, args...)
		if code != 0 || out != "" || errs == "" {
			t.Errorf("%v: exit %d stdout %q stderr %q", args, code, out, errs)
		}
	}
}

func TestEncodeHookOutput(t *testing.T) {
	ctx := "<memtray-context>\n- [decision] use sqlc & \"pgx\" \u2028 é\n</memtray-context>"
	for _, ev := range []string{"UserPromptSubmit", "SessionStart"} {
		b, err := encodeHookOutput(ev, ctx)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Contains(b, []byte("<memtray-context>")) {
			t.Errorf("markup escaped: %s", b)
		}
		if got := checkHookOutput(t, string(b), ev); got != ctx {
			t.Errorf("round trip: %q", got)
		}
	}
}

// FuzzHookInput: the stdin parser never panics, accepts only one JSON
// object, and whatever prompt it reads goes back out as valid hook output.
func FuzzHookInput(f *testing.F) {
	for _, s := range []string{
		`{"session_id":"abc","transcript_path":"/t.jsonl","cwd":"/home/me/src/webapp","hook_event_name":"UserPromptSubmit","prompt":"fix the build"}`,
		`{"session_id":"abc","hook_event_name":"SessionStart","source":"compact"}`,
		`{"session_id":"abc","hook_event_name":"PreCompact","trigger":"manual","custom_instructions":""}`,
		`{"session_id":"abc","hook_event_name":"SessionEnd","reason":"clear"}`,
		``, `null`, `[]`, `{}`, `{} {}`, `{}}`, `{"a":1}]`, `{"prompt":"\ud800"}`, `{"session_id":1}`, "\xff{", ` {"a":{"b":[1,2,{"c":null}]}} `,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		in, err := ParseHookInput(data)
		if err != nil {
			if in != (HookInput{}) {
				t.Fatalf("error %v but fields set: %+v", err, in)
			}
			return
		}
		if !json.Valid(data) || len(data) > HookMaxInput {
			t.Fatalf("accepted %q", data)
		}
		if in.Prompt == "" {
			return
		}
		out, err := encodeHookOutput("UserPromptSubmit", in.Prompt)
		if err != nil {
			t.Fatal(err)
		}
		var back HookOutput
		if err := json.Unmarshal(out, &back); err != nil || back.HookSpecificOutput == nil {
			t.Fatalf("output %q: %v", out, err)
		}
		if utf8.ValidString(in.Prompt) && back.HookSpecificOutput.AdditionalContext != in.Prompt {
			t.Fatalf("prompt %q came back as %q", in.Prompt, back.HookSpecificOutput.AdditionalContext)
		}
	})
}

// The stop, pre-compact and session-end hooks hand the session file to
// the daemon, which captures the turn; a bad path or agent never fails
// the agent (exit 0, nothing on stdout, a note with --debug).
func TestHookSendsTranscript(t *testing.T) {
	isolate(t)
	home := t.TempDir()
	t.Setenv("HOME", home) // the daemon's session folder: $HOME/.claude/projects
	proj := filepath.Join(home, ".claude", "projects", "-home-me-src-webapp")
	if err := os.MkdirAll(proj, 0o700); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(proj, "s2.jsonl")
	session := `{"type":"user","sessionId":"s2","cwd":"/home/me/src/webapp","uuid":"u1","timestamp":"2026-03-03T10:00:00Z","message":{"role":"user","content":"Which port does the webapp dev server use?"}}` + "\n" +
		`{"type":"assistant","sessionId":"s2","cwd":"/home/me/src/webapp","uuid":"a1","timestamp":"2026-03-03T10:00:02Z","message":{"id":"msg_1","role":"assistant","model":"m","content":[{"type":"text","text":"The webapp dev server listens on port 5173 (vite.config.ts) and proxies /api to 127.0.0.1:8080."}]}}` + "\n"
	if err := os.WriteFile(path, []byte(session), 0o600); err != nil {
		t.Fatal(err)
	}
	dir := startHookDaemon(t)
	ctx := context.Background()
	outside := filepath.Join(t.TempDir(), "x.jsonl")
	os.WriteFile(outside, []byte(session), 0o600)
	for _, tc := range []struct {
		name, event, path string
		args              []string
		note              string
	}{
		{"stop queues the file", "stop", path, nil, "transcript queued"},
		{"session-end too", "session-end", path, nil, "transcript queued"},
		{"pre-compact too", "pre-compact", path, nil, "transcript queued"},
		{"outside the session folders", "stop", outside, nil, "outside"},
		{"no transcript path", "stop", "", nil, "no transcript_path"},
		{"unknown agent", "stop", path, []string{"--agent", "vim"}, "--agent must be"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := map[string]any{"session_id": "s2", "cwd": "/home/me/src/webapp", "hook_event_name": hookEvents[tc.event]}
			if tc.path != "" {
				in["transcript_path"] = tc.path
			}
			args := append([]string{"hook", tc.event, "--data-dir", dir, "--timeout", "20s", "--debug"}, tc.args...)
			code, out, errs := run(t, ctx, hookStdin(t, in), args...)
			if code != 0 || out != "" {
				t.Fatalf("exit %d, stdout %q, want 0 and nothing", code, out)
			}
			if !strings.Contains(errs, tc.note) {
				t.Errorf("stderr %q lacks %q", errs, tc.note)
			}
		})
	}
	rt, err := daemon.ReadRuntime(dir)
	if err != nil {
		t.Fatal(err)
	}
	tok, err := daemon.LoadOrCreateToken(dir)
	if err != nil {
		t.Fatal(err)
	}
	cl := httpapi.NewClient(rt.Listen, tok)
	// The turn is counted when it is stored, the file tracked when its
	// cursor is committed after: wait for both.
	var s httpapi.Stats
	polltest.Wait(t, "the turn to be captured (1 turn, 1 file tracked)", func() bool {
		var err error
		if s, err = cl.Stats(ctx); err != nil {
			t.Fatal(err)
		}
		return s.Transcripts != nil && s.Transcripts.Turns == 1 && s.Transcripts.Files == 1
	}, func() string { return fmt.Sprintf("%+v", s.Transcripts) })
	if s.Transcripts.Refused != 1 || s.Transcripts.Duplicates != 0 {
		t.Errorf("transcript stats %+v", *s.Transcripts)
	}
	// memtray stats says so.
	_, out, _ := run(t, ctx, "", "stats", "--data-dir", dir)
	if !strings.Contains(out, "transcripts: 1 files tracked") || !strings.Contains(out, "1 turns captured") {
		t.Errorf("stats output lacks the transcripts line:\n%s", out)
	}
}
