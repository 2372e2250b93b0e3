package capture

import (
	"bytes"
	"encoding/json"
)

// Headless Codex. `codex exec` (non-interactive, like claude -p) says so in
// each Responses API request: its HTTP headers carry `originator:
// codex_exec` (the TUI sends `codex-tui`), and the body's client_metadata
// carries the same turn metadata as the `x-codex-turn-metadata` header, a
// JSON string whose turn_trigger is "exec" (the TUI's is "user"). Checked
// with Codex 0.171.0 against a loopback Responses server
// (testdata/codex_0.171_request.json from `codex exec`,
// testdata/codex_0.171_tui_request.json from the TUI); `codex exec resume`
// keeps the session (prompt_cache_key) and the trigger. The parsers see
// the body only, so the body's copy decides.

// codexTurnTrigger is where the trigger sits in a request.
type codexTurnTrigger struct {
	ClientMetadata struct {
		TurnMetadata string `json:"x-codex-turn-metadata"`
	} `json:"client_metadata"`
}

// isCodexExec reports whether a Responses API request body comes from
// `codex exec`.
func isCodexExec(body []byte) bool {
	if !bytes.Contains(body, []byte("turn_trigger")) {
		return false
	}
	var in codexTurnTrigger
	if json.Unmarshal(body, &in) != nil || in.ClientMetadata.TurnMetadata == "" {
		return false
	}
	var meta struct {
		TurnTrigger string `json:"turn_trigger"`
	}
	return json.Unmarshal([]byte(in.ClientMetadata.TurnMetadata), &meta) == nil && meta.TurnTrigger == "exec"
}
