package ingest

import (
	"regexp"
	"strings"

	"github.com/memtray/memtray/backend/memory"
)

// A plan the same response carries out. Agents often state the design of
// a change before they make it: "The exports will be grouped by their
// prefix (e.g., `any`, `array`, `fs`), and each group will be sorted
// alphabetically.", then the edit. Read alone the sentence is a plan (what
// will be done), and a plan forms no memory: most plans are tries a later
// step changes. But when the same response goes on to make an edit whose
// new text holds what the sentence names, the plan is carried out: it says
// how the code now is, a decision of the project.
//
// carriedPlans defines it by form. The sentence is future tense about the
// code, not the agent: "X will be Y" or "X will <verb>", its subject
// neither the agent nor the user ("I will", "we'll", "let me" stay
// narration). It names code: code spans or load-bearing tokens (paths,
// identifiers), every one of them in the new text of an edit the same
// response makes after it (a tool call that did not fail, an Aider
// SEARCH/REPLACE block Aider applied, a fenced block whose info string
// carries its path). A plan that names what the edit removes ("The `//
// AI!` comment will be removed.") is not carried out by the edit's new
// text, and a plan naming nothing stays a plan. The decision is prefixed
// with the edited file's path when it does not name it, as an instruction
// file's statement is with the file: "The exports" is said of one file.

// rulePlanEdit names carriedPlans for ablate (junk.go).
const rulePlanEdit = "planedit"

// futureOfThing finds "will" in a sentence: what comes before it is the
// subject of the future it states.
var futureOfThing = regexp.MustCompile(`(?i)\bwill\s+(?:also\s+|now\s+|then\s+|still\s+|only\s+)?(?:be|have|use|call|return|hold|contain|accept|take|yield|throw|read|write|live|run|map|group|sort|follow|handle|resolve|become)\b`)

// agentSubject is a subject that is the agent, the user or the reader:
// "I will", "we'll", "you will", "let me": narration, not the code.
var agentSubject = regexp.MustCompile(`(?i)\b(?:i|we|you|me|us|let|let's|i'll|we'll|you'll)\b`)

// codeSpanText finds inline code.
var codeSpanText = regexp.MustCompile("`([^`\n]+)`")

// planNames returns what a plan names in code: its code spans and its
// load-bearing tokens, trimmed; nil when it names nothing.
func planNames(text string) []string {
	seen := map[string]bool{}
	var out []string
	add := func(s string) {
		s = strings.TrimSpace(strings.Trim(s, "`.,;:()[]{}\"'"))
		if len(s) >= 2 && !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	for _, m := range codeSpanText.FindAllStringSubmatch(text, -1) {
		add(m[1])
	}
	prose := codeSpanText.ReplaceAllString(text, " ")
	for t := range memory.LoadBearing(prose) {
		add(t)
	}
	return out
}

// futurePlan reports whether a candidate's text opens with a sentence
// that states the future of the code: "will" after a subject that is not
// the agent, the user or the reader.
func futurePlan(text string) bool {
	ss := sentences(text)
	if len(ss) == 0 {
		return false
	}
	first := ss[0].text
	loc := futureOfThing.FindStringIndex(first)
	if loc == nil {
		return false
	}
	subj := first[:loc[0]]
	return strings.TrimSpace(subj) != "" && !agentSubject.MatchString(subj)
}

// responseEdit is an edit a response makes: the file and its new text.
type responseEdit struct {
	file, after string
}

// stepFileEdits returns the edits of any file step i of t makes after its
// text: its tool calls that did not fail (their patches), the Aider
// SEARCH/REPLACE blocks of its text Aider applied, the fenced blocks of
// its text whose info string carries a path (Cursor's).
func stepFileEdits(t Turn, i int, patches [][]*patch) []responseEdit {
	var out []responseEdit
	s := t.Steps[i]
	for j := range s.Calls {
		p := patchAt(patches, i, j)
		if p == nil || callFailed(t, i, j) {
			continue
		}
		for _, f := range p.files {
			if f.op != patchDelete && len(f.after) > 0 {
				out = append(out, responseEdit{file: f.path, after: strings.Join(f.after, "\n")})
			}
		}
	}
	if strings.Contains(s.Text, "SEARCH") {
		for _, f := range searchReplacePatch(s.Text).files {
			e := instrEdit{file: f.path, before: f.before, after: f.after}
			if len(f.after) > 0 && aiderBlockApplied(t, i, e) {
				out = append(out, responseEdit{file: f.path, after: strings.Join(f.after, "\n")})
			}
		}
	}
	if strings.Contains(s.Text, "```") {
		for _, b := range fencedBlocks(s.Text) {
			if _, file := fenceTarget(b); file != "" && strings.ContainsAny(file, "./") {
				out = append(out, responseEdit{file: file, after: strings.Join(b.lines, "\n")})
			}
		}
	}
	return out
}

// carriedPlans keeps, as decisions, the plans of the turn's responses an
// edit of the same response carries out (see above). patches are the
// turn's parsed patches (turnPatches).
func carriedPlans(t Turn, cands []Candidate, patches [][]*patch) {
	if !ruleOn(rulePlanEdit) {
		return
	}
	edits := map[int][]responseEdit{} // by step, read when a plan needs them
	named := map[int]string{}         // the file a carried plan of the step was prefixed with last
	for k := range cands {
		c := &cands[k]
		if c.Keep || c.step < 0 || c.step >= len(t.Steps) || c.Origin == OriginUser || c.Origin == OriginInstruction ||
			c.Reason != ClassPlan && c.Reason != ClassNarration || !strings.Contains(c.Text, "will") || !futurePlan(c.Text) {
			continue
		}
		names := planNames(c.Text)
		if len(names) == 0 {
			continue
		}
		es, ok := edits[c.step]
		if !ok {
			es = stepFileEdits(t, c.step, patches)
			edits[c.step] = es
		}
		for _, e := range es {
			if !holdsAll(e.after, names) {
				continue
			}
			text := c.Text
			if !strings.Contains(text, instrName(e.file)) && named[c.step] != e.file {
				text = strings.TrimSpace(e.file) + ": " + text // the next plan the edit carries out is said of it too
			}
			named[c.step] = e.file
			c.Text, c.Keep, c.Reason = text, true, ""
			c.Class, c.Kind = ClassChange, memory.KindDecision
			c.subject = subjectOf(text)
			break
		}
	}
}

// holdsAll reports whether text holds every one of names.
func holdsAll(text string, names []string) bool {
	for _, n := range names {
		if !strings.Contains(text, n) {
			return false
		}
	}
	return true
}
