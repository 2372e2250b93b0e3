package chunk

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

// nonSpace returns the non-whitespace runes of s, in order.
func nonSpace(s string) string {
	var b strings.Builder
	for _, r := range s {
		if !unicode.IsSpace(r) {
			b.WriteRune(r)
		}
	}
	return b.String()
}

// checkInvariants asserts what Split promises for every input.
func checkInvariants(t testing.TB, text string, opts Options, chunks []string) {
	t.Helper()
	o := opts.normalized()
	clean := strings.ToValidUTF8(text, "\uFFFD")
	pos := 0
	for i, c := range chunks {
		if c == "" {
			t.Fatalf("chunk %d is empty", i)
		}
		if !utf8.ValidString(c) {
			t.Fatalf("chunk %d is not valid UTF-8: %q", i, c)
		}
		if c != strings.TrimSpace(c) {
			t.Fatalf("chunk %d is not trimmed: %q", i, c)
		}
		if n := utf8.RuneCountInString(c); n < o.Min {
			t.Fatalf("chunk %d has %d runes, under Min %d: %q", i, n, o.Min, c)
		}
		// Each chunk is a substring of the text, after the previous one.
		k := strings.Index(clean[pos:], c)
		if k < 0 {
			t.Fatalf("chunk %d is not a substring after offset %d: %q", i, pos, c)
		}
		if strings.TrimSpace(clean[pos:pos+k]) != "" {
			t.Fatalf("chunk %d skips content %q", i, clean[pos:pos+k])
		}
		pos += k + len(c)
	}
	want := nonSpace(clean)
	if len(chunks) == 0 {
		if n := utf8.RuneCountInString(want); n >= o.Min && utf8.RuneCountInString(strings.TrimSpace(clean)) >= o.Min {
			t.Fatalf("no chunks for %d non-blank runes (Min %d)", n, o.Min)
		}
		return
	}
	if got := nonSpace(strings.Join(chunks, "\n")); got != want {
		t.Fatalf("chunks do not cover the text:\n got %q\nwant %q", got, want)
	}
}

func runes(s string) int { return utf8.RuneCountInString(s) }

func TestSplit(t *testing.T) {
	longProse := strings.Repeat("The parser reads one line at a time and keeps state small. ", 12) // ~700 runes
	code := "```go\n" + strings.Repeat("fmt.Println(\"hello, world\") // say hello\n", 8) + "```"
	list := "- first item that is fairly long and has words\n  continued on an indented line\n" +
		"- second item, also fairly long with more words\n" +
		"* third item\n" +
		"1. numbered item one\n" +
		"2) numbered item two\n"

	tests := []struct {
		name  string
		text  string
		opts  Options
		check func(t *testing.T, chunks []string)
	}{
		{
			name: "empty",
			text: "",
			check: func(t *testing.T, c []string) {
				if c != nil {
					t.Fatalf("want nil, got %q", c)
				}
			},
		},
		{
			name: "whitespace only",
			text: " \n\n\t \r\n",
			check: func(t *testing.T, c []string) {
				if len(c) != 0 {
					t.Fatalf("want none, got %q", c)
				}
			},
		},
		{
			name: "tiny text dropped",
			text: "  OK, done.  ",
			check: func(t *testing.T, c []string) {
				if len(c) != 0 {
					t.Fatalf("want none, got %q", c)
				}
			},
		},
		{
			name: "short paragraph trimmed",
			text: "\n\n  The cache lives in ~/.cache/memtray and is safe to delete.  \n\n",
			check: func(t *testing.T, c []string) {
				want := "The cache lives in ~/.cache/memtray and is safe to delete."
				if len(c) != 1 || c[0] != want {
					t.Fatalf("got %q", c)
				}
			},
		},
		{
			name: "paragraphs packed together",
			text: "First paragraph about the store.\n\nSecond paragraph about the index.\n\nThird one.",
			check: func(t *testing.T, c []string) {
				if len(c) != 1 || !strings.Contains(c[0], "Second paragraph") || !strings.HasSuffix(c[0], "Third one.") {
					t.Fatalf("got %q", c)
				}
			},
		},
		{
			name: "paragraphs split at paragraph boundaries",
			opts: Options{Size: 80},
			text: "The daemon listens on the loopback interface only, port 7432.\n\n" +
				"Config lives in the XDG config directory as a JSON file.\n\n" +
				"Tokens are stored with mode 0600 next to the config.",
			check: func(t *testing.T, c []string) {
				want := []string{
					"The daemon listens on the loopback interface only, port 7432.",
					"Config lives in the XDG config directory as a JSON file.",
					"Tokens are stored with mode 0600 next to the config.",
				}
				if fmt.Sprint(c) != fmt.Sprint(want) {
					t.Fatalf("got %q", c)
				}
			},
		},
		{
			name: "long paragraph split at sentences, not at abbreviations, versions or file names",
			opts: Options{Size: 120},
			text: "We upgraded to v1.2.3 last week. Tools, e.g. the linter, must run before commit. " +
				"The entry point is main.go in cmd/memtray. Does it work? Yes! " +
				"Dr. Smith reviewed it with J. Doe and the U.S. team. It is fine now.",
			check: func(t *testing.T, c []string) {
				all := strings.Join(c, "|")
				for _, whole := range []string{"v1.2.3", "e.g. the linter", "main.go in", "Dr. Smith", "J. Doe", "U.S. team"} {
					if !strings.Contains(all, whole) {
						t.Errorf("%q was cut: %q", whole, c)
					}
				}
				for _, ch := range c {
					if runes(ch) > 120+DefaultMin {
						t.Errorf("chunk over Size+Min: %d runes", runes(ch))
					}
					last := ch[len(ch)-1]
					if last != '.' && last != '?' && last != '!' {
						t.Errorf("chunk does not end at a sentence: %q", ch)
					}
				}
				if len(c) < 2 {
					t.Errorf("want several chunks, got %q", c)
				}
			},
		},
		{
			name: "long paragraph of normal size",
			opts: Options{Size: 256},
			text: longProse,
			check: func(t *testing.T, c []string) {
				for _, ch := range c {
					if runes(ch) > 256 || !strings.HasSuffix(ch, "small.") {
						t.Errorf("bad chunk (%d runes): %q", runes(ch), ch)
					}
				}
			},
		},
		{
			name: "long sentence split at words",
			opts: Options{Size: 50},
			text: strings.Repeat("word ", 60) + "end",
			check: func(t *testing.T, c []string) {
				for _, ch := range c {
					if runes(ch) > 50+DefaultMin {
						t.Errorf("chunk over Size+Min: %q", ch)
					}
					for _, w := range strings.Fields(ch) {
						if w != "word" && w != "end" {
							t.Errorf("word cut: %q", w)
						}
					}
				}
			},
		},
		{
			name: "giant word cut at runes",
			opts: Options{Size: 40},
			text: "token " + strings.Repeat("ä", 100) + " tail words here",
			check: func(t *testing.T, c []string) {
				for _, ch := range c {
					if runes(ch) > 40+DefaultMin {
						t.Errorf("chunk over Size+Min: %d", runes(ch))
					}
				}
			},
		},
		{
			name: "code block kept whole",
			opts: Options{Size: 100},
			text: "Run this:\n\n" + code + "\n\nThen check the output carefully.",
			check: func(t *testing.T, c []string) {
				found := false
				for _, ch := range c {
					if strings.Contains(ch, code) {
						found = true
					}
				}
				if !found {
					t.Fatalf("code block cut: %q", c)
				}
			},
		},
		{
			name: "tiny intro joins the code block",
			opts: Options{Size: 100},
			text: "Run:\n\n" + code,
			check: func(t *testing.T, c []string) {
				if len(c) != 1 || !strings.HasPrefix(c[0], "Run:") {
					t.Fatalf("got %q", c)
				}
			},
		},
		{
			name: "blank lines inside a fence do not split it",
			opts: Options{Size: 30},
			text: "~~~\nline one of the code\n\n\nline two of the code\n~~~\n\nAfter the fence comes prose.",
			check: func(t *testing.T, c []string) {
				if !strings.HasPrefix(c[0], "~~~\nline one") || !strings.HasSuffix(c[0], "two of the code\n~~~") {
					t.Fatalf("got %q", c)
				}
			},
		},
		{
			name: "unterminated fence runs to the end",
			opts: Options{Size: 40},
			text: "Intro paragraph that is long enough.\n\n```\ncode line one\n\nstill code. Not prose!\n\nlast line",
			check: func(t *testing.T, c []string) {
				last := c[len(c)-1]
				if !strings.HasPrefix(last, "```") || !strings.HasSuffix(last, "last line") {
					t.Fatalf("got %q", c)
				}
			},
		},
		{
			name: "inline triple backticks are not a fence",
			opts: Options{Size: 60},
			text: "Use ```x``` sparingly in docs.\n\nA second paragraph of text here.\n\nAnd a third one to close it.",
			check: func(t *testing.T, c []string) {
				if len(c) < 2 {
					t.Fatalf("the text was swallowed as one fence: %q", c)
				}
			},
		},
		{
			name: "list kept whole with continuation lines",
			opts: Options{Size: 60},
			text: "Steps:\n\n" + list + "\nThat is the whole procedure, in order.",
			check: func(t *testing.T, c []string) {
				found := false
				for _, ch := range c {
					if strings.Contains(ch, strings.TrimSpace(list)) {
						found = true
					}
				}
				if !found {
					t.Fatalf("list cut: %q", c)
				}
			},
		},
		{
			name: "loose list with blank lines stays one block",
			opts: Options{Size: 40},
			text: "- alpha item with some words\n\n- beta item with some words\n\n  more about beta\n\nClosing paragraph is here, long enough.",
			check: func(t *testing.T, c []string) {
				if !strings.HasPrefix(c[0], "- alpha") || !strings.HasSuffix(c[0], "more about beta") {
					t.Fatalf("got %q", c)
				}
			},
		},
		{
			name: "giant code block split at lines",
			opts: Options{Size: 100},
			text: "```\n" + strings.Repeat("x := compute(a, b, c) // a line of code\n", 30) + "```",
			check: func(t *testing.T, c []string) {
				if len(c) < 2 {
					t.Fatalf("want pieces, got %d", len(c))
				}
				for _, ch := range c {
					if runes(ch) > 100 {
						t.Errorf("piece over Size: %d", runes(ch))
					}
					for _, line := range strings.Split(ch, "\n") {
						if line != "```" && line != "x := compute(a, b, c) // a line of code" {
							t.Errorf("line cut: %q", line)
						}
					}
				}
			},
		},
		{
			name: "code block up to MaxBlockFactor x Size kept whole",
			opts: Options{Size: 100},
			text: "```\n" + strings.Repeat("y = 1 # a short code line here\n", 12) + "```",
			check: func(t *testing.T, c []string) {
				if len(c) != 1 {
					t.Fatalf("want one chunk, got %d", len(c))
				}
			},
		},
		{
			name: "heading stays with the text it introduces",
			opts: Options{Size: 90},
			text: "Some earlier paragraph with enough words to fill space here.\n\n## Setup\n\nInstall Go 1.26 and run make to build the binary.",
			check: func(t *testing.T, c []string) {
				if len(c) != 2 || !strings.HasPrefix(c[1], "## Setup\n\nInstall") {
					t.Fatalf("got %q", c)
				}
			},
		},
		{
			name: "runes, not bytes",
			opts: Options{Size: 30},
			text: "日本語の文章です。これは二番目の文。\n\n" + strings.Repeat("🙂", 25) + "\n\nЭто третий абзац текста.",
			check: func(t *testing.T, c []string) {
				for _, ch := range c {
					if runes(ch) > 30+DefaultMin+2 {
						t.Errorf("over Size+Min in runes: %d %q", runes(ch), ch)
					}
				}
			},
		},
		{
			name: "invalid UTF-8 replaced",
			text: "valid text then \xff\xfe invalid bytes and more text",
			check: func(t *testing.T, c []string) {
				if len(c) != 1 || !strings.Contains(c[0], "\uFFFD") {
					t.Fatalf("got %q", c)
				}
			},
		},
		{
			name: "CRLF line endings",
			opts: Options{Size: 40},
			text: "First paragraph in CRLF style.\r\n\r\nSecond paragraph in CRLF style.\r\n",
			check: func(t *testing.T, c []string) {
				if len(c) != 2 || c[1] != "Second paragraph in CRLF style." {
					t.Fatalf("got %q", c)
				}
			},
		},
		{
			name: "defaults",
			text: strings.Repeat("A sentence of moderate length for the default size. ", 100),
			check: func(t *testing.T, c []string) {
				if len(c) < 2 {
					t.Fatalf("got %d chunks", len(c))
				}
				for _, ch := range c {
					if runes(ch) > DefaultSize {
						t.Errorf("over DefaultSize: %d", runes(ch))
					}
				}
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := Split(tc.text, tc.opts)
			checkInvariants(t, tc.text, tc.opts, c)
			tc.check(t, c)
		})
	}
}

// TestSplitLinear guards against quadratic behaviour on pathological input.
func TestSplitLinear(t *testing.T) {
	inputs := map[string]string{
		"dots":     strings.Repeat(". ", 200000),
		"initials": strings.Repeat("a. ", 150000),
		"headings": strings.Repeat("# h\n\n", 80000),
		"items":    strings.Repeat("-\n", 200000),
		"blanks":   "- x\n" + strings.Repeat("\n", 400000) + "y",
		"fences":   strings.Repeat("```\n", 100000),
		"oneword":  strings.Repeat("x", 400000),
		"tiny":     strings.Repeat("ok\n\n", 100000),
	}
	for name, in := range inputs {
		t.Run(name, func(t *testing.T) {
			c := Split(in, Options{Size: 64})
			checkInvariants(t, in, Options{Size: 64}, c)
		})
	}
}

func FuzzSplit(f *testing.F) {
	seeds := []string{
		"",
		"Hello world. This is a test of the chunker, e.g. sentences.",
		"```go\nfunc main() {}\n```\n\nprose after",
		"- a\n- b\n  c\n\n- d\n\ntext",
		"# Title\n\nBody text here. More body text!",
		"~~~\nunterminated",
		"日本語。テキスト！\n\n🙂🙂🙂",
		"\xff\xfe\xfd broken",
		"v1.2.3 and main.go. Next sentence? Yes.",
		strings.Repeat("word ", 50),
	}
	for _, s := range seeds {
		f.Add(s, 0, 0)
		f.Add(s, 16, 4)
	}
	for _, s := range recallSetTexts() {
		f.Add(s, 64, 8)
	}
	f.Fuzz(func(t *testing.T, text string, size, min int) {
		// Keep sizes small so that every rule fires on short inputs.
		opts := Options{Size: size % 300, Min: min % 50}
		c := Split(text, opts)
		checkInvariants(t, text, opts, c)
	})
}

func benchText() string {
	var b strings.Builder
	for i := 0; b.Len() < 256<<10; i++ {
		fmt.Fprintf(&b, "## Section %d\n\n", i)
		b.WriteString(strings.Repeat("The store keeps one record per memory, e.g. its text and vector. ", 8))
		b.WriteString("\n\n```go\nfor i := range items {\n\tprocess(items[i])\n}\n```\n\n")
		b.WriteString("- first point\n- second point\n  with continuation\n- third point\n\n")
		b.WriteString(strings.Repeat("Ünïcödé prose with v1.2 and main.go! ", 20))
		b.WriteString("\n\n")
	}
	return b.String()
}

func BenchmarkSplit(b *testing.B) {
	text := benchText()
	b.SetBytes(int64(len(text)))
	b.ReportAllocs()
	for b.Loop() {
		Split(text, Options{})
	}
}

// sharedRecallSet is the retrieval dev set in ../shared, beside the
// repository; it is not part of it.
const sharedRecallSet = "../../../shared/eval/recall-dev.json"

// recallSetTexts returns the memories of the recall dev set, as fuzz
// seeds; none when it is absent.
func recallSetTexts() []string {
	b, err := os.ReadFile(sharedRecallSet)
	if err != nil {
		return nil
	}
	var set struct {
		Memories []struct{ Text string } `json:"memories"`
	}
	if json.Unmarshal(b, &set) != nil {
		return nil
	}
	var out []string
	for _, m := range set.Memories {
		out = append(out, m.Text)
	}
	return out
}
