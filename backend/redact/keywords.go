package redact

// The keyword pass: one scan over the input finds every occurrence of every
// rule's literal keywords, using a table indexed by the (case-folded) first
// two bytes. Its cost is one table look-up per byte plus a prefix compare
// per candidate keyword.

type keyword struct {
	text  string // lower case when fold
	fold  bool   // match ASCII case-insensitively
	rules []int  // indexes into rules
}

var (
	keywords []keyword
	// bigram maps a folded two-byte prefix to 1 + an index into kwGroups.
	bigram   [1 << 16]uint16
	kwGroups [][]int // keyword indexes sharing a bigram
)

var lowerTab = func() (t [256]byte) {
	for i := range t {
		t[i] = byte(i)
		if i >= 'A' && i <= 'Z' {
			t[i] = byte(i) + 'a' - 'A'
		}
	}
	return
}()

func foldBigram(a, b byte) int { return int(lowerTab[a])<<8 | int(lowerTab[b]) }

// indexKeywords builds the keyword table from the rules.
func indexKeywords() {
	byKey := map[string]int{}
	add := func(text string, fold bool, ri int) {
		if len(text) < 2 {
			panic("redact: keyword shorter than 2 bytes: " + text)
		}
		if fold {
			text = asciiLower(text)
		}
		k := text
		if !fold {
			k = "\x00" + text
		}
		ki, ok := byKey[k]
		if !ok {
			ki = len(keywords)
			byKey[k] = ki
			keywords = append(keywords, keyword{text: text, fold: fold})
			bg := foldBigram(text[0], text[1])
			if bigram[bg] == 0 {
				kwGroups = append(kwGroups, nil)
				bigram[bg] = uint16(len(kwGroups))
			}
			g := bigram[bg] - 1
			kwGroups[g] = append(kwGroups[g], ki)
		}
		for _, r := range keywords[ki].rules {
			if r == ri {
				return
			}
		}
		keywords[ki].rules = append(keywords[ki].rules, ri)
	}
	for ri, r := range rules {
		for _, k := range r.kw {
			add(k, true, ri)
		}
		for _, k := range r.kwCase {
			add(k, false, ri)
		}
	}
}

// findKeywords returns, per rule, the sorted byte offsets of its keyword
// occurrences in s; nil if there are none at all.
func findKeywords(s string) [][]int {
	var hits [][]int
	n := len(s)
	for i := 0; i+1 < n; i++ {
		g := bigram[foldBigram(s[i], s[i+1])]
		if g == 0 {
			continue
		}
		for _, ki := range kwGroups[g-1] {
			k := &keywords[ki]
			if !hasPrefixAt(s, i, k) {
				continue
			}
			if hits == nil {
				hits = make([][]int, len(rules))
			}
			for _, r := range k.rules {
				h := hits[r]
				if len(h) == 0 || h[len(h)-1] != i {
					hits[r] = append(h, i)
				}
			}
		}
	}
	return hits
}

func hasPrefixAt(s string, i int, k *keyword) bool {
	t := k.text
	if len(s)-i < len(t) {
		return false
	}
	if !k.fold {
		return s[i:i+len(t)] == t
	}
	for j := 0; j < len(t); j++ {
		if lowerTab[s[i+j]] != t[j] {
			return false
		}
	}
	return true
}

func asciiLower(s string) string {
	b := []byte(s)
	for i, c := range b {
		b[i] = lowerTab[c]
	}
	return string(b)
}

// containsFold reports whether s contains sub, ASCII case-insensitively;
// sub must be lower case. It does not allocate.
func containsFold(s, sub string) bool { return indexFold(s, sub) >= 0 }

// indexFold is strings.Index, ASCII case-insensitively; sub must be lower
// case.
func indexFold(s, sub string) int {
	n := len(sub)
	if n == 0 {
		return 0
	}
	c0 := sub[0]
	for i := 0; i+n <= len(s); i++ {
		if lowerTab[s[i]] != c0 {
			continue
		}
		j := 1
		for j < n && lowerTab[s[i+j]] == sub[j] {
			j++
		}
		if j == n {
			return i
		}
	}
	return -1
}

// hasSuffixFold is strings.HasSuffix, ASCII case-insensitively; suffix
// must be lower case.
func hasSuffixFold(s, suffix string) bool {
	if len(s) < len(suffix) {
		return false
	}
	t := s[len(s)-len(suffix):]
	for i := 0; i < len(t); i++ {
		if lowerTab[t[i]] != suffix[i] {
			return false
		}
	}
	return true
}

// lowerSmall lowercases s into buf when it fits (for map look-ups without
// allocating); ok is false when s is longer than buf.
func lowerSmall(buf []byte, s string) ([]byte, bool) {
	if len(s) > len(buf) {
		return nil, false
	}
	for i := 0; i < len(s); i++ {
		buf[i] = lowerTab[s[i]]
	}
	return buf[:len(s)], true
}
