package capture

import (
	"testing"
)

// TestCodexExecHeadless: a request of `codex exec` is headless, one of the
// Codex TUI is not (both recorded from Codex 0.171.0), so one headless rule
// holds for Claude Code's print mode and Codex's exec.
func TestCodexExecHeadless(t *testing.T) {
	tests := []struct {
		name string
		body []byte
		want bool
	}{
		{"codex exec", readFile(t, "codex_0.171_request.json"), true},
		{"codex tui", readFile(t, "codex_0.171_tui_request.json"), false},
		{"no metadata", []byte(`{"model":"m","input":"hi"}`), false},
		{"trigger elsewhere", []byte(`{"model":"m","input":"turn_trigger exec"}`), false},
		{"metadata not a string", []byte(`{"model":"m","input":"hi","client_metadata":{"x-codex-turn-metadata":{"turn_trigger":"exec"}}}`), false},
		{"metadata not JSON", []byte(`{"model":"m","input":"hi","client_metadata":{"x-codex-turn-metadata":"turn_trigger=exec"}}`), false},
		{"exec trigger", []byte(`{"model":"m","input":"hi","client_metadata":{"x-codex-turn-metadata":"{\"turn_trigger\":\"exec\"}"}}`), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := parseResponsesRequest(tt.body)
			if err != nil {
				t.Fatal(err)
			}
			if r.headless != tt.want {
				t.Errorf("headless = %v, want %v", r.headless, tt.want)
			}
		})
	}
}

func FuzzIsCodexExec(f *testing.F) {
	f.Add([]byte(`{"client_metadata":{"x-codex-turn-metadata":"{\"turn_trigger\":\"exec\"}"}}`))
	f.Add([]byte(`{"client_metadata":{"x-codex-turn-metadata":"{\"turn_trigger\":\"user\"}"}}`))
	f.Add([]byte(`turn_trigger`))
	f.Fuzz(func(t *testing.T, body []byte) {
		isCodexExec(body) // must not panic
	})
}
