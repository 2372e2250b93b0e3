package memory

import (
	"slices"
	"strings"
	"testing"
)

// TestNameSpans: the names a text writes by their form, each as written
// (a flag without the character before it); prose with dashes, dots,
// parentheses and numbers writes none.
func TestNameSpans(t *testing.T) {
	cases := []struct {
		text string
		want []string // sorted
	}{
		{"what does --firmware do?", []string{"--firmware"}},
		{"run it with -n", []string{"-n"}},
		{"files in assets/ and docs/.", []string{"assets/", "docs/"}},
		{"now uses abs(self._value)", []string{"abs(self._value)", "self._value"}},
		{"then os.path.join(a, b) runs", []string{"os.path.join", "os.path.join(a, b)"}},
		{"export $GOFLAGS", []string{"$GOFLAGS"}},
		{"Python 3.12 on :8080 fixes #1234", []string{"1234", "3.12", "8080"}},
		{"a well-known e-mail at -5 degrees, the file(s) and match(es), e.g. in the U.S. The end.", nil},
		{"the 10 largest files", nil},
		{"the row/col fields and notes/history files", nil},
		{"see src/app/page.tsx", []string{"src/app/page.tsx"}},
		{"what does “--firmware” do in «assets/»?", []string{"--firmware", "assets/"}},
		{"Python «3.12» on “:8080” fixes ‘#1234’", []string{"1234", "3.12", "8080"}},
	}
	for _, c := range cases {
		var got []string
		for _, sp := range NameSpans(c.text) {
			got = append(got, c.text[sp[0]:sp[1]])
		}
		slices.Sort(got)
		got = slices.Compact(got)
		if !slices.Equal(got, c.want) {
			t.Errorf("NameSpans(%q) = %q, want %q", c.text, got, c.want)
		}
	}
	// A URL ends before the mark that closes what holds it, unless it
	// opened inside the URL.
	text := "(see https://example.com/a) and “https://example.org/w/Foo_(bar)”"
	if got, want := URLToken.FindAllString(text, -1), []string{"https://example.com/a", "https://example.org/w/Foo_(bar)"}; !slices.Equal(got, want) {
		t.Errorf("URLToken in %q = %q, want %q", text, got, want)
	}
}

// TestLoadBearingNameForms: a restatement that changes a called or dotted
// name outside backticks, a short flag, a folder, an environment variable
// or an issue number names something the first statement lacks, so dedup
// updates rather than skips it and the steward does not merge it away;
// with the name forms off (loadBearingNames) it named nothing.
func TestLoadBearingNameForms(t *testing.T) {
	cases := []struct{ text, want string }{
		{"The getter now uses abs(self._value).", "abs(self._value)"},
		{"It calls os.path.join before writing.", "os.path.join"},
		{"Run the linter with -q first.", "-q"},
		{"Generated images go to assets/ only.", "assets/"},
		{"The build reads $GOFLAGS.", "$GOFLAGS"},
		{"That was fixed in #7.", "7"},
		{"Run the linter with ‘-q’ first.", "-q"},
		{"Generated images go to «assets/» only.", "assets/"},
	}
	for _, c := range cases {
		if got := LoadBearing(c.text); !got[c.want] || !NamesLoadBearing(c.text) {
			t.Errorf("LoadBearing(%q) = %v, want %q among them", c.text, got, c.want)
		}
		loadBearingNames = false
		if got := LoadBearing(c.text); got[c.want] {
			t.Errorf("name forms off: LoadBearing(%q) = %v, has %q", c.text, got, c.want)
		}
		loadBearingNames = true
	}
	for _, text := range []string{"Each file(s) is read once.", "It works, e.g. in the U.S. as well."} {
		if got := LoadBearing(text); len(got) > 0 || NamesLoadBearing(text) {
			t.Errorf("LoadBearing(%q) = %v, want none", text, got)
		}
	}
}

// FuzzNameSpans: every name span lies within the text, and
// NamesLoadBearing says what a non-empty LoadBearing says.
func FuzzNameSpans(f *testing.F) {
	for _, s := range []string{"abs(self._value) file(s)", "--dry-run -n assets/ $X #1 :80 v1.2", "`a b` e.g. U.S.", "x(", "(s)", "“--x=f(a)” «assets/» (https://x.dev/a)"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		for _, sp := range NameSpans(text) {
			if sp[0] < 0 || sp[0] > sp[1] || sp[1] > len(text) {
				t.Fatalf("span %v of %q", sp, text)
			}
		}
		if got, want := NamesLoadBearing(text), len(LoadBearing(text)) > 0; got != want {
			t.Fatalf("NamesLoadBearing(%q) = %v, LoadBearing %v", text, got, LoadBearing(text))
		}
	})
}

// TestIsPathName: two words joined by one slash are no path; a leading
// '/', '.' or '~', a trailing '/', a second '/' or a file name after the
// slash make one.
func TestIsPathName(t *testing.T) {
	for tok, want := range map[string]bool{
		"and/or": false, "row/col": false, "notes/history": false, "src/app": false,
		"/span": true, "./out": true, "~/x": true, "assets/": true, "cmd/tiler/main.go": true, "docs/index.md": true, "main.go": true,
	} {
		if got := IsPathName(tok); got != want {
			t.Errorf("IsPathName(%q) = %v, want %v", tok, got, want)
		}
	}
}

func TestNameTerms(t *testing.T) {
	for _, c := range []struct {
		text string
		want []string
	}{
		{"what does --firmware do?", []string{"--firmware"}},
		{"run `make -n` with --FIRMWARE=x and --firmware", []string{"-n", "--firmware"}},
		{"the firmware mapping notes", nil},
		{"e-mail me about -5 degrees", nil},
		{"files go to ./out and assets/ (see cmd/opk/main.go)", []string{"./out", "assets/", "cmd/opk/main.go"}},
		{"and/or row/col", nil},
		{"call slice() or os.path.join(a, b); file(s)", []string{"slice()", "os.path.join()"}},
		{"set $GOFLAGS and ${HOME}", []string{"$goflags", "$home"}},
		{"issue #1234 on :8080, ticket ABC-123", []string{"#1234", ":8080", "abc-123"}},
		{"see https://example.com/a/b#12 for --help", []string{"--help"}},
		{"version 1.22 of example.com", nil},
	} {
		if got := NameTerms(c.text); !slices.Equal(got, c.want) {
			t.Errorf("NameTerms(%q) = %q, want %q", c.text, got, c.want)
		}
	}
}

// TestNameTermsInPunctuation: a name written inside punctuation marks
// that open and close it, of any script (typographic quotes, guillemets,
// brackets, CJK corner brackets), is the name written without them, each
// form; its span ends before the closing mark. A dash after a closing
// bracket, or an unspaced em dash before a word, is no flag.
func TestNameTermsInPunctuation(t *testing.T) {
	for _, c := range []struct {
		text string
		want []string // the terms, then the text of each span
	}{
		{"pass “--export-gcode” to it", []string{"--export-gcode", "--export-gcode"}},
		{"the ‘-a’ flag", []string{"-a", "-a"}},
		{"«--verbose» et »-q«", []string{"--verbose", "-q", "--verbose", "-q"}},
		{"„--dry-run“ und ”-n”", []string{"--dry-run", "-n", "--dry-run", "-n"}},
		{"「--flag」と(--other)、[-x]、{--y}", []string{"--flag", "--other", "-x", "--y", "--flag", "--other", "-x", "--y"}},
		{"with “--out=build/x” set", []string{"--out", "--out=build/x"}},
		{"with “--out=f(a)” set", []string{"--out", "f()", "--out=f(a)", "f(a)"}},
		{"images in “assets/”, «docs/» and (./out/).", []string{"assets/", "docs/", "./out/", "./out", "assets/", "docs/", "./out/", "./out"}},
		{"call “os.path.join(a, b)”", []string{"os.path.join()", "os.path.join(a, b)"}},
		{"set “$GOFLAGS” and ‘${HOME}’", []string{"$goflags", "$home", "$GOFLAGS", "${HOME}"}},
		{"see “#1234” on «:8080»", []string{"#1234", ":8080", "#1234", ":8080"}},
		{"f(x)-y and [a]-b, the fix—rebuild—worked", []string{"f()", "f(x)"}},
	} {
		spans := NameTermSpans(c.text)
		var got, written []string
		for _, sp := range spans {
			got = append(got, sp.Term)
			written = append(written, c.text[sp.Start:sp.End])
		}
		got = append(got, written...)
		if !slices.Equal(got, c.want) {
			t.Errorf("NameTerms(%q) = %q, want %q", c.text, got, c.want)
		}
	}
}

// FuzzNameTermSpans: every span NameTermSpans gives lies within the
// text, in the order written, and writes its term (a flag's term before
// its value, a call's name before its arguments, a variable without its
// braces), lowercased.
func FuzzNameTermSpans(f *testing.F) {
	for _, s := range []string{"“--export-gcode” ‘-a’ «--x=f(a)»", "(./out/) “assets/” $X ${Y} #1 :80 ABC-1", "os.path.join(a, b) https://x.dev/(a) --y", "「--z」 f(x)-y"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		prev := 0
		for _, sp := range NameTermSpans(text) {
			if sp.Start < prev || sp.Start > sp.End || sp.End > len(text) || sp.Term == "" {
				t.Fatalf("span %+v of %q", sp, text)
			}
			prev = sp.Start
			w := strings.ToLower(text[sp.Start:sp.End])
			term := strings.TrimSuffix(sp.Term, "()")
			if !strings.HasPrefix(w, term) && !strings.HasPrefix(strings.Trim(w, "${}"), strings.TrimPrefix(term, "$")) {
				t.Fatalf("span %+v writes %q of %q", sp, w, text)
			}
		}
	})
}
