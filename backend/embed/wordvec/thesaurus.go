package wordvec

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
)

// A Thesaurus maps an English word to related words taken from WordNet:
// its synonyms (the other single-word lemmas of the word's first senses)
// and its hypernyms (the single-word lemmas of those senses' direct
// hypernyms). Search uses it to expand the BM25 leg of a query, so "bill"
// also finds "invoice". It is immutable and safe for concurrent use.
//
// The file format is UTF-8 text, one entry a line, entries sorted by word
// (byte order):
//
//	MTTH 1
//	word TAB pos TAB synonym synonym ... TAB hypernym hypernym ...
//
// where pos is the parts of speech the word is a lemma of (letters of
// "nvar": noun, verb, adjective, adverb) and the lists may be empty.
//
// A Thesaurus is its file, read in place: loading validates every line and
// records where each starts, and a lookup is a binary search on the
// lines' words (no map of entries is built; see docs/benchmarks.md,
// exp-speed).
type Thesaurus struct {
	// data is the file, every line ending in a newline.
	data string
	// lines holds the offset in data of each entry's line, in order, then
	// len(data): entry i is data[lines[i]:lines[i+1]-1].
	lines []uint32
	// byPrefix[k] is the index of the first entry whose prefixKey is k or
	// more, so a lookup binary-searches only the entries of its word's
	// first two bytes.
	byPrefix []uint32
}

// prefixKey is a word's first two bytes (the second 0 for a one-byte word),
// which orders words as their bytes do.
func prefixKey(w string) int {
	switch len(w) {
	case 0:
		return 0
	case 1:
		return int(w[0]) << 8
	}
	return int(w[0])<<8 | int(w[1])
}

type thEntry struct {
	pos      uint8
	syn, hyp []string
}

// Part-of-speech bits of a thesaurus entry.
const (
	posNoun uint8 = 1 << iota
	posVerb
	posAdj
	posAdv
)

const posLetters = "nvar"

// ThesaurusMagic opens every thesaurus file.
const ThesaurusMagic = "MTTH 1"

// MaxThesaurusEntries bounds a thesaurus file's entries (WordNet 3.0 has
// about 150,000 lemmas).
const MaxThesaurusEntries = 1 << 20

// maxThesaurusBytes bounds a thesaurus file's size, so that line offsets
// fit in 32 bits.
const maxThesaurusBytes = 1<<32 - 1

// maxRelated bounds one entry's list of synonyms or hypernyms.
const maxRelated = 256

// Len returns the number of words the thesaurus knows.
func (t *Thesaurus) Len() int { return len(t.lines) - 1 }

// Related calls fn with each word related to word, synonyms with
// synonym=true, then hypernyms. word is a lowercase word as Tokens emits
// it; an inflected form is reduced to its lemma first the way WordNet's
// morphy does (irregular forms are entries of their own): "stickers" finds
// "sticker", "attached" the verb "attach". Unknown words have none.
func (t *Thesaurus) Related(word string, fn func(related string, synonym bool)) {
	i, ok := t.lookup(word)
	if !ok {
		return
	}
	_, _, syn, hyp := t.fields(i)
	eachWord(syn, func(w string) { fn(w, true) })
	eachWord(hyp, func(w string) { fn(w, false) })
}

// eachWord calls fn with each word of a space-separated list.
func eachWord(list string, fn func(string)) {
	for list != "" {
		w, rest, _ := strings.Cut(list, " ")
		fn(w)
		list = rest
	}
}

// detach is WordNet's morphy detachment rules: a suffix, its replacement
// and the part of speech the result must be a lemma of.
var detach = []struct {
	suffix, repl string
	pos          uint8
}{
	{"ses", "s", posNoun}, {"xes", "x", posNoun}, {"zes", "z", posNoun},
	{"ches", "ch", posNoun}, {"shes", "sh", posNoun}, {"men", "man", posNoun},
	{"ies", "y", posNoun}, {"s", "", posNoun},
	{"ies", "y", posVerb}, {"es", "e", posVerb}, {"es", "", posVerb},
	{"ed", "e", posVerb}, {"ed", "", posVerb}, {"ing", "e", posVerb},
	{"ing", "", posVerb}, {"s", "", posVerb},
	{"est", "", posAdj}, {"er", "", posAdj}, {"est", "e", posAdj}, {"er", "e", posAdj},
}

// lookup returns the entry word is, or the first entry of its lemma by
// the detachment rules.
func (t *Thesaurus) lookup(word string) (int, bool) {
	if i, ok := t.find(word); ok {
		return i, true
	}
	for _, d := range detach {
		if len(word) <= len(d.suffix)+1 || !strings.HasSuffix(word, d.suffix) {
			continue
		}
		if i, ok := t.find(word[:len(word)-len(d.suffix)] + d.repl); ok && t.pos(i)&d.pos != 0 {
			return i, true
		}
	}
	return 0, false
}

// find returns the index of word's entry by binary search on the sorted
// lines of its first two bytes.
func (t *Thesaurus) find(word string) (int, bool) {
	k := prefixKey(word)
	lo, hi := int(t.byPrefix[k]), int(t.byPrefix[k+1])
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if t.word(m) < word {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo, lo < int(t.byPrefix[k+1]) && t.word(lo) == word
}

// indexPrefixes fills byPrefix from the validated, sorted lines.
func (t *Thesaurus) indexPrefixes() {
	t.byPrefix = make([]uint32, 1<<16+1)
	k := 0
	for i := 0; i < t.Len(); i++ {
		for w := prefixKey(t.word(i)); k <= w; k++ {
			t.byPrefix[k] = uint32(i)
		}
	}
	for ; k < len(t.byPrefix); k++ {
		t.byPrefix[k] = uint32(t.Len())
	}
}

// line returns entry i's line without its newline.
func (t *Thesaurus) line(i int) string { return t.data[t.lines[i] : t.lines[i+1]-1] }

// word returns entry i's word.
func (t *Thesaurus) word(i int) string {
	l := t.line(i)
	return l[:strings.IndexByte(l, '\t')]
}

// fields returns entry i's four fields (the file was validated on load).
func (t *Thesaurus) fields(i int) (word, pos, syn, hyp string) {
	word, rest, _ := strings.Cut(t.line(i), "\t")
	pos, rest, _ = strings.Cut(rest, "\t")
	syn, hyp, _ = strings.Cut(rest, "\t")
	return word, pos, syn, hyp
}

// pos returns entry i's part-of-speech bits.
func (t *Thesaurus) pos(i int) uint8 {
	_, letters, _, _ := t.fields(i)
	var p uint8
	for k := 0; k < len(letters); k++ {
		p |= 1 << strings.IndexByte(posLetters, letters[k])
	}
	return p
}

// WriteTo writes the thesaurus in its file format.
func (t *Thesaurus) WriteTo(w io.Writer) (int64, error) {
	n, err := io.WriteString(w, t.data)
	return int64(n), err
}

// formatThesaurus returns entries in the file format.
func formatThesaurus(entries map[string]thEntry) string {
	words := make([]string, 0, len(entries))
	for word := range entries {
		words = append(words, word)
	}
	sort.Strings(words)
	var b strings.Builder
	b.WriteString(ThesaurusMagic + "\n")
	for _, word := range words {
		e := entries[word]
		b.WriteString(word)
		b.WriteByte('\t')
		for i := range posLetters {
			if e.pos&(1<<i) != 0 {
				b.WriteByte(posLetters[i])
			}
		}
		b.WriteByte('\t')
		b.WriteString(strings.Join(e.syn, " "))
		b.WriteByte('\t')
		b.WriteString(strings.Join(e.hyp, " "))
		b.WriteByte('\n')
	}
	return b.String()
}

// errThesaurus marks a malformed thesaurus file.
var errThesaurus = errors.New("wordvec: malformed thesaurus")

// LoadThesaurus reads a thesaurus written by WriteTo, validating every line.
func LoadThesaurus(r io.Reader) (*Thesaurus, error) {
	b, err := io.ReadAll(io.LimitReader(r, maxThesaurusBytes+1))
	if err != nil {
		return nil, fmt.Errorf("%w: %w", errThesaurus, err)
	}
	return ParseThesaurus(string(b))
}

// ParseThesaurus returns the thesaurus whose file is data, validating every
// line as LoadThesaurus does. The thesaurus uses data in place (a final
// line without its newline is the one thing copied to add it).
func ParseThesaurus(data string) (*Thesaurus, error) {
	if len(data) > maxThesaurusBytes {
		return nil, fmt.Errorf("%w: more than %d bytes", errThesaurus, maxThesaurusBytes)
	}
	if data == "" {
		return nil, fmt.Errorf("%w: empty", errThesaurus)
	}
	if data[len(data)-1] != '\n' {
		data += "\n"
	}
	header, _, _ := strings.Cut(data, "\n")
	if header != ThesaurusMagic {
		return nil, fmt.Errorf("%w: header %q, want %q", errThesaurus, trunc(header), ThesaurusMagic)
	}
	t := &Thesaurus{data: data, lines: make([]uint32, 0, strings.Count(data, "\n"))}
	prev := ""
	line := 1
	for off := len(header) + 1; off < len(data); {
		line++
		end := off + strings.IndexByte(data[off:], '\n')
		if len(t.lines) >= MaxThesaurusEntries {
			return nil, fmt.Errorf("%w: more than %d entries", errThesaurus, MaxThesaurusEntries)
		}
		word, err := checkThesaurusLine(data[off:end], prev)
		if err != nil {
			return nil, fmt.Errorf("%w: line %d: %w", errThesaurus, line, err)
		}
		prev = word
		t.lines = append(t.lines, uint32(off))
		off = end + 1
	}
	t.lines = append(t.lines, uint32(len(data)))
	t.indexPrefixes()
	return t, nil
}

// checkThesaurusLine validates one entry line (without its newline) that
// follows the entry of word prev, and returns its word.
func checkThesaurusLine(l, prev string) (string, error) {
	if n := strings.Count(l, "\t"); n != 3 {
		return "", fmt.Errorf("%d fields, want 4", n+1)
	}
	word, rest, _ := strings.Cut(l, "\t")
	pos, rest, _ := strings.Cut(rest, "\t")
	syn, hyp, _ := strings.Cut(rest, "\t")
	if !thesaurusWord(word) {
		return "", fmt.Errorf("bad word %q", trunc(word))
	}
	if word <= prev {
		return "", fmt.Errorf("%q is out of order or repeated", word)
	}
	var seen uint8
	for _, c := range pos {
		i := strings.IndexRune(posLetters, c)
		if i < 0 || seen&(1<<i) != 0 {
			return "", fmt.Errorf("bad part of speech %q", trunc(pos))
		}
		seen |= 1 << i
	}
	if err := checkRelated(syn); err != nil {
		return "", fmt.Errorf("synonyms: %w", err)
	}
	if err := checkRelated(hyp); err != nil {
		return "", fmt.Errorf("hypernyms: %w", err)
	}
	return word, nil
}

// checkRelated validates a space-separated list of related words.
func checkRelated(s string) error {
	if s == "" {
		return nil
	}
	if n := strings.Count(s, " ") + 1; n > maxRelated {
		return fmt.Errorf("%d words, want at most %d", n, maxRelated)
	}
	for {
		w, rest, more := strings.Cut(s, " ")
		if !thesaurusWord(w) {
			return fmt.Errorf("bad word %q", trunc(w))
		}
		if !more {
			return nil
		}
		s = rest
	}
}

// thesaurusWord reports whether w may be a thesaurus word: 1..MaxWordBytes
// bytes of lowercase letters, digits, hyphens, apostrophes and dots.
func thesaurusWord(w string) bool {
	if w == "" || len(w) > MaxWordBytes {
		return false
	}
	for i := 0; i < len(w); i++ {
		switch c := w[i]; {
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9', c == '-', c == '\'', c == '.':
		default:
			return false
		}
	}
	return true
}

func trunc(s string) string {
	if len(s) > 40 {
		return s[:40] + "…"
	}
	return s
}

// WordNetFiles are the files of a WordNet 3.0 database BuildThesaurus reads,
// by name: index.POS, data.POS and POS.exc for POS in noun, verb, adj, adv
// (a missing .exc file is allowed).
var WordNetFiles = []string{
	"index.noun", "index.verb", "index.adj", "index.adv",
	"data.noun", "data.verb", "data.adj", "data.adv",
	"noun.exc", "verb.exc", "adj.exc", "adv.exc",
}

var wnPOS = []struct {
	name string
	bit  uint8
}{{"noun", posNoun}, {"verb", posVerb}, {"adj", posAdj}, {"adv", posAdv}}

type synset struct {
	words []string
	hyper []int64 // offsets into the same part of speech's data file
}

// BuildThesaurus builds a thesaurus from a WordNet database: open returns
// one of WordNetFiles' contents. For every single-word lemma, its synonyms
// are the other single-word lemmas of its first senses synsets (in sense
// order, as index.POS lists them) and its hypernyms the single-word lemmas
// of those synsets' direct hypernyms ("@" and "@i" pointers). Irregular
// inflections (POS.exc) become entries holding their lemmas' relations.
// The same files give the same thesaurus.
func BuildThesaurus(open func(name string) (io.ReadCloser, error), senses int) (*Thesaurus, error) {
	if senses < 1 {
		return nil, fmt.Errorf("thesaurus: senses %d, want at least 1", senses)
	}
	entries := map[string]thEntry{}
	type acc struct {
		pos      uint8
		syn, hyp []string
	}
	accs := map[string]*acc{}
	get := func(w string) *acc {
		a := accs[w]
		if a == nil {
			a = &acc{}
			accs[w] = a
		}
		return a
	}
	for _, p := range wnPOS {
		synsets, err := readWordNetData(open, "data."+p.name)
		if err != nil {
			return nil, err
		}
		err = readWordNetLines(open, "index."+p.name, false, func(f []string) error {
			// lemma pos synset_cnt p_cnt [ptr_symbol]{p_cnt} sense_cnt tagsense_cnt offset{synset_cnt}
			if len(f) < 4 {
				return fmt.Errorf("short line")
			}
			lemma := strings.ToLower(f[0])
			nsyn, err1 := strconv.Atoi(f[2])
			np, err2 := strconv.Atoi(f[3])
			if err1 != nil || err2 != nil || nsyn < 0 || np < 0 || len(f) != 6+np+nsyn {
				return fmt.Errorf("bad counts")
			}
			if !thesaurusWord(lemma) {
				return nil // multiword lemmas ("random_access_memory") and odd ones
			}
			a := get(lemma)
			a.pos |= p.bit
			for _, o := range f[6+np : 6+np+min(nsyn, senses)] {
				off, err := strconv.ParseInt(o, 10, 64)
				if err != nil {
					return fmt.Errorf("bad offset %q", o)
				}
				s, ok := synsets[off]
				if !ok {
					return fmt.Errorf("offset %d is not in data.%s", off, p.name)
				}
				a.syn = append(a.syn, s.words...)
				for _, h := range s.hyper {
					if hs, ok := synsets[h]; ok {
						a.hyp = append(a.hyp, hs.words...)
					}
				}
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	// Irregular inflections: "children child", "went go".
	type exc struct {
		form   string
		lemmas []string
		bit    uint8
	}
	var excs []exc
	for _, p := range wnPOS {
		err := readWordNetLines(open, p.name+".exc", true, func(f []string) error {
			if len(f) < 2 {
				return fmt.Errorf("short line")
			}
			excs = append(excs, exc{form: strings.ToLower(f[0]), lemmas: f[1:], bit: p.bit})
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	for _, x := range excs {
		if !thesaurusWord(x.form) {
			continue
		}
		var syn, hyp []string
		for _, l := range x.lemmas {
			if a, ok := accs[strings.ToLower(l)]; ok && a.pos&x.bit != 0 {
				syn = append(syn, strings.ToLower(l))
				syn = append(syn, a.syn...)
				hyp = append(hyp, a.hyp...)
			}
		}
		if len(syn) == 0 {
			continue
		}
		a := get(x.form)
		a.syn = append(a.syn, syn...)
		a.hyp = append(a.hyp, hyp...)
	}
	for w, a := range accs {
		e := thEntry{pos: a.pos, syn: uniqueWords(a.syn, w, nil)}
		e.hyp = uniqueWords(a.hyp, w, e.syn)
		if len(e.syn) == 0 && len(e.hyp) == 0 && e.pos == 0 {
			continue
		}
		entries[w] = e
	}
	t, err := ParseThesaurus(formatThesaurus(entries))
	if err != nil {
		return nil, fmt.Errorf("thesaurus: %w", err)
	}
	return t, nil
}

// uniqueWords returns ws in order without repeats, self, the words of not,
// and words that are not thesaurus words, at most maxRelated of them.
func uniqueWords(ws []string, self string, not []string) []string {
	seen := map[string]bool{self: true}
	for _, w := range not {
		seen[w] = true
	}
	var out []string
	for _, w := range ws {
		if seen[w] || !thesaurusWord(w) {
			continue
		}
		seen[w] = true
		out = append(out, w)
		if len(out) == maxRelated {
			break
		}
	}
	return out
}

// readWordNetData parses a data.POS file into its synsets by offset.
func readWordNetData(open func(string) (io.ReadCloser, error), name string) (map[int64]synset, error) {
	out := map[int64]synset{}
	err := readWordNetLines(open, name, false, func(f []string) error {
		// offset lex_filenum ss_type w_cnt(hex) {word lex_id} p_cnt {sym offset pos src/tgt} ...
		if len(f) < 4 {
			return fmt.Errorf("short line")
		}
		off, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil {
			return fmt.Errorf("bad offset %q", f[0])
		}
		nw, err := strconv.ParseInt(f[3], 16, 32)
		if err != nil || nw < 1 || len(f) < 5+2*int(nw) {
			return fmt.Errorf("bad word count %q", f[3])
		}
		var s synset
		for k := 0; k < int(nw); k++ {
			w := f[4+2*k]
			if i := strings.IndexByte(w, '('); i > 0 {
				w = w[:i] // adjective markers: "galore(ip)"
			}
			if w = strings.ToLower(w); thesaurusWord(w) {
				s.words = append(s.words, w)
			}
		}
		i := 4 + 2*int(nw)
		np, err := strconv.Atoi(f[i])
		if err != nil || np < 0 || len(f) < i+1+4*np {
			return fmt.Errorf("bad pointer count %q", f[i])
		}
		for k := 0; k < np; k++ {
			p := f[i+1+4*k : i+5+4*k]
			if (p[0] == "@" || p[0] == "@i") && p[2] == f[2][:1] {
				h, err := strconv.ParseInt(p[1], 10, 64)
				if err != nil {
					return fmt.Errorf("bad pointer offset %q", p[1])
				}
				s.hyper = append(s.hyper, h)
			}
		}
		out[off] = s
		return nil
	})
	return out, err
}

// readWordNetLines calls fn with the fields of each line of a WordNet file
// before any gloss (" | "), skipping the licence header (lines starting
// with a space). optional files may be absent.
func readWordNetLines(open func(string) (io.ReadCloser, error), name string, optional bool, fn func([]string) error) error {
	rc, err := open(name)
	if err != nil {
		if optional {
			return nil
		}
		return fmt.Errorf("thesaurus: %s: %w", name, err)
	}
	defer rc.Close()
	sc := bufio.NewScanner(rc)
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	n := 0
	for sc.Scan() {
		n++
		line := sc.Text()
		if line == "" || line[0] == ' ' {
			continue
		}
		if i := strings.Index(line, " | "); i >= 0 {
			line = line[:i]
		}
		if err := fn(strings.Fields(line)); err != nil {
			return fmt.Errorf("thesaurus: %s line %d: %w", name, n, err)
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("thesaurus: %s: %w", name, err)
	}
	return nil
}
