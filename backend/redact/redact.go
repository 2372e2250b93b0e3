// Package redact masks secrets in text before anything is embedded, stored,
// logged or shown: every exchange of a coding agent passes through Redact.
//
// Each secret is replaced by "[REDACTED:<kind>]" (see Kinds). Detection runs
// in two tiers, the first taking precedence where spans overlap:
//
//  1. specific patterns: provider tokens with a recognisable shape (AWS,
//     GitHub, GitLab, Slack, Stripe, OpenAI, Anthropic, Google, SendGrid,
//     Twilio, npm, Azure, age and many more), JWTs, PEM private key blocks,
//     credentials in URLs (database URIs, basic auth), Authorization
//     headers, cookies and session ids, command-line password flags and
//     Kubernetes Secret manifests;
//  2. generic assignments: key=value, key: value, "key": "value", export
//     KEY=..., XML elements and the like whose key names a password, secret,
//     token, API key, credential... Only the value is masked so the text
//     stays readable; placeholders (${API_KEY}, <your-token>, xxxx,
//     changeme), code references (os.environ["TOKEN"], var.db_password) and
//     identifiers (token_count, password_hash) are left alone.
//
// The functions are pure and safe for concurrent use. Running time is linear
// in the input: one pass finds the literal keywords every rule needs
// (case-insensitively, by a two-byte table); a rule runs only where its
// keywords occur, either anchored at each occurrence on a bounded stretch
// of text (provider prefixes, Bearer, Cookie:...; occurrences inside a
// match or a failed token are skipped) or on the merged, chunked windows of
// lines around them; the regular expressions are Go's (RE2, no
// backtracking) and the hand-written scanners read each byte a bounded
// number of times. Redacting the output again changes nothing: a
// replacement never matches a rule.
package redact

import (
	"sort"
	"strings"
	"unicode/utf8"
)

// Finding is one masked secret. It never holds the secret itself, so it can
// be logged.
type Finding struct {
	// Kind is the short name of what was found (see Kinds), e.g.
	// "aws-access-key", "password".
	Kind string `json:"kind"`
	// Start and End are the byte offsets of the masked span in the input.
	Start int `json:"start"`
	End   int `json:"end"`
}

// Marker is how every replacement starts; a replacement is
// Marker + kind + "]".
const Marker = "[REDACTED:"

// Replacement returns the text that replaces a secret of the given kind.
func Replacement(kind string) string { return Marker + kind + "]" }

// Redact returns s with every secret it detects replaced by
// Replacement(kind), and the findings in input order (offsets into s).
// Text without findings is returned unchanged (the same string).
func Redact(s string) (string, []Finding) {
	fs := Find(s)
	if len(fs) == 0 {
		return s, nil
	}
	var b strings.Builder
	b.Grow(len(s))
	last := 0
	for _, f := range fs {
		b.WriteString(s[last:f.Start])
		b.WriteString(Marker)
		b.WriteString(f.Kind)
		b.WriteByte(']')
		last = f.End
	}
	b.WriteString(s[last:])
	return b.String(), fs
}

// Find returns the secrets Redact would mask in s, in input order, without
// building the redacted text. Spans never overlap.
func Find(s string) []Finding {
	return run(s, false)
}

// Contains reports whether s holds anything Redact would mask. It stops at
// the first rule that finds something.
func Contains(s string) bool {
	return len(run(s, true)) > 0
}

// span is a candidate finding.
type span struct {
	start, end int
	kind       string
}

// run applies the rules in priority order. A later rule's span that overlaps
// an accepted one is dropped.
func run(s string, first bool) []Finding {
	if len(s) < 6 {
		return nil
	}
	hits := findKeywords(s)
	if hits == nil {
		return nil
	}
	var accepted []span
	var cand []span
	// add records a candidate; it reports false when the span overlaps one
	// of an earlier rule (it will be dropped), so that a scanner can go on
	// looking inside it.
	add := func(sp span) bool {
		if sp.start < 0 || sp.end > len(s) || sp.start >= sp.end {
			return false
		}
		cand = append(cand, sp)
		i := sort.Search(len(accepted), func(k int) bool { return accepted[k].end > sp.start })
		return !(i < len(accepted) && accepted[i].start < sp.end)
	}
	for ri, r := range rules {
		h := hits[ri]
		if len(h) == 0 {
			continue
		}
		cand = cand[:0]
		if r.scan != nil {
			r.scan(s, h, add)
		} else {
			r.runRegexp(s, h, add)
		}
		if len(cand) == 0 {
			continue
		}
		accepted = mergeSpans(accepted, cand)
		if first && len(accepted) > 0 {
			break
		}
	}
	if len(accepted) == 0 {
		return nil
	}
	out := make([]Finding, len(accepted))
	for i, a := range accepted {
		out[i] = Finding{Kind: a.kind, Start: a.start, End: a.end}
	}
	return out
}

// mergeSpans adds the candidates that overlap neither an accepted span nor
// an earlier candidate, keeping the result sorted. Linear after sorting the
// candidates.
func mergeSpans(acc, cand []span) []span {
	sort.SliceStable(cand, func(i, j int) bool { return cand[i].start < cand[j].start })
	var keep []span
	lastEnd := -1
	for _, c := range cand {
		if c.start < lastEnd {
			continue
		}
		// the first accepted span ending after c.start
		i := sort.Search(len(acc), func(k int) bool { return acc[k].end > c.start })
		if i < len(acc) && acc[i].start < c.end {
			continue
		}
		keep = append(keep, c)
		lastEnd = c.end
	}
	if len(keep) == 0 {
		return acc
	}
	out := make([]span, 0, len(acc)+len(keep))
	i, j := 0, 0
	for i < len(acc) || j < len(keep) {
		if j == len(keep) || (i < len(acc) && acc[i].start < keep[j].start) {
			out = append(out, acc[i])
			i++
		} else {
			out = append(out, keep[j])
			j++
		}
	}
	return out
}

// runRegexp runs r.re where its keywords occur (h): anchored at each
// occurrence not inside the previous match, or on the merged windows
// around them, which it cuts in chunks so that a huge window costs a
// bounded search per chunk.
func (r *rule) runRegexp(s string, h []int, add func(span) bool) {
	if r.anchored {
		done, nl := -1, -1
		// a token glued to a letter or digit on its left is rejected by
		// acceptToken anyway: skip the attempt
		tokenStart := r.group == 0 && !r.noLeft && r.plainToken
		for _, p := range h {
			if p < done || (tokenStart && p > 0 && isAlnum(s[p-1]) && !afterANSI(s, p)) {
				continue
			}
			end := min(len(s), p+r.maxLen)
			if !r.multiLine {
				if nl < p {
					// the next newline, found once per line
					if i := strings.IndexByte(s[p:], '\n'); i >= 0 {
						nl = p + i
					} else {
						nl = len(s)
					}
				}
				end = min(end, nl)
			}
			for end < len(s) && end > p && !utf8.RuneStart(s[end]) {
				end--
			}
			m := r.re.FindStringSubmatchIndex(s[p:end])
			if m == nil {
				if tokenStart {
					// a token that fails from its start fails from any
					// later point of the same run: skip the run
					done = p + 1
					for done < end && isTokenByte(s[done]) {
						done++
					}
				}
				continue
			}
			for k := range m {
				if m[k] >= 0 {
					m[k] += p
				}
			}
			done = m[1]
			r.accept(r, s, m, add)
		}
		return
	}
	ws, we := -1, -1
	flush := func() {
		if ws < 0 {
			return
		}
		const chunk, overlap = 8 << 10, 2 << 10
		for a := ws; a < we; {
			b := min(we, a+chunk+overlap)
			for b < we && !utf8.RuneStart(s[b]) {
				b--
			}
			next := min(we, a+chunk)
			for next < we && !utf8.RuneStart(s[next]) {
				next++
			}
			for _, m := range r.re.FindAllStringSubmatchIndex(s[a:b], -1) {
				if a+m[0] >= next && next < we {
					break // the next chunk finds it
				}
				for k := range m {
					if m[k] >= 0 {
						m[k] += a
					}
				}
				r.accept(r, s, m, add)
			}
			a = next
		}
	}
	for _, p := range h {
		if ws >= 0 && p-r.back <= we {
			// extend the current window: scan only bytes not seen yet
			b := min(len(s), p+r.fwd)
			if b > we || (we < len(s) && s[we] != '\n') {
				we = lineEnd(s, max(b, we), b+lineCap)
			}
			continue
		}
		flush()
		ws, we = window(s, p, r.back, r.fwd)
	}
	flush()
}

// lineEnd returns the first newline at or after from, or limit (clipped to
// the text and moved back to a rune boundary) when there is none before it.
func lineEnd(s string, from, limit int) int {
	limit = min(limit, len(s))
	if from >= limit {
		return from
	}
	if i := strings.IndexByte(s[from:limit], '\n'); i >= 0 {
		return from + i
	}
	for limit < len(s) && limit > from && !utf8.RuneStart(s[limit]) {
		limit--
	}
	return limit
}

// lineCap bounds how far a window reaches along a line beyond the rule's
// margins, so that a megabyte-long line costs each rule one bounded window
// per keyword cluster rather than the whole line.
const lineCap = 2048

// window returns the region a rule examines around a keyword at p: from
// back bytes before it to fwd bytes after it, widened to the enclosing
// lines but by at most lineCap on each side, on rune boundaries.
func window(s string, p, back, fwd int) (int, int) {
	a := max(0, p-back)
	lo := max(0, a-lineCap)
	if i := strings.LastIndexByte(s[lo:a], '\n'); i >= 0 {
		a = lo + i + 1
	} else {
		a = lo
	}
	b := min(len(s), p+fwd)
	hi := min(len(s), b+lineCap)
	if i := strings.IndexByte(s[b:hi], '\n'); i >= 0 {
		b = b + i
	} else {
		b = hi
	}
	for a < len(s) && a > 0 && !utf8.RuneStart(s[a]) {
		a++
	}
	for b < len(s) && b > a && !utf8.RuneStart(s[b]) {
		b--
	}
	return a, b
}

// isTokenByte reports bytes that occur inside tokens and keys.
func isTokenByte(c byte) bool {
	return isAlnum(c) || c == '_' || c == '-' || c == '+' || c == '/' || c == '=' || c == '.' || c == '~'
}
