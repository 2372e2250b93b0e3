package eval

// Redaction evaluations: `memtray eval redact FILE.jsonl`.
//
//   - RunRedact: a file in the format of ../shared/eval/secrets-dev.jsonl,
//     one {"id", "text", "secrets"} object a line; secrets are the exact
//     substrings that must not survive (masking more of the surrounding
//     value is fine, less is a miss), an empty list marks a negative.
//     secret_recall is over secret substrings: a secret counts as found when
//     every occurrence of it in the text lies inside redacted spans.
//     false_redaction_rate is the share of negatives with any redaction.
//   - RunGitleaks: gitleaks' own rule test cases (see gitleaks.go).
//
// Reports never hold a secret: a miss or a false redaction is shown as a
// hint, the first few characters and the length.

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/memtray/memtray/backend/memory"
	"github.com/memtray/memtray/backend/redact"
)

// MaxRedactLineBytes bounds one line of a redaction file.
const MaxRedactLineBytes = 1 << 20

// RedactItem is one line of a redaction file.
type RedactItem struct {
	ID      string   `json:"id"`
	Text    string   `json:"text"`
	Secrets []string `json:"secrets"`
}

// RedactMiss is a secret that survived redaction, or survived only in part.
type RedactMiss struct {
	ID string `json:"id"`
	// Hint is the secret's first characters and its length, never the
	// whole secret.
	Hint string `json:"hint"`
}

// RedactFalse is a negative snippet that was redacted anyway.
type RedactFalse struct {
	ID string `json:"id"`
	// Redacted lists each masked span as "kind: hint".
	Redacted []string `json:"redacted"`
}

// RedactReport is the result of RunRedact.
type RedactReport struct {
	// SecretRecall is the share of secret substrings fully masked (0..1).
	SecretRecall float64 `json:"secret_recall"`
	// FalseRedactionRate is the share of negative snippets with any
	// redaction (0..1).
	FalseRedactionRate float64       `json:"false_redaction_rate"`
	Misses             []RedactMiss  `json:"misses"`
	FalseRedactions    []RedactFalse `json:"false_redactions"`

	Items, Positives, Negatives, Secrets, Found int `json:"-"`
}

// LoadRedactFile reads and validates a redaction file (gzip allowed):
// every line a JSON object with a unique id, a non-empty UTF-8 text and
// secrets that occur in the text. Errors name the line.
func LoadRedactFile(ctx context.Context, path string) ([]RedactItem, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("open redaction file: %w", err)
	}
	defer f.Close()
	r, err := maybeGunzip(f)
	if err != nil {
		return nil, fmt.Errorf("redaction file %s: %w", path, err)
	}
	items, err := readRedactItems(ctx, r)
	if err != nil {
		return nil, fmt.Errorf("redaction file %s: %w", path, err)
	}
	return items, nil
}

func readRedactItems(ctx context.Context, r io.Reader) ([]RedactItem, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), MaxRedactLineBytes)
	var items []RedactItem
	seen := map[string]int{}
	line := 0
	for sc.Scan() {
		line++
		if line%256 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		b := sc.Bytes()
		if strings.TrimSpace(string(b)) == "" {
			continue
		}
		var it RedactItem
		dec := json.NewDecoder(strings.NewReader(string(b)))
		if err := dec.Decode(&it); err != nil {
			return nil, fmt.Errorf("line %d: %w", line, err)
		}
		if dec.More() {
			return nil, fmt.Errorf("line %d: more than one JSON value", line)
		}
		if err := it.validate(); err != nil {
			return nil, fmt.Errorf("line %d: %w", line, err)
		}
		if prev, ok := seen[it.ID]; ok {
			return nil, fmt.Errorf("line %d: id %q already used on line %d", line, it.ID, prev)
		}
		seen[it.ID] = line
		items = append(items, it)
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return nil, fmt.Errorf("line %d: longer than %d bytes", line+1, MaxRedactLineBytes)
		}
		return nil, err
	}
	if len(items) == 0 {
		return nil, errors.New("no items")
	}
	return items, nil
}

func (it *RedactItem) validate() error {
	switch {
	case strings.TrimSpace(it.ID) == "":
		return errors.New("no id")
	case it.Text == "":
		return fmt.Errorf("item %q: no text", it.ID)
	case !memory.ValidUTF8(it.Text):
		return fmt.Errorf("item %q: text is not UTF-8", it.ID)
	}
	for i, s := range it.Secrets {
		if s == "" {
			return fmt.Errorf("item %q: secret %d is empty", it.ID, i)
		}
		if !strings.Contains(it.Text, s) {
			return fmt.Errorf("item %q: secret %d (%s) does not occur in the text", it.ID, i, Hint(s))
		}
	}
	return nil
}

// RunRedact redacts every snippet of the file at path and scores it.
func RunRedact(ctx context.Context, path string) (*RedactReport, error) {
	items, err := LoadRedactFile(ctx, path)
	if err != nil {
		return nil, err
	}
	return ScoreRedact(ctx, items)
}

// ScoreRedact is RunRedact on loaded items.
func ScoreRedact(ctx context.Context, items []RedactItem) (*RedactReport, error) {
	rep := &RedactReport{Misses: []RedactMiss{}, FalseRedactions: []RedactFalse{}, Items: len(items)}
	for i, it := range items {
		if i%64 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		fs := redact.Find(it.Text)
		if len(it.Secrets) == 0 {
			rep.Negatives++
			if len(fs) > 0 {
				fr := RedactFalse{ID: it.ID}
				for _, f := range fs {
					fr.Redacted = append(fr.Redacted, f.Kind+": "+Hint(it.Text[f.Start:f.End]))
				}
				rep.FalseRedactions = append(rep.FalseRedactions, fr)
			}
			continue
		}
		rep.Positives++
		for _, sec := range it.Secrets {
			rep.Secrets++
			if Covered(it.Text, sec, fs) {
				rep.Found++
			} else {
				rep.Misses = append(rep.Misses, RedactMiss{ID: it.ID, Hint: Hint(sec)})
			}
		}
	}
	if rep.Secrets > 0 {
		rep.SecretRecall = float64(rep.Found) / float64(rep.Secrets)
	}
	if rep.Negatives > 0 {
		rep.FalseRedactionRate = float64(len(rep.FalseRedactions)) / float64(rep.Negatives)
	}
	return rep, nil
}

// Covered reports whether every occurrence of secret in text lies inside
// the union of the findings' spans (findings sorted and disjoint, as
// redact.Find returns them).
func Covered(text, secret string, fs []redact.Finding) bool {
	if secret == "" {
		return true
	}
	found := false
	for off := 0; off <= len(text); {
		i := strings.Index(text[off:], secret)
		if i < 0 {
			break
		}
		found = true
		a := off + i
		if !spanCovered(a, a+len(secret), fs) {
			return false
		}
		off = a + 1
	}
	return found
}

func spanCovered(a, b int, fs []redact.Finding) bool {
	k := sort.Search(len(fs), func(i int) bool { return fs[i].End > a })
	for ; k < len(fs) && a < b; k++ {
		if fs[k].Start > a {
			return false
		}
		a = fs[k].End
	}
	return a >= b
}

// Hint shows a secret without revealing it: its first characters (at most
// 4, fewer for short secrets) and its length in bytes.
func Hint(s string) string {
	n := min(4, len(s)/5)
	i, runes := 0, 0
	for i < len(s) && runes < n {
		_, w := utf8.DecodeRuneInString(s[i:])
		i += w
		runes++
	}
	if i == 0 {
		return fmt.Sprintf("… (%d bytes)", len(s))
	}
	return fmt.Sprintf("%q… (%d bytes)", s[:i], len(s))
}

// WriteTable prints the two rates, then every miss and false redaction.
func (r *RedactReport) WriteTable(w io.Writer) error {
	ew := &errWriter{w: w}
	ew.printf("redaction: %d snippets (%d with secrets, %d negatives), %d secrets\n\n", r.Items, r.Positives, r.Negatives, r.Secrets)
	ew.printf("%-22s %6.3f  (%d/%d secrets)\n", "secret recall", r.SecretRecall, r.Found, r.Secrets)
	ew.printf("%-22s %6.3f  (%d/%d negatives)\n", "false redaction rate", r.FalseRedactionRate, len(r.FalseRedactions), r.Negatives)
	if len(r.Misses) > 0 {
		ew.printf("\nmisses:\n")
		for _, m := range r.Misses {
			ew.printf("  %-12s %s\n", m.ID, m.Hint)
		}
	}
	if len(r.FalseRedactions) > 0 {
		ew.printf("\nfalse redactions:\n")
		for _, f := range r.FalseRedactions {
			ew.printf("  %-12s %s\n", f.ID, strings.Join(f.Redacted, "; "))
		}
	}
	return ew.err
}
