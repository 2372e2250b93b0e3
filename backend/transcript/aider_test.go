package transcript

import (
	"bytes"
	"errors"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestParseAider(t *testing.T) {
	exs, st := parseDetected(t, filepath.Join(outsideRepo(t, "aider-repo"), ".aider.chat.history.md"), FormatAider, Options{Location: time.UTC})
	wantExs := []want{
		{User: "Why does `make release` skip the changelog?", UserTurns: 1,
			Assistant: "The `release` target depends on `build` only; `changelog` is never listed as a prerequisite.\n\n#### Release notes\n\n" +
				"> Note: this is a quote in my answer, not aider output\n\nPlease add `Makefile` to the chat so I can change it."},
		{ToolLoop: true, UserTurns: 1,
			Assistant: "Makefile\n```make\n<<<<<<< SEARCH\nrelease: build\n=======\nrelease: build changelog\n>>>>>>> REPLACE\n```",
			Results:   []string{"aider: Makefile"}},
		{ToolLoop: true, UserTurns: 1, Assistant: "The target has a tab, not spaces; here is the corrected block.",
			Results: []string{"aider: The LLM did not conform to the", "aider: Applied edit to Makefile", "aider: Added docs/RELEASING.md to the"}},
		{User: "/ask which version scheme do we use?", UserTurns: 2,
			Assistant: "Semantic versioning: tags are vMAJOR.MINOR.PATCH, see docs/RELEASING.md."},
		{User: "multi-line\nprompt about the cache", UserTurns: 1,
			Assistant: "The cache is keyed by the request path only, so query strings collide."},
	}
	if got := summarizeAll(exs); !reflect.DeepEqual(got, wantExs) {
		t.Fatalf("exchanges differ:\n got %s\nwant %s", dump(got), dump(wantExs))
	}
	if st.Sessions != 3 || st.UserPrompts != 3 || st.ToolLoops != 2 || st.ToolResults != 4 ||
		st.Skipped[SkipCommand] != 2 || st.Skipped[SkipBookkeeping] != 5 || st.Project != "aider-repo" ||
		st.SessionID != "aider:aider-repo@2025-07-15T11:38:37" {
		t.Fatalf("stats %+v", st)
	}
	// The failed edit, sent back to the model, is one result.
	failed := exs[2].ToolResults[0].Content
	if !strings.HasPrefix(failed, "The LLM did not conform") || !strings.Contains(failed, "SearchReplaceNoExactMatch") ||
		!strings.HasSuffix(failed, "an existing block of lines") || strings.Contains(failed, "Tokens:") {
		t.Errorf("failed edit result %q", failed)
	}
	start := time.Date(2025, 7, 15, 11, 38, 37, 0, time.UTC)
	for _, ex := range exs[:4] {
		if !ex.StartedAt.Equal(start) || !ex.EndedAt.Equal(start) || ex.SessionID != st.SessionID || ex.Project != "aider-repo" {
			t.Errorf("exchange %d: %v..%v %q %q", ex.Turn, ex.StartedAt, ex.EndedAt, ex.SessionID, ex.Project)
		}
	}
	if last := exs[4]; last.Turn != 1 || last.SessionID != "aider:aider-repo@2025-07-16T09:00:00" {
		t.Errorf("second chat: turn %d, session %q", last.Turn, last.SessionID)
	}
}

// TestParseAiderAsides: what Aider writes around the chat is not the
// user's prompt nor the model's answer: the user's answer to Aider's
// question ("#### Add file to the chat? ... [Yes]: skip"), the second line
// of a shell command Aider shows padded with spaces, the model's reasoning
// (<thinking-content-...>).
func TestParseAiderAsides(t *testing.T) {
	exs, st := parseDetected(t, filepath.Join(outsideRepo(t, "aider-confirm"), ".aider.chat.history.md"), FormatAider, Options{Location: time.UTC})
	wantExs := []want{
		{User: "why does the deploy script hang?", UserTurns: 1,
			Assistant: "The deploy script waits on `deploy.lock`, which a crashed run leaves behind; remove it before retrying.",
			Results:   []string{"aider: deploy.sh"}},
		{User: "add a --force flag that removes the lock", UserTurns: 2,
			Assistant: "deploy.sh\n```bash\n<<<<<<< SEARCH\nwait_for_lock\n=======\n[ \"$1\" = --force ] && rm -f deploy.lock\nwait_for_lock\n>>>>>>> REPLACE\n```\n\n```bash\nrm -f deploy.lock\n./deploy.sh --force\n```",
			Results:   []string{"aider: Applied edit to deploy.sh"}},
	}
	if got := summarizeAll(exs); !reflect.DeepEqual(got, wantExs) {
		t.Fatalf("exchanges differ:\n got %s\nwant %s", dump(got), dump(wantExs))
	}
	if st.UserPrompts != 2 || st.ToolLoops != 0 {
		t.Errorf("stats %+v", st)
	}
	skipped := exs[0].ToolResults[0].Content
	if !strings.Contains(skipped, "[Yes]: skip") || !strings.HasSuffix(skipped, "[Yes]: s") {
		t.Errorf("the files the user skipped: %q", skipped)
	}
	ran := exs[1].ToolResults[0].Content
	if !strings.Contains(ran, "rm -f deploy.lock\n./deploy.sh --force\nRun shell commands?") {
		t.Errorf("the commands run: %q", ran)
	}
}

func TestParseAiderOptions(t *testing.T) {
	in := "#### hello  \n\nHi there, the build uses make.\n"
	exs, st, err := ParseAider(strings.NewReader(in), Options{SessionID: "hist", Project: "p", Headless: true})
	if err != nil || len(exs) != 1 || st.SessionID != "hist" || st.Sessions != 1 || !exs[0].Headless || exs[0].Project != "p" {
		t.Fatalf("%v %+v %+v", err, exs, st)
	}
	// Nothing but the banner and commands: no exchange, and why.
	exs, st, err = ParseAider(strings.NewReader("# aider chat started at 2025-01-01 00:00:00\n\n> Aider v0.1  \n\n#### /exit  \n"), Options{})
	if err != nil || len(exs) != 0 || st.Empty() != "no user turn and no model response" {
		t.Fatalf("%v %+v %q", err, exs, st.Empty())
	}
}

func TestParseAiderLineTooLong(t *testing.T) {
	in := "#### short  \n" + strings.Repeat("y", 100) + "\n"
	_, _, err := ParseAider(strings.NewReader(in), Options{MaxLineBytes: 50})
	if !errors.Is(err, ErrLineTooLong) || !strings.Contains(err.Error(), "line 2") {
		t.Fatalf("%v", err)
	}
}

func FuzzParseAider(f *testing.F) {
	seedLines(f, filepath.Join("aider-repo", "*.md"))
	seedLines(f, filepath.Join("aider-confirm", "*.md"))
	f.Add([]byte("#### a  \nb\n> c  \nd\n"))
	f.Fuzz(func(t *testing.T, in []byte) {
		exs, st, err := ParseAider(bytes.NewReader(in), Options{MaxLineBytes: 1 << 16, Location: time.UTC})
		checkFuzzed(t, exs, st, err)
	})
}

// TestParseAiderWatchPrompt: the prompt Aider's watch mode writes when
// the user saves a file with an "AI" comment opens with Aider's own
// instructions (the same words every time, said as if by the user): the
// prompt keeps only the file excerpt with the user's comment. A prompt
// without the watch mark is kept whole. Fails without aiderWatchPrompt.
func TestParseAiderWatchPrompt(t *testing.T) {
	in := "#### Look at the \"AI\" comments (marked with █) in the files below.  \n" +
		"#### Each one holds a request I need you to handle and rules for you.  \n" +
		"####   \n" +
		"#### src/report.ts:  \n" +
		"#### │export function total(rows) {  \n" +
		"#### █  // AI? why is the tax applied twice?  \n" +
		"\nThe tax is applied in both `total` and `formatRow`.\n\n" +
		"#### Always answer in short sentences, I need you to be brief.  \n" +
		"\nUnderstood.\n"
	exs, _, err := ParseAider(strings.NewReader(in), Options{SessionID: "hist", Project: "p"})
	if err != nil || len(exs) != 2 {
		t.Fatalf("%v %+v", err, exs)
	}
	if u := exs[0].User; strings.Contains(u, "Each one holds") || strings.Contains(u, "Look at the") ||
		!strings.HasPrefix(u, "src/report.ts:") || !strings.Contains(u, "// AI? why is the tax applied twice?") {
		t.Errorf("watch prompt read as %q", u)
	}
	if u := exs[1].User; u != "Always answer in short sentences, I need you to be brief." {
		t.Errorf("the user's own prompt read as %q", u)
	}
}
