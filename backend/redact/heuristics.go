package redact

import (
	"math"
	"strings"
)

// Heuristics shared by the rules: what a placeholder looks like, what an
// ordinary word or identifier looks like, what a random secret looks like.

func isDigit(c byte) bool  { return c >= '0' && c <= '9' }
func isLower(c byte) bool  { return c >= 'a' && c <= 'z' }
func isUpper(c byte) bool  { return c >= 'A' && c <= 'Z' }
func isLetter(c byte) bool { return isLower(c) || isUpper(c) }
func isAlnum(c byte) bool  { return isLetter(c) || isDigit(c) }
func isHexDigit(c byte) bool {
	return isDigit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')
}
func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'
}

// placeholderParts are substrings (lower case) that mark a value as an
// example or a template rather than a secret.
var placeholderParts = []string{
	"xxxx", "****", "....", "…", "<", ">", "${", "{{", "}}", "$(", "#{", "%(",
	"your", "example", "placeholder", "changeme", "change_me", "change-me",
	"redacted", "dummy", "replace_me", "replaceme", "replace-me", "insert",
	"_here", "-here", "notasecret", "not-a-secret", "not_a_secret",
	"abcdefgh", "0123456789", "1234567890", "process.env", "os.environ",
	"getenv", "secretkeyref", "[masked]", "[filtered]", "[hidden]",
}

// stopValues are whole values (lower case) that are never secrets.
var stopValues = map[string]bool{
	"password": true, "passwd": true, "pass": true, "pwd": true, "secret": true,
	"secrets": true, "token": true, "tokens": true, "apikey": true, "api_key": true,
	"api-key": true, "key": true, "auth": true, "credentials": true, "credential": true,
	"test": true, "testing": true, "tests": true, "admin": true, "root": true, "user": true,
	"username": true, "default": true, "string": true, "str": true, "text": true,
	"value": true, "required": true, "optional": true, "include": true, "omit": true,
	"same-origin": true, "hidden": true, "bearer": true, "basic": true, "env": true,
	"file": true, "auto": true, "random": true, "generated": true, "none": true,
	"null": true, "nil": true, "undefined": true, "true": true, "false": true,
	"yes": true, "no": true, "on": true, "off": true, "empty": true, "unset": true,
	"foo": true, "bar": true, "baz": true, "foobar": true, "abc": true, "abc123": true,
	"123456": true, "12345678": true, "qwerty": true, "secret123": true,
	"password123": true, "password1": true, "todo": true, "tbd": true,
	"fixme": true, "na": true, "n/a": true, "sample": true, "mysecret": true,
	"mypassword": true, "mytoken": true, "supersecret": true, "s3cr3t": true,
	"p@ssw0rd": true, "p@ssword": true, "passw0rd": true, "letmein": true,
	"guest": true, "demo": true, "local": true, "localhost": true, "postgres": true,
	"mysql": true, "redis": true, "oauth": true, "jwt": true, "session": true,
	"cookie": true, "prompt": true, "stdin": true, "interactive": true, "changeit": true,
}

// isPlaceholder reports whether v is a template, an example or a filler
// rather than a real value.
func isPlaceholder(v string) bool {
	if v == "" {
		return true
	}
	if strings.Contains(v, Marker) {
		return true
	}
	var buf [32]byte
	if lv, ok := lowerSmall(buf[:], v); ok && stopValues[string(lv)] {
		return true
	}
	switch v[0] {
	case '$', '%', '@', '&', '*', '!':
		// $VAR, %VAR%, @VAR@, *pointer: references, not values
		if len(v) > 1 && (isLetter(v[1]) || v[1] == '_' || v[1] == '{' || isDigit(v[1])) {
			return true
		}
	}
	if (v[0] == '[' && v[len(v)-1] == ']') || (v[0] == '{' && v[len(v)-1] == '}') || (v[0] == '(' && v[len(v)-1] == ')') {
		return true
	}
	// a hex number literal (0xdeadbeef), an encrypted value (Jasypt
	// ENC(...), SOPS ENC[...], vault:v1:...)
	if len(v) > 2 && v[0] == '0' && (v[1] == 'x' || v[1] == 'X') && isHex(v[2:]) {
		return true
	}
	if strings.HasPrefix(v, "ENC(") || strings.HasPrefix(v, "ENC[") || strings.HasPrefix(v, "vault:v") {
		return true
	}
	for _, p := range placeholderParts {
		if containsFold(v, p) {
			return true
		}
	}
	return lowDiversity(v)
}

// lowDiversity reports values made of very few distinct characters
// (xxxxxxxx, 00000000, abababab, GR134894112312312312312312312 after its
// prefix) or long runs of one character.
func lowDiversity(v string) bool {
	var seen [256]bool
	distinct, run, maxRun := 0, 0, 0
	for i := 0; i < len(v); i++ {
		c := v[i]
		if !seen[c] {
			seen[c] = true
			distinct++
		}
		if i > 0 && v[i-1] == c {
			run++
		} else {
			run = 1
		}
		maxRun = max(maxRun, run)
	}
	switch {
	case len(v) >= 6 && distinct <= 2:
		return true
	case len(v) >= 10 && distinct <= 4:
		return true
	case len(v) >= 20 && distinct <= 6:
		return true
	case maxRun >= 8 && maxRun*3 >= len(v):
		return true
	}
	return false
}

var tokenPlaceholderParts = []string{"xxxx", "****", "example", "your", "<", "...", "…", "redacted", "placeholder", "abcdefgh", "1234567890", "abc123", "here"}

// tokenPlaceholder reports whether a provider token's body (after its
// prefix) is an example: ghp_xxxx..., AKIAXXXXXXXXXXXXXXXX, sk-...EXAMPLE,
// or mostly long runs of one character (sgp_5555555dAAAAA7777777...).
func tokenPlaceholder(body string) bool {
	inRuns, run := 0, 1
	for i := 1; i <= len(body); i++ {
		if i < len(body) && body[i] == body[i-1] {
			run++
			continue
		}
		if run >= 6 {
			inRuns += run
		}
		run = 1
	}
	if len(body) > 0 && inRuns*10 >= len(body)*3 {
		return true
	}
	for _, p := range tokenPlaceholderParts {
		if containsFold(body, p) {
			return true
		}
	}
	return lowDiversity(body)
}

// fragments splits an identifier-like string into its letter runs, cutting
// at non-letters and at case changes (camelCase, HTTPServer -> HTTP Server).
func fragments(v string) []string {
	var out []string
	start := -1
	for i := 0; i <= len(v); i++ {
		if i == len(v) || !isLetter(v[i]) {
			if start >= 0 {
				out = append(out, v[start:i])
				start = -1
			}
			continue
		}
		if start < 0 {
			start = i
			continue
		}
		c, p := v[i], v[i-1]
		if isUpper(c) && isLower(p) {
			out = append(out, v[start:i])
			start = i
		} else if isLower(c) && isUpper(p) && i-1 > start {
			// HTTPServer: the run of capitals ends before the capital that
			// starts the next word
			out = append(out, v[start:i-1])
			start = i - 1
		}
	}
	return out
}

func hasVowel(f string) bool {
	for i := 0; i < len(f); i++ {
		switch lowerTab[f[i]] {
		case 'a', 'e', 'i', 'o', 'u', 'y':
			return true
		}
	}
	return false
}

func maxConsonantRun(f string) int {
	run, m := 0, 0
	for i := 0; i < len(f); i++ {
		switch lowerTab[f[i]] {
		case 'a', 'e', 'i', 'o', 'u', 'y':
			run = 0
		default:
			run++
			m = max(m, run)
		}
	}
	return m
}

// wordy reports whether v reads as words or an identifier built from words
// (password_field, hashedPassword, random_password.db.result,
// YOUR_API_KEY, orders-db) rather than as random characters. Digits are
// allowed only as short groups.
func wordy(v string) bool {
	letters, digits, digitRun, maxDigitRun := 0, 0, 0, 0
	for i := 0; i < len(v); i++ {
		c := v[i]
		switch {
		case isLetter(c):
			letters++
			digitRun = 0
		case isDigit(c):
			digits++
			digitRun++
			maxDigitRun = max(maxDigitRun, digitRun)
		default:
			digitRun = 0
			switch c {
			case '_', '-', '.', '/', ':', ' ':
			default:
				return false
			}
		}
	}
	if letters < 3 || digits*4 > letters || maxDigitRun > 4 {
		return false
	}
	fs := fragments(v)
	if len(fs) == 0 {
		return false
	}
	// digit groups glued inside a letter run (kd8ev, A82nf) and frequent
	// case changes (kdevFYdpCwhJ) mark random strings
	trans, prevLetter := 0, byte(0)
	for i := 0; i < len(v); i++ {
		c := v[i]
		if isDigit(c) && i > 0 && isLetter(v[i-1]) {
			j := i
			for j < len(v) && isDigit(v[j]) {
				j++
			}
			if j < len(v) && isLetter(v[j]) {
				return false
			}
		}
		if isLetter(c) {
			if prevLetter != 0 && isUpper(c) != isUpper(prevLetter) {
				trans++
			}
			prevLetter = c
		} else {
			prevLetter = 0
		}
	}
	if letters >= 8 && trans*10 > letters*3 {
		return false
	}
	single, bad, abbrev, short := 0, 0, 0, 0
	for _, f := range fs {
		if len(f) <= 2 {
			short++
		}
		switch {
		case len(f) == 1:
			single++
		case len(f) <= 3 && !hasVowel(f):
			abbrev++ // db, cfg, src
		case !hasVowel(f) || maxConsonantRun(f) > 4 || len(f) > 20:
			bad++
		case len(f) > 8 && allUpper(f) && !hasVowelRatio(f):
			bad++
		}
	}
	if single > 1 || (single == 1 && len(fs) == 1) || abbrev*2 > len(fs)+1 || (len(fs) >= 3 && short*3 > len(fs)) {
		return false
	}
	return bad == 0 || (bad == 1 && len(fs) >= 4)
}

func allUpper(f string) bool {
	for i := 0; i < len(f); i++ {
		if !isUpper(f[i]) {
			return false
		}
	}
	return true
}

func hasVowelRatio(f string) bool {
	v := 0
	for i := 0; i < len(f); i++ {
		switch lowerTab[f[i]] {
		case 'a', 'e', 'i', 'o', 'u', 'y':
			v++
		}
	}
	return v*5 >= len(f)
}

// entropy is the Shannon entropy of v's bytes in bits per byte.
func entropy(v string) float64 {
	if v == "" {
		return 0
	}
	var counts [256]int
	for i := 0; i < len(v); i++ {
		counts[v[i]]++
	}
	n := float64(len(v))
	h := 0.0
	for _, c := range counts {
		if c > 0 {
			p := float64(c) / n
			h -= p * math.Log2(p)
		}
	}
	return h
}

type classes struct{ lower, upper, digit, other int }

func classify(v string) (c classes) {
	for i := 0; i < len(v); i++ {
		switch b := v[i]; {
		case isLower(b):
			c.lower++
		case isUpper(b):
			c.upper++
		case isDigit(b):
			c.digit++
		default:
			c.other++
		}
	}
	return
}

func isHex(v string) bool {
	for i := 0; i < len(v); i++ {
		if !isHexDigit(v[i]) {
			return false
		}
	}
	return v != ""
}

func allDigits(v string) bool {
	for i := 0; i < len(v); i++ {
		if !isDigit(v[i]) {
			return false
		}
	}
	return v != ""
}

// isUUID reports the 8-4-4-4-12 hex form.
func isUUID(v string) bool {
	if len(v) != 36 {
		return false
	}
	for i := 0; i < 36; i++ {
		switch i {
		case 8, 13, 18, 23:
			if v[i] != '-' {
				return false
			}
		default:
			if !isHexDigit(v[i]) {
				return false
			}
		}
	}
	return true
}

// isVersion reports version strings and ranges: 1.2.3, ^9.0.2, >=2.0,<3,
// v1.4.0-rc.1.
func isVersion(v string) bool {
	v = strings.TrimLeft(v, "^~<>=!v ")
	if v == "" || !isDigit(v[0]) {
		return false
	}
	dots := 0
	for i := 0; i < len(v); i++ {
		c := v[i]
		if c == '.' {
			dots++
		} else if !isAlnum(c) && c != '-' && c != '+' && c != ',' && c != '<' && c != '>' && c != '=' && c != '*' && c != ' ' {
			return false
		}
	}
	return dots >= 1 && digitsShare(v) >= 0.3
}

func digitsShare(v string) float64 {
	d := 0
	for i := 0; i < len(v); i++ {
		if isDigit(v[i]) {
			d++
		}
	}
	return float64(d) / float64(len(v))
}

// isPathOrURL reports file paths and URLs, which name where a secret lives
// rather than being one.
func isPathOrURL(v string) bool {
	if strings.Contains(v, "://") {
		return true
	}
	if strings.HasPrefix(v, "/") || strings.HasPrefix(v, "./") || strings.HasPrefix(v, "../") ||
		strings.HasPrefix(v, "~/") || (len(v) > 2 && isLetter(v[0]) && v[1] == ':' && (v[2] == '\\' || v[2] == '/')) {
		return true
	}
	if i := strings.LastIndexByte(v, '.'); i > 0 && strings.Contains(v, "/") {
		ext := v[i+1:]
		if len(ext) >= 2 && len(ext) <= 4 && allLowerAlpha(ext) {
			return true
		}
	}
	for _, ext := range []string{".pem", ".key", ".txt", ".json", ".p12", ".pfx", ".crt", ".env", ".yaml", ".yml", ".gpg", ".asc"} {
		if hasSuffixFold(v, ext) {
			return true
		}
	}
	return false
}

func allLowerAlpha(v string) bool {
	for i := 0; i < len(v); i++ {
		if !isLower(v[i]) {
			return false
		}
	}
	return v != ""
}

// looksRandom reports whether v looks like generated key material: long,
// not made of words, mixing character classes with high entropy. It is the
// test for values under weak keys (key, auth, signature...) and bare
// candidates.
func looksRandom(v string) bool {
	n := len(v)
	if n < 16 || n > 1024 || isPlaceholder(v) || isPathOrURL(v) || isVersion(v) || wordy(v) {
		return false
	}
	c := classify(v)
	h := entropy(v)
	switch {
	case isHex(v):
		return c.digit >= 2 && c.lower+c.upper >= 2 && h >= 3.0
	case c.lower > 0 && c.upper > 0 && c.digit > 0:
		return h >= 3.5
	case c.lower > 0 && c.upper > 0:
		return n >= 20 && h >= 3.8
	case (c.lower > 0 || c.upper > 0) && c.digit >= 3:
		return n >= 20 && h >= 3.3 && (c.lower+c.upper)*4 >= n
	}
	return false
}

// plausibleSecret is the test for values assigned to strong keys
// (password, secret, token, api_key...): anything that is not empty, a
// placeholder, a reference, a path, a version or (when unquoted) an
// identifier made of words.
func plausibleSecret(v string, quoted bool) bool {
	n := len(v)
	if n < 6 || n > 4096 {
		return false
	}
	if isPlaceholder(v) || isPathOrURL(v) || isVersion(v) {
		return false
	}
	if strings.ContainsAny(v, " \t\n") {
		return false
	}
	if allDigits(v) {
		return n >= 6
	}
	// an identifier naming a secret is a reference to one: csrfToken,
	// db_password, API_KEY_V2
	if isIdent(v) {
		for _, w := range []string{"pass", "pwd", "secret", "token", "key", "auth", "cred"} {
			if containsFold(v, w) {
				return false
			}
		}
	}
	if wordy(v) {
		if !quoted {
			return false
		}
		// a quoted name of a field or variable (refresh_token, db_password)
		for _, w := range []string{"pass", "pwd", "secret", "token", "key", "auth", "cred"} {
			if containsFold(v, w) {
				return false
			}
		}
		c := classify(v)
		// a lower-case word or two (rootpasswd, orders) could be a password;
		// UPPER_SNAKE or dotted names are references
		if c.upper > 0 && c.lower == 0 {
			return false
		}
		if strings.Contains(v, ".") {
			return false
		}
	}
	return true
}

// codeLike reports unquoted values that are expressions rather than
// literals: calls, indexing, member access made of words, operators.
func codeLike(v string) bool {
	if strings.ContainsAny(v, "()[]{}") {
		return true
	}
	if strings.HasPrefix(v, "->") || strings.HasPrefix(v, "::") || strings.HasPrefix(v, "#") || strings.HasPrefix(v, "//") {
		return true
	}
	// a.b.c made of identifiers, mostly words: var.db_password,
	// random_password.db.result, self.token, Ed25519.BlindKeySignatures
	if strings.Contains(v, ".") {
		segs := strings.Split(v, ".")
		words := 0
		for _, seg := range segs {
			if seg == "" || !isIdent(seg) {
				return false
			}
			if wordy(seg) || (len(seg) <= 3 && allLowerAlpha(seg)) {
				words++
			}
		}
		return words*2 >= len(segs) && wordy(segs[len(segs)-1])
	}
	return false
}

func isIdent(v string) bool {
	if v == "" || isDigit(v[0]) {
		return false
	}
	for i := 0; i < len(v); i++ {
		if !isAlnum(v[i]) && v[i] != '_' {
			return false
		}
	}
	return true
}
