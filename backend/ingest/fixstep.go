package ingest

import (
	"regexp"
	"strings"
)

// A problem the agent states and the fix it says it makes next, in two
// sentences of one line: "The `repoName` is incorrectly set to
// `git/task#001` when it should be `local/task#001`. Let me fix this by
// updating the `normalizeRepoName` function." Read one by one, the fix is
// the agent's next step (narration) and the finding loses where the fix
// is. fixSteps joins the two into one sentence, so what it says is
// classified whole: the problem with the change that answers it.
//
// Only the explicit form "fix this/it by <doing>" joins. A bare plan after
// a problem ("I need to use `:auto` mode", "I'll add a flash display
// ...") is as often a try the session later corrects: joined, it kept a
// trap of the dev set (docs/benchmarks.md, exp-cursor).

// ruleFixStep names fixSteps for ablate (junk.go).
const ruleFixStep = "fixstep"

// fixLead opens the agent's next step when it says it fixes the problem
// by a change, in the first person: "Let me fix this by updating ...",
// "I'll fix it by removing ...". Its group is what the fix does. Matched
// against the lowercased sentence.
var fixLead = regexp.MustCompile(`^(?:so |then |now )?(?:i'll|i will|i need to|i have to|i should|we need to|we'll|we should|let me|let's)(?: also| just)? fix (?:this|it|that|them|the \w+)(?: \w+)? by (\w+ing\b)`)

// problemCue marks a sentence that states a problem: what does not, cannot
// or fails to happen, or is wrong or missing. Matched against the
// lowercased sentence.
var problemCue = regexp.MustCompile(`\b(?:can't|cannot|can not|doesn't|does not|don't|do not|isn't|is not|aren't|are not|wasn't|weren't|won't|fails?|failed|failing|missing|incorrectly|wrong|never|no longer)\b`)

// selfOpen opens a sentence about the agent itself or addressed to the
// user ("I see the issue", "We're still getting ...", "You need to ..."):
// no problem of the project.
var selfOpen = regexp.MustCompile(`^(?:i|i'm|i've|i'll|we|we're|we've|let|let's|you|you're|it seems|it looks)\b`)

// fixSteps returns prose with each problem sentence followed, on its line,
// by the agent's fix step (fixLead) joined to it as "PROBLEM — fix: STEP",
// the step without the agent and its modal ("I'll", "Let me fix this by"):
// what is changed, not who will change it. Output lines and list items
// are left as they are.
func fixSteps(prose string) string {
	if !ruleOn(ruleFixStep) || !strings.Contains(prose, "fix ") {
		return prose // fixLead's "fix" is lowercase after its subject: no line can join
	}
	lines := strings.Split(prose, "\n")
	for i, line := range lines {
		t := strings.TrimSpace(line)
		if !strings.Contains(t, "fix ") || outputLine.MatchString(t) || listMark.MatchString(t) {
			continue
		}
		ss := sentences(t)
		if len(ss) < 2 {
			continue
		}
		joined := false
		parts := make([]string, 0, len(ss))
		for k := 0; k < len(ss); k++ {
			s := ss[k].text
			if k+1 < len(ss) && problemSentence(s) {
				next := quoteFold.Replace(ss[k+1].text) // lower's offsets
				if m := fixLead.FindStringSubmatchIndex(lower(next)); m != nil {
					s = strings.TrimRight(s, ".!") + " — fix: " + next[m[2]:]
					k++
					joined = true
				}
			}
			parts = append(parts, s)
		}
		if joined {
			lines[i] = strings.Join(parts, " ")
		}
	}
	return strings.Join(lines, "\n")
}

// problemSentence reports whether a sentence states a problem of the
// project (problemCue), not of the agent nor to the user (selfOpen), and
// is neither a question nor a lead-in.
func problemSentence(s string) bool {
	ls := lower(strings.TrimSpace(s))
	if strings.HasSuffix(ls, "?") || strings.HasSuffix(ls, ":") || wordCount(ls) < 5 {
		return false
	}
	rest := strings.TrimLeft(ls[ackEnd(ls, false):], " ,.:;!—–-")
	return problemCue.MatchString(rest) && !selfOpen.MatchString(rest)
}
