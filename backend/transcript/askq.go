package transcript

import (
	"encoding/json"
	"strings"

	"github.com/memtray/memtray/backend/memory"
)

// AskTool is the name of Claude Code's tool that asks the user
// multiple-choice questions in the middle of a turn. Its call's input is
//
//	{"questions": [{"question": "...", "header": "...", "multiSelect": false,
//	  "options": [{"label": "...", "description": "..."}, ...]}, ...]}
//
// and the user's answers come back in its tool_result, as text
// (`User has answered your questions: "<question>"="<answer>", ...`), and
// in the line's toolUseResult, structured: {"questions": [...],
// "answers": {"<question>": "<answer>"}, "annotations": {"<question>":
// {"notes": "..."}}} (the text gives a note as `"<question>"="<answer>"
// notes: <note>`). An answer is a chosen option's label, the labels
// chosen of a multiSelect question joined by commas, or the text the user
// typed instead ("Other"); a note is text the user added to a choice. A
// question the user declined comes back as an error result.
const AskTool = "AskUserQuestion"

// Bounds of what Answers reads of one call: Claude Code asks 1 to 4
// questions of 2 to 4 options; more is not its tool.
const (
	maxAskQuestions = 8
	maxAskOptions   = 16
	maxAskRunes     = 1000 // a question, an answer, a label, a description, a note
)

// askQuestion is one question of an AskUserQuestion call.
type askQuestion struct {
	Question string // cleaned, on one line
	raw      string // as written: the key of its answer
	Options  []askOption
}

// askOption is one option offered.
type askOption struct {
	Label       string
	Description string
}

// Answers returns the user's answers to one AskUserQuestion call: input is
// the call's JSON input, result the text of its tool_result, isError
// whether that result is an error (the user declined: no answer), and
// structured the toolUseResult of the line that carried the result (nil
// when unknown). Each answered question gives one Answer: the question and
// what the user chose, each chosen option as its label with its
// description in parentheses (what the user saw and picked; a label alone
// says little: "Option B", "Yes"), options joined by "; ", then what the
// user typed (instead of an option, or a note). The structured answers are
// read first; the result's text is read for questions they lack. Nothing
// here fails: a malformed input, result or answer gives fewer Answers.
func Answers(input string, result string, isError bool, structured json.RawMessage) []memory.Answer {
	if isError {
		return nil
	}
	var st struct {
		Questions   json.RawMessage            `json:"questions"`
		Answers     map[string]json.RawMessage `json:"answers"`
		Annotations map[string]json.RawMessage `json:"annotations"`
	}
	if len(structured) > 0 && structured[0] == '{' && json.Unmarshal(structured, &st) != nil {
		st.Questions, st.Answers, st.Annotations = nil, nil, nil
	}
	qs := askQuestions([]byte(input))
	if len(qs) == 0 {
		qs = askQuestions(st.Questions)
	}
	var out []memory.Answer
	for i, q := range qs {
		ans, ok := answerString(st.Answers[q.raw])
		textNote := ""
		if !ok {
			ans, textNote = answerInText(result, q.raw, qs, i)
		}
		note := noteOf(st.Annotations[q.raw])
		if note == "" {
			note = bounded(textNote)
		}
		text := renderAnswer(q, ans, note)
		if text == "" {
			continue
		}
		out = append(out, memory.Answer{Question: q.Question, Answer: text})
	}
	return out
}

// askQuestions decodes the questions of an AskUserQuestion input (or of a
// toolUseResult's "questions"), leniently: a question that is not an
// object with a question text is left out; an option may be an object or
// a string.
func askQuestions(raw []byte) []askQuestion {
	if len(raw) == 0 {
		return nil
	}
	var list []json.RawMessage
	if raw[0] == '{' {
		var in struct {
			Questions []json.RawMessage `json:"questions"`
		}
		if json.Unmarshal(raw, &in) != nil {
			return nil
		}
		list = in.Questions
	} else if json.Unmarshal(raw, &list) != nil {
		return nil
	}
	var out []askQuestion
	for _, r := range list {
		if len(out) == maxAskQuestions {
			break
		}
		var q struct {
			Question string            `json:"question"`
			Options  []json.RawMessage `json:"options"`
		}
		if json.Unmarshal(r, &q) != nil {
			continue
		}
		aq := askQuestion{Question: bounded(q.Question), raw: q.Question}
		if aq.Question == "" {
			continue
		}
		for _, o := range q.Options {
			if len(aq.Options) == maxAskOptions {
				break
			}
			var opt struct {
				Label       string `json:"label"`
				Description string `json:"description"`
			}
			var s string
			switch {
			case json.Unmarshal(o, &opt) == nil:
			case json.Unmarshal(o, &s) == nil:
				opt.Label = s
			default:
				continue
			}
			if l := bounded(opt.Label); l != "" {
				aq.Options = append(aq.Options, askOption{Label: l, Description: bounded(opt.Description)})
			}
		}
		out = append(out, aq)
	}
	return out
}

// answerString reads one structured answer: a string, or a list of
// strings (the labels chosen).
func answerString(raw json.RawMessage) (string, bool) {
	if len(raw) == 0 {
		return "", false
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s, true
	}
	var list []string
	if json.Unmarshal(raw, &list) == nil {
		return strings.Join(list, ", "), true
	}
	return "", false
}

// noteOf reads the user's note of an annotation ({"notes": "..."}).
func noteOf(raw json.RawMessage) string {
	var a struct {
		Notes string `json:"notes"`
	}
	if len(raw) == 0 || json.Unmarshal(raw, &a) != nil {
		return ""
	}
	return bounded(a.Notes)
}

// answerInText finds question i's answer in the text of the result:
// `"<question>"="<answer>"`, or `"<question>"="<answer>" notes: <note>`
// when the user added a note; each runs to the next question's `,
// "<question>"="`, or to the text Claude Code appends (". You can now
// continue ..."), or to the end.
func answerInText(text, question string, qs []askQuestion, i int) (answer, note string) {
	key := `"` + question + `"="`
	at := strings.Index(text, key)
	if at < 0 {
		return "", ""
	}
	rest := text[at+len(key):]
	end := len(rest)
	for j, q := range qs {
		if j == i {
			continue
		}
		if k := strings.Index(rest, `, "`+q.raw+`"="`); k >= 0 && k < end {
			end = k
		}
	}
	if k := strings.Index(rest, `. You can now continue`); k >= 0 && k < end {
		end = k
	}
	seg := rest[:end]
	if k := strings.LastIndex(seg, `" notes: `); k >= 0 {
		return seg[:k], seg[k+len(`" notes: `):]
	}
	if k := strings.LastIndex(seg, `"`); k >= 0 {
		return seg[:k], ""
	}
	return "", ""
}

// recommended is the suffix the model puts on the option it recommends:
// its word, not the user's.
const recommended = " (Recommended)"

// renderAnswer is what the user answered to q: the options whose labels
// ans names (with their descriptions), then what ans holds besides them
// (typed text), then the note; "" when the user gave nothing.
func renderAnswer(q askQuestion, ans, note string) string {
	ans = bounded(ans)
	var chosen []askOption
	typed := ""
	if o, ok := q.option(ans); ok {
		chosen = append(chosen, o)
	} else if ans != "" {
		// Several labels (multiSelect) joined by commas, with perhaps
		// the user's own text among them; a typed answer may hold
		// commas too, so only whole labels count as chosen.
		var rest []string
		for _, part := range strings.Split(ans, ",") {
			part = strings.TrimSpace(part)
			if o, ok := q.option(part); ok {
				if !containsOption(chosen, o) {
					chosen = append(chosen, o)
				}
			} else if part != "" {
				rest = append(rest, part)
			}
		}
		if len(chosen) == 0 {
			typed = ans
		} else {
			typed = strings.Join(rest, ", ")
		}
	}
	var parts []string
	for _, o := range chosen {
		parts = append(parts, o.describe())
	}
	if typed != "" {
		parts = append(parts, typed)
	}
	out := strings.Join(parts, "; ")
	if note != "" {
		if out == "" {
			return note
		}
		out += "; note: " + note
	}
	return cut(out)
}

// option returns the option of q labelled s (ignoring case and the
// model's "(Recommended)").
func (q askQuestion) option(s string) (askOption, bool) {
	s = strings.TrimSuffix(strings.TrimSpace(s), recommended)
	if s == "" {
		return askOption{}, false
	}
	for _, o := range q.Options {
		if strings.EqualFold(strings.TrimSuffix(o.Label, recommended), s) {
			return o, true
		}
	}
	return askOption{}, false
}

func containsOption(os []askOption, o askOption) bool {
	for _, x := range os {
		if x == o {
			return true
		}
	}
	return false
}

// describe is an option as the user saw it: its label and, unless it
// says nothing more, its description in parentheses.
func (o askOption) describe() string {
	label := strings.TrimSuffix(o.Label, recommended)
	d := strings.TrimSpace(o.Description)
	if d == "" || strings.Contains(strings.ToLower(label), strings.ToLower(d)) {
		return label
	}
	return label + " (" + d + ")"
}

// bounded cleans s (valid UTF-8, no NUL, one line) and cuts it to
// maxAskRunes.
func bounded(s string) string { return cut(memory.NormalizeSpace(clean(s))) }

// cut shortens s to at most maxAskRunes runes.
func cut(s string) string {
	if r := []rune(s); len(r) > maxAskRunes {
		s = strings.TrimSpace(string(r[:maxAskRunes-1])) + "…"
	}
	return s
}
