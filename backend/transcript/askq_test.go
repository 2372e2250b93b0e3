package transcript

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/memtray/memtray/backend/memory"
)

// TestClaudeAskUserQuestion: the user's answers to AskUserQuestion ride,
// as Answers, on the response after their tool_result, which stays a
// tool-loop iteration of the same user turn; an error result (declined)
// and a call whose questions cannot be read give none.
func TestClaudeAskUserQuestion(t *testing.T) {
	exs, st := parseFile(t, "askq.jsonl", Options{})
	if len(exs) != 5 || st.UserPrompts != 1 || st.Answers != 3 {
		t.Fatalf("%d exchanges, stats %+v", len(exs), st)
	}
	got := make([][]memory.Answer, len(exs))
	for i, ex := range exs {
		got[i] = ex.Answers
		if i > 0 && (!ex.ToolLoop || ex.User != "" || ex.UserTurns != 1) {
			t.Errorf("exchange %d is no tool-loop iteration of turn 1: %+v", i+1, summarize(ex))
		}
	}
	want := [][]memory.Answer{
		nil,
		{
			{Question: "Which delimiter should the CSV export of the reports page use?",
				Answer: "Semicolon (What Excel expects in German and French locales); note: our customers are in Germany"},
			{Question: "Which columns should the CSV export include?", Answer: "Totals; Tax breakdown (VAT per rate)"},
		},
		{{Question: "Where should the export be written?", Answer: `stream it to the browser, never write "exports" to disk`}},
		nil, // declined
		nil, // malformed call
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("answers:\n got %+v\nwant %+v", got, want)
	}
	// The tool results are still there, for context.
	if len(exs[1].ToolResults) != 1 || exs[1].ToolResults[0].Name != AskTool {
		t.Fatalf("tool results: %+v", exs[1].ToolResults)
	}
}

// TestAnswers reads one call's answers from its input, result text and
// structured result.
func TestAnswers(t *testing.T) {
	const db = `{"questions":[{"question":"Which database should the app use?","header":"DB","multiSelect":false,` +
		`"options":[{"label":"SQLite (Recommended)","description":"single file, no server"},{"label":"PostgreSQL","description":"PostgreSQL"}]}]}`
	const two = `{"questions":[{"question":"Keep the old layout?","options":[{"label":"Yes","description":"keep src/ and pkg/ as they are"},{"label":"No","description":"move to internal/"}]},` +
		`{"question":"Which linters, \"strict\" or not?","multiSelect":true,"options":["vet","staticcheck","golint"]}]}`
	q := "Which database should the app use?"
	text := func(pairs ...string) string {
		var ps []string
		for i := 0; i+1 < len(pairs); i += 2 {
			ps = append(ps, `"`+pairs[i]+`"="`+pairs[i+1]+`"`)
		}
		return "User has answered your questions: " + strings.Join(ps, ", ") + ". You can now continue with the user's answers in mind."
	}
	structured := func(answers map[string]any, extra ...string) json.RawMessage {
		m := map[string]any{"answers": answers}
		for i := 0; i+1 < len(extra); i += 2 {
			var v any
			_ = json.Unmarshal([]byte(extra[i+1]), &v)
			m[extra[i]] = v
		}
		b, _ := json.Marshal(m)
		return b
	}
	cases := []struct {
		name       string
		input      string
		result     string
		isError    bool
		structured json.RawMessage
		want       []string // "question => answer"
	}{
		{"option with its description, recommendation dropped", db, text(q, "SQLite (Recommended)"), false, nil,
			[]string{q + " => SQLite (single file, no server)"}},
		{"description saying nothing more is left out", db, text(q, "PostgreSQL"), false, nil,
			[]string{q + " => PostgreSQL"}},
		{"label matched ignoring case and spaces", db, "", false, structured(map[string]any{q: "  sqlite "}),
			[]string{q + " => SQLite (single file, no server)"}},
		{"typed instead of an option", db, text(q, "DuckDB, we already ship it"), false, nil,
			[]string{q + " => DuckDB, we already ship it"}},
		{"structured answer wins over the text", db, text(q, "PostgreSQL"), false, structured(map[string]any{q: "SQLite"}),
			[]string{q + " => SQLite (single file, no server)"}},
		{"note beside a choice", db, "", false, structured(map[string]any{q: "SQLite"}, "annotations", `{"`+q+`":{"notes":"one file per tenant"}}`),
			[]string{q + " => SQLite (single file, no server); note: one file per tenant"}},
		{"note in the text", db, `User has answered your questions: "` + q + `"="SQLite" notes: one file per tenant. You can now continue with the user's answers in mind.`, false, nil,
			[]string{q + " => SQLite (single file, no server); note: one file per tenant"}},
		{"notes in the text of two questions", two, `User has answered your questions: "Keep the old layout?"="No" notes: only for new code, "Which linters, "strict" or not?"="vet". You can now continue.`, false, nil,
			[]string{"Keep the old layout? => No (move to internal/); note: only for new code", `Which linters, "strict" or not? => vet`}},
		{"note alone", db, "", false, structured(map[string]any{q: ""}, "annotations", `{"`+q+`":{"notes":"ask me again tomorrow"}}`),
			[]string{q + " => ask me again tomorrow"}},
		{"empty answer gives nothing", db, text(q, ""), false, nil, nil},
		{"declined gives nothing", db, "The user doesn't want to proceed with this tool use.", true, nil, nil},
		{"unanswered question gives nothing", db, "User answered Claude's questions:", false, nil, nil},
		{"two questions from the text, quotes inside", two,
			text("Keep the old layout?", "Yes", `Which linters, "strict" or not?`, "vet, staticcheck, and no golint"), false, nil,
			[]string{"Keep the old layout? => Yes (keep src/ and pkg/ as they are)",
				`Which linters, "strict" or not? => vet; staticcheck; and no golint`}},
		{"multiSelect as a list", two, "", false, structured(map[string]any{"Keep the old layout?": "No", `Which linters, "strict" or not?`: []string{"vet", "vet", "golint"}}),
			[]string{"Keep the old layout? => No (move to internal/)", `Which linters, "strict" or not? => vet; golint`}},
		{"questions from the structured result when the input is unreadable", `{"questions":`, "", false,
			structured(map[string]any{q: "PostgreSQL"}, "questions", `[{"question":"`+q+`","options":[{"label":"PostgreSQL","description":"a server"}]}]`),
			[]string{q + " => PostgreSQL (a server)"}},
		{"questions not a list", `{"questions":"Which?"}`, text("Which?", "this"), false, nil, nil},
		{"question without text, option of a wrong type", `{"questions":[{"question":""},{"question":"Go or Rust?","options":[1,{"label":"Go"}]}]}`,
			text("Go or Rust?", "Go"), false, nil, []string{"Go or Rust? => Go"}},
		{"structured result not an object", db, text(q, "PostgreSQL"), false, json.RawMessage(`"Error: rejected"`),
			[]string{q + " => PostgreSQL"}},
		{"structured result malformed", db, text(q, "PostgreSQL"), false, json.RawMessage(`{"answers":`),
			[]string{q + " => PostgreSQL"}},
		{"answer of a wrong type falls back to the text", db, text(q, "PostgreSQL"), false, structured(map[string]any{q: 3}),
			[]string{q + " => PostgreSQL"}},
		{"invalid UTF-8 and NUL cleaned", `{"questions":[{"question":"Pick\u0000 one?","options":[]}]}`, "", false,
			json.RawMessage("{\"answers\":{\"Pick\\u0000 one?\":\"caf\xe9 \\u0000au lait\"}}"),
			[]string{"Pick one? => caf\uFFFD au lait"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var got []string
			for _, a := range Answers(c.input, c.result, c.isError, c.structured) {
				got = append(got, a.Question+" => "+a.Answer)
			}
			if !reflect.DeepEqual(got, c.want) {
				t.Fatalf("got  %q\nwant %q", got, c.want)
			}
		})
	}
}

// TestAnswersBounded: an oversized question or answer is cut, and at most
// maxAskQuestions questions are read.
func TestAnswersBounded(t *testing.T) {
	long := strings.Repeat("word ", 2*maxAskRunes)
	var qs []map[string]any
	answers := map[string]string{}
	for i := 0; i < 2*maxAskQuestions; i++ {
		q := strings.Repeat("x", i+1) + "?"
		qs = append(qs, map[string]any{"question": q})
		answers[q] = long
	}
	in, _ := json.Marshal(map[string]any{"questions": qs})
	st, _ := json.Marshal(map[string]any{"answers": answers})
	got := Answers(string(in), "", false, st)
	if len(got) != maxAskQuestions {
		t.Fatalf("%d answers", len(got))
	}
	for _, a := range got {
		if n := utf8.RuneCountInString(a.Answer); n > maxAskRunes {
			t.Fatalf("answer of %d runes", n)
		}
	}
}

// FuzzAnswers: whatever the input, result and structured result, Answers
// does not panic and gives answers with a question and an answer, valid
// UTF-8 on one line, bounded.
func FuzzAnswers(f *testing.F) {
	f.Add(`{"questions":[{"question":"A or B?","options":[{"label":"A","description":"the first"},"B"],"multiSelect":true}]}`,
		`User has answered your questions: "A or B?"="A, B". You can now continue.`, false, `{"answers":{"A or B?":"A, c"},"annotations":{"A or B?":{"notes":"n"}}}`)
	f.Add(`{"questions":[{"question":"x"},{"question":"y"}]}`, `"x"="1", "y"="2"`, false, `[]`)
	f.Add(`{"questions":[]}`, ``, true, `"Error"`)
	f.Fuzz(func(t *testing.T, input, result string, isError bool, structured string) {
		for _, a := range Answers(input, result, isError, json.RawMessage(structured)) {
			for _, s := range []string{a.Question, a.Answer} {
				if s == "" || !memory.ValidUTF8(s) || strings.ContainsAny(s, "\n\r") {
					t.Fatalf("bad answer %+v", a)
				}
			}
			if utf8.RuneCountInString(a.Question) > maxAskRunes || utf8.RuneCountInString(a.Answer) > maxAskRunes {
				t.Fatalf("answer too long: %d / %d runes", utf8.RuneCountInString(a.Question), utf8.RuneCountInString(a.Answer))
			}
		}
	})
}
