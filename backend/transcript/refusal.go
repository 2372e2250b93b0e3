package transcript

import (
	"encoding/json"
	"strings"
	"unicode/utf8"
)

// The fixed texts Claude Code writes around the words a user types when
// refusing a tool call (a permission prompt answered "No" with a reason,
// a plan of ExitPlanMode sent back with feedback). The tool_result, an
// error, is
//
//	The user doesn't want to proceed with this tool use. The tool use was
//	rejected (eg. if it was a file edit, the new_string was NOT written to
//	the file). To tell you how to proceed, the user said:\n<words>
//
// (a subagent's: "Permission for this tool use was denied. ... The user
// said:\n<words>"), perhaps followed by a hint to the model ("\n\nNote:
// The user's next message may contain a correction or preference. ...").
// The line's toolUseResult repeats it as a string, "Error: <the same>",
// which some versions word "... The user provided the following reason
// for the rejection: <words>". A refusal without words ("STOP what you
// are doing and wait for the user to tell you how to proceed.", "User
// rejected tool use") says nothing of the user's.
const (
	refusalLead         = "The user doesn't want to proceed with this tool use."
	subagentRefusalLead = "Permission for this tool use was denied."
	refusalSaid         = "To tell you how to proceed, the user said:"
	subagentRefusalSaid = "The user said:"
	refusalReason       = "The user provided the following reason for the rejection:"
	// refusalHint opens what Claude Code may append to the user's words:
	// its note to the model, not the user's.
	refusalHint = "\n\nNote: The user's next message may contain a correction or preference."
	// clarifyLead opens the text Claude Code puts in the user's place when
	// the user chose to clarify AskUserQuestion's questions: the harness's
	// words, the user's own come in the next prompt.
	clarifyLead = "The user wants to clarify these questions."
)

// maxRefusalRunes bounds the words Refusal returns. The capture proxy
// keeps 8 KiB of a tool result: the fixed texts and this many runes of
// words (4 bytes each at most) fit in it, so the proxy reads the same
// words as the session file.
const maxRefusalRunes = 1800

// Refusal returns the words the user typed when refusing a tool call, read
// from the text of the call's tool_result (result; isError: the result is
// an error, as every refusal is) or else from the toolUseResult of the
// line that carried it (structured: a JSON string; nil when unknown, as in
// the proxy). It returns "" when the result is no refusal, when the user
// typed nothing, and when the text after the marker is the harness's
// (AskUserQuestion's "clarify"). The words keep their lines, without
// Claude Code's note to the model after them; longer than maxRefusalRunes,
// they are cut at the last line break within the bound (else at the
// bound). Nothing here fails.
func Refusal(result string, isError bool, structured json.RawMessage) string {
	if !isError {
		return ""
	}
	words, ok := refusalWords(strings.TrimSpace(result))
	if !ok && len(structured) > 0 && structured[0] == '"' {
		var s string
		if json.Unmarshal(structured, &s) == nil {
			words, ok = refusalWords(strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(s), "Error:")))
		}
	}
	if !ok {
		return ""
	}
	if i := strings.LastIndex(words, refusalHint); i >= 0 {
		words = words[:i]
	}
	words = strings.TrimSpace(clean(words))
	if strings.HasPrefix(words, clarifyLead) {
		return ""
	}
	return cutWords(words)
}

// refusalWords returns what follows the marker of the user's words in a
// refusal's text; ok is false when text is no refusal with words.
func refusalWords(text string) (string, bool) {
	var markers []string
	switch {
	case strings.HasPrefix(text, refusalLead):
		markers = []string{refusalSaid, refusalReason}
	case strings.HasPrefix(text, subagentRefusalLead):
		markers = []string{subagentRefusalSaid, refusalReason}
	default:
		return "", false
	}
	for _, m := range markers {
		if i := strings.Index(text, m); i >= 0 {
			if w := strings.TrimSpace(text[i+len(m):]); w != "" {
				return w, true
			}
		}
	}
	return "", false
}

// cutWords shortens s to at most maxRefusalRunes runes, at its last line
// break within them when there is one.
func cutWords(s string) string {
	if utf8.RuneCountInString(s) <= maxRefusalRunes {
		return s
	}
	s = string([]rune(s)[:maxRefusalRunes])
	if i := strings.LastIndexByte(s, '\n'); i > 0 {
		return strings.TrimSpace(s[:i])
	}
	return strings.TrimSpace(s)
}
