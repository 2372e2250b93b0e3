package ingest

import (
	"regexp"
	"strings"
)

// The agent's reports of its own work, read by their form: the clause that
// carries the sentence (not a clause set before it), the verb behind an
// adverb, the person and mood of what it says it will do. What such a
// sentence says of the project, a cause or a rule, keeps it.

// frontedClause opens a sentence with a subordinate clause or phrase set
// before its main clause ("Now that the test passes, ...", "Based on the
// review, ...", "Since we're on task 2, ..."): what the sentence does is
// said by the clause after its comma. A period or colon inside a name
// ("`round.go`") does not end it. Matched against the lowercased sentence.
var frontedClause = regexp.MustCompile(`^(?:now that|since|as|once|after|before|when|while|given that|with|based on|in this case|at this point|to \w+|from)\b(?:[^,:;.!?]|[.:]\S){0,120}, +`)

// selfPlan opens a main clause in which the agent says, in the first
// person, what it will do next ("I'll ...", "let's ...", "we need to ...").
var selfPlan = regexp.MustCompile(`^(?:i(?:'ll| will| need to| am going to|'m going to| want to| plan to| have to)|let me|let's|we(?:'ll| will| need to| are going to|'re going to| have to))\b`)

// mainClause returns a lowercased sentence without its fronted clause.
func mainClause(ls string) string {
	if loc := frontedClause.FindStringIndex(ls); loc != nil {
		return ls[loc[1]:]
	}
	return ls
}

// frontedSelfPlan reports whether a lowercased sentence announces the
// agent's next act behind a fronted clause ("Now that the test passes,
// let's update the changelog"): narration, unless the sentence gives a
// cause or a rule beyond the conjunction that opens it ("Since it calls
// `launch`, which requires a real tmux, I'll test ..." states what
// `launch` requires).
func frontedSelfPlan(ls string) bool {
	m := mainClause(ls)
	if len(m) == len(ls) || !selfPlan.MatchString(m) {
		return false
	}
	_, after, _ := strings.Cut(ls, " ")
	return !causeWord.MatchString(after)
}

// mannerLead is an adverb set before a sentence's verb ("Successfully
// pushed the branch", "Already removed the spec", "Just ran the
// migration"): a report of the agent's act (procLead) reads as one
// whatever adverb opens it. Matched against the lowercased sentence.
var mannerLead = regexp.MustCompile(`^(?:successfully|already|just) +`)

// ourModal opens a main clause in which the agent says what it (with the
// user) should, needs to or can do next: "we need to modify this to ...",
// "we should check that `done[0]` is defined first", "I can help once you
// add the file". Between tool calls that is the next step of the work.
// Matched against the lowercased main clause.
var ourModal = regexp.MustCompile(`^(?:we|i) (?:should|need to|have to|can|could|might)\b`)

// attribution opens a sentence that says what a source (a rule, a spec,
// the docs) requires: "According to the workflow rules, we should work on
// a branch named after the session". What follows states the source's
// rule, not the agent's plan.
var attribution = regexp.MustCompile(`^(?:according to|per|as (?:required|specified|described|documented) (?:by|in))\b`)

// selfModalStep reports whether a lowercased sentence of the tool loop
// tells the agent's next step with a first-person modal, giving no cause
// and no rule.
func selfModalStep(ls string) bool {
	return ourModal.MatchString(mainClause(ls)) && !attribution.MatchString(ls) && !causeWord.MatchString(ls) && !ruleWord.MatchString(ls)
}

// weAct opens the agent's report of its own act told as "we" (the agent
// and the user at work together): "We ran `tasks list` and confirmed
// ...", "We've verified the functionality works", "We created a test
// directory". procLead reads the same forms after "I". Only a cause or a
// rule keeps such a sentence: its "our" is the work's, not the project's.
// In a final answer
// a report of a change ("We fixed a bug in X that ...") is still a
// change (changeLead). Matched against the lowercased sentence.
var weAct = regexp.MustCompile(`^we(?:'ve| have)? (?:now |just |also |first |then )?(?:searched|looked|checked|ran|run|read|opened|tried|started|pushed|committed|updated|edited|made|changed|added|removed|applied|finished|completed|reverted|created|written|wrote|fixed|renamed|moved|installed|deployed|verified|confirmed|tested|went through|reviewed)\b`)

// weState is the agent telling where its work stands at the moment, in
// the present progressive of the first person: "We're in the middle of a
// rebase", "It looks like we're having trouble with the edits", "I'm
// still getting the same error". It is the turn's state, stale by the
// next one, unless it gives a cause or a rule. Verbs of what the project
// does ("we're using Postgres") are not in it. Matched against the lowercased sentence.
var weState = regexp.MustCompile(`^(?:it (?:looks|seems) like |i see (?:that )?)?(?:we|i)(?:'re| are|'m| am) (?:now |still |currently |just )?(?:in the middle of|(?:having|trying|seeing|getting|working|waiting|looking|running into|facing|hitting|dealing|missing|stuck)\b)`)
