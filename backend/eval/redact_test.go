package eval

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memtray/memtray/backend/redact"
)

func TestRunRedactTiny(t *testing.T) {
	rep, err := RunRedact(context.Background(), "testdata/secrets-tiny.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	if rep.Items != 8 || rep.Positives != 5 || rep.Negatives != 3 || rep.Secrets != 6 || rep.Found != 5 {
		t.Fatalf("counts: %+v", rep)
	}
	if rep.SecretRecall != 5.0/6 || rep.FalseRedactionRate != 1.0/3 {
		t.Fatalf("recall %v, false rate %v", rep.SecretRecall, rep.FalseRedactionRate)
	}
	if len(rep.Misses) != 1 || rep.Misses[0].ID != "t-miss" {
		t.Fatalf("misses: %+v", rep.Misses)
	}
	if len(rep.FalseRedactions) != 1 || rep.FalseRedactions[0].ID != "n-false" {
		t.Fatalf("false redactions: %+v", rep.FalseRedactions)
	}

	var b strings.Builder
	if err := rep.WriteTable(&b); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{"secret recall", "0.833", "false redaction rate", "0.333", "t-miss", "n-false", "password: "} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	js, err := json.Marshal(rep)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(js, &m); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"secret_recall", "false_redaction_rate", "misses", "false_redactions"} {
		if _, ok := m[k]; !ok {
			t.Errorf("JSON lacks %q: %s", k, js)
		}
	}
	// reports never carry a secret: neither the misses nor the false
	// redactions, in the table or the JSON
	items, err := LoadRedactFile(context.Background(), "testdata/secrets-tiny.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	for _, it := range items {
		for _, s := range append(it.Secrets, "hunter2x9") {
			if strings.Contains(out, s) || strings.Contains(string(js), s) {
				t.Errorf("report shows secret %q", s)
			}
		}
	}
}

func TestRedactReportEmptyListsAreArrays(t *testing.T) {
	rep, err := ScoreRedact(context.Background(), []RedactItem{{ID: "a", Text: "nothing here"}})
	if err != nil {
		t.Fatal(err)
	}
	js, _ := json.Marshal(rep)
	if !strings.Contains(string(js), `"misses":[]`) || !strings.Contains(string(js), `"false_redactions":[]`) {
		t.Fatalf("got %s", js)
	}
}

func TestLoadRedactFileErrors(t *testing.T) {
	dir := t.TempDir()
	long := `{"id": "x", "text": "` + strings.Repeat("a", MaxRedactLineBytes) + `", "secrets": []}`
	cases := map[string]struct{ body, want string }{
		"malformed": {`{"id": "a", "text": "x", "secrets": []}` + "\n" + `{"id": "b", "text": }`, "line 2"},
		"no id":     {`{"text": "x", "secrets": []}`, "line 1: no id"},
		"no text":   {`{"id": "a", "secrets": []}`, "line 1"},
		"secret not in text": {`{"id": "a", "text": "x", "secrets": []}` + "\n\n" +
			`{"id": "b", "text": "abc", "secrets": ["zzzzzzzzzz"]}`, "line 3"},
		"empty secret":  {`{"id": "a", "text": "abc", "secrets": [""]}`, "line 1"},
		"duplicate id":  {`{"id": "a", "text": "x", "secrets": []}` + "\n" + `{"id": "a", "text": "y", "secrets": []}`, "line 2"},
		"two values":    {`{"id": "a", "text": "x", "secrets": []} {}`, "line 1"},
		"too long line": {`{"id": "a", "text": "x", "secrets": []}` + "\n" + long, "line 2"},
		"empty file":    {"\n\n", "no items"},
		"not an object": {`["a", "b"]`, "line 1"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			p := filepath.Join(dir, strings.ReplaceAll(name, " ", "_")+".jsonl")
			if err := os.WriteFile(p, []byte(c.body), 0o600); err != nil {
				t.Fatal(err)
			}
			_, err := RunRedact(context.Background(), p)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err = %v, want it to mention %q", err, c.want)
			}
			if strings.Contains(name, "secret") && err != nil && strings.Contains(err.Error(), "zzzzzzzzzz") {
				t.Fatalf("error shows the secret: %v", err)
			}
		})
	}
	if _, err := RunRedact(context.Background(), filepath.Join(dir, "absent.jsonl")); err == nil {
		t.Fatal("no error for a missing file")
	}
}

func TestHintHidesSecret(t *testing.T) {
	for _, s := range []string{"Qx7-vT93kLmZ2pWd", "4711", "ab", "пароль-секретный-123"} {
		h := Hint(s)
		if strings.Contains(h, s) {
			t.Errorf("Hint(%q) = %q shows it", s, h)
		}
		if !strings.Contains(h, "bytes") {
			t.Errorf("Hint(%q) = %q lacks the length", s, h)
		}
	}
	if h := Hint("Qx7-vT93kLmZ2pWd"); !strings.HasPrefix(h, `"Qx7"`) {
		t.Errorf("Hint = %q", h)
	}
}

func TestCovered(t *testing.T) {
	text := "a=SECRET1 b=SECRET1 c=SECRET2"
	fs := []redact.Finding{{Kind: "x", Start: 2, End: 9}, {Kind: "x", Start: 22, End: 25}, {Kind: "x", Start: 25, End: 29}}
	if Covered(text, "SECRET1", fs) {
		t.Error("the second SECRET1 is not masked")
	}
	if !Covered(text, "SECRET2", fs) {
		t.Error("SECRET2 is masked by two adjacent findings")
	}
	if Covered(text, "ECRET1 b", fs) {
		t.Error("partly masked counted as masked")
	}
}

func TestRunGitleaksTiny(t *testing.T) {
	rep, err := RunGitleaks(context.Background(), "testdata/gitleaks-tiny")
	if err != nil {
		t.Fatal(err)
	}
	if rep.Regexes != 2 {
		t.Errorf("regexes = %d, want 2 (demo-file has none)", rep.Regexes)
	}
	if rep.Unscored != 1 {
		t.Errorf("unscored = %d", rep.Unscored)
	}
	if o := rep.Overall; o.Rules != 3 || o.TP != 3 || o.TPFound != 2 || o.FP != 2 || o.FPRedacted != 0 {
		t.Errorf("overall = %+v", o)
	}
	if rep.Covered.Rules != 0 {
		t.Errorf("covered = %+v", rep.Covered)
	}
	byRule := map[string]GitleaksRule{}
	for _, r := range rep.Rules {
		byRule[r.Rule] = r
	}
	if r := byRule["demo-password"]; r.TP != 2 || r.TPFound != 2 || r.Recall != 1 || r.FP != 1 || r.FPRedacted != 0 {
		t.Errorf("demo-password = %+v", r)
	}
	if r := byRule["demo-token"]; r.TP != 1 || r.TPFound != 0 {
		t.Errorf("demo-token = %+v", r)
	}
	var b strings.Builder
	if err := rep.WriteTable(&b); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "demo-password") || !strings.Contains(b.String(), "overall (3 rules)") {
		t.Errorf("table:\n%s", b.String())
	}
}

func TestRunGitleaksErrors(t *testing.T) {
	if _, err := RunGitleaks(context.Background(), t.TempDir()); err == nil {
		t.Fatal("no error for a directory without cases")
	}
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "x_rule_cases.jsonl"), []byte(`{"rule_id": "a", "label": "tp", "text": "x"}`+"\n"+`{"rule_id": "a", "label": "maybe"}`), 0o600)
	if _, err := RunGitleaks(context.Background(), dir); err == nil || !strings.Contains(err.Error(), "line 2") {
		t.Fatalf("err = %v", err)
	}
}

func TestParseGitleaksRegexes(t *testing.T) {
	toml := `
[allowlist]
regexes = ['''^ignored$''']

[[rules]]
id = "one"
regex = '''(?i)token=([a-z]+)'''
secretGroup = 1

[[rules.allowlists]]
regexes = ['''nope''']

[[rules]]
id = "bad"
regex = '''(?<=lookbehind)x'''

[[rules]]
id = "two"
regex = '''x+'''
`
	got := parseGitleaksRegexes(toml)
	if len(got) != 2 || got["one"].group != 1 || got["two"].re == nil {
		t.Fatalf("got %+v", got)
	}
	if _, ok := got["bad"]; ok {
		t.Fatal("an invalid regex was kept")
	}
}

func TestCredential(t *testing.T) {
	text := `curl --user "john:pQ9wTxu4Fg" x`
	a := strings.Index(text, "john")
	b := strings.Index(text, `" x`)
	ca, cb := credential(text, a, b)
	if text[ca:cb] != "pQ9wTxu4Fg" {
		t.Fatalf("credential = %q", text[ca:cb])
	}
	u := "http://hooks.example.test/services/T0/B0/abc"
	ca, cb = credential(u, 0, len(u))
	if u[ca:cb] != "hooks.example.test/services/T0/B0/abc" {
		t.Fatalf("credential = %q", u[ca:cb])
	}
}

// TestRunCredSweeperTiny builds a tiny CredSweeper-shaped tree: one sample
// with two expected findings (one masked, one not), one binary sample, one
// negative sample.
func TestRunCredSweeperTiny(t *testing.T) {
	dir := t.TempDir()
	samples := filepath.Join(dir, "tests", "samples")
	data := filepath.Join(dir, "tests", "data")
	for _, d := range []string{samples, data} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write := func(name, body string) {
		if err := os.WriteFile(filepath.Join(samples, name), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("creds.env", "DB_PASSWORD=Qx7-vT93kLmZ2pWd\nnote: door code 4711\n")
	write("image.bin", "\x00\x01binary")
	write("plain.txt", "nothing to see here\n")
	out := `[
 {"rule": "Password", "line_data_list": [{"path": "./tests/samples/creds.env", "line_num": 1, "value": "Qx7-vT93kLmZ2pWd"}]},
 {"rule": "Code", "line_data_list": [{"path": "./tests/samples/creds.env", "line_num": 2, "value": "4711"}]},
 {"rule": "Binary", "line_data_list": [{"path": "./tests/samples/image.bin", "line_num": 1, "value": "binary"}]}
]`
	if err := os.WriteFile(filepath.Join(data, "output.json"), []byte(out), 0o600); err != nil {
		t.Fatal(err)
	}
	rep, err := runCredSweeper(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Samples != 3 || rep.TextSamples != 2 || rep.Expected != 3 || rep.Scored != 2 || rep.Found != 1 || rep.Recall != 0.5 {
		t.Fatalf("report: %+v", rep)
	}
	if rep.Negatives != 1 || rep.NegativesRedacted != 0 {
		t.Fatalf("negatives: %+v", rep)
	}
	if len(rep.Misses) != 1 || rep.Misses[0].Rule != "Code" || rep.Misses[0].Line != 2 {
		t.Fatalf("misses: %+v", rep.Misses)
	}
	var b strings.Builder
	if err := rep.WriteTable(&b); err != nil {
		t.Fatal(err)
	}
	js, _ := json.Marshal(rep)
	for _, s := range []string{b.String(), string(js)} {
		if strings.Contains(s, "Qx7-vT93kLmZ2pWd") || strings.Contains(s, "4711") {
			t.Fatalf("report shows a secret:\n%s", s)
		}
	}
	if _, err := runCredSweeper(context.Background(), t.TempDir()); err == nil {
		t.Fatal("no error without output.json")
	}
}

func TestValueOffset(t *testing.T) {
	text := "a=x\nb=secret\nc=secret\n"
	if got := valueOffset(text, 3, "secret"); got != strings.LastIndex(text, "secret") {
		t.Fatalf("line 3: %d", got)
	}
	if got := valueOffset(text, 9, "secret"); got != strings.Index(text, "secret") {
		t.Fatalf("past the end: %d", got)
	}
	if got := valueOffset(text, 1, "zzz"); got != -1 {
		t.Fatalf("absent: %d", got)
	}
}
