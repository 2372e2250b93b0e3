package ingest

import (
	"regexp"
	"strings"
)

// A user who tells the agent to run a command often says what the command
// is for: "Run `bd show <id>` to see the issue details and `bd ready` to
// find available subtasks", "use `make seed` to load the fixtures", "to
// list the open tickets, run `tk ls`". The order is this turn's request
// (requestLead), but the command and its purpose are how the project's
// work is done, true next week: the sentence is kept as a convention of
// the project. The rest of the message ("Start with the first ready
// task") stays a request. What makes it a command and not a piece of work
// named in words ("run the tests to confirm the fix", "use that to center
// the button") is its form: written as code, or with a flag, a path, an
// identifier, or called "the ... command".

// commandOrder opens a user's order to run or use a command
// (commandObject), said with its purpose ("to" and a verb), after any
// "ok,", "also," "please" or "you can".
var commandOrder = regexp.MustCompile(`^(?:(?:ok(?:ay)?|so|and|also|then|now|first|next|please|just|you can|you should|always)\b[\s,.;:!—–-]*)*(?:run|use|call|invoke|execute|type)\s+(.+?)\s+to\s+([a-z]+)\b(?:\s+([a-z]+))?`)

// commandAfterPurpose is the purpose said first: "to list the open
// tickets, run `tk ls`".
var commandAfterPurpose = regexp.MustCompile(`^(?:(?:ok(?:ay)?|so|and|also|then|now|please|just)\b[\s,.;:!—–-]*)*to\s+([a-z]+)\b(?:\s+([a-z]+))?[^,]{0,80},\s*(?:just\s+)?(?:run|use|call|invoke|execute|type)\s+(.+?)[\s.!]*$`)

// commandPurposeVerb is what a command is run for: to see, list or find
// something, to start, build, check or change the project's state. A
// goal of the moment ("to fix the bug", "to confirm") is not one.
var commandPurposeVerb = regexp.MustCompile(`^(?:see|show|find|list|get|view|inspect|print|know|look|read|query|search|locate|discover|start|stop|restart|launch|serve|run|build|rebuild|compile|bundle|package|test|lint|format|check|generate|regenerate|render|preview|create|install|update|upgrade|bump|sync|deploy|release|publish|claim|close|open|reset|clean|seed|load|import|export|apply|migrate|rollback|backup|restore|fetch|pull|download|upload|watch|tail|debug|profile|reproduce|record|refresh|bootstrap|set)$`)

// momentPurpose is the word after a purpose verb that makes the purpose
// this turn's: "to see if it works", "to check whether the fix holds",
// "to see what fails", "to run it".
var momentPurpose = map[string]bool{}

func init() {
	for _, w := range strings.Fields("if whether what why how it this that them these those again") {
		momentPurpose[w] = true
	}
}

// namedCommand is a command named in words: "the minsky session get
// command", "the `sync` script".
var namedCommand = regexp.MustCompile(`^the (?:[\w.:#/-]+ ){1,4}(?:command|subcommand|script|task|target|cli)$`)

// commandFlag is a command-line flag inside a command ("-q", "--strict").
var commandFlag = regexp.MustCompile(`(?:^|\s)--?[a-z][\w-]*\b`)

// commandObject reports whether what a user's order runs or uses (obj, in
// the sentence's own case) is a command: code in backticks, a command
// called so in words (namedCommand), or a program and its arguments
// (words that open with no article or pronoun) among which a flag, a
// specific token (a path, an identifier) or a typed argument (typedToken)
// says it is typed, not told ("bd show spotter-dov", "python -m pytest -q"; not "the tests",
// "all of it", "unit tests").
func commandObject(obj string) bool {
	obj = strings.TrimSpace(obj)
	if strings.HasPrefix(obj, "`") && strings.HasSuffix(obj, "`") && len(obj) > 2 {
		return true
	}
	lo := lower(obj)
	if namedCommand.MatchString(lo) {
		return true
	}
	fs := strings.Fields(lo)
	if len(fs) < 2 || len(fs) > 5 || functionWords[fs[0]] || referring[fs[0]] || pronounObject.MatchString(lo) {
		return false
	}
	if commandFlag.MatchString(lo) || specificity(obj) >= 1 {
		return true
	}
	for _, f := range fs[1:] {
		if typedToken.MatchString(strings.Trim(f, wordTrim)) {
			return true
		}
	}
	return false
}

// typedToken is an argument typed, not told: letters joined to others by
// a hyphen, a dot, a colon, a "#", a slash or an underscore, or with
// digits ("spotter-dov", "db:migrate", "task#002", "v2"): an id, a name
// of the project, a path.
var typedToken = regexp.MustCompile(`^[a-z][a-z]*(?:[-_.:#/]?[a-z0-9]+)*(?:[-_.:#/][a-z0-9]+|[0-9]+)$`)

// commandPurpose reports whether a user's sentence (st, and ls
// lowercased) orders a command run or used with what the command is for
// (commandOrder, commandAfterPurpose): a purpose verb (commandPurposeVerb)
// whose object is no thing of the moment (momentPurpose).
func commandPurpose(st, ls string) bool {
	if !strings.Contains(ls, "to ") {
		return false
	}
	// MatchString first: most sentences open with neither form, and
	// telling so costs no submatch search nor allocation.
	if commandOrder.MatchString(ls) {
		m := commandOrder.FindStringSubmatchIndex(ls)
		obj := quoteFold.Replace(st)[m[2]:m[3]] // lower's offsets are the folded sentence's
		return commandObject(obj) && purposeOf(ls, m[4], m[5], m[6], m[7])
	}
	if commandAfterPurpose.MatchString(ls) {
		m := commandAfterPurpose.FindStringSubmatchIndex(ls)
		obj := quoteFold.Replace(st)[m[6]:m[7]]
		return commandObject(obj) && purposeOf(ls, m[2], m[3], m[4], m[5])
	}
	return false
}

// purposeOf reports whether the purpose a command is run for, its verb
// at ls[v0:v1] and the word after it at ls[n0:n1] (n0 < 0: none), says
// what the command is for (commandPurposeVerb) and not a thing of the
// moment (momentPurpose).
func purposeOf(ls string, v0, v1, n0, n1 int) bool {
	if !commandPurposeVerb.MatchString(ls[v0:v1]) {
		return false
	}
	return n0 < 0 || !momentPurpose[ls[n0:n1]]
}

// commandRule reports whether one of a user's rule sentences says what a
// command is for (commandPurpose): the rule is the project's convention.
func commandRule(rules []string) bool {
	for _, r := range rules {
		if commandPurpose(r, lower(r)) {
			return true
		}
	}
	return false
}
