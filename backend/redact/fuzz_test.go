package redact

import (
	"bufio"
	"encoding/json"
	"os"
	"strings"
	"testing"
	"unicode/utf8"
)

// sharedSecrets is the labelled redaction dev set in ../shared, beside the
// repository; it is not part of it.
const sharedSecrets = "../../../shared/eval/secrets-dev.jsonl"

// evalTexts returns the "text" of every line of a JSONL eval set, as fuzz
// seeds; none when the file is absent.
func evalTexts(path string) []string {
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var l struct{ Text string }
		if json.Unmarshal(sc.Bytes(), &l) == nil && l.Text != "" {
			out = append(out, l.Text)
		}
	}
	return out
}

// FuzzRedact checks, on any input: no panic; findings ordered, disjoint,
// inside the input and on rune boundaries; the output is the input with
// each finding replaced; valid UTF-8 in, valid UTF-8 out; and redacting
// the output again changes nothing.
func FuzzRedact(f *testing.F) {
	for _, c := range positives() {
		f.Add(c.text)
	}
	for _, c := range negatives {
		f.Add(c.text)
	}
	f.Add("password=\"\\\"\"")
	f.Add("-----BEGIN PRIVATE KEY-----")
	f.Add("kind: Secret\ndata:\n  a: |\n    b\n")
	f.Add("Cookie: a=b;;=;sessionid=" + strings.Repeat("z9", 8))
	for _, s := range evalTexts(sharedSecrets) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out, fs := Redact(s)
		last := 0
		var b strings.Builder
		for _, x := range fs {
			if x.Start < last || x.End <= x.Start || x.End > len(s) {
				t.Fatalf("bad finding %+v after %d (len %d)", x, last, len(s))
			}
			if utf8.ValidString(s) && (!utf8.RuneStart(s[x.Start]) || (x.End < len(s) && !utf8.RuneStart(s[x.End]))) {
				t.Fatalf("finding %+v splits a rune", x)
			}
			b.WriteString(s[last:x.Start])
			b.WriteString(Replacement(x.Kind))
			last = x.End
		}
		b.WriteString(s[last:])
		if b.String() != out {
			t.Fatalf("output is not the input with the findings replaced")
		}
		if utf8.ValidString(s) && !utf8.ValidString(out) {
			t.Fatalf("invalid UTF-8 out of valid input")
		}
		if again, fs2 := Redact(out); again != out {
			t.Fatalf("not idempotent: second pass found %v in %q", fs2, out)
		}
		if Contains(s) != (len(fs) > 0) {
			t.Fatalf("Contains disagrees with Redact")
		}
	})
}
