package ingest

import "regexp"

// lookFront is a participle clause set before a sentence's main clause
// that says where the agent looked: "Looking at the search results, ...",
// "After reviewing `session.ts`, ...", "Checking the config, ...". The
// participle reads as the agent's act (procLead), but what the sentence
// says is in its main clause: "Looking at the search results, I found the
// task specification in `process/tasks/002-spec.md`" states where the
// spec is. A period or colon inside a name ("`round.go`") does not end
// the clause. Matched against the lowercased sentence.
var lookFront = regexp.MustCompile(`^(?:after |on |upon |from )?(?:looking|checking|reviewing|examining|inspecting|reading|searching|scanning|going) (?:at |through |over |into |in |for )?(?:[^,:;.!?]|[.:]\S){1,120}, +`)

// lookMain returns where the main clause after a fronted clause of
// looking (lookFront) starts in a lowercased sentence, or 0 when none is
// fronted or the main clause is the agent's next step ("Looking at your
// `spinner.js`, we need to track ...", "..., let me check ..."): the
// sentence is then the narration it reads as.
func lookMain(ls string) int {
	if !ruleOn(ruleLookFront) {
		return 0
	}
	loc := lookFront.FindStringIndex(ls)
	if loc == nil || loc[1] >= len(ls) {
		return 0
	}
	m := ls[loc[1]:]
	if selfPlan.MatchString(m) || (ourModal.MatchString(m) && !seeAhead.MatchString(m)) {
		return 0
	}
	return loc[1]
}
