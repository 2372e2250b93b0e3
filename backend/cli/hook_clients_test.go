package cli

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memtray/memtray/backend/httpapi"
)

// The fixtures in testdata/clients/<client>-<version>/hook-<Event>.json are
// the JSON the real clients wrote to the hooks' stdin (recorded by
// build/record-clients.sh through `memtray setup`'s hooks, and hooks memtray
// does not install, such as Stop, recorded only). The clients ran in
// /home/user/src/demo-app and were asked clientPrompt.
const (
	clientHookPrompt  = "Read README.md and tell me what the service is called."
	clientHookProject = "demo-app"
	clientHookCWD     = "/home/user/src/demo-app"
)

// startClientsDaemon serves a real daemon over a temp data dir holding a
// decision of the recorded project and a fact the recorded prompt recalls.
func startClientsDaemon(t *testing.T) string {
	t.Helper()
	return startDaemonWith(t, []httpapi.AddRequest{
		{Text: "We decided that the demo-app service keeps its README as the single source of the service name and its test command (make test).", Kind: "decision", Project: clientHookProject},
		{Text: "The README of demo-app says the service is called the orders service; read README.md before renaming anything.", Kind: "fact", Project: clientHookProject},
	})
}

// TestHookClientsRecorded: every recorded hook input is a valid hook input
// with the fields memtray reads; the events memtray installs are answered
// in the client's output shape (SessionStart briefs the project,
// UserPromptSubmit recalls for the prompt, the others print nothing), each
// exiting 0.
func TestHookClientsRecorded(t *testing.T) {
	isolate(t)
	files, err := filepath.Glob(filepath.Join("testdata", "clients", "*", "hook-*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no recorded hook inputs in testdata/clients (build/record-clients.sh): %v", err)
	}
	commands := map[string]string{} // Claude Code's event name -> memtray hook's
	for cmd, ev := range hookEvents {
		commands[ev] = cmd
	}
	dir := startClientsDaemon(t)
	for _, f := range files {
		name := filepath.Base(filepath.Dir(f)) + "/" + filepath.Base(f)
		t.Run(name, func(t *testing.T) {
			raw, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			in, err := ParseHookInput(raw)
			if err != nil {
				t.Fatalf("not accepted: %v", err)
			}
			event := strings.TrimSuffix(strings.TrimPrefix(filepath.Base(f), "hook-"), ".json")
			if in.HookEventName != event || in.SessionID == "" || in.CWD != clientHookCWD {
				t.Errorf("event %q (file says %q), session %q, cwd %q (want %q)", in.HookEventName, event, in.SessionID, in.CWD, clientHookCWD)
			}
			if event == "UserPromptSubmit" && in.Prompt != clientHookPrompt {
				t.Errorf("prompt %q, want %q", in.Prompt, clientHookPrompt)
			}
			cmd, ok := commands[event]
			if !ok {
				return // an event memtray does not install (Stop): parsed is all
			}
			// Each input in a session of its own, as in the recording.
			code, out, errs := run(t, context.Background(), string(raw), "hook", cmd, "--data-dir", dir, "--timeout", "20s", "--debug")
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errs)
			}
			switch event {
			case "SessionStart":
				if in.Source != "startup" {
					t.Errorf("source %q, want startup", in.Source)
				}
				if got := checkHookOutput(t, out, event); !strings.Contains(got, "single source of the service name") {
					t.Errorf("SessionStart did not brief the project's decision:\n%s\n(stderr %s)", got, errs)
				}
			case "UserPromptSubmit":
				got := checkHookOutput(t, out, event)
				if !strings.Contains(got, "<memtray-context") || !strings.Contains(got, "orders service") {
					t.Errorf("UserPromptSubmit did not recall the fact:\n%s\n(stderr %s)", got, errs)
				}
			default:
				if out != "" {
					t.Errorf("%s printed %q, want nothing", event, out)
				}
			}
		})
	}
}
