package ingest

import (
	"fmt"
	"slices"
	"strings"

	"github.com/memtray/memtray/backend/memory"
)

// Turn is the unit of knowledge: one user turn of an agent session, from
// the user's prompt through every model response of the tool loop that
// answered it. Findings are stated between tool calls, revised a few calls
// later and summarised at the end; only the whole turn shows which
// statement stands.
type Turn struct {
	// SessionID, Project, Source, Headless and UserTurns come from the
	// turn's exchanges (the last one that names each).
	SessionID string
	Project   string
	Source    string
	Headless  bool
	UserTurns int
	// Turn is the Turn number of the first exchange.
	Turn int
	// User holds the user's words of the turn, in order (the prompt, and
	// any text the user added while the agent worked).
	User []string
	// Answers are the user's answers to the questions the model asked in
	// the middle of the turn (memory.Exchange.Answers), in order: the
	// user's words too, kept apart from User because their form is
	// known (a question and what the user chose).
	Answers []memory.Answer
	// Steps are the model's responses in order.
	Steps []Step
	// Exchanges are the exchanges the turn was built from.
	Exchanges []memory.Exchange
	// held is what the session's earlier turns said when the turn was
	// first distilled (held.go): a list line of the turn one of its blocks
	// holds is dropped, also when the turn is distilled again.
	held []heldText
	// awaiting are the ids of the turn's calls whose results it did not
	// hold when it was read (awaitedCalls): live capture read it at a
	// Stop that came between a call and its result, and read the call as
	// made, as batch ingest reads a call without a result. When the
	// turn's continuation brings the results (continueTurn), the turn
	// and what it revised are read again with them: a call that failed
	// made nothing.
	awaiting []string
}

// Step is one model response of a turn: its text, the tools it called and
// the results those tools returned (context only: tool output never forms
// a memory).
type Step struct {
	Text    string
	Calls   []memory.ToolCall
	Results []memory.ToolResult
	Error   bool
	// Summary marks a compaction summary the harness wrote into the session.
	Summary bool
}

// continuedPrefix opens the summary Claude Code writes into a session
// when it compacts the conversation: the model's own account of what it
// found, not the user's words.
const continuedPrefix = "This session is being continued from a previous conversation"

// StartsTurn reports whether an exchange begins a new user turn: it
// answers a user's prompt rather than tool results.
func StartsTurn(ex memory.Exchange) bool {
	return startsTurn(userWords(ex))
}

// userWords is what the user said in ex: its user text without injected
// and harness blocks, "" for a tool-loop exchange.
func userWords(ex memory.Exchange) string {
	if ex.ToolLoop {
		return ""
	}
	return stripHarness(ex.User)
}

// startsTurn reports whether an exchange whose userWords are u begins a
// user turn: the user said something, and it is no compaction summary.
func startsTurn(u string) bool { return u != "" && !strings.HasPrefix(u, continuedPrefix) }

// GroupTurns cuts exchanges, in the order they happened, into user turns:
// a turn starts at each exchange that StartsTurn, or where the session
// changes, and takes the tool-loop exchanges that follow it. Exchanges
// before a session's first prompt form a turn of their own (a transcript
// that starts mid-turn).
func GroupTurns(exs []memory.Exchange) []Turn {
	var out []Turn
	for _, ex := range exs {
		u := userWords(ex)
		n := len(out)
		if n == 0 || startsTurn(u) || ex.SessionID != out[n-1].SessionID {
			out = append(out, Turn{Turn: ex.Turn})
			n++
		}
		out[n-1].add(ex, u)
	}
	return out
}

// add appends one exchange to the turn; u is its userWords.
func (t *Turn) add(ex memory.Exchange, u string) {
	t.Exchanges = append(t.Exchanges, ex)
	if ex.SessionID != "" {
		t.SessionID = ex.SessionID
	}
	if ex.Project != "" {
		t.Project = ex.Project
	}
	if ex.Source != "" {
		t.Source = ex.Source
	}
	t.Headless = t.Headless || ex.Headless
	t.UserTurns = max(t.UserTurns, ex.UserTurns)
	if u != "" {
		if !startsTurn(u) {
			// A compaction summary: the model's findings so far.
			t.Steps = append(t.Steps, Step{Text: u, Summary: true})
		} else {
			t.User = append(t.User, u)
		}
	}
	t.Answers = append(t.Answers, ex.Answers...)
	if sm := strings.TrimSpace(ex.Summary); sm != "" {
		t.Steps = append(t.Steps, Step{Text: sm, Summary: true})
	}
	t.Steps = append(t.Steps, Step{Text: ex.Assistant, Calls: ex.ToolCalls, Results: ex.ToolResults, Error: ex.Error})
}

// CountPrompts returns exs with the user's prompts of each session
// counted in its exchanges' UserTurns, as a transcript reader counts them
// (an exchange that StartsTurn is a prompt; a tool-loop iteration or a
// compaction summary is none), when the caller counted none: every
// exchange of the session in exs has UserTurns 0. A session is counted
// only when exs holds its start: its first exchange in exs is exchange 1
// (Turn 1) and a prompt. Otherwise the prompts before are unknown (a
// later part of a session, a session whose exchanges are not numbered)
// and its turns stay named by their first exchange ("exchange 7"), as
// are the exchanges of no session. exs itself is not changed: the
// result is a copy when anything is counted.
func CountPrompts(exs []memory.Exchange) []memory.Exchange {
	type session struct {
		counted, ok bool
	}
	seen := map[string]*session{}
	for _, ex := range exs {
		if ex.SessionID == "" {
			continue
		}
		s := seen[ex.SessionID]
		if s == nil {
			s = &session{ok: ex.Turn == 1 && StartsTurn(ex)}
			seen[ex.SessionID] = s
		}
		s.counted = s.counted || ex.UserTurns != 0 // a negative count is the caller's too, and Validate's to refuse
	}
	var out []memory.Exchange
	prompts := map[string]int{}
	for i, ex := range exs {
		if s := seen[ex.SessionID]; s == nil || s.counted || !s.ok {
			continue
		}
		if out == nil {
			out = slices.Clone(exs)
		}
		if StartsTurn(ex) {
			prompts[ex.SessionID]++
		}
		out[i].UserTurns = prompts[ex.SessionID]
	}
	if out == nil {
		return exs
	}
	return out
}

// number names the turn the way its user counts it, "turn 3" for the
// turn of the session's third prompt (UserTurns, as memory.Decision's
// UserTurn), or by its first exchange ("exchange 7", memory.Exchange.Turn)
// when its exchanges did not count the user's prompts.
func (t Turn) number() string {
	if t.UserTurns > 0 {
		return fmt.Sprintf("turn %d", t.UserTurns)
	}
	return fmt.Sprintf("exchange %d", t.Turn)
}

// Exchange returns the exchange that stands for the whole turn in the
// decision log: the first one's session and project, the user's words and
// the final answer.
func (t Turn) Exchange() memory.Exchange {
	if len(t.Exchanges) == 0 {
		return memory.Exchange{}
	}
	ex := t.Exchanges[0]
	ex.SessionID, ex.Project, ex.Source, ex.Headless, ex.UserTurns = t.SessionID, t.Project, t.Source, t.Headless, t.UserTurns
	ex.User = strings.Join(t.User, "\n\n")
	ex.Answers = t.Answers
	ex.Assistant = t.Final()
	ex.ToolLoop = false
	ex.ToolCalls, ex.ToolResults = nil, nil
	return ex
}

// Final returns the text of the turn's last step with text: its answer.
func (t Turn) Final() string {
	for i := len(t.Steps) - 1; i >= 0; i-- {
		if strings.TrimSpace(t.Steps[i].Text) != "" {
			return t.Steps[i].Text
		}
	}
	return ""
}

// maxLaterBytes bounds the text LaterTexts gathers for one turn (and so
// a session's recent-turn window). A variable only so that a test can
// make a session of many windows small (TestResumeReadsTheLastTwoWindows);
// nothing else sets it.
var maxLaterBytes = 512 << 10

// LaterText is one text a session said after a turn (LaterTexts), with
// where it comes from. Where it comes from is kept beside the text, never
// inside it: a transcript's text is outside input and may open with any
// bytes, so no prefix of it can say who said it or that it is no
// sentence at all.
type LaterText struct {
	// Text is the text: the words said, or, for what a turn's tool calls
	// did, the lines this package renders of it (see LaterFrom).
	Text string
	// From says where Text comes from; the zero value is the model's
	// words.
	From LaterFrom
}

// LaterFrom says where a later text comes from: someone's words, whose
// sentences revise, undo or restate what came before, or what a turn's
// tool calls did, rendered as lines, which holds no sentence.
type LaterFrom uint8

// Where a later text comes from.
const (
	// LaterModel is the model's words (a step's text).
	LaterModel LaterFrom = iota
	// LaterUser is the user's words: a message, or an answer to the
	// model's question (memory.Answer.Text).
	LaterUser
	// LaterInstrRemoved is what the turn's tool calls remove from
	// instruction files, a fenced diff naming each file
	// (instrLaterText).
	LaterInstrRemoved
	// LaterMoved is the files the turn's tool calls move or delete, a
	// "from\tto" line each, to empty for a delete (movedLaterText).
	LaterMoved
	// LaterSettingsRemoved is the settings the turn's patches remove, a
	// "key\tsubject words" line each (removedLaterText).
	LaterSettingsRemoved
)

// words reports whether the text is someone's words (the user's or the
// model's): the later texts whose sentences Distill reads.
func (l LaterText) words() bool { return l.From == LaterModel || l.From == LaterUser }

// LaterTexts returns what the session of sessionID said in turns, in
// order (the model's texts and the user's words, and what their tool
// calls did), at most maxLaterBytes of text: what Distill checks a
// turn's statements against for later corrections.
func LaterTexts(turns []Turn, sessionID string) []LaterText {
	return NewLater(turns).After(-1, sessionID)
}

// Later gives each turn of a list what its session said after it
// (LaterTexts of the turns after it), reading each turn (laterOf: its
// texts, its tool calls' patches parsed) once for all of them: batch
// ingest gives every turn of a request the texts of the turns after it,
// which read each turn again for every turn before it, a cost growing
// with the square of a session's turns. Not safe for concurrent use.
type Later struct {
	turns []Turn
	texts [][]LaterText // laterOf of each turn, once read
	read  []bool
}

// NewLater returns a Later of turns, none of them read yet.
func NewLater(turns []Turn) *Later {
	return &Later{turns: turns, texts: make([][]LaterText, len(turns)), read: make([]bool, len(turns))}
}

// After returns LaterTexts(turns[i+1:], sessionID): what the session said
// after turn i (i = -1 for all of turns).
func (l *Later) After(i int, sessionID string) []LaterText {
	var g laterGather
	for j := i + 1; j < len(l.turns); j++ {
		if l.turns[j].SessionID != sessionID {
			continue
		}
		if !l.read[j] {
			l.texts[j], l.read[j] = laterOf(l.turns[j]), true
		}
		if !g.add(l.texts[j]) {
			break
		}
	}
	return g.out
}

// laterGather gathers later texts, turn by turn, within maxLaterBytes.
type laterGather struct {
	out []LaterText
	n   int // the bytes of out's texts
}

// add appends a turn's later texts (laterOf) in order while they fit
// maxLaterBytes; false once one does not (it and all after it are left
// out: nothing more is to be added).
func (g *laterGather) add(texts []LaterText) bool {
	for _, s := range texts {
		if g.n+len(s.Text) > maxLaterBytes {
			return false
		}
		g.n += len(s.Text)
		g.out = append(g.out, s)
	}
	return true
}

// laterOf returns what LaterTexts reads of one turn: the user's words
// (LaterUser), the model's texts (LaterModel), what the turn's tool calls
// remove from instruction files (instrLaterText), the files they move or
// delete (movedLaterText) and the settings their patches remove
// (removedLaterText). With revise-user-order off the user's words are
// read as the model's, as before the rule.
func laterOf(t Turn) []LaterText {
	user := LaterUser
	if !ruleOn(ruleUserOrder) {
		user = LaterModel
	}
	us, ss := userTexts(t), stepTexts(t)
	out := make([]LaterText, 0, len(us)+len(ss)+3)
	for _, u := range us {
		out = append(out, LaterText{Text: u, From: user})
	}
	for _, s := range ss {
		out = append(out, LaterText{Text: s})
	}
	patches := turnPatches(t)
	if rm := instrLaterText(t, patches); rm != "" {
		out = append(out, LaterText{Text: rm, From: LaterInstrRemoved})
	}
	if mv := movedLaterText(t, patches); mv != "" {
		out = append(out, LaterText{Text: mv, From: LaterMoved})
	}
	if rm := removedLaterText(t, patches); rm != "" && !evidenceOff["gloss-diff"] {
		out = append(out, LaterText{Text: rm, From: LaterSettingsRemoved})
	}
	return out
}

// userTexts returns the user's words of the turn: its messages, then its
// answers as statements (memory.Answer.Text).
func userTexts(t Turn) []string {
	out := make([]string, 0, len(t.User)+len(t.Answers))
	out = append(out, t.User...)
	for _, a := range t.Answers {
		out = append(out, a.Text())
	}
	return out
}

func stepTexts(t Turn) []string {
	out := make([]string, 0, len(t.Steps))
	for _, s := range t.Steps {
		if strings.TrimSpace(s.Text) != "" {
			out = append(out, s.Text)
		}
	}
	return out
}
