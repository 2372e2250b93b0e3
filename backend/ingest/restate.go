package ingest

import (
	"regexp"
	"strings"

	"github.com/memtray/memtray/backend/memory"
)

// When the user's message corrected or challenged the agent (challenge)
// and the agent's reply concedes it (concedes, admission), the normative
// sentences right after the acknowledgement restate what the user taught
// ("all changes must be made within the session directory"): they form
// the user's preference or the project's convention (restatement).

// admission opens a reply in which the agent owns a mistake ("I should
// have pushed the changes.", "I forgot to ..."): a concession too.
var admission = regexp.MustCompile(`^i (?:should(?:n't| not)? have|forgot to|made a mistake|was wrong)\b`)

// challengeLead opens a user's message that corrects or challenges what
// the agent did: a "no", an order not to ("don't ..."), a question about
// the agent's own act ("did you push?", "are you making these changes in
// ...?", "why did you ...?"), or a statement of what it did wrong ("you
// forgot ...", "that's wrong").
var challengeLead = regexp.MustCompile(`^(?:` +
	`(?:no|nope|wrong|wait|hold on)\b(?:[\s,.;:!—–-]+|$)|` +
	`(?:don't|do not|dont|never|stop)\b|` +
	`(?:why|how come)\b[^.?!]*\byou\b|` +
	`(?:did|didn't|did not|have|haven't|have not|are|aren't|were|weren't|shouldn't|wouldn't) you\b|` +
	`you(?:'re| are) (?:still |now |just |again )?\w+ing\b)`)

// challengeAny is a correction said anywhere in the user's message.
var challengeAny = regexp.MustCompile(`\b(?:you (?:didn't|did not|forgot|missed|haven't|have not|shouldn't have|were supposed to|weren't supposed to|just \w+ed)|(?:that's|that is|this is|it's|it is) (?:wrong|incorrect|backwards|the opposite|not (?:right|correct|true|what i))|i (?:said|told you|asked you)|why not)\b`)

// notChallenge is a "no" that answers a question or waves a concern off,
// not a correction.
var notChallenge = regexp.MustCompile(`^(?:no (?:problem|worries|rush|thanks|thank you)|nope,? (?:that's|it's) (?:all|fine|it))\b`)

// challenge reports whether a user's message corrects or challenges the
// agent (challengeLead, challengeAny). Quoted lines ("> ...": the agent's
// words the user points at) are not the user's.
func challenge(text string) bool {
	prose, _ := splitFences(stripHarness(text))
	var own []string
	for _, line := range strings.Split(prose, "\n") {
		if t := strings.TrimSpace(line); t != "" && !strings.HasPrefix(t, ">") {
			own = append(own, t)
		}
	}
	ls := strings.TrimLeft(lower(strings.Join(own, "\n")), " \t\"'`*")
	if ls == "" || notChallenge.MatchString(ls) {
		return false
	}
	return challengeLead.MatchString(ls) || challengeAny.MatchString(ls)
}

// normative marks a sentence that states how things are to be done: a
// rule ("must", "should", "never", "always", "need to", "instead of"),
// not what was done.
var normative = regexp.MustCompile(`\b(?:must(?:n't| not)?|should(?:n't| not)?|never|always|needs? to|have to|has to|instead of|rather than|supposed to|(?:is|are) (?:required|not allowed|expected)|only ever)\b`)

// notNormative is a modal that looks back or guesses ("should have",
// "must be a bug", "should work now"): no rule.
var notNormative = regexp.MustCompile(`\b(?:(?:should|must|need to|needs to)(?:n't| not)? have|should've|must be (?:a|an|the|because|due)|should (?:now |then )?(?:work|be fine|be ok|pass|fix|help|resolve|do it))\b`)

// selfRule opens a rule the agent states about itself ("I should push
// changes after committing", "I must not ...").
var selfRule = regexp.MustCompile(`^(?:according to [^,]{1,80}, )?i (?:should|must|need to|have to|always|never)\b`)

// unsaid is a rule's object that points at the right way without saying
// it ("use the correct session name format", "the proper path").
var unsaid = regexp.MustCompile(`\b(?:the|a|an) (?:correct|right|proper|appropriate|expected|same|actual)\b`)

// maxRestated is how many sentences after the acknowledgement a
// restatement runs at most.
const maxRestated = 3

// restatement collects, from the reply that answers a user's correction
// (the turn's first text of the model), the normative sentences right
// after its acknowledgement: the rule the user taught, restated. It is
// fed the reply's sentences in order; the run ends at the first question,
// plan or narration of what the agent does next, or after maxRestated
// sentences.
type restatement struct {
	open       bool // the reply opened with a concession
	done       bool // the run has ended
	seen       int  // sentences of the run read after the concession
	taught     []string
	pos        int  // where the first restated sentence was said
	aboutAgent bool // a restated sentence is a rule for the agent ("I should ...")
}

// take reads the next sentence st of the reply. It returns the statement
// left once the acknowledgement is cut, and whether the sentence belongs
// to the restatement (a normative sentence, or an acknowledgement only):
// a sentence it does not take is read as any other.
func (r *restatement) take(st string, pos int) (string, bool) {
	if r == nil || r.done {
		return "", false
	}
	ls := lower(st)
	if !r.open {
		if !concedes(ls) && !admission.MatchString(ls[ackEnd(ls, false):]) {
			r.done = true
			return "", false
		}
		r.open = true
	} else if r.seen++; r.seen > maxRestated {
		r.done = true
		return "", false
	}
	core := stripAck(st)
	lc := lower(core)
	switch {
	case wordCount(core) == 0 || classify(core) == classAck:
		return "", true // the acknowledgement alone
	case strings.HasSuffix(core, "?") || strings.HasSuffix(core, ":") || futureSelf.MatchString(lc) || offers(lc):
		r.done = true // what the agent does next: the restatement is over
		return "", false
	case !normative.MatchString(lc) || notNormative.MatchString(lc):
		return "", false
	case procLead.MatchString(lc) && !selfRule.MatchString(lc):
		return "", false
	case unsaid.MatchString(lc) && !namesThing(core):
		return "", false // "I need to use the correct format": which one, it does not say
	}
	if len(r.taught) == 0 {
		r.pos = pos
	}
	r.taught = append(r.taught, core)
	if agentAddressed.MatchString(lc) || agentProcess.MatchString(lc) {
		r.aboutAgent = true
	}
	return core, true
}

// agentAddressed is a rule about how the agent works: said of "I" or
// "you" ("I need to work within the session directory"). A rule that
// names the agent's process (agentProcess) is one too.
var agentAddressed = regexp.MustCompile(`^(?:(?:according to|per|as) [^,]{1,80}, )?(?:i|you)\b`)

// agentProcess names the agent's own way of working in a rule: how it
// commits, pushes and opens pull requests, tests and checks its work
// (builds, compiles, lints, warnings), asks, confirms and answers, and in
// what language: "never add the co-authored-by footer to commits", "run
// the tests before you push", "answer in French". A rule without it is
// about the work's content (the project's stack, files, components).
var agentProcess = regexp.MustCompile(`\b(?:commit(?:s|ted|ting)?|push(?:es|ed|ing)?|pull requests?|co-authored(?:-by)?|tests?|testing|compiles?|compiling|builds? (?:cleanly|without)|warnings?|lint(?:s|ed|ing)?|ask(?:s|ed|ing)?|confirm(?:s|ation)?|answer(?:s|ing)?|repl(?:y|ies|ying)|respond(?:s|ing)?|explain(?:s|ing)?|tell me|let me know|in (?:english|french|german|spanish|italian|portuguese|dutch|chinese|japanese))\b`)

// selfStatement opens a sentence in which the user speaks of themselves
// and their machine: "I'm on Ubuntu 22.04", "I use vim", "my laptop has
// ...". What the user says they want ("I want ...", "I need ...") is not
// it: that is about whatever it names.
var selfStatement = regexp.MustCompile(`^(?:(?:ok(?:ay)?|so|also|and|but|fyi|note|btw)\b[\s,.;:!—–-]*)*(?:i(?:'m| am) (?:on|using|running|working (?:on|in|from)|not|in)\b|i (?:use|run|work (?:on|in|from)|develop (?:on|in)|type|code (?:on|in))\b|my (?:own )?(?:machine|computer|laptop|desktop|os|system|setup|environment|editor|ide|terminal|shell|keyboard)\b)`)

// contentNoun names a part of the project's content: its stack, code,
// data, files and interface.
var contentNoun = regexp.MustCompile(`\b(?:database|db|schemas?|tables?|columns?|apis?|endpoints?|server|backend|frontend|renderer|components?|modules?|packages?|librar(?:y|ies)|frameworks?|stack|orm|dependenc(?:y|ies)|migrations?|routes?|pages?|tabs?|fields?|forms?|buttons?|menus?|dialogs?|screens?|views?|models?|classes|functions?|files?|folders?|director(?:y|ies)|scaffolding|architecture|app|application)\b`)

// aboutUser reports whether a preference the user stated is about the
// user or the agent's way of working, not the project's content: one of
// its rule sentences names the agent's process (agentProcess) and no
// thing of a project ("never commit .env.local" is the project's rule,
// projectThing; "never commit with --no-verify", "open a PR" are not), or a sentence of its text is the user speaking of
// themselves (selfStatement). Such a rule follows the user to every
// project.
func aboutUser(rules []string, text string) bool {
	for _, r := range rules {
		if agentProcess.MatchString(lower(r)) && !projectThing(r, true) {
			return true
		}
	}
	for _, s := range sentences(text) {
		if selfStatement.MatchString(lower(strings.TrimSpace(s.text))) {
			return true
		}
	}
	return false
}

// capsWord is a word written in capitals: an acronym ("PR", "CI", "TDD",
// "APIs") or a word said loudly ("do NOT push"). A capitalised name with
// lowercase letters after its capitals ("SQLite") is not one.
var capsWord = regexp.MustCompile(`\b[A-Z]{2,}s?\b`)

// emphasisWord is a capitalised word of a rule's own wording: its
// negation, frequency and modality ("do NOT", "NEVER", "ALWAYS", "MUST",
// "ONLY", "ALL"), lowercased.
var emphasisWord = regexp.MustCompile(`^(?:not|no|never|always|must|mustn't|should|shouldn't|only|all|any|every|do|don't|ever|none|nothing|anything|everything)$`)

// flagWord is a command-line flag ("--no-verify", "--force").
var flagWord = regexp.MustCompile(`(?:^|\s)--([a-z][\w-]+)\b`)

// projectThing reports whether a rule's sentence names something of a
// project (namesThing: a path or file, an identifier, a setting, a
// capitalised name), read for its type: a word in capitals said for
// emphasis ("do NOT", "NEVER") names nothing. In a rule about the agent's
// way of working (process) a command-line flag ("never commit with
// --no-verify") and an acronym ("open a PR", "wait for CI", "use TDD")
// name the tool's option or the practice, no thing of one project: they
// are read as words. What the rule says belongs to the project or the
// team ("our", "the team's key") makes it the project's.
func projectThing(st string, process bool) bool {
	if ownedByProject.MatchString(lower(st)) {
		return true
	}
	st = capsWord.ReplaceAllStringFunc(st, func(w string) string {
		if lw := lower(w); process || emphasisWord.MatchString(lw) {
			return lw
		}
		return w
	})
	if process {
		st = flagWord.ReplaceAllString(st, " $1")
	}
	return namesThing(st)
}

// ownedByProject is a possessive that puts what a rule names in the
// project or the team: "our linters", "the team's key", "the repo's
// hooks".
var ownedByProject = regexp.MustCompile(`\bour\b|\b(?:team|project|repo|repository|company|org|organi[sz]ation)'s\b`)

// ruleType gives the kind and type of a preference the user stated
// (rules: its rule sentences; text: the whole statement): the
// user's preference when it is about the user or the agent's way of
// working (aboutUser) or names nothing of a project; a convention of the
// project when it is a requirement of the project's content, naming
// something of it (projectThing, contentNoun), or saying what a command
// is for (commandRule: the command is the project's, whoever runs it):
// "the backend uses rusqlite",
// "use Drizzle for the ORM", a pasted tech-stack record.
func ruleType(rules []string, text string) (memory.Kind, memory.Type) {
	if commandRule(rules) || !aboutUser(rules, text) && (projectThing(text, false) || contentNoun.MatchString(lower(text))) {
		return memory.KindConvention, memory.TypeProject
	}
	return memory.KindPreference, memory.TypeUser
}

// candidate returns the restated rule as one kept candidate: a user
// preference when it says how the agent is to work and names no thing of
// the project (projectThing, read as a rule of the agent's way of
// working: "I should push after committing", not "I should run `mix
// format` in assets/"), a project convention otherwise.
func (r *restatement) candidate(origin string) (Candidate, bool) {
	if r == nil || len(r.taught) == 0 {
		return Candidate{}, false
	}
	text := strings.Join(r.taught, " ")
	c := newCandidate(text, origin, ClassPreference, true, "")
	c.taught = true
	c.Kind, c.Type = memory.KindConvention, memory.TypeProject
	if r.aboutAgent && !projectThing(text, true) {
		c.Kind, c.Type = memory.KindPreference, memory.TypeUser
	}
	c.pos = r.pos
	r.taught = nil
	return c, true
}
