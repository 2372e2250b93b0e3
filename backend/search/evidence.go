package search

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/memtray/memtray/backend/embed"
	"github.com/memtray/memtray/backend/embed/wordvec"
	"github.com/memtray/memtray/backend/memory"
	"github.com/memtray/memtray/backend/store"
)

// Bounds of the store sample the vector evidence is measured against.
const (
	// EvidenceSample is how many memories' embeddings the sample holds.
	EvidenceSample = 256
	// MinEvidenceSample is the least number of texts the query's typical
	// cosine is estimated on: a store sample smaller than that is topped up
	// with the background statements (background).
	MinEvidenceSample = 32
)

// Evidence is the query-level test of Run's step 4: does the store hold
// what the query is about? It holds when the lexical or the vector test
// does.
type Evidence struct {
	// Coverage is the best candidate's share of the query's information
	// (InfoShare: its words weighed by their surprisal in general language);
	// Unknown is the share carried by the words no memory contains. Lexical
	// is Coverage > Unknown.
	Coverage float64 `json:"coverage"`
	Unknown  float64 `json:"unknown"`
	Lexical  bool    `json:"lexical"`
	// Cosine is the best candidate's cosine to the query (embedded as the
	// memories are: evidenceVector); Mean and Std are
	// the query's cosine over Sample texts: memories of the store, topped up
	// with background statements in a store of fewer than
	// MinEvidenceSample; Threshold is Mean + ExpectedMaxZ(max(n, Sample)) x
	// Std. Vector is Cosine >= Threshold; it is false without a sample (no
	// query vector, or the background could not be embedded).
	Cosine    float64 `json:"cosine"`
	Mean      float64 `json:"mean"`
	Std       float64 `json:"std"`
	Threshold float64 `json:"threshold"`
	Sample    int     `json:"sample"`
	Vector    bool    `json:"vector"`
	// UnknownNames are the query's words written as names (a tool, a
	// library, an identifier) that no memory contains. A query naming
	// something the store has never seen is about that thing: memories
	// whose embedding is near the query's are near its other words, so
	// the vector test does not count for it (Holds).
	UnknownNames []string `json:"unknown_names,omitempty"`
	// BestLacks are the query's words written as names that some memory
	// contains but the best candidate (the one of Coverage) does not
	// (LackedNames): names the store knows only in other memories than
	// the one whose words are the lexical evidence. A diagnostic for
	// reading why a prompt got memories ("GitHub Actions caching for a
	// Rust build" matched by a memory about GitHub Actions alone); no test
	// uses it (docs/benchmarks.md, the evidence gate: on the dev sets the
	// relevant queries lack such names as often as the unrelated prompts).
	BestLacks []string `json:"best_lacks,omitempty"`
	// Info is the query's information: the sum of its words' (QueryWord.
	// Info, nats); MinInfo is what a query naming nothing must carry at
	// least: the information of a word general language does not use
	// (QueryWords' maxInfo, the built-in word model's rarest word). Generic
	// says the query is a prompt (Query.Prompt) that carries less and
	// writes no word as a name (see Specific): a prompt like "continue",
	// "yes do it", "thanks!" or "fix it" says too little to be about
	// anything a memory could hold. Some memory contains whatever word it
	// has and is near its embedding, so neither test means anything for it
	// (Holds).
	// Generic is also set on a prompt whose every candidate lacks a name
	// the prompt writes by its form, and whose words outside those names
	// carry too little (UnheldNames; subject.go): "why does -a fail?" with
	// no memory holding "-a" in reach is "why does fail?".
	Info    float64 `json:"info"`
	MinInfo float64 `json:"min_info"`
	Generic bool    `json:"generic,omitempty"`
	// UnheldNames are the names the prompt writes by their form (a flag,
	// a folder or path, a call, a variable, a number written as an
	// identifier, a version: subjectSpans) that no candidate holds, when
	// the prompt got nothing for lacking them (Generic).
	UnheldNames []string `json:"unheld_names,omitempty"`
	// AffixNames are the UnknownNames some candidate holds as the start or
	// end of a longer term (QueryWord.Affix): they count as unknown for
	// the lexical and the vector test, but do not make NamesUnknown.
	AffixNames []string `json:"affix_names,omitempty"`
	// NamesUnknown says the query is a prompt (Query.Prompt) naming
	// something no memory contains (UnknownNames less AffixNames): it is about that thing,
	// whatever else of it the store's words cover ("How do I write a Django
	// migration ..." in a store of another framework's migrations). A
	// search is not held to it: whoever searches asked for the nearest.
	NamesUnknown bool `json:"names_unknown,omitempty"`
	// NamesOutOfReach are the query's words written as names that some
	// memory contains but none within a scoped prompt's reach
	// (QueryWord.OutOfReach): names of what only other projects' memories
	// mention. Like UnknownNames the vector test does not count for them
	// (Holds); unlike them they do not make NamesUnknown.
	NamesOutOfReach []string `json:"names_out_of_reach,omitempty"`
	// LexicalCosine is the cosine to the query (embedded as for Cosine) of
	// the lexical test's memory, the best candidate by Coverage; LexicalZ
	// is how many of the sample's standard deviations it lies above the
	// sample's mean (0 without a sample). LexicalFar says the lexical test
	// holds but that memory is no nearer the query than the sample's mean: the words it shares with
	// the query are there by chance, in a text about something else ("an
	// error" of a memory about a crash, for "a bash one-liner that greps a
	// log for ERROR"), so the lexical test does not count (Holds). A
	// memory about what the query asks is nearer than a typical memory of
	// the store even when the query paraphrases it; without a sample there
	// is no mean, and the lexical test stands alone.
	LexicalCosine float64 `json:"lexical_cosine"`
	LexicalZ      float64 `json:"lexical_z"`
	LexicalFar    bool    `json:"lexical_far,omitempty"`
	// Anchors are the query's words the lexical test's memory holds that
	// general language does not use and no other memory of the store
	// holds (AnchorWords): an identifier, a flag's value, an error code
	// the query names and exactly one memory writes. Such a word is not
	// shared by chance, so the memory is what the query is about however
	// far its embedding lies (a list of identifiers, code-heavy text and
	// a short prompt embed as noise): with an anchor, LexicalFar is not
	// set.
	Anchors []string `json:"anchors,omitempty"`
	// Words are the query's words with their information, each marked
	// "+" when the best candidate holds it and "?" when no memory does,
	// for reading why a prompt got memories (eval sessions --dump); not
	// serialised.
	Words []string `json:"-"`
}

// Holds reports whether the evidence says the store holds what the query
// is about: the query is not generic nor a prompt naming what the store
// lacks, and the lexical test holds with a memory not far from the query
// (LexicalFar), or the vector test holds and the query names nothing the
// store lacks.
func (ev Evidence) Holds() bool {
	if ev.Generic || ev.NamesUnknown {
		return false
	}
	return (ev.Lexical && !ev.LexicalFar) || (ev.Vector && len(ev.UnknownNames) == 0 && len(ev.NamesOutOfReach) == 0)
}

// Specific reports whether a query of words ws says enough to be about
// something: it writes a word as a name, or its words' information (their
// sum, returned) is at least minInfo.
func Specific(ws []QueryWord, minInfo float64) (info float64, ok bool) {
	named := false
	for _, w := range ws {
		info += w.Info
		named = named || w.Name
	}
	return info, named || info >= minInfo
}

// QueryWord is a distinct word of a query: the terms the store's analyzer
// makes of it, its information and whether no memory contains any of its
// terms.
type QueryWord struct {
	// Word is the word, lower-cased.
	Word    string
	Terms   []string
	Info    float64
	Unknown bool
	// Name is set when the text writes the word as a name (see nameWords):
	// a tool, library, product or identifier the query is about.
	Name bool
	// Affix is set on an Unknown name that a candidate holds as the start
	// or the end of a longer term (AffixOf): "Surreal" where a memory
	// says "surrealdb", "CNC" where it says "LinuxCNC". Such a name may be
	// the store's thing written short or another thing ("Java" and
	// "JavaScript"), so it stays Unknown (its information counts against
	// the lexical test, and the vector test alone is not evidence for it)
	// but a prompt naming it is not refused outright (NamesUnknown).
	Affix bool
	// OutOfReach is set, for a scoped prompt (Query.ProjectScoped), on a
	// word written as a name that some memory contains (not Unknown) but
	// no memory within the prompt's reach does: a name only other
	// projects' memories mention ("Tailwind" asked in a project whose
	// memories never say it, while another project's do). The recall can
	// give none of those memories, so for the vector test the name is as
	// unknown as one no memory contains (the memories near the prompt are
	// near its other words), but it is no reason to refuse the prompt
	// outright (NamesUnknown): the store knows the thing.
	OutOfReach bool
	// Count is set on a word the text writes only as a count (see
	// nameWords: "10" in "the 10 largest files"): general language
	// writes counts, though the word model holds no number, so it anchors
	// nothing (AnchorWords).
	Count bool
	// Form is set on a name whose words are all stop words ("-a",
	// "./out": stopNames): its one term is the names field's, as the
	// text writes it.
	Form bool
	// Memories is how many memories of the store hold the word: the
	// largest document frequency of its terms (0 for an Unknown word, or
	// one only compound terms of the index hold).
	Memories int
}

// QueryWords returns the distinct words of text that the analyzer keeps
// (analyze; stop words go) with their information: the surprisal -ln p of
// the word in general language (wordProb, e.g. the built-in word model's
// unigram probability; a word it does not know gets maxInfo). A word is
// unknown when df (document frequencies of the store) gives none of its
// terms a memory.
//
// Unlike the store's IDF, the weight does not depend on the store: in a
// store of a handful of memories every term it holds is rare and every
// other one absent, while "kubernetes" carries more of a prompt than
// "explain" whatever the store holds.
func QueryWords(text string, analyze func(string) []string, df map[string]int, wordProb func(string) (float64, bool), maxInfo float64) []QueryWord {
	var out []QueryWord
	seen := map[string]bool{}
	names, counts := nameWords(text)
	known := func(terms []string) bool {
		for _, t := range terms {
			if df[t] > 0 {
				return true
			}
		}
		return false
	}
	for _, w := range words(text) {
		lw := strings.ToLower(w)
		parts := []string{lw}
		if strings.ContainsAny(lw, ".:_") && !known(analyze(lw)) {
			// An identifier no memory holds whole ("opk.core" where
			// memories say "opk/core/rules.py", "pattern_match" where
			// they say "pattern match") is judged by its parts
			// (identParts).
			parts = identParts(lw)
		}
		for _, p := range parts {
			if seen[p] {
				continue
			}
			seen[p] = true
			terms := analyze(p)
			if len(terms) == 0 {
				continue
			}
			info := maxInfo
			if pr, ok := wordProb(p); ok && pr > 0 {
				info = math.Min(-math.Log(pr), maxInfo)
			}
			memories := 0
			for _, t := range terms {
				memories = max(memories, df[t])
			}
			out = append(out, QueryWord{Word: p, Terms: terms, Info: info, Unknown: !known(terms), Name: names[lw], Count: counts[lw], Memories: memories})
		}
	}
	for _, n := range stopNames(text, analyze) {
		if seen[n] {
			continue
		}
		seen[n] = true
		info := maxInfo
		if pr, ok := wordProb(n); ok && pr > 0 {
			info = math.Min(-math.Log(pr), maxInfo)
		}
		out = append(out, QueryWord{Word: n, Terms: []string{n}, Info: info, Unknown: df[n] == 0, Name: true, Form: true, Memories: df[n]})
	}
	return out
}

// nameWords returns the words of text (lower-cased) that it writes as
// names at least once: with a capital letter after the first letter
// ("GraphQL", "useMemo", "SQL"), letters mixed with digits, '_' or a
// joiner ("PySide6", "spawn_blocking", "httpx.WriteProblem"), capitalised
// other than at the start of a sentence ("Kafka" in "Explain how Kafka
// works"), or inside a name written by its form (memory.NameSpans: the
// "firmware" of "--firmware", the "assets" of "assets/", the "abs" of
// "abs(x)", the "8080" of ":8080", every word of a code span). It also
// returns the words it writes as counts: digits only (a decimal point
// allowed), never inside such a name ("the 10 largest files"; not the
// "8080" of "localhost:8080", nor "1.22" in "Go 1.22", a version).
func nameWords(text string) (names, counts map[string]bool) {
	names, counts = map[string]bool{}, map[string]bool{}
	var forms [][2]int
	if namesByForm {
		forms = memory.NameSpans(text)
	}
	var sentenceStart bool
	prev := 0
	for _, sp := range wordSpans(text) {
		sentenceStart = prev == 0 || strings.ContainsAny(text[prev:sp[0]], ".?!\n")
		prev = sp[1]
		w := text[sp[0]:sp[1]]
		lw := strings.ToLower(w)
		inForm := slices.ContainsFunc(forms, func(f [2]int) bool { return f[0] <= sp[0] && sp[1] <= f[1] })
		switch {
		case isName(w, sentenceStart) || inForm:
			names[lw] = true
		case isCount(w):
			counts[lw] = true
		}
	}
	for w := range names {
		delete(counts, w)
	}
	return names, counts
}

// namesByForm makes nameWords read the names written by their form
// (memory.NameSpans; ablation switch).
var namesByForm = true

// isCount reports whether w is written as a count: digits, with at most
// one decimal point between them.
func isCount(w string) bool {
	digits, points := 0, 0
	for _, r := range w {
		switch {
		case r >= '0' && r <= '9':
			digits++
		case r == '.':
			points++
		default:
			return false
		}
	}
	return digits > 0 && points <= 1
}

// isName reports whether w is written as a name (see nameWords); first
// says it opens a sentence.
func isName(w string, first bool) bool {
	letters, others := 0, false
	for i, r := range w {
		switch {
		case unicode.IsLetter(r):
			letters++
			if i > 0 && unicode.IsUpper(r) {
				return true
			}
		case r == '\'' || r == '\u2019':
			// "what's", "don't": an English contraction, no name
		default:
			others = true
		}
	}
	if letters > 2 && others {
		return true // "PySide6", "spawn_blocking", "next.js"; not "e.g"
	}
	r, _ := utf8.DecodeRuneInString(w)
	return !first && letters > 1 && unicode.IsUpper(r) // not the pronoun "I"
}

// UnknownNames returns the words of ws written as names that no memory
// contains.
func UnknownNames(ws []QueryWord) []string {
	var out []string
	for _, w := range ws {
		if w.Name && w.Unknown {
			out = append(out, w.Word)
		}
	}
	return out
}

// MinAffixLen is the shortest term AffixOf finds inside a longer one:
// shorter ones ("go" in "goal", "ai" in "aim") start or end too many
// unrelated words.
const MinAffixLen = 3

// AffixOf reports whether one of terms (a query word's analysed terms)
// starts or ends a longer term of doc (a memory's docTerms) without being
// all of it, and is at least MinAffixLen bytes long: "surreal" in
// "surrealdb", "cnc" in "linuxcnc".
func AffixOf(terms []string, doc map[string]bool) bool {
	for _, t := range terms {
		if len(t) < MinAffixLen {
			continue
		}
		for d := range doc {
			if len(d) > len(t) && (strings.HasPrefix(d, t) || strings.HasSuffix(d, t)) {
				return true
			}
		}
	}
	return false
}

// RefusedNames returns the words of UnknownNames that a prompt is refused
// for (Evidence.NamesUnknown): those no candidate holds even as the start
// or end of a longer term (QueryWord.Affix).
func RefusedNames(ws []QueryWord) []string {
	var out []string
	for _, w := range ws {
		if w.Name && w.Unknown && !w.Affix {
			out = append(out, w.Word)
		}
	}
	return out
}

// NamesOutOfReach returns the words of ws written as names that are out
// of a scoped prompt's reach (QueryWord.OutOfReach).
func NamesOutOfReach(ws []QueryWord) []string {
	var out []string
	for _, w := range ws {
		if w.OutOfReach {
			out = append(out, w.Word)
		}
	}
	return out
}

// AnchorWords returns the words of ws that doc, a memory's terms, holds,
// that general language does not use (their information is maxInfo, that
// of a word the word model does not know, see QueryWords, and they are
// not counts, QueryWord.Count: a port or a version is a name, "10" in
// "the 10 largest files" is not) and that no
// other memory holds (Memories is 1): the words that tie the query to that
// memory beyond chance (Evidence.Anchors). Either part can be switched off
// for an ablation (anchorUnused, anchorOne).
func AnchorWords(ws []QueryWord, doc map[string]bool, maxInfo float64) []string {
	var out []string
	for _, w := range ws {
		if anchorUnused && (w.Info < maxInfo || w.Count && countsGeneral) || anchorOne && w.Memories != 1 {
			continue
		}
		if slices.ContainsFunc(w.Terms, func(t string) bool { return doc[t] }) {
			out = append(out, w.Word)
		}
	}
	return out
}

// Ablation switches of the anchor rule (Evidence.Anchors): lexicalAnchors
// turns it off; anchorUnused and anchorOne each drop one of AnchorWords'
// two conditions (general language does not use the word; one memory
// holds it).
var (
	lexicalAnchors = true
	anchorUnused   = true
	anchorOne      = true
	// countsGeneral makes a count (QueryWord.Count) a word general
	// language uses, which anchors nothing (ablation switch).
	countsGeneral = true
)

// LackedNames returns the words of ws written as names that some memory
// contains (not Unknown) but doc, a memory's terms, does not.
func LackedNames(ws []QueryWord, doc map[string]bool) []string {
	var out []string
	for _, w := range ws {
		if w.Name && !w.Unknown && !slices.ContainsFunc(w.Terms, func(t string) bool { return doc[t] }) {
			out = append(out, w.Word)
		}
	}
	return out
}

// InfoShare is the share of the words' information carried by the words
// doc contains (any of their terms); 0 without words.
func InfoShare(ws []QueryWord, doc map[string]bool) float64 {
	var total, got float64
	for _, w := range ws {
		total += w.Info
		for _, t := range w.Terms {
			if doc[t] {
				got += w.Info
				break
			}
		}
	}
	if total == 0 {
		return 0
	}
	return got / total
}

// UnknownShare is the share of the words' information carried by the
// words no memory contains: what no memory can cover. A memory that covers
// more of the query than that has found something the query is about,
// while the best match of a query about something else covers only the
// generic words the query shares with the store, less than the topic words
// it lacks.
func UnknownShare(ws []QueryWord) float64 {
	var total, unknown float64
	for _, w := range ws {
		total += w.Info
		if w.Unknown {
			unknown += w.Info
		}
	}
	if total == 0 {
		return 0
	}
	return unknown / total
}

// ExpectedMaxZ is the expected largest of n independent standard normal
// values (Blom's approximation, Φ⁻¹((n - 0.375)/(n + 0.25))): how many
// standard deviations above the mean the best of n memories unrelated to a
// query lies by chance. It is 0 for n < 2.
func ExpectedMaxZ(n int) float64 {
	if n < 2 {
		return 0
	}
	p := (float64(n) - 0.375) / (float64(n) + 0.25)
	return math.Sqrt2 * math.Erfinv(2*p-1)
}

// CheckEvidence applies the evidence test to the best candidate's coverage
// and cosine, the query's unknown share, the cosine of the best candidate
// by coverage (lexCosine), the query's cosine over a sample of typical
// texts (fewer than MinEvidenceSample: no vector evidence) and the store's
// size n. The cosine must beat the expected best of max(n, len(sampleCos))
// unrelated texts: a small store is held to the standard of its sample.
// The lexical test's memory must be nearer the query than the sample's
// mean (Evidence.LexicalFar).
func CheckEvidence(coverage, unknown, cosine, lexCosine float64, sampleCos []float64, n int) Evidence {
	ev := Evidence{Coverage: coverage, Unknown: unknown, Cosine: cosine, LexicalCosine: lexCosine, Sample: len(sampleCos)}
	ev.Lexical = coverage > unknown
	if len(sampleCos) < MinEvidenceSample {
		return ev
	}
	var sum, sum2 float64
	for _, c := range sampleCos {
		sum += c
	}
	ev.Mean = sum / float64(len(sampleCos))
	for _, c := range sampleCos {
		sum2 += (c - ev.Mean) * (c - ev.Mean)
	}
	ev.Std = math.Sqrt(sum2 / float64(len(sampleCos)))
	ev.Threshold = ev.Mean + ExpectedMaxZ(max(n, len(sampleCos)))*ev.Std
	ev.Vector = ev.Std > 0 && cosine >= ev.Threshold
	if ev.Std > 0 {
		ev.LexicalZ = (lexCosine - ev.Mean) / ev.Std
		ev.LexicalFar = lexicalNearness && ev.Lexical && lexCosine <= ev.Mean
	}
	return ev
}

// lexicalNearness turns Evidence.LexicalFar on (ablation switch).
var lexicalNearness = true

// evidence runs CheckEvidence for a query of words ws in a store of n
// memories with vector qvec of model qmodel, whose best candidate has
// coverage (InfoShare) and cosine, and whose best candidate by coverage
// has terms lexDoc and lexCosine; a word of the query only that candidate
// holds and general language does not use keeps its lexical test
// (Evidence.Anchors). The sample and the background are vectors of qmodel
// only.
func (e *Engine) evidence(ctx context.Context, ws []QueryWord, lexDoc map[string]bool, n int, qvec []float32, qmodel string, coverage, cosine, lexCosine float64) (Evidence, error) {
	var sims []float64
	if qvec != nil {
		vecs, err := e.sample.get(ctx, e.idx, n, len(qvec), qmodel)
		if err != nil {
			return Evidence{}, err
		}
		if emb := embed.Snapshot(e.emb); len(vecs) < MinEvidenceSample && emb.Model() == qmodel {
			// A failure to embed the background leaves the lexical test
			// alone, as a search without a query vector.
			bg, _ := e.background.get(ctx, emb)
			vecs = append(vecs[:len(vecs):len(vecs)], bg...)
		}
		sims = make([]float64, 0, len(vecs))
		for _, v := range vecs {
			if len(v) == len(qvec) {
				sims = append(sims, memory.Cosine(qvec, v))
			}
		}
	}
	ev := CheckEvidence(coverage, UnknownShare(ws), cosine, lexCosine, sims, n)
	ev.UnknownNames = UnknownNames(ws)
	ev.NamesOutOfReach = NamesOutOfReach(ws)
	_, maxInfo, err := e.wordInfo()
	if err != nil {
		return Evidence{}, err
	}
	var specific bool
	ev.MinInfo = maxInfo
	ev.Info, specific = Specific(ws, maxInfo)
	ev.Generic = !specific
	if ev.Lexical {
		ev.Anchors = AnchorWords(ws, lexDoc, maxInfo)
		ev.LexicalFar = ev.LexicalFar && (len(ev.Anchors) == 0 || !lexicalAnchors)
	}
	return ev, nil
}

// evidenceVector returns the query vector the vector test measures with,
// the best candidate's cosine to it and the cosine to it of the best
// candidate by coverage (r.bestIdx, Evidence.LexicalCosine): the
// embedder's own embedding of the query (plainQueryVector), as the
// memories and the background are embedded, where the vector leg searched with one weighted by the store's
// IDF (embedQuery, for an embedder that weights tokens). The weights rank
// well but put the query's weight on the words rare in this store, so a
// memory sharing such a word stands out of the sample's cosines however
// little else it shares, and the test reads that as a memory near the
// query's meaning (the lexical test's question). Measured on the dev sets
// (docs/benchmarks.md, the evidence gate): one more unrelated prompt of
// sessions-dev answered with nothing, one more relevant query of
// sessions-dev and of recall-dev answered, none lost. Without a query
// vector it returns none; for an embedder that does not weight tokens, or
// of another model than the query's, the leg's vector.
func (e *Engine) evidenceVector(ctx context.Context, r *queryRun) (vec []float32, best, lexical float64, err error) {
	if r.qvec == nil {
		return nil, 0, 0, nil
	}
	emb := embed.Snapshot(e.emb)
	if _, ok := unwrapped[weightedEmbedder](emb); !ok || emb.Model() != r.qmodel {
		return r.qvec, r.res.Cosine, r.cands[r.bestIdx].cosine, nil
	}
	if vec, err = plainQueryVector(ctx, emb, r.q.Text); err != nil {
		return nil, 0, 0, fmt.Errorf("search: evidence: %w", err)
	}
	for i, c := range r.cands {
		cos := memory.Cosine(vec, c.m.Embedding)
		best = math.Max(best, cos)
		if i == r.bestIdx {
			lexical = cos
		}
	}
	return vec, best, lexical, nil
}

// backgroundVecs are the background statements embedded by the engine's
// embedder, once it has succeeded, and again when its model changed.
type backgroundVecs struct {
	mu    sync.Mutex
	model string
	vecs  [][]float32
}

// get returns the background statements embedded by emb (a snapshot of
// the engine's embedder, see embed.Snapshot, so its model names them).
func (b *backgroundVecs) get(ctx context.Context, emb memory.Embedder) ([][]float32, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.vecs != nil && b.model == emb.Model() {
		return b.vecs, nil
	}
	vecs, err := emb.Embed(ctx, background)
	if err != nil {
		return nil, fmt.Errorf("search: embed the background statements: %w", err)
	}
	if len(vecs) != len(background) {
		return nil, fmt.Errorf("search: %s returned %d vectors for %d background statements", emb.Model(), len(vecs), len(background))
	}
	b.model, b.vecs = emb.Model(), vecs
	return vecs, nil
}

// storeSample is a sample of the store's embeddings, drawn again when the
// store has grown or shrunk by more than a tenth since, or for another
// model.
type storeSample struct {
	mu    sync.Mutex
	count int
	model string
	vecs  [][]float32
}

// get returns the sample for a store of n memories, drawing it when there
// is none, it is of another model, or n is more than a tenth away from the
// count it was drawn at: up to EvidenceSample memories evenly spaced in
// creation order (List), those with an embedding of dimension dim and (when
// model is set) of model.
func (s *storeSample) get(ctx context.Context, idx index, n, dim int, model string) ([][]float32, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.vecs != nil && s.model == model && math.Abs(float64(n-s.count)) <= float64(s.count)/10 {
		return s.vecs, nil
	}
	ids, _, err := idx.List(ctx, store.ListQuery{})
	if err != nil {
		return nil, fmt.Errorf("search: sample the store: %w", err)
	}
	pick := ids
	if len(ids) > EvidenceSample {
		pick = make([]string, EvidenceSample)
		for i := range pick {
			pick[i] = ids[(2*i+1)*len(ids)/(2*EvidenceSample)]
		}
	}
	ms, err := idx.GetMany(ctx, pick)
	if err != nil {
		return nil, fmt.Errorf("search: sample the store: %w", err)
	}
	vecs := make([][]float32, 0, len(ms))
	for _, id := range pick { // in list order, so the sample is deterministic
		if m, ok := ms[id]; ok && len(m.Embedding) == dim && (model == "" || m.EmbeddingModel == "" || m.EmbeddingModel == model) {
			vecs = append(vecs, m.Embedding)
		}
	}
	s.count, s.model, s.vecs = n, model, vecs
	return vecs, nil
}

// wordInfo returns the word probability and the largest information of
// QueryWords from the built-in word model (the surprisal of its rarest
// word), loaded on first use.
func wordInfo() (func(string) (float64, bool), float64, error) {
	m, err := wordvec.Builtin()
	if err != nil {
		return nil, 0, fmt.Errorf("search: word model: %w", err)
	}
	if m.Len() == 0 {
		return nil, 0, errors.New("search: the word model is empty")
	}
	prob := func(w string) (float64, bool) {
		i := m.Lookup(w)
		if i < 0 {
			return 0, false
		}
		return m.Prob(i), true
	}
	return prob, -math.Log(m.Prob(m.Len() - 1)), nil
}

// GeneralWord reports whether general language uses word (lower-cased):
// the built-in word model QueryWords weighs words by holds it. A word it
// does not hold carries the most information a query word can (Evidence.
// MinInfo).
func GeneralWord(word string) (bool, error) {
	prob, _, err := wordInfo()
	if err != nil {
		return false, err
	}
	_, ok := prob(word)
	return ok, nil
}
