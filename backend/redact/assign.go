package redact

import "strings"

// The generic tier: assignments whose key names a secret. The scanner starts
// at a keyword hit inside the key (pass, secret, token, key, auth...),
// widens to the whole key, parses the separator and the value by hand and
// masks the value alone. Each hit costs at most a bounded key scan plus the
// value it reads, and hits inside a key or value already read are skipped,
// so the pass is linear.

// keyStrength says how much a key name suggests a secret value.
type keyStrength int

const (
	keyNone   keyStrength = iota
	keyWeak               // key, auth, signature...: value must look random
	keyStrong             // password, secret, token, api_key...: any plausible value
)

// strongSuffixes: a key word ending in one of these names a secret
// (password, db_password, 1password, apiToken, client_secret...).
var strongSuffixes = []string{"password", "passwd", "passphrase", "passcode", "secret", "token", "apikey", "credential", "credentials", "creds", "privatekey", "secretkey", "accesskey", "authkey", "pwd"}

// strongWords are whole key words that name a secret.
var strongWords = map[string]bool{
	"pass": true, "pwd": true, "pw": true, "passwd": true, "pword": true, "mdp": true,
	"pswd": true, "psswd": true, "paswd": true, "pswrd": true, "psword": true, "psswrd": true,
	"pssword": true, "pasword": true, "paswrd": true, "passw": true, "passwrd": true, "pwrd": true,
}

// weakWords are whole key words under which only random-looking values are
// masked.
var weakWords = map[string]bool{
	"key": true, "auth": true, "authorization": true, "sig": true, "signature": true,
	"salt": true, "seed": true, "otp": true, "hmac": true, "jwt": true, "bearer": true,
	"cookie": true, "license": true, "licence": true, "dsn": true, "pin": true,
}

// benignLast are last key words that make the key describe a secret rather
// than hold one (token_count, password_hash, kms_key_id, secret_name).
var benignLast = map[string]bool{
	"id": true, "ids": true, "name": true, "names": true, "type": true, "types": true,
	"path": true, "paths": true, "file": true, "filename": true, "files": true, "dir": true,
	"directory": true, "url": true, "uri": true, "urls": true, "endpoint": true, "host": true,
	"length": true, "len": true, "size": true, "count": true, "num": true, "number": true,
	"min": true, "max": true, "field": true, "fields": true, "header": true, "headers": true,
	"env": true, "var": true, "variable": true, "prefix": true, "suffix": true, "ref": true,
	"arn": true, "version": true, "format": true, "mode": true, "policy": true, "rotation": true,
	"expiry": true, "expires": true, "expiration": true, "ttl": true, "timeout": true,
	"enabled": true, "enable": true, "disabled": true, "required": true, "hint": true,
	"label": true, "placeholder": true, "pattern": true, "regex": true, "column": true,
	"index": true, "idx": true, "hash": true, "hashed": true, "digest": true, "checksum": true,
	"fingerprint": true, "algorithm": true, "alg": true, "provider": true, "source": true,
	"store": true, "storage": true, "manager": true, "service": true, "location": true,
	"lifetime": true, "duration": true, "validity": true, "age": true, "at": true,
	"limit": true, "usage": true, "used": true, "reset": true, "policies": true,
	"strength": true, "scheme": true, "method": true, "kind": true, "class": true,
	"handler": true, "helper": true, "callback": true, "test": true, "tests": true,
	"size_bytes": true, "bytes": true, "bits": true, "schema": true, "scope": true,
	"scopes": true, "audience": true, "issuer": true, "user": true, "username": true,
	"login": true, "email": true, "owner": true, "region": true, "ok": true, "valid": true,
	"invalid": true, "error": true, "errors": true, "message": true, "msg": true,
	"text": true, "description": true, "desc": true, "help": true, "title": true,
	"input": true, "form": true, "button": true, "icon": true, "button_text": true,
	"mask": true, "masked": true, "visible": true, "show": true, "toggle": true,
	"counter": true, "len_bytes": true, "rules": true, "rule": true, "sha": true,
	"md5": true, "sha256": true, "cache": true, "dict": true, "map": true, "list": true,
	"set": true, "stream": true, "uses": true, "utils": true, "util": true, "lib": true,
	"module": true, "package": true, "pkg": true, "spec": true, "json": true, "yaml": true,
}

// benignWords anywhere in the key make it none (public_key, publishable_key,
// author, tokenizer, max_tokens).
var benignWords = map[string]bool{
	"public": true, "publishable": true, "pub": true, "author": true, "authors": true,
	"tokenizer": true, "tokenize": true, "tokens": true, "keys": true, "secrets": true,
	"passwords": true, "keyboard": true, "keycode": true, "keyframe": true,
	"keyframes": true, "monkey": true, "hotkey": true, "keystroke": true, "keyword": true,
	"keywords": true, "primary": true, "foreign": true, "sort": true, "partition": true,
	"idempotency": true, "dedup": true, "dedupe": true, "cache_key": true, "lookup": true,
	"forgot": true, "bypass": true, "passthrough": true, "compass": true,
	"passport": true, "surpass": true, "passenger": true, "overpass": true, "underpass": true,
	"multipass": true, "onepass": true, "twopass": true, "singlepass": true, "firstpass": true,
	"secondpass": true, "renderpass": true, "subpass": true, "encompass": true,
}

// notSecretTokens are words that, just before "token", make it a
// pagination or parser token (next_page_token, continuation_token).
var notSecretTokens = map[string]bool{
	"page": true, "next": true, "continuation": true, "cursor": true, "cancellation": true,
	"sync": true, "resume": true, "lexer": true, "parser": true, "sentence": true, "end": true,
	"start": true, "max": true, "special": true, "bos": true, "eos": true, "pad": true,
	"unk": true, "mask": true, "sep": true, "cls": true,
}

// keySplit returns the lower-case words of a key name: split at
// non-alphanumerics and camelCase boundaries.
func keySplit(key string) []string {
	var out []string
	start := -1
	flush := func(i int) {
		if start >= 0 && i > start {
			out = append(out, asciiLower(key[start:i]))
		}
		start = -1
	}
	for i := 0; i < len(key); i++ {
		c := key[i]
		if !isAlnum(c) {
			flush(i)
			continue
		}
		if start < 0 {
			start = i
			continue
		}
		p := key[i-1]
		if isUpper(c) && isLower(p) {
			flush(i)
			start = i
		} else if isLower(c) && isUpper(p) && i-1 > start {
			flush(i - 1)
			start = i - 1
		}
	}
	flush(len(key))
	return out
}

// classifyKey returns how strongly key names a secret and the kind to
// report.
func classifyKey(key string) (keyStrength, string) {
	if strings.Contains(key, "REDACTED") {
		return keyNone, "" // our own replacement is no key
	}
	ws := keySplit(key)
	if len(ws) == 0 || len(ws) > 12 {
		return keyNone, ""
	}
	for i, w := range ws {
		// token2, password_1: numbered keys
		t := strings.TrimRight(w, "0123456789")
		if t != "" {
			ws[i] = t
		}
	}
	last := ws[len(ws)-1]
	if benignLast[last] {
		return keyNone, ""
	}
	for _, w := range ws {
		if benignWords[w] {
			return keyNone, ""
		}
	}
	strength, kind := keyNone, ""
	set := func(s keyStrength, k string) {
		if s > strength {
			strength, kind = s, k
		}
	}
	hasAWS, hasSession, hasToken, hasSecret := false, false, false, false
	for i, w := range ws {
		switch w {
		case "aws":
			hasAWS = true
		case "session":
			hasSession = true
		case "token":
			hasToken = true
		case "secret":
			hasSecret = true
		}
		for _, suf := range strongSuffixes {
			if suf == "token" && i > 0 && notSecretTokens[ws[i-1]] {
				continue
			}
			if strings.HasSuffix(w, suf) && (len(w) == len(suf) || len(suf) >= 5) {
				set(keyStrong, kindForWord(suf))
			}
		}
		if strongWords[w] || (len(w) > 4 && strings.HasSuffix(w, "pass")) {
			set(keyStrong, "password") // MYSQLPASS, dbpass
		}
		if i+1 < len(ws) && ws[i+1] == "key" {
			switch w {
			case "api", "access", "auth", "client", "account", "app", "service", "subscription", "admin":
				set(keyStrong, "api-key")
			case "private", "secret", "signing", "encryption", "master":
				set(keyStrong, "secret")
			}
		}
	}
	// weak words count only as the key's last word: STRIPE_KEY, x-auth,
	// request_signature, but not key_down_event
	if weakWords[last] || (strings.HasSuffix(last, "key") && len(last) > 3) {
		set(keyWeak, "secret")
	}
	if strength != keyNone && hasAWS {
		switch {
		case hasSession && hasToken:
			kind = "aws-session-token"
		case hasSecret:
			kind = "aws-secret-key"
		}
	}
	return strength, kind
}

func kindForWord(w string) string {
	switch w {
	case "password", "passwd", "passphrase", "passcode", "pwd":
		return "password"
	case "token":
		return "token"
	case "apikey", "accesskey":
		return "api-key"
	}
	return "secret"
}

func isKeyByte(c byte) bool { return isAlnum(c) || c == '_' || c == '-' || c == '.' }

const (
	maxKeyLen   = 100
	maxValueLen = 4096
)

// scanAssign is the generic assignment rule.
func scanAssign(s string, hits []int, add func(span) bool) {
	resume := 0
	n := len(s)
	for _, p := range hits {
		if p < resume {
			continue
		}
		ks := p
		for ks > 0 && p-ks < maxKeyLen && isKeyByte(s[ks-1]) {
			ks--
		}
		ke := p
		for ke < n && ke-ks < maxKeyLen && isKeyByte(s[ke]) {
			ke++
		}
		resume = ke
		if ke-ks >= maxKeyLen || (ks > 0 && p-ks >= maxKeyLen) {
			continue
		}
		// trailing dots and dashes belong to the sentence, not the key
		for ke > ks && (s[ke-1] == '.' || s[ke-1] == '-') {
			ke--
		}
		key := s[ks:ke]
		strength, kind := classifyKey(key)
		if strength == keyNone {
			continue
		}
		a, ok := parseAssignment(s, ks, ke)
		if !ok {
			// an over-long unquoted run: keys inside it are not keys
			resume = max(resume, a.ve)
			continue
		}
		vs, ve, quoted := a.vs, a.ve, a.quoted
		v := s[vs:ve]
		// key:value glued together without quotes or a space (Maven
		// coordinates, host:port, scope:read) is not a YAML mapping: only a
		// random value counts
		if !quoted && !a.quotedKey && a.sep == ":" && s[vs-1] == ':' &&
			(strings.ContainsAny(key, "./") || strings.Contains(v, ":") || isVersion(v)) {
			strength = keyWeak
		}
		var good bool
		if strength == keyStrong {
			good = (quoted || !codeLike(v)) && plausibleSecret(v, quoted)
		} else {
			// weak keys: random-looking values, or base64 user:password
			// (the "auth" of ~/.docker/config.json)
			good = (quoted || !codeLike(v)) && (looksRandom(v) || (len(v) >= 8 && basicCredentials(v)))
		}
		if good {
			if add(span{vs, ve, kind}) {
				resume = ve
			}
		} else if ve-vs >= 256 {
			// do not re-read a long rejected value from every key inside it
			resume = ve
		}
	}
}

// assignment is a parsed key-separator-value.
type assignment struct {
	vs, ve    int    // the value
	quoted    bool   // the value was in quotes
	quotedKey bool   // the key was in quotes
	sep       string // the separator
}

// parseAssignment parses what follows the key s[ks:ke]: an optional closing
// quote, a separator, and the value. When it fails on an over-long
// unquoted value, the assignment's ve says where that value's run ends (the
// caller skips the keys inside it); on any other failure it is zero.
func parseAssignment(s string, ks, ke int) (assignment, bool) {
	if ks > 0 && s[ks-1] == '<' {
		vs, ve, quoted, ok := parseXMLValue(s, ks, ke)
		return assignment{vs: vs, ve: ve, quoted: quoted, sep: ">"}, ok
	}
	j, quotedKey, ok := afterKey(s, ks, ke)
	if !ok {
		return assignment{}, false
	}
	sep, j, compare, ok := parseSeparator(s, ks, ke, j, quotedKey)
	if !ok {
		return assignment{}, false
	}
	j = skipBlanks(s, j)
	if sep == ":" {
		j = skipAnnotation(s, j)
	}
	if j >= len(s) {
		return assignment{}, false
	}
	a := assignment{quotedKey: quotedKey, sep: sep}
	c := s[j]
	if c == '\\' && j+1 < len(s) && (s[j+1] == '"' || s[j+1] == '\'') {
		j++
		c = s[j]
	}
	if c == '"' || c == '\'' || c == '`' {
		return quotedValue(s, j, a)
	}
	if sep == "," || compare {
		return assignment{}, false
	}
	return bareValue(s, j, a)
}

// afterKey returns where the separator may start after the key s[ks:ke]:
// past the key's closing quote (and a closing bracket, for
// $config['password'] = ...) when the key opened with one. A quoted key
// must close, or be followed directly by '=' or ':'.
func afterKey(s string, ks, ke int) (j int, quotedKey, ok bool) {
	n := len(s)
	j = ke
	var open byte
	if ks > 0 {
		switch c := s[ks-1]; c {
		case '"', '\'', '`':
			open = c
		}
	}
	if open != 0 {
		if j < n && s[j] == '\\' && j+1 < n && s[j+1] == open {
			j++
		}
		if j < n && s[j] == open {
			j++
			quotedKey = true
			if j < n && s[j] == ']' { // $config['password'] = ..., os.environ["TOKEN"] = ...
				j++
			}
		} else if j < n && s[j] != '=' && s[j] != ':' {
			return 0, false, false
		}
	}
	return skipBlanks(s, j), quotedKey, true
}

// parseSeparator reads the separator at s[j:] and returns it with the
// offset past it. A comparison (==, ===, !=) reports compare: its value
// must be quoted. Without a separator, a declaration (var token string =
// "...") counts as "=".
func parseSeparator(s string, ks, ke, j int, quotedKey bool) (sep string, end int, compare, ok bool) {
	n := len(s)
	for _, cand := range []string{":::=", "::=", ":=", "?=", ".=", "+=", "=>", "!=", "=", ":", ","} {
		if strings.HasPrefix(s[j:], cand) {
			sep = cand
			break
		}
	}
	switch sep {
	case "":
		// Go and Java style declarations: var token string = "..."
		k := j
		for k < n && isAlnum(s[k]) {
			k++
		}
		if k > j && k-j <= 8 && isTypeName(s[j:k]) {
			k = skipBlanks(s, k)
			if strings.HasPrefix(s[k:], "=") && !strings.HasPrefix(s[k:], "==") {
				return "=", k + 1, false, true
			}
		}
		return "", 0, false, false
	case "=":
		if j+1 < n && s[j+1] == '~' {
			return "", 0, false, false
		}
		if j+1 < n && s[j+1] == '=' {
			// a comparison with a literal is a hard-coded secret too:
			// if password == "..." (the value must be quoted, below)
			j++
			if j+1 < n && s[j+1] == '=' {
				j++
			}
			return "=", j + 1, true, true // j was on the last '='
		}
	case "!=":
		compare = true
	case ":":
		if j+1 < n && (s[j+1] == ':' || s[j+1] == '/') {
			return "", 0, false, false
		}
	case ",":
		if !callArgument(s, ks, ke, quotedKey) {
			return "", 0, false, false
		}
	}
	return sep, j + len(sep), compare, true
}

// callArgument reports whether the key s[ks:ke], followed by a comma, is a
// call's first argument: f("API_TOKEN", "value"), setopt(CURLOPT_PASSWORD,
// "value"). In JSON, a string before a comma is a value.
func callArgument(s string, ks, ke int, quotedKey bool) bool {
	if !quotedKey && !isConstName(s[ks:ke]) {
		return false
	}
	b := ks - 1
	if quotedKey {
		b--
	}
	for b >= 0 && (s[b] == ' ' || s[b] == '\t') {
		b--
	}
	return b >= 0 && (s[b] == '(' || (!quotedKey && s[b] == ','))
}

// skipAnnotation skips a Python annotation after a ':' separator
// (TOKEN: str = "..."): it returns where the value starts, or j unchanged.
func skipAnnotation(s string, j int) int {
	n := len(s)
	k := j
	for k < n && isAlnum(s[k]) {
		k++
	}
	if k > j && isTypeName(s[j:k]) {
		k2 := skipBlanks(s, k)
		if k2 < n && s[k2] == '=' && (k2+1 >= n || s[k2+1] != '=') {
			return skipBlanks(s, k2+1)
		}
	}
	return j
}

// quotedValue reads the value that opens with the quote at s[j]: up to the
// closing quote (or an escaped one: JSON inside a string), or to the end of
// the line when it is not closed.
func quotedValue(s string, j int, a assignment) (assignment, bool) {
	n := len(s)
	c := s[j]
	vs := j + 1
	k := vs
	for k < n && k-vs <= maxValueLen {
		b := s[k]
		if b == '\n' {
			break
		}
		if b == '\\' && k+1 < n {
			if s[k+1] == c {
				break // an escaped closing quote: JSON inside a string
			}
			if c == '"' {
				k += 2
				continue
			}
		}
		if b == c {
			break
		}
		k++
	}
	a.vs, a.quoted = vs, true
	if k >= n || s[k] == '\n' {
		// an unterminated quote: the value runs to the end of the line
		e := k
		for e > vs && (s[e-1] == '\r' || s[e-1] == ' ' || s[e-1] == '\t') {
			e--
		}
		if e-vs > 200 || e == vs {
			return assignment{}, false
		}
		a.ve = e
		return a, true
	}
	if k-vs > maxValueLen {
		return assignment{}, false
	}
	a.ve = k
	return a, vs < k
}

// bareValue reads an unquoted value from s[j]: up to a blank, a quote, a
// delimiter or an escape sequence. An over-long one fails with its end in
// ve.
func bareValue(s string, j int, a assignment) (assignment, bool) {
	n := len(s)
	vs := j
	k := j
	for k < n && k-vs <= maxValueLen {
		b := s[k]
		if isSpace(b) || b == '"' || b == '\'' || b == '`' || b == ',' || b == ';' || b == '&' || b == '<' || b == '>' || b == ')' || b == ']' || b == '}' {
			break
		}
		if b == '\\' && k+1 < n && (s[k+1] == 'n' || s[k+1] == 'r' || s[k+1] == 't' || s[k+1] == '"' || s[k+1] == '\'') {
			break
		}
		k++
	}
	if k-vs > maxValueLen {
		a.ve = k
		return a, false
	}
	a.vs, a.ve = vs, k
	return a, vs < k
}

// parseXMLValue reads <key>value</key> (the value may sit on its own
// line).
func parseXMLValue(s string, ks, ke int) (int, int, bool, bool) {
	n := len(s)
	if ke >= n || s[ke] != '>' {
		return 0, 0, false, false
	}
	j := ke + 1
	for j < n && isSpace(s[j]) && j-ke < 64 {
		j++
	}
	vs := j
	for j < n && s[j] != '<' && !isSpace(s[j]) && j-vs <= maxValueLen {
		j++
	}
	ve := j
	for j < n && isSpace(s[j]) && j-ve < 64 {
		j++
	}
	if ve == vs || !strings.HasPrefix(s[j:], "</"+s[ks:ke]) {
		return 0, 0, false, false
	}
	return vs, ve, false, true
}

func isTypeName(w string) bool {
	switch w {
	case "string", "str", "String", "const", "final", "bytes", "char", "var", "let", "val":
		return true
	}
	return false
}

func skipBlanks(s string, j int) int {
	for j < len(s) && (s[j] == ' ' || s[j] == '\t') {
		j++
	}
	return j
}

// isConstName reports UPPER_SNAKE names (CURLOPT_PASSWORD, DB_PASSWORD).
func isConstName(k string) bool {
	up := false
	for i := 0; i < len(k); i++ {
		c := k[i]
		switch {
		case isUpper(c):
			up = true
		case isDigit(c) || c == '_':
		default:
			return false
		}
	}
	return up
}
