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
//   - RunGitleaks: gitleaks' own rule test cases, recall per gitleaks rule
//     (see RunGitleaks below).
//   - runCredSweeper (run by the tests, not a command): CredSweeper's
//     regression samples and its expected findings (see runCredSweeper
//     below).
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
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
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

// RunGitleaks scores the redactor on gitleaks' own rule test cases: the
// directory holds gitleaks_*_rule_cases.jsonl (one {"rule_id", "label",
// "text", "path"} object a line; label "tp" = the rule must fire, "fp" =
// it must not) and, optionally, gitleaks.toml with the rules' regexes.
//
// A tp row counts as found when the credential inside the secret gitleaks
// would report (the rule's regex on the text, its secretGroup or first
// non-empty group) is fully inside redacted spans. Some rules' secret
// groups span more than the credential (curl-auth-user takes user:password,
// kubernetes-secret-yaml the whole data: block, slack-webhook-url the whole
// URL), so the credential is the longest run of the secret between
// separators (blanks, quotes, brackets, '=', ':', ',', ';', '|', '@', '&',
// '\\'; the last one on a tie). The strict count, also reported, needs the
// whole secret masked. When the regex is unavailable or does not match, any
// redaction of the row counts. Rows without text (rules on file paths such
// as pkcs12-file) are not scored. A fp row counts as a false redaction when
// anything in it is redacted; this is an upper bound, since gitleaks' fp
// label only says that one rule must not fire and some fp rows hold
// strings other rules, and ours, rightly mask.
//
// GitleaksKinds maps the gitleaks rules we cover with a specific pattern
// (or a dedicated generic one) to our kinds; the report gives recall and
// false redactions per rule, over the covered rules and over all rules.

// GitleaksKinds maps gitleaks rule ids to the kind of our rule that covers
// them. Rules not listed are left to the generic assignment rule.
var GitleaksKinds = func() map[string]string {
	m := map[string]string{
		"aws-access-token":                      "aws-access-key",
		"github-pat":                            "github-token",
		"github-oauth":                          "github-token",
		"github-app-token":                      "github-token",
		"github-refresh-token":                  "github-token",
		"github-fine-grained-pat":               "github-token",
		"gitlab-session-cookie":                 "session",
		"slack-webhook-url":                     "slack-webhook",
		"microsoft-teams-webhook":               "webhook",
		"stripe-access-token":                   "stripe-key",
		"openai-api-key":                        "openai-key",
		"anthropic-api-key":                     "anthropic-key",
		"anthropic-admin-api-key":               "anthropic-key",
		"gcp-api-key":                           "google-api-key",
		"sendgrid-api-token":                    "sendgrid-key",
		"twilio-api-key":                        "twilio-key",
		"npm-access-token":                      "npm-token",
		"jwt":                                   "jwt",
		"jwt-base64":                            "jwt",
		"private-key":                           "private-key",
		"age-secret-key":                        "age-key",
		"kubernetes-secret-yaml":                "k8s-secret",
		"curl-auth-header":                      "auth-header",
		"curl-auth-user":                        "basic-auth",
		"sidekiq-sensitive-url":                 "basic-auth",
		"azure-ad-client-secret":                "azure-key",
		"generic-api-key":                       "secret",
		"hashicorp-tf-password":                 "password",
		"nuget-config-password":                 "password",
		"aws-amazon-bedrock-api-key-long-lived": "api-token",
	}
	for _, id := range []string{"pat", "pat-routable", "ptt", "rrt", "runner-authentication-token",
		"runner-authentication-token-routable", "cicd-job-token", "deploy-token", "feature-flag-client-token",
		"feed-token", "incoming-mail-token", "kubernetes-agent-token", "oauth-app-secret", "scim-token"} {
		m["gitlab-"+id] = "gitlab-token"
	}
	for _, id := range []string{"app-token", "bot-token", "config-access-token", "config-refresh-token",
		"legacy-bot-token", "legacy-token", "legacy-workspace-token", "user-token"} {
		m["slack-"+id] = "slack-token"
	}
	for _, id := range []string{"1password-secret-key", "1password-service-account-token",
		"digitalocean-access-token", "digitalocean-pat", "digitalocean-refresh-token", "pypi-upload-token",
		"vault-batch-token", "hashicorp-tf-api-token", "doppler-api-token", "linear-api-key",
		"sentry-org-token", "sentry-user-token", "grafana-api-key", "grafana-cloud-api-token",
		"grafana-service-account-token", "databricks-api-token", "postman-api-token",
		"new-relic-user-api-key", "new-relic-browser-api-token", "new-relic-insert-key",
		"mailgun-private-api-token", "mailgun-pub-key", "mailchimp-api-key", "heroku-api-key-v2",
		"clojars-api-token", "rubygems-api-token", "planetscale-api-token", "planetscale-oauth-token",
		"planetscale-password", "sendinblue-api-token", "flutterwave-public-key", "flutterwave-secret-key",
		"flutterwave-encryption-key", "telegram-bot-api-token", "dynatrace-api-token", "notion-api-token",
		"easypost-api-token", "easypost-test-api-token", "typeform-api-token", "openshift-user-token",
		"flyio-access-token", "square-access-token", "facebook-page-access-token", "twitter-bearer-token",
		"artifactory-api-key", "artifactory-reference-token", "scalingo-api-token", "harness-api-key",
		"defined-networking-api-token", "duffel-api-token", "frameio-api-token", "infracost-api-token",
		"intra42-client-secret", "pulumi-api-token", "prefect-api-token", "readme-api-token",
		"settlemint-application-access-token", "settlemint-personal-access-token",
		"settlemint-service-access-token", "shippo-api-token", "shopify-access-token",
		"shopify-custom-access-token", "shopify-private-app-access-token", "shopify-shared-secret",
		"yandex-api-key", "yandex-aws-access-token", "yandex-access-token", "sourcegraph-access-token",
		"cloudflare-origin-ca-key", "huggingface-access-token", "huggingface-organization-api-token",
		"perplexity-api-key", "gocardless-api-token", "lob-api-key", "lob-pub-api-key",
		"authress-service-client-access-key"} {
		m[id] = "api-token"
	}
	return m
}()

// GitleaksRule is one gitleaks rule's results.
type GitleaksRule struct {
	Rule string `json:"rule"`
	// Kind is our kind that covers the rule ("" = left to the generic rule).
	Kind       string  `json:"kind,omitempty"`
	TP         int     `json:"tp"`
	TPFound    int     `json:"tp_found"`
	Recall     float64 `json:"recall"`
	TPStrict   int     `json:"tp_found_strict"`
	FP         int     `json:"fp"`
	FPRedacted int     `json:"fp_redacted"`
	FPRate     float64 `json:"fp_rate"`
	// Unscored counts tp rows without text.
	Unscored int `json:"unscored,omitempty"`
}

// GitleaksTotals aggregates a set of rules.
type GitleaksTotals struct {
	Rules        int     `json:"rules"`
	TP           int     `json:"tp"`
	TPFound      int     `json:"tp_found"`
	Recall       float64 `json:"recall"`
	TPStrict     int     `json:"tp_found_strict"`
	RecallStrict float64 `json:"recall_strict"`
	FP           int     `json:"fp"`
	FPRedacted   int     `json:"fp_redacted"`
	FPRate       float64 `json:"fp_rate"`
}

// GitleaksReport is the result of RunGitleaks.
type GitleaksReport struct {
	// Covered aggregates the rules in GitleaksKinds; Overall every rule.
	Covered GitleaksTotals `json:"covered"`
	Overall GitleaksTotals `json:"overall"`
	Rules   []GitleaksRule `json:"rules"`
	// Regexes counts the gitleaks rules whose regex compiled (the others
	// fall back to "any redaction").
	Regexes  int `json:"regexes"`
	Unscored int `json:"unscored"`
}

// gitleaksCase is one line of the rule cases file.
type gitleaksCase struct {
	RuleID string `json:"rule_id"`
	Label  string `json:"label"`
	Text   string `json:"text"`
	Path   string `json:"path"`
}

type gitleaksRegex struct {
	re    *regexp.Regexp
	group int
}

// RunGitleaks scores the redactor on the gitleaks rule cases in dir.
func RunGitleaks(ctx context.Context, dir string) (*GitleaksReport, error) {
	matches, err := filepath.Glob(filepath.Join(dir, "*rule_cases.jsonl"))
	if err != nil {
		return nil, err
	}
	if len(matches) == 0 {
		return nil, fmt.Errorf("gitleaks: no *rule_cases.jsonl in %s", dir)
	}
	sort.Strings(matches)
	cases, err := loadGitleaksCases(ctx, matches[len(matches)-1])
	if err != nil {
		return nil, err
	}
	regexes := map[string]gitleaksRegex{}
	if data, err := os.ReadFile(filepath.Join(dir, "gitleaks.toml")); err == nil {
		regexes = parseGitleaksRegexes(string(data))
	} else if !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("gitleaks: %w", err)
	}
	byRule := map[string]*GitleaksRule{}
	rep := &GitleaksReport{Regexes: len(regexes)}
	for i, c := range cases {
		if i%256 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		r := byRule[c.RuleID]
		if r == nil {
			r = &GitleaksRule{Rule: c.RuleID, Kind: GitleaksKinds[c.RuleID]}
			byRule[c.RuleID] = r
		}
		fs := redact.Find(c.Text)
		switch c.Label {
		case "tp":
			if c.Text == "" {
				r.Unscored++
				rep.Unscored++
				continue
			}
			r.TP++
			found, strict := gitleaksFound(c.Text, regexes[c.RuleID], fs)
			if found {
				r.TPFound++
			}
			if strict {
				r.TPStrict++
			}
		case "fp":
			r.FP++
			if len(fs) > 0 {
				r.FPRedacted++
			}
		}
	}
	for _, r := range byRule {
		if r.TP > 0 {
			r.Recall = float64(r.TPFound) / float64(r.TP)
		}
		if r.FP > 0 {
			r.FPRate = float64(r.FPRedacted) / float64(r.FP)
		}
		rep.Overall.add(r)
		if r.Kind != "" {
			rep.Covered.add(r)
		}
		rep.Rules = append(rep.Rules, *r)
	}
	sort.Slice(rep.Rules, func(i, j int) bool { return rep.Rules[i].Rule < rep.Rules[j].Rule })
	rep.Overall.finish()
	rep.Covered.finish()
	return rep, nil
}

func (t *GitleaksTotals) add(r *GitleaksRule) {
	t.Rules++
	t.TP += r.TP
	t.TPFound += r.TPFound
	t.TPStrict += r.TPStrict
	t.FP += r.FP
	t.FPRedacted += r.FPRedacted
}

func (t *GitleaksTotals) finish() {
	if t.TP > 0 {
		t.Recall = float64(t.TPFound) / float64(t.TP)
		t.RecallStrict = float64(t.TPStrict) / float64(t.TP)
	}
	if t.FP > 0 {
		t.FPRate = float64(t.FPRedacted) / float64(t.FP)
	}
}

// gitleaksFound reports whether the credentials in the secrets gitleaks'
// regex extracts from text are all masked, and whether the whole secrets
// are; without a usable regex, whether anything is.
func gitleaksFound(text string, g gitleaksRegex, fs []redact.Finding) (found, strict bool) {
	if g.re == nil {
		return len(fs) > 0, len(fs) > 0
	}
	ms := g.re.FindAllStringSubmatchIndex(text, -1)
	if len(ms) == 0 {
		return len(fs) > 0, len(fs) > 0
	}
	found, strict = true, true
	for _, m := range ms {
		a, b := m[0], m[1]
		if g.group > 0 && 2*g.group+1 < len(m) && m[2*g.group] >= 0 {
			a, b = m[2*g.group], m[2*g.group+1]
		} else if g.group == 0 {
			for k := 1; 2*k+1 < len(m); k++ {
				if m[2*k] >= 0 && m[2*k+1] > m[2*k] {
					a, b = m[2*k], m[2*k+1]
					break
				}
			}
		}
		if b <= a {
			continue
		}
		if !spanCovered(a, b, fs) {
			strict = false
		}
		ca, cb := credential(text, a, b)
		if !spanCovered(ca, cb, fs) {
			found = false
		}
	}
	return found, strict
}

// credential returns the longest run of text[a:b] between separators (the
// last one on a tie).
func credential(text string, a, b int) (int, int) {
	ba, bb := a, a
	start := a
	for i := a; i <= b; i++ {
		if i == b || strings.IndexByte(" \t\r\n'\"`=:,;|@&\\<>(){}[]", text[i]) >= 0 {
			if i-start >= bb-ba && i > start {
				ba, bb = start, i
			}
			start = i + 1
		}
	}
	if bb == ba {
		return a, b
	}
	for ba < bb && text[ba] == '/' { // the // of a URL after its scheme
		ba++
	}
	return ba, bb
}

func loadGitleaksCases(ctx context.Context, path string) ([]gitleaksCase, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("gitleaks: %w", err)
	}
	defer f.Close()
	r, err := maybeGunzip(f)
	if err != nil {
		return nil, fmt.Errorf("gitleaks %s: %w", path, err)
	}
	cases, err := readGitleaksCases(ctx, r)
	if err != nil {
		return nil, fmt.Errorf("gitleaks %s: %w", path, err)
	}
	return cases, nil
}

func readGitleaksCases(ctx context.Context, r io.Reader) ([]gitleaksCase, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), MaxRedactLineBytes)
	var out []gitleaksCase
	line := 0
	for sc.Scan() {
		line++
		if line%1024 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		if strings.TrimSpace(sc.Text()) == "" {
			continue
		}
		var c gitleaksCase
		if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
			return nil, fmt.Errorf("line %d: %w", line, err)
		}
		if c.RuleID == "" || (c.Label != "tp" && c.Label != "fp") {
			return nil, fmt.Errorf("line %d: need rule_id and label tp or fp", line)
		}
		out = append(out, c)
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return nil, fmt.Errorf("line %d: longer than %d bytes", line+1, MaxRedactLineBytes)
		}
		return nil, err
	}
	if len(out) == 0 {
		return nil, errors.New("no cases")
	}
	return out, nil
}

// parseGitleaksRegexes reads the id, regex and secretGroup of every
// [[rules]] table of a gitleaks.toml. It understands only what the
// generated config uses: one key per line, regexes as ”'...”' literals.
func parseGitleaksRegexes(toml string) map[string]gitleaksRegex {
	out := map[string]gitleaksRegex{}
	var id, rx string
	group := 0
	inRule := false
	flush := func() {
		if inRule && id != "" && rx != "" {
			if re, err := regexp.Compile(rx); err == nil {
				out[id] = gitleaksRegex{re: re, group: group}
			}
		}
		id, rx, group = "", "", 0
	}
	for _, line := range strings.Split(toml, "\n") {
		t := strings.TrimSpace(line)
		switch {
		case t == "[[rules]]":
			flush()
			inRule = true
		case strings.HasPrefix(t, "[["), strings.HasPrefix(t, "[") && !strings.HasPrefix(t, "[["):
			// a sub-table (allowlists) ends the rule's own keys
			flush()
			inRule = false
		case !inRule:
		case strings.HasPrefix(t, "id = "):
			if v, err := strconv.Unquote(strings.TrimPrefix(t, "id = ")); err == nil {
				id = v
			}
		case strings.HasPrefix(t, "regex = '''") && strings.HasSuffix(t, "'''") && len(t) >= len("regex = ''''''"):
			rx = t[len("regex = '''") : len(t)-3]
		case strings.HasPrefix(t, "secretGroup = "):
			group, _ = strconv.Atoi(strings.TrimPrefix(t, "secretGroup = "))
		}
	}
	flush()
	return out
}

// WriteTable prints the covered and overall totals, then one row per rule.
func (r *GitleaksReport) WriteTable(w io.Writer) error {
	ew := &errWriter{w: w}
	ew.printf("gitleaks rule cases: %d regexes, %d tp rows without text not scored\n\n", r.Regexes, r.Unscored)
	ew.printf("%-44s %-15s %5s %6s %7s %7s %5s %8s %7s\n", "rule", "kind", "tp", "found", "recall", "strict", "fp", "redacted", "fp rate")
	row := func(name, kind string, tp, found int, recall float64, strict, fp, red int, rate float64) {
		sr := 0.0
		if tp > 0 {
			sr = float64(strict) / float64(tp)
		}
		ew.printf("%-44s %-15s %5d %6d %7.3f %7.3f %5d %8d %7.3f\n", name, kind, tp, found, recall, sr, fp, red, rate)
	}
	for _, t := range []struct {
		name string
		t    GitleaksTotals
	}{{"covered", r.Covered}, {"overall", r.Overall}} {
		row(fmt.Sprintf("%s (%d rules)", t.name, t.t.Rules), "", t.t.TP, t.t.TPFound, t.t.Recall, t.t.TPStrict, t.t.FP, t.t.FPRedacted, t.t.FPRate)
	}
	ew.printf("\n")
	for _, x := range r.Rules {
		kind := x.Kind
		if kind == "" {
			kind = "(generic)"
		}
		row(x.Rule, kind, x.TP, x.TPFound, x.Recall, x.TPStrict, x.FP, x.FPRedacted, x.FPRate)
	}
	return ew.err
}

// runCredSweeper scores the redactor on CredSweeper's regression samples:
// dir holds tests/samples/* and tests/data/output.json, CredSweeper's own
// expected findings (its rule, the file, the line number and the value).
// Those are a tool's output rather than human labels: they include
// CredSweeper's ML filtering (values it chose not to report are absent, not
// negative) and findings inside archives and binary files, which a text
// redactor cannot see.
//
// Only text samples count (valid UTF-8, no NUL byte). A finding is scored
// when its value occurs on its line (else anywhere in the file) and found
// when that occurrence is fully redacted; recall is given per CredSweeper
// rule and overall. Text samples without any expected finding are the
// negatives: the report counts those with a redaction (an upper bound on
// false redactions, for the reason above).

// maxSampleBytes bounds one sample file read whole.
const maxSampleBytes = 4 << 20

// CredSweeperRule is one CredSweeper rule's results.
type CredSweeperRule struct {
	Rule   string  `json:"rule"`
	N      int     `json:"n"`
	Found  int     `json:"found"`
	Recall float64 `json:"recall"`
}

// CredSweeperMiss is an expected value that survived, shown as a hint.
type CredSweeperMiss struct {
	File string `json:"file"`
	Line int    `json:"line"`
	Rule string `json:"rule"`
	Hint string `json:"hint"`
}

// CredSweeperReport is the result of runCredSweeper.
type CredSweeperReport struct {
	Recall float64           `json:"recall"`
	Rules  []CredSweeperRule `json:"rules"`
	Misses []CredSweeperMiss `json:"misses"`
	// Expected counts the findings of output.json; Scored those whose
	// value occurs in a text sample; Found those fully redacted.
	Expected int `json:"expected"`
	Scored   int `json:"scored"`
	Found    int `json:"found"`
	// Samples and TextSamples count the sample files; Negatives the text
	// samples without expected findings, NegativesRedacted those with a
	// redaction anyway.
	Samples           int      `json:"samples"`
	TextSamples       int      `json:"text_samples"`
	Negatives         int      `json:"negatives"`
	NegativesRedacted int      `json:"negatives_redacted"`
	FalseRedactions   []string `json:"false_redactions"`
}

type credSweeperFinding struct {
	Rule         string `json:"rule"`
	LineDataList []struct {
		Path    string `json:"path"`
		LineNum int    `json:"line_num"`
		Value   string `json:"value"`
	} `json:"line_data_list"`
}

// runCredSweeper scores the redactor on the CredSweeper samples under dir.
func runCredSweeper(ctx context.Context, dir string) (*CredSweeperReport, error) {
	data, err := readLimited(filepath.Join(dir, "tests", "data", "output.json"), MaxDatasetBytes)
	if err != nil {
		return nil, fmt.Errorf("credsweeper: %w", err)
	}
	var expected []credSweeperFinding
	if err := json.Unmarshal(data, &expected); err != nil {
		return nil, fmt.Errorf("credsweeper output.json: %w", err)
	}
	sampleDir := filepath.Join(dir, "tests", "samples")
	entries, err := os.ReadDir(sampleDir)
	if err != nil {
		return nil, fmt.Errorf("credsweeper: %w", err)
	}
	rep := &CredSweeperReport{Misses: []CredSweeperMiss{}, FalseRedactions: []string{}}
	type sample struct {
		text string
		fs   []redact.Finding
	}
	texts := map[string]*sample{}
	for _, e := range entries {
		if !e.Type().IsRegular() {
			continue
		}
		rep.Samples++
		b, err := readLimited(filepath.Join(sampleDir, e.Name()), maxSampleBytes)
		if err != nil || !utf8.Valid(b) || strings.IndexByte(string(b), 0) >= 0 {
			continue
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		s := string(b)
		texts[e.Name()] = &sample{text: s, fs: redact.Find(s)}
	}
	rep.TextSamples = len(texts)
	withFindings := map[string]bool{}
	byRule := map[string]*CredSweeperRule{}
	for _, f := range expected {
		for _, ld := range f.LineDataList {
			rep.Expected++
			name := filepath.Base(ld.Path)
			withFindings[name] = true
			smp := texts[name]
			if smp == nil || ld.Value == "" || !strings.HasPrefix(ld.Path, "./tests/samples/") || strings.Count(ld.Path, "/") != 3 {
				continue // binary, archive member or absent
			}
			a := valueOffset(smp.text, ld.LineNum, ld.Value)
			if a < 0 {
				continue
			}
			rep.Scored++
			r := byRule[f.Rule]
			if r == nil {
				r = &CredSweeperRule{Rule: f.Rule}
				byRule[f.Rule] = r
			}
			r.N++
			if spanCovered(a, a+len(ld.Value), smp.fs) {
				rep.Found++
				r.Found++
			} else {
				rep.Misses = append(rep.Misses, CredSweeperMiss{File: name, Line: ld.LineNum, Rule: f.Rule, Hint: Hint(ld.Value)})
			}
		}
	}
	for name, smp := range texts {
		if withFindings[name] {
			continue
		}
		rep.Negatives++
		if len(smp.fs) > 0 {
			rep.NegativesRedacted++
			var kinds []string
			for _, f := range smp.fs {
				kinds = append(kinds, f.Kind)
			}
			rep.FalseRedactions = append(rep.FalseRedactions, fmt.Sprintf("%s (%d: %s)", name, len(smp.fs), strings.Join(kinds, ", ")))
		}
	}
	sort.Strings(rep.FalseRedactions)
	for _, r := range byRule {
		r.Recall = float64(r.Found) / float64(r.N)
		rep.Rules = append(rep.Rules, *r)
	}
	sort.Slice(rep.Rules, func(i, j int) bool { return rep.Rules[i].Rule < rep.Rules[j].Rule })
	sort.Slice(rep.Misses, func(i, j int) bool {
		if rep.Misses[i].File != rep.Misses[j].File {
			return rep.Misses[i].File < rep.Misses[j].File
		}
		return rep.Misses[i].Line < rep.Misses[j].Line
	})
	if rep.Scored > 0 {
		rep.Recall = float64(rep.Found) / float64(rep.Scored)
	}
	return rep, nil
}

// valueOffset returns the offset of value on line lineNum (1-based) of
// text, or of its first occurrence anywhere; -1 if absent.
func valueOffset(text string, lineNum int, value string) int {
	start := 0
	for n := 1; n < lineNum && start < len(text); n++ {
		i := strings.IndexByte(text[start:], '\n')
		if i < 0 {
			start = len(text)
			break
		}
		start += i + 1
	}
	end := len(text)
	if i := strings.IndexByte(text[start:], '\n'); i >= 0 {
		end = start + i
	}
	if start <= end {
		if i := strings.Index(text[start:end], value); i >= 0 {
			return start + i
		}
	}
	return strings.Index(text, value)
}

func readLimited(path string, limit int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > limit {
		return nil, fmt.Errorf("%s: larger than %d bytes", path, limit)
	}
	return b, nil
}

// WriteTable prints recall overall and per rule, the negatives, then every
// miss and redacted negative.
func (r *CredSweeperReport) WriteTable(w io.Writer) error {
	ew := &errWriter{w: w}
	ew.printf("CredSweeper samples: %d files (%d text), %d expected findings, %d scored in text\n\n",
		r.Samples, r.TextSamples, r.Expected, r.Scored)
	ew.printf("%-22s %6.3f  (%d/%d)\n", "recall", r.Recall, r.Found, r.Scored)
	ew.printf("%-22s %6d  of %d text samples without expected findings\n\n", "negatives redacted", r.NegativesRedacted, r.Negatives)
	ew.printf("%-40s %5s %6s %7s\n", "rule", "n", "found", "recall")
	for _, x := range r.Rules {
		ew.printf("%-40s %5d %6d %7.3f\n", x.Rule, x.N, x.Found, x.Recall)
	}
	if len(r.Misses) > 0 {
		ew.printf("\nmisses:\n")
		for _, m := range r.Misses {
			ew.printf("  %-36s %4d  %-28s %s\n", m.File, m.Line, m.Rule, m.Hint)
		}
	}
	if len(r.FalseRedactions) > 0 {
		ew.printf("\nredacted negatives:\n")
		for _, f := range r.FalseRedactions {
			ew.printf("  %s\n", f)
		}
	}
	return ew.err
}
