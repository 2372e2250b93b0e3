package ingest

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"unicode"

	"github.com/memtray/memtray/backend/harnesstext"
	"github.com/memtray/memtray/backend/memory"
)

// Where a candidate statement was said, as Candidate.Origin reports it.
const (
	OriginUser     = "user"         // the user's words
	OriginToolLoop = "tool-loop"    // the model's text between tool calls
	OriginFinal    = "final-answer" // the model's last text of the turn
	OriginSummary  = "summary"      // a compaction summary the agent wrote into the session
)

// Classes of a candidate statement. Only findings, rules, preferences,
// facts and changes form memories; the rest is shown in the feed with
// its class as the reason.
const (
	ClassFinding    = "finding"    // something found out about the project, with or without its cause
	ClassChange     = "change"     // what a change made exist ("Added X that does Y")
	ClassPreference = "preference" // a user's instruction or preference
	ClassFact       = "fact"       // a project fact the user stated
	ClassAnswer     = "answer"     // the user's answer to a question the model asked mid-turn
	ClassNarration  = "narration"  // the agent narrating or announcing its own work
	ClassStatus     = "status"     // transient state: tests passing, pushed, not yet
	ClassQuestion   = "question"
	ClassOutput     = "output" // raw output: logs, tables, commands
	ClassChat       = "chat"   // acknowledgements, requests, pleasantries
	ClassPlan       = "plan"   // next steps, to-dos, what remains
	ClassVague      = "vague"  // a statement naming nothing specific
	ClassCommit     = "commit" // a quoted commit message: the repository keeps it
)

// Candidate is one statement of a turn and what distillation decided.
type Candidate struct {
	Text   string
	Origin string
	Class  string
	Kind   memory.Kind
	Type   memory.Type
	Keep   bool
	// Reason says why a candidate was dropped ("narration", "revised
	// later: ...", "restated later").
	Reason string
	// pos orders candidates and revising sentences within the turn.
	pos int
	// idx is the candidate's place in its Decision's Candidates.
	idx int
	// step is the text the candidate came from (the user's words count
	// as steps below zero).
	step int
	// subject holds the candidate's load-bearing tokens and salient words.
	subject map[string]bool
	// taught marks the model's restatement of what the user's correction
	// taught (restate.go): the user's rule in the model's words.
	taught bool
	// cuts are the pieces (sentences, clauses) distillation took out of
	// the candidate's text while keeping the rest, each with why; joined
	// candidates keep all their pieces' cuts.
	cuts []cutPiece
}

// cutPiece is a piece of a candidate's text distillation cut out of it,
// and why (the reason a whole candidate dropped for it would have).
type cutPiece struct {
	text, reason string
}

// maxCandidateRunes bounds one memory formed from a turn, as it bounds a
// turn judge's (memory.MaxStatementRunes).
const maxCandidateRunes = memory.MaxStatementRunes

// stripHarness removes from text every block the harness and memtray add
// (injected context, session setup, commands and their output) and the
// interruption markers: what is left is what the user or the model said.
func stripHarness(text string) string {
	return harnesstext.StripAll(text)
}

// planHeading matches a heading or lead-in whose section lists what is
// left to do or how the work was checked rather than what is true.
var planHeading = regexp.MustCompile(`(?i)^(?:#+\s*|\*\*|\d+\.\s*)?(?:optional |suggested |possible )?(?:next steps?|to-?dos?|pending(?: tasks)?|remaining(?: work| tasks)?|follow-?ups?|future(?: work)?|open questions|how to test|testing|verification|tests? results?|what(?:'s| is) left|primary request|user messages|all user messages)\b`)

// sectionHeading is a line that opens a section: a markdown heading or a
// numbered title ("7. Pending Tasks:"), as compaction summaries and long
// answers use. A plan section runs until the next section heading.
var sectionHeading = regexp.MustCompile(`^(?:#{1,6}\s+\S.*|\d{1,2}\.\s+[A-Z][^:.]{2,60}:)$`)

// optionsIntro introduces choices offered to the user, not facts.
var optionsIntro = regexp.MustCompile(`\b(?:options?|alternatives?|choices?|either|you could|we could|i could|choose|pick one|which (?:one|way))\b`)

// boilerplate is harness text inside a compaction summary.
var boilerplate = regexp.MustCompile(`(?i)^(?:this session is being continued|if you need specific details from before|please continue the conversation|summary:$|analysis:$|let me (?:chronologically )?analy[sz]e)`)

// headingLine is a markdown heading or a line that is only bold text.
var headingLine = regexp.MustCompile(`^(?:#{1,6}\s+.*|\*\*[^*]+\*\*:?|[A-Z][\w /&-]{2,60}:)$`)

// changeLead is a sentence that opens with what a change did, told
// without a subject or by "I" or "we": in a final answer it states what
// now exists.
var changeLead = regexp.MustCompile(`^(?:(?:i|we)(?:'ve| have)? (?:also )?)?(?:added|created|implemented|introduced|moved|renamed|replaced|switched|changed|made|wired|registered|extended|split|extracted|defined|exposed|updated|fixed|documented|configured|set)\b`)

// transient marks a statement about the moment, not the project.
var transient = regexp.MustCompile(`\b(?:yet|still|so far|at the moment|right now|currently|for now|anymore|just now|this time|again)\b`)

// causeWord marks a statement that carries its reason: it stays true
// even when worded as the moment's state.
var causeWord = regexp.MustCompile(`\b(?:because|since (?:the|it|we|our|they)|so that|in order to|caused by|root cause|comes? from|requires?|must|never|always|otherwise|which (?:is why|means)|due to)\b`)

// prefUser marks a user's instruction or preference.
var prefUser = regexp.MustCompile(`\b(?:never|always|don't|do not|dont|please (?:always|never|don't|do not|use|keep|make sure|avoid)|i (?:want|like|prefer|need|expect|require)|we (?:use|want|need|prefer|always|never)|make sure|from now on|every time|whenever|must|should(?:n't)?|instead of|rather than|no need to|avoid|stop \w+ing|prefer|only (?:after|when|if|once|until))\b`)

// revisionCue marks a sentence that corrects something said before.
// "Persist" is one only about a problem that outlasts a fix ("the error
// persists", "still persists"): what a program persists ("They persist
// sessions in bbolt") corrects nothing.
var revisionCue = regexp.MustCompile(`\b(?:actually|turns out|it turns out|in fact|correction|i was wrong|was wrong|that was wrong|not the (?:issue|problem|cause|reason)|the real (?:issue|problem|cause|fix|reason)|didn't (?:work|help|fix)|did not (?:work|help|fix)|doesn't (?:work|help)|does not (?:work|help)|still (?:fail\w*|broken|there|persist\w*|show\w*|happen\w*)|(?:error|issue|problem|bug|failure|warning|crash|symptom)s? (?:still |also |now )?persist(?:s|ed)?|not enough|isn't enough|wasn't enough|despite|after all|not actually|in reality|instead)\b`)

// cueWord reports whether a subject token is a revision cue's own word
// ("instead", "despite", "persists"): it marks a correction, it does not
// name what is corrected. "Persist" alone is no cue (revisionCue) but is
// still the cue's word when a problem persists. It reads the raw
// revisionCue, not correcting: it asks what a word is, and a cue word in
// a clause that corrects nothing still names no subject.
func cueWord(t string) bool {
	return revisionCue.MatchString(t) || persistWord.MatchString(t)
}

// persistWord is the verb of revisionCue's "the error persists" as a
// token.
var persistWord = regexp.MustCompile(`^persist(?:s|ed)?$`)

// Distill splits a turn into candidate statements and decides which form
// memories: findings, rules and facts with something specific in them,
// the user's instructions and preferences, never narration, status, plans
// or questions, and never a statement the turn later revised. later
// holds what the session said after this turn (the sentences of later
// turns), so a statement corrected in a later turn is dropped too. A
// hedged guess is confirmed only by the turn itself (dropUnconfirmed):
// live capture, which decides a turn without its later ones, and batch
// ingest keep the same guesses.
func Distill(t Turn, later []LaterText) []Candidate {
	cands, _, _ := distill(t, later)
	return cands
}

// distill is Distill; it also reports whether the turn's tool calls
// revise what earlier turns of the session said: an edit removes a line of
// an instruction file (removesInstr), a call moves or deletes a file
// (dropRelocated), a patch removes a setting the session glossed
// (glossedRemoval). It reads that from the calls it parsed, so the pipeline
// does not parse them again. pending are the turn's statements a later
// turn may still update (dropUpdated), for live capture to remember.
func distill(t Turn, later []LaterText) (cands []Candidate, revises bool, pending []pendingLead) {
	return distillWith(t, later, nil)
}

// distillWith is distill reading the revising sentences of later through
// rm (nil: each read anew): a caller distilling several turns of a
// session against the same later texts reads each one once.
func distillWith(t Turn, later []LaterText, rm *reviserMemo) (cands []Candidate, revises bool, pending []pendingLead) {
	var sents []posSentence    // every sentence of the model, in order
	restated := map[int]bool{} // the positions of the compaction summaries' sentences
	pos := 0
	for ui, u := range t.User {
		for _, c := range userCandidates(u) {
			c.pos, c.step = pos, -1-ui
			pos++
			cands = append(cands, c)
		}
	}
	for ai, a := range t.Answers {
		cs := answerCandidates(a) // answers.go
		for _, c := range cs {
			c.pos, c.step = pos, -1-len(t.User)-ai
			cands = append(cands, c)
			pos++
		}
		if len(cs) == 0 {
			pos++
		}
	}
	last := -1
	for i, s := range t.Steps {
		if strings.TrimSpace(s.Text) != "" && !s.Error {
			last = i
		}
	}
	lead := ""               // what the agent said it looks at, for the pronoun of the next finding (referent)
	var restate *restatement // the reply to a user's correction (restate.go)
	if len(t.User) > 0 && challenge(t.User[0]) {
		restate = &restatement{}
	}
	stepPos := make([]int, len(t.Steps))
	stepEnd := make([]int, len(t.Steps)) // where each step's calls are made: after its candidates (each at the position after its last sentence), before the next step's
	for i, s := range t.Steps {
		stepPos[i] = pos
		stepEnd[i] = pos
		if s.Error || strings.TrimSpace(s.Text) == "" {
			continue
		}
		origin := OriginToolLoop
		switch {
		case s.Summary || strings.HasPrefix(strings.TrimSpace(s.Text), continuedPrefix):
			origin = OriginSummary
		case i == last:
			origin = OriginFinal
		}
		cs, ss := modelCandidates(s.Text, origin, pos, &lead, restate, t.held)
		restate = nil // only the turn's first text answers the user
		for k := range cs {
			cs[k].step = i
		}
		if origin == OriginSummary {
			for _, s := range ss {
				restated[s.pos] = true
			}
		}
		pos += len(ss) + 1
		stepEnd[i] = pos
		cands = append(cands, cs...)
		sents = append(sents, ss...)
	}
	turnSents := sents[:len(sents):len(sents)] // the turn's own: what a live capture knows of it too
	patches := turnPatches(t)                  // patch.go: each apply_patch call's patch, read once
	carriedPlans(t, cands, patches)            // planedit.go: a plan an edit of the same response carries out
	removals, ownRemovals := turnRemovalUndos(t, patches, stepEnd)
	for _, l := range later {
		if l.From == LaterSettingsRemoved {
			if !evidenceOff["gloss-diff"] {
				removals = append(removals, laterSettingRemovals(l, pos)...) // glossdiff.go: a later turn's removed settings
			}
			continue
		}
		if !l.words() {
			continue // a later turn's edits of instruction files (instrLaterText) or moves (movedLaterText): no sentences
		}
		for _, s := range sentences(l.Text) {
			sents = append(sents, posSentence{text: s.text, pos: pos, user: l.From == LaterUser})
			pos++
		}
	}
	dropRevised(cands, sents, rm)
	// update.go: a statement a later turn of the session states anew.
	pending = dropUpdated(t, cands, turnSents, sents[len(turnSents):])
	dropUnconfirmed(cands, turnSents, restated)      // guess.go: a hedged hypothesis nothing later in the turn confirms
	dropUnsettled(t, cands, sents, later, removals)  // evidence.go
	moves := dropRelocated(t, cands, later, patches) // moved.go: a file the session moved or deleted after placing it
	// What an edit adds to an instruction file (instr.go) is revised only
	// by a later edit that removes it; it joins the rest for restatement.
	edits, steps := stepEdits(t, patches)
	cands = insertByPos(cands, instructionCandidates(edits, steps, later, stepPos))
	dropRestated(cands)
	cands = mergeSteps(cands)
	cands = mergeBySubject(cands)
	dropSelfCorrected(cands) // selfcorrect.go: a correction inside one joined memory
	dropNamesOnly(cands)
	for i := range cands {
		// The kind shows in the feed; the type follows it when stored.
		if c := &cands[i]; c.Keep && c.Kind == "" {
			c.Kind = GuessKind(c.Text)
			if c.Kind == memory.KindPreference && c.Type == "" {
				// Guessed from "you want ...", "as you asked me to":
				// the agent speaking of what the user wants is typed
				// by what it is about, as the user's own rule is.
				c.Kind, c.Type = ruleType([]string{c.Text}, c.Text)
			}
		}
	}
	return cands, moves || removesInstr(edits) || glossedRemoval(t, turnSents, ownRemovals), pending
}

// kindOrigin says how certain the candidate's kind is: what the judge
// named is judged, a user's preference (said with its cue) and a line of
// an instruction file are cued, the rest is left to GuessOrigin at store
// time: a convention the user stated (ruleType) too, its kind being read
// from what the rule is about, not said.
func (c Candidate) kindOrigin() memory.KindOrigin {
	switch {
	case c.Origin == OriginJudge && c.Kind != "":
		return memory.KindJudged
	case c.Origin == OriginUser && c.Kind == memory.KindPreference, c.taught, c.Origin == OriginInstruction:
		return memory.KindCued // said with its cue, taught by a correction, or written into an instruction file
	}
	return ""
}

// posSentence is a sentence and where it was said.
type posSentence struct {
	text string
	pos  int
	user bool // a later turn's sentence the user said (LaterUser)
}

// userCandidates reads the user's words: instructions, preferences and
// project facts are candidates; requests, questions and chat are not.
func userCandidates(text string) []Candidate {
	text = stripHarness(text)
	text, _ = commandInput(text) // template.go: a command's template is not the user's words
	prose, _ := splitFences(text)
	var out []Candidate
	var cur, context []string
	var rules []string // the sentences of cur said as a preference
	keep := func(st string) {
		// The context nearest the kept sentence joins it while the
		// statement stays within maxCandidateRunes: a pasted table
		// before a rule is no context of it.
		n := runeLen(strings.Join(cur, " ")) + runeLen(st)
		i := len(context)
		for i > 0 && i > len(context)-maxContext && n+1+runeLen(context[i-1]) <= maxCandidateRunes {
			i--
			n += 1 + runeLen(context[i])
		}
		cur = append(append(cur, context[i:]...), st)
		context = nil
	}
	flush := func() {
		context = nil
		if len(cur) > 0 {
			c := newCandidate(strings.Join(cur, " "), OriginUser, ClassFact, true, "")
			if len(rules) > 0 {
				c.Class = ClassPreference
				c.Kind, c.Type = ruleType(rules, c.Text)
			}
			out = append(out, c)
			cur, rules = nil, nil
		}
	}
	pasted := pastedMaterial(prose) // paste.go: a document, not the user's rules
	objects := map[string]bool{}    // what the message's requests are about (requests.go)
	lines := strings.Split(prose, "\n")
	output := pastedOutput(lines) // paste.go: what a tool printed, not the user's words
	for i, line := range lines {
		if strings.TrimSpace(line) == "" {
			clear(objects) // a request's detail is said in its paragraph
		}
		if tableRow(line) || output[i] {
			flush() // a row of a pasted table or a line of pasted output: data, not a statement nor context
			continue
		}
		userSentences(sentences(line), pasted, keep, flush, &rules, &context, objects)
	}
	flush()
	return out
}

// userSentences reads the sentences of one line of a user's message for
// userCandidates: keep adds a sentence to the statement being formed,
// flush ends it, rules gathers its sentences said as a preference and context
// holds the sentences that may join the next kept one. In pasted material
// (pasted) no cue word makes a sentence the user's preference. objects
// gathers the words of the message's requests and their details, so a
// later rule-worded sentence about them is read as a detail
// (requestDetail).
func userSentences(ss []sentence, pasted bool, keep func(string), flush func(), rules *[]string, ctx *[]string, objects map[string]bool) {
	onLine := false // a sentence of this line is kept
	keepOn := func(st string) {
		keep(st)
		onLine = true
	}
	endOn := func() {
		flush()
		onLine = false
	}
	for _, s := range ss {
		st := strings.TrimSpace(s.text)
		ls := lower(st)
		cued := prefCue(ls) || howToRule(ls) || standingOrder(ls)
		about := requestOpen(ls) // requests.go: an order of work names what the turn works on
		switch {
		case strings.HasSuffix(st, "?") || askLead.MatchString(ls) && !orderLead.MatchString(ls) && !clauseLead.MatchString(ls):
			endOn()
		case wordCount(st) < 4 || proseWords(st) < 3 || contentless(st):
			// too short to stand alone (a request or a reply), paths
			// and names without a sentence around them (a command
			// typed, a file named), or a fragment of function words
			// only ("If not it should."): nothing self-contained
		case codeLike(st) || outputLine.MatchString(st):
			endOn() // pasted output, a log, a traceback, code
		case !pasted && commandPurpose(st, ls):
			// "run `bd ready` to find available subtasks": a request
			// of this turn that says what a command of the project is
			// for (usercmd.go)
			keepOn(st)
			*rules = append(*rules, st)
		case taskRequest(ls):
			endOn() // what to do in this turn, not a standing rule
		case reportsShown(ls) && !ruleWord.MatchString(ls):
			endOn() // what the user sees now: the turn's state, not a fact for later
		case pastReport(ls):
			endOn() // "I never saw the window open": what happened, not a rule
		case pronounOrder.MatchString(ls):
			endOn() // "no, do not clean it up": about the moment's thing
		case !pasted && cued && requestDetail(st, ls, objects):
			// "let's add a tabbed panel. Each panel should ...": how
			// this turn's work is to come out, not a standing rule
			about = true
			endOn()
		case !pasted && cued:
			keepOn(st)
			*rules = append(*rules, st)
		case pasted && onLine && cued:
			// the rest of a pasted record's line ("Validation: Zod. Use
			// drizzle-zod to ..."): part of its fact, not a preference
			keepOn(st)
		case specificity(st) >= 2 && classify(st) == classContent && !strings.HasSuffix(st, ":"):
			keepOn(st)
		case labelled.MatchString(st) && !logLabel.MatchString(st) && wordCount(st) >= 5 && classify(st) == classContent:
			keepOn(st) // a line of a record the user gives
		case classify(st) == classContent:
			// A sentence that names nothing on its own ("I'm on Ubuntu
			// 22.04.", "rusqlite for the app database") is the context
			// of the user's statement next to it: it joins a kept
			// sentence that follows it, not broken by a request, a
			// question or pasted output.
			*ctx = append(*ctx, st)
		default:
			endOn()
		}
		if about {
			for w := range objectWords(ls) {
				objects[w] = true
			}
		}
	}
}

// maxContext is the most sentences of context that join a user's kept
// sentence.
const maxContext = 1

// howToLead opens a user's order that says how to work ("Use yarn, not
// npm", "Keep the public API backwards compatible", "Follow the naming of
// the existing migrations"), after any "ok,", "also," or "please":
// requestLead leaves these verbs out because they are no work for the
// turn; they are the user's rule.
var howToLead = regexp.MustCompile(`^(?:(?:ok(?:ay)?|yes|so|and|also|then|but|please)\b[\s,.;:!—–-]*)*(?:use|keep|follow|prefer|stick to|stick with)\s+(.*)`)

// pronounObject is a how-to order's object that points at the moment's
// thing ("use this one", "keep it", "use the same as before"): it says
// nothing a later turn can read.
var pronounObject = regexp.MustCompile(`^(?:it|this|that|these|those|them|the same|same|going|on|up|trying|doing|working)\b`)

// howToRule reports whether a user's lowercased sentence is a how-to
// order (howToLead) whose object is named, not pointed at.
func howToRule(ls string) bool {
	m := howToLead.FindStringSubmatch(ls)
	return m != nil && !pronounObject.MatchString(m[1])
}

// labelled is a line of a record the user gives: a short capitalised
// label, a colon, what it is set to ("Data layer: PostgreSQL with ...").
var labelled = regexp.MustCompile(`^[A-Z][A-Za-z]+(?:[ &/+-]+[A-Za-z]+){0,4}(?: \([^)]{1,30}\))?:\s+\S`)

// logLabel is a label that opens a log or error line, not a record.
var logLabel = regexp.MustCompile(`(?i)^[^:]*(?:error|exception|warning|warn|fatal|panic|traceback|failed|failure|info|debug|note|help)\b[^:]*:`)

// requestLead opens a request for the turn at hand: an imperative verb of
// work ("add", "fix", "review"...), "please", "let's", "make sure", "we
// need to", "I want you to", after any "ok,", "yes," or "then". Verbs that
// state how to work rather than what to do now ("use", "keep", "avoid",
// "prefer", "follow") are not in it: "Use yarn" is a preference.
var requestLead = regexp.MustCompile(`^(?:(?:ok(?:ay)?|yes|yeah|sure|great|good|cool|thanks|so|and|also|then|now|but|next|first|finally)\b[\s,.;:!—–-]*)*(?:(?:please|pls|plz|let's|lets|go ahead and|can you|could you|would you|make sure(?: (?:that|to))?|ensure(?: that)?|we(?: also| still)? (?:need|have|want) to|i(?: also)? (?:want|need|would like|'d like) (?:you to|to|a|an))\b|(?:add|remove|delete|create|update|fix|make|run|write|implement|change|rename|move|review|check|build|deploy|push|commit|test|put|set|refactor|document|extend|wire|generate|install|include|list|show|explain|convert|replace|clean|start|stop|try|read|load|open|mark|report|go|do|proceed|continue|finish|complete|declare|recreate|regenerate|redo|rerun|investigate|look|find|scan|collect|merge|split|drop|bump|upgrade|downgrade|migrate|port|translate|rewrite|restore|revert|undo|retry|verify|validate|confirm|double-check|analy[sz]e|research|plan|design|draft|summari[sz]e|prepare|get)\b)`)

// userReport opens a user's report of the turn at hand: what they get or
// see now ("i still don't see the parentheses", "i just get this error"),
// what does or does not happen ("it's not opening a new tab", "it works
// now but ..."), what the model did ("you only changed the comments"),
// what a file threw ("@dimension.py got this error"), or what they do not
// think or know ("i don't think self is defined there": a guess). Read by
// the model in the turn, it is no fact for a later one; the cause and the
// fix the turn finds are.
var userReport = regexp.MustCompile(`^(?:(?:ok(?:ay)?|yes|so|but|and|now|hmm|well|also)\b[\s,.;:!—–-]*)*(?:i(?:'m| am)? (?:still |just |now |also |really |even )?(?:get|got|getting|see|saw|seeing|(?:don't|do not|dont|can't|cannot|can not) (?:see|get|think|know|understand|find)|(?:am|'m) not (?:seeing|getting)|have (?:this|an|the|a|the same) (?:issue|error|problem|bug))\b|(?:it|this|that)(?:'s| is)? (?:still |now |also )?(?:not |doesn't |does not |isn't |won't |didn't )?(?:work|works|working|worked|open|opens|opening|show|shows|showing|load|loads|loading|run|runs|running|fail|fails|failing)\b|you (?:only|just|didn't|did not|forgot|missed|haven't|have not)\b|@\S+ (?:got|gets|throws|threw|gives|gave)\b)`)

// pastRule is a rule word said of a past act by the one who did it or
// what did it ("i never saw the window open", "it always failed on the
// first run", "we never got a reply"): the adverb of a verb in the past
// tense, after its subject pronoun. A rule is an order or a present
// habit ("never push to main", "we always use yarn"); "the hook is never
// called" (a passive, a fact of the code) has no subject pronoun before
// the adverb and is not matched.
var pastRule = regexp.MustCompile(`\b(?:i|we|you|it|they|he|she|this|that)(?: (?:just|really|even|also|still))? (?:never|always) (?:\w+ed|saw|got|did|was|were|had|came|went|ran|made|took|gave|found|knew|thought|heard|felt|kept|left|lost|said|sent|showed|became|began|broke|built|caught|brought|meant|met|paid|told|understood|wrote|spoke|spent|stood|woke|won)\b`)

// pastReport reports whether a user's lowercased sentence tells what
// happened with a rule word (pastRule) and says no rule besides: without
// the report, no preference cue (prefUser) or how-to order is left.
func pastReport(ls string) bool {
	loc := pastRule.FindStringIndex(ls)
	if loc == nil {
		return false
	}
	rest := ls[:loc[0]] + ls[loc[1]:]
	return !prefCue(rest) && !howToRule(strings.TrimSpace(rest))
}

// pronounOrder is a user's order whose whole object is a pronoun ("no,
// do not clean it up", "don't push that yet", "never mind it"): it is
// about what the turn has in front of it, which a later turn does not;
// "Don't add the co-authored-by footer" names what it is about and stays.
var pronounOrder = regexp.MustCompile(`^(?:(?:no|nope|yes|ok(?:ay)?|wait|stop)\b[\s,.;:!—–-]*)*(?:please )?(?:don't|do not|dont|never|no need to|stop) (?:\w+ ){1,2}(?:it|that|this|them|those|these)(?: (?:up|out|down|again|now|yet|for now|anymore|any more))?[\s.!]*$`)

// ruleWords are the words that make a user's sentence a rule whatever it
// opens with ("it works now, but always run the linter first"): ruleWord
// matches them; standing, the wider test, includes them.
const ruleWords = `always|never|from now on|going forward|by default|every time|each time|whenever`

var ruleWord = regexp.MustCompile(`\b(?:` + ruleWords + `)\b`)

// standing marks a user's words as a rule for every turn, not only this
// one: "always", "never", "every", "each", "from now on", "by default",
// "don't", "instead of"... ("all" is not: "make sure all tests pass" is
// this turn's scope).
var standing = regexp.MustCompile(`\b(?:` + ruleWords + `|every|each|in future|in the future|default to|don't|do not|dont|instead of|rather than|prefer|no longer|only ever)\b`)

// taskRequest reports whether a user's lowercased sentence asks for work
// in the turn at hand (requestLead, or a need for what the turn is to
// build: needLead) without saying it stands for later turns too
// (standing, recurrence).
func taskRequest(ls string) bool {
	// "instead of" in an order of work says what the change is, not how
	// to work from now on.
	if workOrder.MatchString(ls) && contrast.MatchString(ls) {
		ls = contrast.ReplaceAllString(ls, "")
	}
	ls = partitive.ReplaceAllString(ls, "") // "each of the panels" is no "each time"
	return (requestLead.MatchString(ls) || needLead.MatchString(ls)) && !standing.MatchString(ls) && !recurrence.MatchString(ls)
}

// recurrence is a clause that makes an order recur: a rule word
// ("whenever", "every time"), a temporal clause over each of a kind of
// event ("as each task is completed", "once every check passes", "after
// each feature is merged", not "after each item": a place), or "as you
// go".
var recurrence = regexp.MustCompile(`\b(?:` + ruleWords + `)\b|\b(?:as|once|when) (?:each|every)\b|\b(?:after|before) (?:each|every) (?:[\w-]+ ){1,3}(?:is|are|has|have|was|were|gets|get)\b|\bas (?:you|we) go\b`)

// standingOrder reports whether a user's lowercased sentence is an order
// of work (requestLead) that recurs (recurrence): "Commit changes as each
// task is completed and tests pass" is a rule for every task of the
// session and after, not this turn's request (taskRequest leaves it out
// for the same words), and it carries no other cue of a rule.
func standingOrder(ls string) bool {
	return requestLead.MatchString(ls) && recurrence.MatchString(partitive.ReplaceAllString(ls, ""))
}

// proseWords counts the words of a sentence that are words of prose:
// letters only once the punctuation around them is trimmed (not paths,
// file names, flags or identifiers).
func proseWords(st string) int {
	n := 0
	for _, f := range strings.Fields(st) {
		f = strings.Trim(f, ".,;:!?()\"'`*")
		ok := f != ""
		for _, r := range f {
			if !unicode.IsLetter(r) && r != '\'' && r != '-' && r != '’' {
				ok = false
				break
			}
		}
		if ok {
			n++
		}
	}
	return n
}

// orderLead opens an order that askLead would read as a question: "Do not
// run ...", "Do never ...".
var orderLead = regexp.MustCompile(`^do (?:not|never)\b`)

// clauseLead opens a statement with a clause of time or place that
// askLead would read as a question: its subject right after "when" or
// "where" ("when the server binds a port it sends ...", "When I upload a
// file, it should ..."), where a question asks "when should ...", "where
// is ...".
var clauseLead = regexp.MustCompile(`^(?:when|whenever|where) (?:the|a|an|i|we|you|it|they|this|that|these|those|my|our|your|its|their|each|every|any)\b`)

// askLead opens a question asked without its question mark.
var askLead = regexp.MustCompile(`^(?:does|do|is|are|can|could|would|will|did|have|has|what|why|how|where|when|which|who|please (?:add|share|send|paste|provide))\b`)

// willBe is the passive future of a change about to be made ("the new
// functions will be named ...", "the items will be sorted"): a plan.
var willBe = regexp.MustCompile(`\b(?:will|is going to|are going to) (?:now |then |also )?be \w+(?:ed|en|wn|ne)\b`)

// shellLine is a command line typed or pasted, not prose.
var shellLine = regexp.MustCompile(`^(?:\$ )?(?:git|npm|npx|yarn|pnpm|go|make|cd|ls|cat|python3?|pip3?|cargo|docker|kubectl|node|bun|deno|mix|bundle|chmod|mkdir|rm|cp|mv|curl|wget|sudo|apt|apt-get|brew) (?:-{1,2}\w|[\w./~-]+(?:\s|$))`)

// codeLead is a line of source code: a declaration or import keyword
// followed by code punctuation on the same line.
var codeLead = regexp.MustCompile(`^(?:import|export|const|let|var|function|async function|class|def|func|return|public|private|package|#include|using|from \S+ import)\b[^.!?]*[;{}()=]`)

// codeLike reports whether a sentence is code, a log line or a
// traceback rather than prose: many of its characters are symbols, or it
// is a command line.
func codeLike(st string) bool {
	if shellLine.MatchString(st) || codeLead.MatchString(st) {
		return true
	}
	sym, n := 0, 0
	for _, r := range st {
		n++
		if strings.ContainsRune("(){}[]=;<>$\\|\"_*#", r) {
			sym++
		}
	}
	return n > 0 && float64(sym)/float64(n) > 0.08
}

// modelCandidates reads one text of the model: each block (paragraph or
// list) gives the candidate of its kept sentences; every sentence is also
// returned, positioned, for revision checks. *lead carries, from one text
// to the next, the agent's last sentence when it says what the agent looks
// at next (referent): a finding that opens with a pronoun keeps it. A kept
// sentence opening with a bare pronoun right after a sentence of the same
// text that was not kept takes that sentence as its context (withContext).
// restate, when the text answers a user's correction (restate.go), takes
// the sentences that restate the user's rule: they form a candidate of
// their own, before the block's. A list line a memory of held (what the
// session's earlier turns stored) holds already is dropped (held.go), the
// rest of its block kept.
func modelCandidates(text, origin string, pos int, lead *string, restate *restatement, held []heldText) ([]Candidate, []posSentence) {
	text = stripHarness(text)
	prose, _ := splitFences(fenceTails(text)) // fencetail.go: a one-token block that ends a sentence is part of it
	prose = fixSteps(prose)                   // fixstep.go: a problem and the fix said next are one statement
	var cands []Candidate
	var sents []posSentence
	skip := ""                  // the class of the section being read (a plan), or none
	prev, prevKept := "", false // the sentence before, in this text, and whether it was kept
	var parts partDrops         // what the blocks kept in part dropped

	proposed := false      // reading the list a proposal introduced (proposalIntro)
	draft := false         // reading a compaction summary's analysis (draft.go)
	var summary []heldText // what the compaction summary after its analysis says
	if origin == OriginSummary {
		summary = summaryPart(prose)
	}
	for _, block := range splitBlocks(prose) {
		var kept []string
		dropped := map[string]int{}
		var runs []droppedRun // what dropped counts, in order, a run per class
		var each []droppedRun // the same, a sentence each
		drop := func(class, st string) {
			dropped[class]++
			each = append(each, droppedRun{class: class, text: st})
			if n := len(runs); n > 0 && runs[n-1].class == class {
				runs[n-1].text += " " + st
				return
			}
			runs = append(runs, droppedRun{class: class, text: st})
		}
		var lines lineDrops // the lines dropped one by one, shown each with its reason
		var order []string  // the block's sentences, in order (leadInCut)
		asks := false       // the block asks the user: its list items are options, not facts
		keptClass := map[string]int{}
		for _, s := range sentences(block) {
			if t := strings.TrimSpace(s.text); strings.HasSuffix(t, "?") || (s.intro && optionsIntro.MatchString(lower(t))) {
				asks = true
			}
		}
		for _, s := range sectionSentences(block, &skip) {
			st := strings.TrimSpace(s.text)
			sents = append(sents, posSentence{text: st, pos: pos})
			pos++
			before, beforeKept := prev, prevKept
			prev, prevKept = "", false // a heading, a plan's section, a question: no referent
			order = append(order, st)
			if origin == OriginSummary {
				draft = summaryDraft(st, draft)
			}
			if !s.listed {
				proposed = s.intro && proposalIntro(st, origin)
			} else if proposed {
				*lead = ""
				drop(ClassPlan, st) // an item of a list a plan or a guess introduced (junk.go)
				continue
			}
			if boilerplate.MatchString(st) {
				*lead = ""
				continue
			}
			if headingLine.MatchString(st) || (s.intro && wordCount(st) <= 8) {
				*lead = ""
				if planHeading.MatchString(st) {
					drop(ClassPlan, st)
				}
				continue
			}
			if draft && heldBy(st, summary) {
				*lead = ""
				lines.add(reasonDraft, ClassStatus, st) // draft.go
				continue
			}
			if s.skip == sectionTests && !causeWord.MatchString(lower(st)) {
				*lead = ""
				lines.add(reasonTestSection, ClassStatus, st) // sections.go
				continue
			}
			if s.skip == sectionRecap && origin != OriginSummary && !causeWord.MatchString(lower(st)) {
				*lead = ""
				lines.add(reasonRecap, ClassStatus, st) // sections.go
				continue
			}
			if s.skip == ClassPlan || planHeading.MatchString(st) {
				*lead = ""
				drop(ClassPlan, st)
				continue
			}
			if asks && s.item {
				*lead = ""
				drop(ClassQuestion, st)
				continue
			}
			if core, ok := restate.take(st, pos-1); ok {
				*lead = ""
				if core == "" {
					drop(ClassChat, st)
				}
				continue
			}
			class := sentenceClass(st, origin)
			if (class == ClassFinding || class == ClassChange) && s.item && heldLine(st, held) {
				*lead = ""
				lines.add(reasonHeld, class, st)
				continue
			}
			if class == ClassFinding || class == ClassChange {
				if *lead != "" && len(kept) == 0 && pronounLead.MatchString(lower(st)) {
					kept = append(kept, *lead) // "Let me check whether X uses Y." ... "It's only in Z."
				} else if !beforeKept {
					st = withContext(st, before) // "These new functions will be named `X`." "They will use ..."
				}
				*lead = ""
				prevKept = true
				kept = append(kept, st)
				keptClass[class]++
				continue
			}
			*lead = referent(st, class, origin)
			if class != ClassQuestion && class != ClassChat {
				prev = st
			}
			drop(class, st)
		}
		if cut := leadInCut(kept, order); len(cut) > 0 {
			for _, i := range cut {
				lines.add(reasonLeadIn, ClassNarration, kept[i]) // junk.go
			}
			kept = withoutIndexes(kept, cut)
		}
		blockClass := ClassFinding
		if keptClass[ClassChange] > keptClass[ClassFinding] {
			blockClass = ClassChange
		}
		taught, ok := restate.candidate(origin)
		if ok {
			cands = append(cands, taught)
		}
		for _, part := range packSentences(kept) {
			c := newCandidate(part, origin, blockClass, true, "")
			c.pos = pos
			cands = append(cands, c)
		}
		switch {
		case len(dropped) == 0:
		case len(kept) > 0 || ok:
			// A block kept in part: what it dropped is shown after what
			// it kept, each run of one class with its class, once the
			// text is read (partDrops.candidates).
			parts.add(len(cands), pos, each)
		case len(runs) == 1:
			// A block dropped whole is shown, never compared: no subject.
			class := mostDropped(dropped)
			cands = append(cands, Candidate{Text: shorten(strings.TrimSpace(block)), Origin: origin, Class: class, Reason: class, pos: pos})
		default:
			// Its sentences of several classes: each run of one class is
			// shown with its own ("Let me check X." narration, "All 12
			// tests pass." status), not the block's most common.
			for _, r := range runs {
				cands = append(cands, Candidate{Text: shorten(r.text), Origin: origin, Class: r.class, Reason: r.class, pos: pos})
			}
		}
		cands = append(cands, lines.candidates(origin, pos)...)
	}
	return parts.candidates(cands, origin), sents
}

// partDrops gathers, for one text, the sentences distillation dropped from
// the blocks it kept in part, and where each block's go among the text's
// candidates: after the block's kept statements.
type partDrops []partDrop

// partDrop is the sentences dropped from one block kept in part, each
// with its class, the index among the text's candidates they go at and
// the block's position (its candidates').
type partDrop struct {
	at, pos int
	sents   []droppedRun
}

// add records the sentences dropped from a block kept in part, to go at
// index at of the text's candidates with position pos.
func (p *partDrops) add(at, pos int, sents []droppedRun) {
	*p = append(*p, partDrop{at: at, pos: pos, sents: sents})
}

// candidates returns cands with the dropped sentences of each block kept
// in part inserted at their places, each run of sentences of one class as
// a dropped candidate with that class as its reason, as a block dropped
// whole shows them. A sentence a kept statement of the text holds (the
// context a pronoun of it needed: withContext, referent) is no drop.
func (p partDrops) candidates(cands []Candidate, origin string) []Candidate {
	if len(p) == 0 {
		return cands
	}
	var kept []string
	for _, c := range cands {
		if c.Keep {
			kept = append(kept, c.Text)
		}
	}
	held := strings.Join(kept, "\n")
	out := make([]Candidate, 0, len(cands)+len(p))
	next := 0
	for _, d := range p {
		out = append(out, cands[next:d.at]...)
		next = d.at
		var runs []droppedRun
		for _, s := range d.sents {
			if strings.Contains(held, s.text) {
				continue
			}
			if n := len(runs); n > 0 && runs[n-1].class == s.class {
				runs[n-1].text += " " + s.text
				continue
			}
			runs = append(runs, s)
		}
		for _, r := range runs {
			out = append(out, Candidate{Text: shorten(r.text), Origin: origin, Class: r.class, Reason: r.class, pos: d.pos})
		}
	}
	return append(out, cands[next:]...)
}

// referent returns a sentence of the tool loop in which the agent says what
// it looks at or does next and names it (a path, an identifier, a code
// span): "Let me check whether `PaneViewLive` uses `type_color`." The
// finding after the tool call often answers it with a pronoun, and is
// self-contained only with it. Anything else returns "", also the agent's
// talk of its edit mechanism ("Here is the corrected `SEARCH/REPLACE`
// block."): what a pronoun after it stands for is the edit, not the
// project (talksEdits).
func referent(st, class, origin string) string {
	if origin != OriginToolLoop || (class != ClassNarration && class != ClassPlan) || !namesThing(st) || talksEdits(st, lower(st)) {
		return ""
	}
	return st
}

// dottedName is a file or a qualified name written bare ("test.exs",
// "Repo.insert"), whatever its extension.
var dottedName = regexp.MustCompile(`\b[A-Za-z_][\w-]*\.[A-Za-z_]\w*\b`)

// namesThing reports whether a sentence names something a pronoun after
// it can refer to: a load-bearing token, a bare file or qualified name, or
// a capitalised name inside it.
func namesThing(st string) bool {
	return memory.NamesLoadBearing(st) || dottedName.MatchString(st) || capName.MatchString(st)
}

// sentenceClass classifies one sentence of the model's text, as
// classifySentence does, once: the answer is remembered (classMemo).
func sentenceClass(st, origin string) string {
	return classMemo.class(st, origin == OriginToolLoop)
}

// classifySentence classifies one sentence of the model's text. Of its
// origin it reads only whether the sentence was said between tool calls
// (toolLoop): classMemo keys on that.
func classifySentence(st string, toolLoop bool) string {
	origin := OriginFinal
	if toolLoop {
		origin = OriginToolLoop
	}
	ls := lower(st)
	if commitLabel.MatchString(ls) {
		return ClassCommit
	}
	if changeLog(st, ls) {
		return ClassStatus // what a change touched: the repository holds it (changes.go)
	}
	if testCount.MatchString(ls) && !causeWord.MatchString(ls) {
		return ClassStatus // the run's count, whatever else the sentence lists
	}
	c := classify(st)
	words := wordCount(st)
	switch c {
	case classAck:
		return ClassChat
	case classQuestion:
		return ClassQuestion
	case classOutput:
		return ClassOutput
	case classStatus:
		return ClassStatus
	case classProcedural:
		// In a final answer (or a summary) "Added X that does Y" says what
		// now exists; between tool calls it is narration.
		rest := strings.TrimLeft(ls[ackEnd(ls, false):], " ,.:;!—–-")
		if origin != OriginToolLoop && changeLead.MatchString(rest) && words >= 6 && specificity(st) >= 2 {
			return ClassChange
		}
		return ClassNarration
	}
	if codeLead.MatchString(st) {
		return ClassOutput // a line of source code
	}
	if words < 4 {
		return ClassVague
	}
	if talksEdits(st, ls) {
		return ClassNarration // the agent's edit mechanism, not the project (junk.go)
	}
	if participleAct(strings.TrimLeft(ls[ackEnd(ls, false):], " ,.:;!—–-")) {
		return ClassNarration // "Removing the spec since ...": the agent's act (junk.go)
	}
	if offers(ls) || frontedOffer(ls) || (willBe.MatchString(ls) && !causeWord.MatchString(ls)) || suggestion(ls) {
		return ClassPlan
	}
	if origin == OriginToolLoop && selfModalStep(ls) {
		return ClassPlan // "we need to modify this to ...": the next step
	}
	if transient.MatchString(ls) && !causeWord.MatchString(ls) {
		return ClassStatus
	}
	if futureSelf.MatchString(ls) && !causeWord.MatchString(ls) {
		return ClassPlan
	}
	if findingWeight(st, ls) >= 1 {
		return ClassFinding
	}
	return ClassVague
}

// capName is a capitalised name inside a sentence (SQLite, LiveView,
// Postgres), not its first word.
var capName = regexp.MustCompile(`\s[A-Z][A-Za-z0-9]*[a-z][A-Za-z0-9]*[A-Z0-9][A-Za-z0-9]*\b|\s[A-Z]{2,}[a-z]*\b`)

// constraint marks what a statement says must or cannot be: the shape of
// a finding ("SQLite doesn't support", "requires a real tmux").
var constraint = regexp.MustCompile(`\b(?:can't|cannot|can not|doesn't|does not|don't|isn't|aren't|won't|not supported|unsupported|requires?|needs?|must|only|fails?|failed|breaks?|expects?|defaults? to|instead of|rather than|because|so that|which|means)\b`)

// offer is a suggestion or an offer of more work: what could be done
// next, not what is true. Besides the openings and phrases that offer
// (conditionalOffer aside), the writer saying they would be glad to do
// something ("I'd be happy to add") offers it.
var offer = regexp.MustCompile(`^(?:if you(?: (?:want|like|prefer|need|would like)|'d like)|want me to|shall i|should i|would you like|do you want|we (?:can|could|might) (?:also |then |now |next )?|you (?:can|could|may) (?:now |also )?|tell me|let me know|optionally|possible next|consider|happy to|glad to|i can (?:also )?|next,? (?:we|i) (?:can|could|should|will))\b|\b(?:next time|if you'd like|if you want|if needed|when you're ready|want me to|(?:i'm|i am|i'd be|i would be|we're|we'd be|we would be) (?:happy|glad) to)\b|` + conditionalOffer)

// conditionalOffer is a conditional clause followed by the writer
// offering to do something: "if", "when" or "once" opening the sentence,
// then after a comma "I" with a modal ("I can", "I'll", "I could") or "we"
// with one that offers ("we can", "we could", "we might"), not negated
// ("If you later enable Pages, we can switch the badge", "If any job
// fails, I'll tighten the matrix"). What follows a condition without the
// writer offering is a conditional fact ("If the cache is stale, the
// build fails", "If the lock is held, we retry", "... we can't write"):
// "we will" is left out, since it tells what the code does as often as
// what the writer will do.
const conditionalOffer = `^(?:if|when|once)\b[^.;:!?]*?,\s*(?:then\s+)?(?:i(?:'ll|'d|\s+(?:can|could|will|would|may|might))|we(?:'d|\s+(?:can|could|might)))\s+(?:also\s+)?[a-z]`

// bareNumber is a number of two digits or more (a port, a count, a limit).
var bareNumber = regexp.MustCompile(`\b\d{2,}\b`)

// findingWeight weighs what makes a declarative sentence a finding worth
// keeping: project-specific tokens (specificity), code spans, numbers with
// their context, capitalised names, and the shape of a constraint or cause.
func findingWeight(st, ls string) float64 {
	w := specificity(st)
	w += 0.75 * float64(min(2, len(backtick.FindAllStringIndex(st, -1))))
	if numberTok.MatchString(st) || bareNumber.MatchString(st) {
		w += 0.5
	}
	w += 0.5 * float64(min(2, len(capName.FindAllStringIndex(st, -1))))
	if constraint.MatchString(ls) {
		w += 0.5
	}
	return w
}

// splitBlocks cuts prose at blank lines; a heading is a block of its own.
func splitBlocks(prose string) []string {
	var out []string
	var cur []string
	flush := func() {
		if len(cur) > 0 {
			out = append(out, strings.Join(cur, "\n"))
			cur = nil
		}
	}
	for _, line := range strings.Split(prose, "\n") {
		t := strings.TrimSpace(line)
		switch {
		case t == "":
			flush()
		case strings.HasPrefix(t, "#"):
			flush()
			out = append(out, t)
		default:
			cur = append(cur, t)
		}
	}
	flush()
	return out
}

// packSentences joins kept sentences into statements of at most
// maxCandidateRunes characters.
func packSentences(kept []string) []string {
	var out []string
	cur := ""
	for _, s := range kept {
		s = stripAck(s)
		if s == "" {
			continue
		}
		if cur != "" && runeLen(cur)+1+runeLen(s) > maxCandidateRunes {
			out = append(out, cur)
			cur = ""
		}
		if cur == "" {
			cur = s
		} else {
			cur += " " + s
		}
	}
	if cur != "" {
		out = append(out, cur)
	}
	return out
}

// shorten cuts a dropped text to maxCandidateRunes for the feed.
func shorten(text string) string {
	if r := []rune(text); len(r) > maxCandidateRunes {
		return string(r[:maxCandidateRunes]) + "…"
	}
	return text
}

// droppedRun is sentences in a row of a block that distillation dropped
// for one class, joined.
type droppedRun struct {
	class, text string
}

func newCandidate(text, origin, class string, keep bool, reason string) Candidate {
	text = strings.TrimSpace(text)
	if !keep {
		text = shorten(text)
	}
	return Candidate{Text: text, Origin: origin, Class: class, Keep: keep, Reason: reason, subject: subjectOf(text)}
}

func mostDropped(m map[string]int) string {
	best, n := ClassVague, -1
	for _, c := range []string{ClassNarration, ClassStatus, ClassPlan, ClassOutput, ClassCommit, ClassQuestion, ClassChat, ClassVague} {
		if m[c] > n {
			best, n = c, m[c]
		}
	}
	return best
}

// stopWords are words too common to name a subject.
var stopWords = map[string]bool{}

func init() {
	for _, w := range strings.Fields(`about above after again against because before being below between
		could doing during each every other their there these those through under until which while would
		should where when what with without within into onto from that this they them then than have has
		also only just more most some such very will shall test tests file files code change changes added
		using used uses make makes made need needs needed first second third new old same like works work
		running run runs build built check checks checked`) {
		stopWords[w] = true
	}
}

var wordTok = regexp.MustCompile(`[A-Za-z_][A-Za-z0-9_.:/-]*[A-Za-z0-9_]`)

// subjectOf returns what a statement is about: its load-bearing tokens
// and its longer words, lowercased.
func subjectOf(text string) map[string]bool {
	out := map[string]bool{}
	for t := range memory.LoadBearing(text) {
		t = strings.ToLower(strings.Trim(t, "`.,;:()[]{}\"'"))
		if len(t) >= 3 {
			out[t] = true
		}
	}
	for _, w := range wordTok.FindAllString(text, -1) {
		w = strings.ToLower(w)
		if len(w) >= 5 && !stopWords[w] {
			out[stem(w)] = true
		}
	}
	return out
}

// stem cuts a common English ending off a word, so "gitignored" and
// "gitignore" name one subject.
func stem(w string) string {
	if strings.ContainsAny(w, "_./:-") {
		return w
	}
	for _, suf := range []string{"ing", "ed", "es", "e", "s"} {
		if len(w) > len(suf)+4 && strings.HasSuffix(w, suf) {
			return w[:len(w)-len(suf)]
		}
	}
	return w
}

// overlap counts the tokens two subjects share.
func overlap(a, b map[string]bool) int {
	if len(a) > len(b) {
		a, b = b, a
	}
	n := 0
	for t := range a {
		if b[t] {
			n++
		}
	}
	return n
}

// dropRevised drops a kept candidate that a later sentence corrects: a
// sentence with a revision cue ("actually", "didn't work", "still fails")
// that shares at least two subject tokens with it (the cue words not
// counted: withoutCue), one of them in the clause the cue stands in
// (cueFocus), and, when its cues are all "instead of X" (cueObjects),
// saying X: "Made the window import lazily instead of at module import
// time" revises a statement that the window imports at module import
// time, not every statement naming the window. The user's words, and
// the model's restatement of what the user's correction taught, are the
// user's: the model's later sentences do not revise them. A later
// turn's order of the user's putting Y in X's place (userReplaced:
// "Change it to use Y instead of X", "use Y, not X") revises what says X,
// the user's own words too, whatever its form (an order reads as a plan
// otherwise). A correction that says nothing specific
// itself (class vague: "It's already tracked despite the gitignore.",
// "The working directory is actually at:") can only be about what was
// said just before it: it revises within revisionReach sentences, not
// every earlier statement of the session sharing two common words.
func dropRevised(cands []Candidate, sents []posSentence, rm *reviserMemo) {
	// Only sentences with a revision cue can revise; their subjects are
	// worked out once (once per call of rm's holder, for every turn it
	// distils: reviserMemo).
	type reviser struct {
		posSentence
		*revision
	}
	var revs []reviser
	for _, s := range sents {
		if r := rm.of(s.text, s.user); r != nil {
			revs = append(revs, reviser{s, r})
		}
	}
	for i := range cands {
		c := &cands[i]
		if !c.Keep {
			continue
		}
		usersOwn := c.Origin == OriginUser || c.taught
		for _, s := range revs {
			if s.pos <= c.pos || (s.near && s.pos-c.pos > revisionReach) || usersOwn && s.order == nil {
				continue
			}
			if strings.Contains(s.text, c.Text) || strings.Contains(c.Text, s.text) {
				continue // the candidate itself
			}
			if s.order != nil && s.names.saidBy(c.Text) || s.order == nil && revisesByCue(c, s.subject, s.focus, s.objects, s.written, s.pos) {
				cut, confirmed := revisedSentences(c.Text, s.focus, s.so)
				if confirmed {
					continue
				}
				if len(cut) > 0 {
					cutSentences(c, cut, "revised later: "+preview(s.text))
					if c.Keep {
						continue // the rest may be another correction's
					}
					break
				}
				if s.so.confirms(c.Text) {
					continue
				}
				c.Keep, c.Reason = false, "revised later: "+preview(s.text)
				break
			}
		}
	}
}

// revisesByCue reports whether a reviser with a revision cue (its
// subject, focus, "instead of" objects as subjects and as written, its
// position) revises the candidate c: dropRevised's test of subjects.
func revisesByCue(c *Candidate, subj, focus map[string]bool, objs []map[string]bool, written []string, pos int) bool {
	n, long := overlapLong(c.subject, subj)
	return (n >= 2 || (long && pos-c.pos <= revisionReach)) && aboutFocus(c.subject, focus) && saysObject(c.subject, objs) && saysObjectAsWritten(c.Text, written)
}

// actionOnly reports whether a sentence only tells what the agent does
// next or offers to do (narration, a plan, an offer): "let me test what
// actually works", "we can use X instead" say nothing about whether an
// earlier statement was true, whatever cue word they hold. A sentence that
// tells what a change made exist ("Switched the cache to Redis instead")
// is a change, not narration, and still revises.
func actionOnly(st string) bool {
	switch sentenceClass(st, OriginFinal) {
	case ClassNarration, ClassPlan:
		return true
	}
	return false
}

// revisionReach is how many sentences after a statement a correction
// sharing only one (long) subject token still revises it.
const revisionReach = 30

// overlapLong counts the tokens two subjects share and says whether one
// of them is long (7+ characters) or load-bearing, specific enough to
// name the subject alone.
func overlapLong(a, b map[string]bool) (int, bool) {
	n, long := 0, false
	for t := range a {
		if b[t] {
			n++
			long = long || len(t) >= 7 || strings.ContainsAny(t, "_./:-")
		}
	}
	return n, long
}

// dropRestated drops a kept candidate that a later kept candidate says
// again about the same subject: the later one is the turn's settled
// version. A user's answer to the model's question neither restates nor
// is restated: its question repeats the model's context by design, and
// what the user chose is said nowhere else as the user's.
func dropRestated(cands []Candidate) {
	// Each candidate's lowercased text and tokens, read once when a pair
	// first needs them (namesAll): the pairs are many, the texts few.
	lowered := make([]string, len(cands))
	tokens := make([][]string, len(cands))
	for i := range cands {
		a := &cands[i]
		if !a.Keep || a.Class == ClassAnswer {
			continue
		}
		for j := i + 1; j < len(cands); j++ {
			b := cands[j]
			if !b.Keep || !mayRestate(*a, b) {
				continue
			}
			if tokens[i] == nil {
				tokens[i] = namedTokens(a.Text)
			}
			if lowered[j] == "" {
				lowered[j] = lower(b.Text)
			}
			if namesAll(lowered[j], tokens[i]) && statesRules(a.Text, b.Text) && asCertain(*a, b) && saysEach(a.Text, lowered[j], b.subject) {
				a.Keep, a.Reason = false, "restated later: "+preview(b.Text)
				break
			}
		}
	}
}

// mayRestate reports whether the later statement b passes the cheap tests
// of restating the earlier a (dropRestated; across turns,
// supersedeRestated), before namesAll reads their tokens: it shares at
// least three subject tokens with a, half of the smaller subject, and is
// at least half as long; a user's statement does not restate the model's,
// only a later edit of an instruction file restates its statement,
// and a user's answer to the model's question neither restates nor is
// restated.
func mayRestate(a, b Candidate) bool {
	if a.Class == ClassAnswer || b.Class == ClassAnswer || b.Origin == OriginUser && a.Origin != OriginUser ||
		a.Origin == OriginInstruction && b.Origin != OriginInstruction { // an instruction file's statement is restated only by a later edit of it
		return false
	}
	n := overlap(a.subject, b.subject)
	return n >= 3 && 2*n >= min(len(a.subject), len(b.subject)) && runeLen(b.Text) >= runeLen(a.Text)/2
}

// namedTokens returns the load-bearing tokens of text (its paths,
// identifiers, settings, numbers and code spans) of 3 characters or more,
// lowercased; never nil.
func namedTokens(text string) []string {
	out := []string{}
	for t := range memory.LoadBearing(text) {
		if t = lower(t); len(t) >= 3 {
			out = append(out, t)
		}
	}
	return out
}

// ruleSentence reports whether a sentence (st, and ls lowercased) is an
// order that states a rule: what a command is for (commandPurpose: "Run
// `bd show <id>` to see the issue details") or how to work (howToWork,
// howToRule: "Always run `make lint` before committing", "Use yarn, not
// npm"). A modal in a statement ("I need to update X", "the run should
// pass") is the model's plan or guess more often than a rule: not one.
func ruleSentence(st, ls string) bool {
	return howToWork.MatchString(ls) || howToRule(ls) || commandPurpose(st, ls)
}

// statesRules reports whether the later text b states, as rules, the
// rules the earlier text a states: for each of a's rule sentences
// (ruleSentence), one of b's names all its load-bearing tokens
// (namedTokens). A report of one run of a command ("`bd show spotter-4te`
// revealed an epic", "`make lint` passed") names the command of the rule
// for using it ("Run `bd show <id>` to see the issue details", "always
// run `make lint` before committing") and says no rule: it says less than
// the rule, so it does not restate it. It is read after namesAll, on the
// few pairs whose tokens restate.
func statesRules(a, b string) bool {
	var bRules []string // b's rule sentences, lowercased; read once a has a rule
	read := false
	for _, s := range sentences(a) {
		st := strings.TrimSpace(s.text)
		if !ruleSentence(st, lower(st)) {
			continue
		}
		if !read {
			for _, t := range sentences(b) {
				if st := strings.TrimSpace(t.text); ruleSentence(st, lower(st)) {
					bRules = append(bRules, lower(st))
				}
			}
			read = true
		}
		tokens := namedTokens(st)
		if !slices.ContainsFunc(bRules, func(r string) bool { return namesAll(r, tokens) }) {
			return false
		}
	}
	return true
}

// namesAll reports whether a lowercased text names every one of the
// tokens of an earlier statement (namedTokens): a statement that leaves
// out one of them says less than earlier did, so it does not restate it
// ("the only new error is `ledger.go:12: unreachable`" is not restated by
// "all the errors are in `report.go`").
func namesAll(lowered string, earlier []string) bool {
	for _, t := range earlier {
		if !strings.Contains(lowered, t) {
			return false
		}
	}
	return true
}

// mergeSteps joins the kept statements of one text (one response, one
// user message), and the findings of consecutive responses of the tool
// loop, in order, while the result stays under maxCandidateRunes: what a
// stretch of the tool loop found is usually one subject, worked at over
// a few calls.
func mergeSteps(cands []Candidate) []Candidate {
	out := make([]Candidate, 0, len(cands))
	last := -1 // the last kept candidate in out
	for _, c := range cands {
		if c.Keep && last >= 0 && c.Origin != OriginInstruction {
			o := &out[last]
			if (o.step == c.step || (o.Origin == OriginToolLoop && c.Origin == OriginToolLoop)) && o.Origin == c.Origin && o.taught == c.taught && runeLen(o.Text)+1+runeLen(c.Text) <= maxCandidateRunes {
				o.Text += " " + c.Text
				for t := range c.subject {
					o.subject[t] = true
				}
				o.cuts = joinCuts(o.cuts, c.cuts)
				continue
			}
		}
		out = append(out, c)
		if c.Keep {
			last = len(out) - 1
		}
	}
	return out
}

// joinCuts returns a's cuts followed by b's, in a new slice when b adds
// any: a may share its array with a candidate merging left behind.
func joinCuts(a, b []cutPiece) []cutPiece {
	if len(b) == 0 {
		return a
	}
	return append(a[:len(a):len(a)], b...)
}

// mergeBySubject joins kept candidates of the same origin kind that share
// a subject token few other candidates have, while the result stays under
// maxCandidateRunes: one memory per subject.
func mergeBySubject(cands []Candidate) []Candidate {
	df := map[string]int{}
	kept := 0
	for _, c := range cands {
		if c.Keep {
			kept++
			for t := range c.subject {
				df[t]++
			}
		}
	}
	rare := func(t string) bool { return df[t] >= 2 && 3*df[t] <= max(kept, 3) && strings.ContainsAny(t, "_./:-") }
	out := make([]Candidate, 0, len(cands))
	for _, c := range cands {
		merged := false
		if c.Keep && c.Origin != OriginInstruction { // one statement per instruction line
			for k := len(out) - 1; k >= 0 && !merged; k-- {
				o := &out[k]
				if !o.Keep || o.Origin == OriginInstruction || (o.Origin == OriginUser) != (c.Origin == OriginUser) || o.taught != c.taught || runeLen(o.Text)+1+runeLen(c.Text) > maxCandidateRunes {
					continue
				}
				for t := range c.subject {
					if o.subject[t] && rare(t) {
						o.Text += " " + c.Text
						for t := range c.subject {
							o.subject[t] = true
						}
						o.cuts = joinCuts(o.cuts, c.cuts)
						merged = true
						break
					}
				}
			}
		}
		if !merged {
			out = append(out, c)
		}
	}
	return out
}

// namesOnlyWords is the fewest words of prose a memory needs: with
// fewer, and no word of constraint or cause, it is a list of names
// (files, branches, links) that states nothing. 4, 5, 6 and 8 were
// measured (memtray eval sessions): 6 drops the most such memories
// without losing a fact on either dev set, 8 loses one.
const namesOnlyWords = 6

// howToWork opens a user's sentence that says how to work rather than
// what to do now (requestLead leaves these verbs out for that reason).
var howToWork = regexp.MustCompile(`^(?:please )?(?:use|keep|avoid|prefer|follow|always|never|don't|do not)\b`)

// reasonNamesOnly is why dropNamesOnly drops a statement.
const reasonNamesOnly = "names only"

// dropNamesOnly drops a kept statement that, once joined with the rest of
// its response, is still only names: paths, identifiers and links with
// fewer than namesOnlyWords words of prose around them and nothing said
// of them (an answer naming the file it is about to edit, a list of
// branches, a request naming a file). A user's preference is kept
// however short ("Use yarn here.").
func dropNamesOnly(cands []Candidate) {
	for i := range cands {
		c := &cands[i]
		if !c.Keep || c.Origin == OriginJudge || c.Origin == OriginInstruction || c.Kind == memory.KindPreference || c.taught || (c.Origin == OriginUser && howToWork.MatchString(lower(c.Text))) {
			continue // a preference or a rule is short by nature: "Use yarn here."
		}
		if proseWords(c.Text) < namesOnlyWords && !constraint.MatchString(lower(c.Text)) {
			c.Keep, c.Reason = false, reasonNamesOnly
		}
	}
}

// describeCandidates summarises what distillation kept and dropped.
func describeCandidates(cs []Candidate) string {
	kept, byReason := 0, map[string]int{}
	for _, c := range cs {
		if c.Keep {
			kept++
			continue
		}
		r := c.Reason
		if i := strings.IndexByte(r, ':'); i > 0 {
			r = r[:i]
		}
		byReason[r]++
	}
	// The usual reasons in this order, then any other, so that no drop
	// goes unsaid.
	var parts []string
	for _, r := range []string{ClassNarration, ClassStatus, ClassPlan, ClassOutput, ClassCommit, ClassQuestion, ClassChat, ClassVague, "revised later", "updated later", "restated later", "undone later", "offered or left to do", reasonNamesOnly, reasonGuess, reasonHeld} {
		if n := byReason[r]; n > 0 {
			parts = append(parts, fmt.Sprintf("%s %d", r, n))
			delete(byReason, r)
		}
	}
	for _, r := range slices.Sorted(maps.Keys(byReason)) {
		parts = append(parts, fmt.Sprintf("%s %d", r, byReason[r]))
	}
	s := fmt.Sprintf("%d of %d statements kept", kept, len(cs))
	if len(parts) > 0 {
		s += "; dropped: " + strings.Join(parts, ", ")
	}
	return s
}
