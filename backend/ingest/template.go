package ingest

import (
	"regexp"
	"strings"
)

// A slash command (spec-kit's /speckit.*, a Claude Code or Codex custom
// command) arrives in the conversation as the user's message: its prompt
// file expanded, with the words the user typed after the command put in
// its "User Input" section or in place of $ARGUMENTS. The file is the
// command's instructions to the agent ("You MUST...", "Run
// check-prerequisites.sh..."), the same in every project that installs
// it: none of it is the user's preference or a fact of the project. Only
// what the user typed is.

// argPlaceholder is a command file's placeholder for the user's words,
// left in when the command was run without any.
var argPlaceholder = regexp.MustCompile(`\$ARGUMENTS\b|\$\{ARGUMENTS\}|\{\{\s*args\s*\}\}`)

// mdHeading is a markdown heading line.
var mdHeading = regexp.MustCompile(`^#{1,6}\s+\S`)

// inputHeading is the heading of a command file's section that holds the
// user's words.
var inputHeading = regexp.MustCompile(`(?i)^#{1,6}\s+(?:user(?:'s)? input|user request|arguments|input)\s*:?\s*$`)

// commandInput reports whether a user's message is a command template
// and, when it is, returns the words the user typed into it (the body of
// its input section, unwrapped from its code fence; empty when the user
// typed nothing). A message is a template when it still holds an argument
// placeholder, or when it has an input section and at least one other
// heading: a document the user pastes (a spec, a README) has headings but
// no section for the user's input.
func commandInput(text string) (string, bool) {
	lines := strings.Split(text, "\n")
	headings, input := 0, -1
	for i, l := range lines {
		t := strings.TrimSpace(l)
		if !mdHeading.MatchString(t) {
			continue
		}
		headings++
		if input < 0 && inputHeading.MatchString(t) {
			input = i
		}
	}
	placeholder := argPlaceholder.MatchString(text)
	if !placeholder && (input < 0 || headings < 2) {
		return text, false
	}
	if input < 0 {
		return "", true
	}
	var body []string
	inFence, fenced := false, false
	var inside []string
	for _, l := range lines[input+1:] {
		t := strings.TrimSpace(l)
		if strings.HasPrefix(t, "```") || strings.HasPrefix(t, "~~~") {
			if inFence {
				break // the fenced input ends the section's words
			}
			inFence, fenced = true, true
			continue
		}
		if !inFence && mdHeading.MatchString(t) {
			break
		}
		if inFence {
			inside = append(inside, l)
		} else {
			body = append(body, l)
		}
	}
	if fenced {
		body = inside
	}
	words := strings.TrimSpace(argPlaceholder.ReplaceAllString(strings.Join(body, "\n"), ""))
	return words, true
}
