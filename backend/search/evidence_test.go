package search

import (
	"context"
	"fmt"
	"maps"
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/memtray/memtray/backend/config"
	"github.com/memtray/memtray/backend/embed"
	"github.com/memtray/memtray/backend/memory"
	"github.com/memtray/memtray/backend/store"
)

func TestExpectedMaxZ(t *testing.T) {
	cases := []struct {
		n    int
		want float64 // the exact expected maximum of n standard normals
		tol  float64
	}{
		{0, 0, 0},
		{1, 0, 0},
		{2, 0.5642, 0.03}, // 1/sqrt(pi)
		{5, 1.1630, 0.02},
		{100, 2.5076, 0.01},
		{1000, 3.2414, 0.02},
	}
	for _, c := range cases {
		if got := ExpectedMaxZ(c.n); math.Abs(got-c.want) > c.tol {
			t.Errorf("ExpectedMaxZ(%d) = %.4f, want %.4f ± %v", c.n, got, c.want, c.tol)
		}
	}
	for n := 2; n < 5000; n++ {
		if ExpectedMaxZ(n) <= ExpectedMaxZ(n-1) {
			t.Fatalf("ExpectedMaxZ(%d) = %v is not above ExpectedMaxZ(%d) = %v", n, ExpectedMaxZ(n), n-1, ExpectedMaxZ(n-1))
		}
	}
}

// TestQueryWords: words are weighed by their surprisal in general language
// (words the model lacks at maxInfo), stop words and repeats dropped; a word
// is unknown when no memory holds any of its terms; InfoShare and
// UnknownShare are shares of the words' information.
func TestQueryWords(t *testing.T) {
	analyze := func(w string) []string {
		switch w {
		case "the", "how", "do", "i":
			return nil
		case "webhooks":
			return []string{"webhook"}
		}
		return []string{w}
	}
	probs := map[string]float64{"retry": math.Exp(-8), "webhooks": math.Exp(-12), "explain": math.Exp(-10), "often": math.Exp(-6)}
	prob := func(w string) (float64, bool) { p, ok := probs[w]; return p, ok }
	df := map[string]int{"retry": 4, "webhook": 2, "explain": 0}
	ws := QueryWords("How do I retry the webhooks? Explain Kubernetes, often. Retry!", analyze, df, prob, 15)
	want := []QueryWord{
		{Word: "retry", Terms: []string{"retry"}, Info: 8},
		{Word: "webhooks", Terms: []string{"webhook"}, Info: 12},
		{Word: "explain", Terms: []string{"explain"}, Info: 10, Unknown: true},
		{Word: "kubernetes", Terms: []string{"kubernetes"}, Info: 15, Unknown: true, Name: true},
		{Word: "often", Terms: []string{"often"}, Info: 6, Unknown: true},
	}
	if len(ws) != len(want) {
		t.Fatalf("QueryWords = %+v, want %+v", ws, want)
	}
	for i := range want {
		if ws[i].Word != want[i].Word || !slices.Equal(ws[i].Terms, want[i].Terms) || math.Abs(ws[i].Info-want[i].Info) > 1e-9 ||
			ws[i].Unknown != want[i].Unknown || ws[i].Name != want[i].Name {
			t.Errorf("word %d = %+v, want %+v", i, ws[i], want[i])
		}
	}
	const total = 8 + 12 + 10 + 15 + 6
	cases := []struct {
		name string
		doc  map[string]bool
		want float64
	}{
		{"nothing", map[string]bool{"other": true}, 0},
		{"retry and webhook", map[string]bool{"retry": true, "webhook": true}, 20.0 / total},
		{"all", map[string]bool{"retry": true, "webhook": true, "explain": true, "kubernetes": true, "often": true}, 1},
	}
	for _, c := range cases {
		if got := InfoShare(ws, c.doc); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("InfoShare(%s) = %v, want %v", c.name, got, c.want)
		}
	}
	if got := UnknownShare(ws); math.Abs(got-31.0/total) > 1e-12 {
		t.Errorf("UnknownShare = %v, want %v", got, 31.0/total)
	}
	out := slices.Clone(ws)
	out[1].OutOfReach = true
	if got := NamesOutOfReach(out); !slices.Equal(got, []string{"webhooks"}) {
		t.Errorf("NamesOutOfReach = %q, want [webhooks]", got)
	}
	if InfoShare(nil, nil) != 0 || UnknownShare(nil) != 0 {
		t.Error("no words: want shares of 0")
	}
	if got := UnknownNames(ws); !slices.Equal(got, []string{"kubernetes"}) {
		t.Errorf("UnknownNames = %q, want [kubernetes]", got)
	}
}

// TestWords: a query splits into words where the store's analyzer splits
// its text, so a dotted identifier or a contraction is one word.
func TestWords(t *testing.T) {
	cases := []struct {
		text string
		want []string
	}{
		{"httpx.WriteProblem", []string{"httpx.WriteProblem"}},
		{"What's in warehouses.label_format?", []string{"What's", "in", "warehouses.label_format"}},
		{"Configure a Next.js app. Then deploy.", []string{"Configure", "a", "Next.js", "app", "Then", "deploy"}},
		{"tokio::spawn vs spawn_blocking", []string{"tokio", "spawn", "vs", "spawn_blocking"}},
		{"terminal-multiplexer / ctrl+z", []string{"terminal", "multiplexer", "ctrl", "z"}},
		{"Enum.map and isn’t", []string{"Enum.map", "and", "isn’t"}},
		{"", nil},
		{"...", nil},
	}
	for _, c := range cases {
		if got := words(c.text); !slices.Equal(got, c.want) {
			t.Errorf("words(%q) = %q, want %q", c.text, got, c.want)
		}
	}
}

// TestWordsLikeAnalyzer: each word of a query is one term of the store's
// analyzer (stop words aside), so the evidence test finds an identifier a
// memory holds (it split "httpx.WriteProblem" in two, neither of which the
// store holds).
func TestWordsLikeAnalyzer(t *testing.T) {
	st := smallStore(t, embed.NewLexical(), []string{
		"harbor HTTP handlers report errors with httpx.WriteProblem(w, err); never call http.Error directly.",
		"The warehouses.label_format column (pdf|zpl) decides which label harbor requests; what's printed follows it.",
	})
	for _, q := range []string{"httpx.WriteProblem", "warehouses.label_format", "http.Error"} {
		ws := QueryWords(q, st.Analyze, mustDocFreq(t, st, q), func(string) (float64, bool) { return 0, false }, 10)
		if len(ws) != 1 || ws[0].Unknown {
			t.Errorf("QueryWords(%q) = %+v, want one known word", q, ws)
		}
	}
	// An identifier no memory holds whole is judged by its parts, a
	// dotted path's and a snake_case name's alike; one a memory holds
	// whole stays one word.
	cases := []struct {
		q    string
		want []QueryWord
	}{
		{"harbor.handlers", []QueryWord{{Word: "harbor", Name: true}, {Word: "handlers", Name: true}}},
		{"harbor_handlers", []QueryWord{{Word: "harbor", Name: true}, {Word: "handlers", Name: true}}},
		{"label_format", []QueryWord{{Word: "label", Name: true}, {Word: "format", Unknown: true, Name: true}}},
		{"warehouses.label_format", []QueryWord{{Word: "warehouses.label_format", Name: true}}},
		{"spawn_blocking", []QueryWord{{Word: "spawn", Unknown: true, Name: true}, {Word: "blocking", Unknown: true, Name: true}}},
	}
	for _, c := range cases {
		ws := QueryWords(c.q, st.Analyze, mustQueryDocFreq(t, st, c.q), func(string) (float64, bool) { return 0, false }, 10)
		var got []QueryWord
		for _, w := range ws {
			got = append(got, QueryWord{Word: w.Word, Unknown: w.Unknown, Name: w.Name})
		}
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("QueryWords(%q) = %+v, want %+v", c.q, got, c.want)
		}
	}
}

// mustQueryDocFreq is the document frequencies of the terms of text and of
// its identifiers' parts, as Engine.queryWords looks them up.
func mustQueryDocFreq(t *testing.T, st *store.Store, text string) map[string]int {
	t.Helper()
	terms := st.Analyze(text)
	for _, p := range identParts(strings.ToLower(text)) {
		terms = append(terms, st.Analyze(p)...)
	}
	df, err := st.DocFreq(context.Background(), dedupe(terms))
	if err != nil {
		t.Fatal(err)
	}
	return df
}

func mustDocFreq(t *testing.T, st *store.Store, text string) map[string]int {
	t.Helper()
	df, err := st.DocFreq(context.Background(), st.Analyze(text))
	if err != nil {
		t.Fatal(err)
	}
	return df
}

// TestNameWords: words written as names (inner capitals, letters mixed
// with digits, '_' or a dot, capitalised inside a sentence); not a
// sentence's first word, a contraction or a short abbreviation.
func TestNameWords(t *testing.T) {
	cases := []struct {
		text string
		want []string
	}{
		{"Tell me how Kafka compacts a topic.", []string{"kafka"}},
		{"What's the difference between useMemo and useCallback?", []string{"usememo", "usecallback"}},
		{"How do I set up a PySide6 QMainWindow? Toolbar next.", []string{"pyside6", "qmainwindow"}},
		{"Write a SQL query", []string{"sql"}},
		{"Is spawn_blocking safe in a Next.js app, e.g. here?", []string{"spawn_blocking", "next.js"}},
		{"Kafka first. Then Redis\nCelery", []string{"redis"}},
		{"don't i'm what's isn’t", nil},
		{"", nil},
	}
	for _, c := range cases {
		got, _ := nameWords(c.text)
		var names []string
		for w := range got {
			names = append(names, w)
		}
		slices.Sort(names)
		want := slices.Clone(c.want)
		slices.Sort(want)
		if !slices.Equal(names, want) {
			t.Errorf("nameWords(%q) = %q, want %q", c.text, names, want)
		}
	}
}

// TestEvidenceHolds: the vector test does not count for a query naming
// something no memory contains; the lexical test does; neither counts for
// a generic query.
func TestEvidenceHolds(t *testing.T) {
	cases := []struct {
		ev   Evidence
		want bool
	}{
		{Evidence{}, false},
		{Evidence{Lexical: true}, true},
		{Evidence{Vector: true}, true},
		{Evidence{Vector: true, UnknownNames: []string{"kafka"}}, false},
		{Evidence{Lexical: true, UnknownNames: []string{"kafka"}}, true},
		{Evidence{Lexical: true, Vector: true, Generic: true}, false},
		{Evidence{Lexical: true, Vector: true, UnknownNames: []string{"django"}, NamesUnknown: true}, false},
		{Evidence{Vector: true, NamesOutOfReach: []string{"tailwind"}}, false},
		{Evidence{Lexical: true, NamesOutOfReach: []string{"tailwind"}}, true},
		{Evidence{Lexical: true, LexicalFar: true}, false},
		{Evidence{Lexical: true, LexicalFar: true, Vector: true}, true},
		{Evidence{Lexical: true, LexicalFar: true, Vector: true, NamesOutOfReach: []string{"tailwind"}}, false},
	}
	for _, c := range cases {
		if got := c.ev.Holds(); got != c.want {
			t.Errorf("%+v.Holds() = %v, want %v", c.ev, got, c.want)
		}
	}
}

func TestCheckEvidence(t *testing.T) {
	// 40 cosines around 0.2: mean 0.2, standard deviation 0.05.
	sample := make([]float64, 40)
	for i := range sample {
		sample[i] = 0.2 + 0.05*float64(1-2*(i%2))
	}
	cases := []struct {
		name                        string
		coverage, unknown, cosine   float64
		lexCosine                   float64
		sample                      []float64
		n                           int
		lexical, vector, far, holds bool
	}{
		{"covers more than the store lacks", 0.4, 0.3, 0, 0, nil, 10, true, false, false, true},
		{"covers exactly what it lacks", 0.3, 0.3, 0, 0, nil, 10, false, false, false, false},
		{"no terms at all", 0, 0, 0, 0, nil, 10, false, false, false, false},
		{"cosine above the expected best of 1000", 0, 1, 0.2 + 0.05*3.3, 0, sample, 1000, false, true, false, true},
		{"cosine below it", 0, 1, 0.2 + 0.05*3.1, 0, sample, 1000, false, false, false, false},
		{"a small store is held to its sample's size", 0, 1, 0.2 + 0.05*2.1, 0, sample, 5, false, false, false, false},
		{"too small a sample: no vector evidence", 0, 1, 0.9, 0, sample[:MinEvidenceSample-1], 1000, false, false, false, false},
		{"no spread: no vector evidence", 0, 1, 0.9, 0, make([]float64, 40), 1000, false, false, false, false},
		{"both", 0.9, 0.1, 0.9, 0.9, sample, 1000, true, true, false, true},
		// The lexical test's memory against the sample's mean (0.2).
		{"lexical, its memory nearer than the mean", 0.4, 0.1, 0.26, 0.21, sample, 1000, true, false, false, true},
		{"lexical, its memory below the mean", 0.4, 0.1, 0.26, 0.15, sample, 1000, true, false, true, false},
		{"lexical far, vector holds", 0.4, 0.1, 0.2 + 0.05*3.3, 0.15, sample, 1000, true, true, true, true},
		{"lexical with no sample: no mean to be far from", 0.4, 0.1, 0.26, 0.01, nil, 1000, true, false, false, true},
	}
	for _, c := range cases {
		ev := CheckEvidence(c.coverage, c.unknown, c.cosine, c.lexCosine, c.sample, c.n)
		if ev.Lexical != c.lexical || ev.Vector != c.vector || ev.LexicalFar != c.far || ev.Holds() != c.holds {
			t.Errorf("%s: lexical %v, vector %v, far %v, holds %v; want %v, %v, %v, %v (%+v)", c.name, ev.Lexical, ev.Vector, ev.LexicalFar, ev.Holds(),
				c.lexical, c.vector, c.far, c.holds, ev)
		}
	}
}

// smallStore opens a real store holding texts (ids m0, m1...) embedded by
// emb.
func smallStore(t *testing.T, emb memory.Embedder, texts []string) *store.Store {
	t.Helper()
	ctx := context.Background()
	st, err := store.Open(ctx, store.Options{Dir: t.TempDir(), Model: emb.Model(), Dim: emb.Dim()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	vecs, err := emb.Embed(ctx, texts)
	if err != nil {
		t.Fatal(err)
	}
	ms := make([]memory.Memory, len(texts))
	for i, tx := range texts {
		ms[i] = memory.Memory{ID: fmt.Sprintf("m%d", i), Text: tx, Kind: memory.KindFact, Type: memory.TypeProject,
			Importance: 0.5, CreatedAt: testNow, Embedding: vecs[i]}
	}
	if _, err := st.PutBatch(ctx, ms); err != nil {
		t.Fatal(err)
	}
	return st
}

// TestEvidenceGate: a small store (5 memories, measured against the
// background statements) answers prompts about something it does not hold
// with nothing, and still gives a relevant paraphrase its memory; so does a
// larger one (the 40-memory fixture, measured against its own sample).
// Without the gate the per-memory floors alone let some of these
// unrelated prompts through. (By construction the vector test lets through
// about four unrelated prompts in ten: their best cosine beats the expected
// best of chance. The fixture cases are ones it stops.)
func TestEvidenceGate(t *testing.T) {
	emb := embed.NewBuiltin()
	small := smallStore(t, emb, []string{
		"Invoices are generated once per billing period by the nightly cron job in the ledger service.",
		"We chose PostgreSQL over MySQL for the ledger because we need serializable transactions.",
		"The mobile client refreshes its access token five minutes before it expires.",
		"Run make lint before every commit; CI rejects code that golangci-lint flags.",
		"The payments worker retries a failed webhook delivery with exponential backoff up to six times.",
	})
	_, fixture := openFixture(t, nil)
	cases := []struct {
		name   string
		st     *store.Store
		prompt string
		want   string // a memory the hits must hold; "" = no hits
	}{
		{"small: nginx", small, "How do I put Caddy in front of a Node server with automatic HTTPS?", ""},
		{"small: react", small, "Explain when React re-renders a memoised child component", ""},
		{"small: kubernetes", small, "How do Kubernetes liveness and readiness probes differ?", ""},
		{"small: sql", small, "Write a SQL query that lists the three oldest employees in each office", ""},
		{"small: cover letter", small, "Help me write a birthday toast for my sister.", ""},
		{"small: celery", small, "How do I schedule Sidekiq jobs with Redis in a Rails app?", ""},
		{"small: database paraphrase", small, "which database does the ledger use and why?", "m1"},
		{"small: webhook paraphrase", small, "what happens when a webhook fails to deliver?", "m4"},
		{"small: token paraphrase", small, "when does the app renew its token?", "m2"},
		{"small: commit paraphrase", small, "what should I run before committing?", "m3"},
		{"fixture: kubernetes", fixture, "How do Kubernetes liveness and readiness probes differ?", ""},
		{"fixture: flexbox", fixture, "How do I make a CSS grid with three equal columns?", ""},
		{"fixture: sql", fixture, "Write a SQL query that lists the three oldest employees in each office", ""},
		{"fixture: react", fixture, "Explain when React re-renders a memoised child component", ""},
		{"fixture: paraphrase", fixture, "which map library draws the satellite ground tracks?", "o16"},
		{"fixture: paraphrase 2", fixture, "what does it take for a pass to count as visible?", "o18"},
	}
	ctx := context.Background()
	leaked := 0
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := New(c.st, emb, config.Default().Search, memory.FixedClock{T: testNow})
			r, err := e.Run(ctx, Query{Text: c.prompt})
			if err != nil {
				t.Fatal(err)
			}
			ids := hitIDs(r.Hits)
			if c.want == "" && len(ids) > 0 {
				t.Errorf("hits %v (no evidence %v), want none; evidence %+v", ids, r.NoEvidence, r.Evidence)
			}
			if c.want != "" && !slices.Contains(ids, c.want) {
				t.Errorf("hits %v lack %s; evidence %+v", ids, c.want, r.Evidence)
			}
			if r.Evidence.Sample < MinEvidenceSample {
				t.Errorf("measured against %d texts, want at least %d", r.Evidence.Sample, MinEvidenceSample)
			}
			cfg := config.Default().Search
			cfg.EvidenceGate = false
			off, err := New(c.st, emb, cfg, memory.FixedClock{T: testNow}).Run(ctx, Query{Text: c.prompt})
			if err != nil {
				t.Fatal(err)
			}
			if c.want == "" && len(off.Hits) > 0 {
				leaked++
			}
			if !reflect.DeepEqual(off.Evidence, Evidence{}) || off.NoEvidence {
				t.Errorf("gate off still measured %+v", off.Evidence)
			}
		})
	}
	if leaked < 3 {
		t.Errorf("without the gate only %d unrelated prompts got hits: the cases no longer test the gate", leaked)
	}
}

// TestEvidenceNotWithoutFloors: NoFloors (evaluation at a fixed depth)
// skips the gate too.
func TestEvidenceNotWithoutFloors(t *testing.T) {
	e, _ := openFixture(t, nil)
	r, err := e.Run(context.Background(), Query{Text: "Help me write a birthday toast for my sister.", NoFloors: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Hits) == 0 || r.NoEvidence {
		t.Fatalf("hits %v, no evidence %v; want hits", hitIDs(r.Hits), r.NoEvidence)
	}
}

// TestStoreSample: the sample holds at most EvidenceSample memories, is
// reused while the store stays within a tenth of its size and drawn again
// past that.
func TestStoreSample(t *testing.T) {
	emb := embed.NewLexical()
	texts := make([]string, 300)
	for i := range texts {
		texts[i] = fmt.Sprintf("memory number %d about subject %d", i, i%17)
	}
	st := smallStore(t, emb, texts)
	ctx := context.Background()
	var s storeSample
	vecs, err := s.get(ctx, st, st.Count(), emb.Dim(), emb.Model())
	if err != nil {
		t.Fatal(err)
	}
	if len(vecs) != EvidenceSample || s.count != 300 {
		t.Fatalf("sample of %d drawn at %d, want %d at 300", len(vecs), s.count, EvidenceSample)
	}
	again, _ := s.get(ctx, st, 320, emb.Dim(), emb.Model())
	if &again[0] != &vecs[0] || s.count != 300 {
		t.Errorf("sample drawn again within a tenth (count %d)", s.count)
	}
	if _, err := s.get(ctx, st, 331, emb.Dim(), emb.Model()); err != nil || s.count != 331 {
		t.Errorf("sample not drawn again past a tenth: count %d, %v", s.count, err)
	}
	// Another model (the store switched since): drawn again, and none of
	// the old model's vectors is kept.
	if other, err := s.get(ctx, st, 331, emb.Dim(), "another-model"); err != nil || len(other) != 0 || s.model != "another-model" {
		t.Errorf("sample for another model: %d vectors of %q, %v; want none", len(other), s.model, err)
	}
}

// FuzzWords: word spans are in order, do not overlap, start and end on
// word runes, hold no space, and every name and count nameWords reports is
// one of the text's words, lower-cased, no word both; the name spans
// (memory.NameSpans) lie within the text.
func FuzzWords(f *testing.F) {
	for _, s := range []string{"httpx.WriteProblem", "What's the Next.js app?", "tokio::spawn a.b.c", "é’x..y", "a'", ".a.", "I'm Kafka\nRedis", "what does --dry-run do? -n", "abs(self._value) file(s)", "assets/ at :8080, #12 v1.2.3 and 10 files", "`make test` $GOFLAGS"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		prev := 0
		lower := map[string]bool{}
		for _, sp := range wordSpans(text) {
			if sp[0] < prev || sp[1] <= sp[0] || sp[1] > len(text) {
				t.Fatalf("span %v after %d in %q", sp, prev, text)
			}
			w := text[sp[0]:sp[1]]
			first, _ := utf8.DecodeRuneInString(w)
			last, _ := utf8.DecodeLastRuneInString(w)
			if !wordRune(first) || !wordRune(last) || strings.ContainsAny(w, " \t\n") {
				t.Fatalf("word %q of %q", w, text)
			}
			lower[strings.ToLower(w)] = true
			prev = sp[1]
		}
		names, counts := nameWords(text)
		for n := range names {
			if !lower[n] {
				t.Fatalf("name %q is no word of %q", n, text)
			}
		}
		for n := range counts {
			if !lower[n] || names[n] || !isCount(n) {
				t.Fatalf("count %q of %q: a word %v, a name %v", n, text, lower[n], names[n])
			}
		}
		for _, sp := range memory.NameSpans(text) {
			if sp[0] < 0 || sp[1] > len(text) || sp[0] > sp[1] {
				t.Fatalf("name span %v of %q", sp, text)
			}
		}
	})
}

// TestSpecific: a query is specific when it writes a word as a name or its
// words carry at least the minimum information.
func TestSpecific(t *testing.T) {
	cases := []struct {
		name     string
		ws       []QueryWord
		info     float64
		specific bool
	}{
		{"no words", nil, 0, false},
		{"one common word", []QueryWord{{Word: "continue", Info: 9}}, 9, false},
		{"two common words", []QueryWord{{Word: "keep", Info: 8}, {Word: "going", Info: 9}}, 17, true},
		{"exactly the minimum", []QueryWord{{Word: "zorblat", Info: 15}}, 15, true},
		{"a name", []QueryWord{{Word: "orm", Info: 8, Name: true}}, 8, true},
		{"an unknown name", []QueryWord{{Word: "kafka", Info: 7, Name: true, Unknown: true}}, 7, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			info, ok := Specific(c.ws, 15)
			if info != c.info || ok != c.specific {
				t.Errorf("Specific = %v, %v; want %v, %v", info, ok, c.info, c.specific)
			}
		})
	}
}

// TestEvidenceGenericPrompts: prompts that say too little to be about
// anything ("fix it", "update it") get nothing from a store holding their
// words, while short specific ones (an error code, a setting, a name)
// still get their memory; a search (not a prompt) for the same words is
// not judged generic.
func TestEvidenceGenericPrompts(t *testing.T) {
	e, _ := openFixture(t, nil)
	cases := []struct {
		prompt string
		want   string // a memory the hits must hold; "" = no hits
	}{
		{"fix it", ""},
		{"yes, do it", ""},
		{"update it", ""},
		{"change that", ""},
		{"do it", ""},
		{"thanks!", ""},
		{"every one", ""},
		{"ORB-E117", "o03"},
		{"ORBIT_TLE_CACHE_TTL", "o02"},
		{"Ines", "o07"},
		{"Meilisearch", "p07"},
		{"elevation mask", "o18"},
		{"Show me what Ines prefers", "o07"},
	}
	for _, c := range cases {
		t.Run(c.prompt, func(t *testing.T) {
			r, err := e.Run(context.Background(), Query{Text: c.prompt, Prompt: true})
			if err != nil {
				t.Fatal(err)
			}
			ids := hitIDs(r.Hits)
			if c.want == "" && (len(ids) > 0 || !r.NoEvidence || !r.Evidence.Generic) {
				t.Errorf("hits %v (no evidence %v), want none as generic; evidence %+v", ids, r.NoEvidence, r.Evidence)
			}
			if c.want != "" && (!slices.Contains(ids, c.want) || r.Evidence.Generic) {
				t.Errorf("hits %v lack %s; evidence %+v", ids, c.want, r.Evidence)
			}
			s, err := e.Run(context.Background(), Query{Text: c.prompt})
			if err != nil {
				t.Fatal(err)
			}
			if s.Evidence.Generic || s.Evidence.MinInfo == 0 {
				t.Errorf("a search for %q: evidence %+v, want measured and not generic", c.prompt, s.Evidence)
			}
		})
	}
}

// TestEvidencePromptNamingUnknown: a prompt naming something no memory
// contains gets nothing, however many of its other words the store holds
// (a store of Phoenix migrations asked about a Django one); a search for
// the same words gets the nearest; a name the store holds only inside a
// compound identifier ("Phoenix.LiveViewTest") is not unknown.
func TestEvidencePromptNamingUnknown(t *testing.T) {
	emb := embed.NewBuiltin()
	st := smallStore(t, emb, []string{
		"An ash.codegen migration that adds a NOT NULL column fails on SQLite when rows exist; rewrite the migration to add the column with a default.",
		"Rename a model field in a migration by copying the table: SQLite cannot alter a column in place.",
		"LiveView tests need the lazy_html test dependency: Phoenix.LiveViewTest parses HTML with it.",
		"The unique constraint on annotation refs is declared in the resource's identities block.",
		"Run mix credo --strict and mix test before every commit.",
		"Dialyzer flags a pattern match on an error tuple as unreachable when the called function's spec never returns one.",
	})
	cases := []struct {
		name, prompt string
		want         string // a memory a prompt's hits must hold; "" = none
		unknown      []string
	}{
		{"unknown framework", "With Django, what migration renames a field on a model?", "", []string{"django"}},
		{"unknown framework 2", "Where does a Django model declare a unique constraint?", "", []string{"django"}},
		{"known framework", "How do I write a migration that renames a model field on SQLite?", "m1", nil},
		{"name inside a compound term", "LiveViewTest fails because lazy_html is not installed", "m2", nil},
		{"snake_case name of known words", "Why does Dialyzer report pattern_match on the error tuple clause?", "m5", nil},
	}
	ctx := context.Background()
	e := New(st, emb, config.Default().Search, memory.FixedClock{T: testNow})
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r, err := e.Run(ctx, Query{Text: c.prompt, Prompt: true})
			if err != nil {
				t.Fatal(err)
			}
			ids := hitIDs(r.Hits)
			if !slices.Equal(r.Evidence.UnknownNames, c.unknown) {
				t.Errorf("unknown names %q, want %q", r.Evidence.UnknownNames, c.unknown)
			}
			if c.want == "" && (len(ids) > 0 || !r.NoEvidence || !r.Evidence.NamesUnknown) {
				t.Errorf("a prompt: hits %v, want none; evidence %+v", ids, r.Evidence)
			}
			if c.want != "" && !slices.Contains(ids, c.want) {
				t.Errorf("a prompt: hits %v lack %s; evidence %+v", ids, c.want, r.Evidence)
			}
			s, err := e.Run(ctx, Query{Text: c.prompt})
			if err != nil {
				t.Fatal(err)
			}
			if s.Evidence.NamesUnknown || len(s.Hits) == 0 {
				t.Errorf("a search: %d hits, evidence %+v; want the nearest", len(s.Hits), s.Evidence)
			}
		})
	}
}

// unweighted is an embedder that cannot weight a query's tokens.
type unweighted struct{ memory.Embedder }

// TestEvidenceVectorUnweighted: the vector test measures the query as the
// memories are embedded, without the IDF weights the built-in embedder's
// vector leg ranks with (the best candidate's cosine then differs from the
// leg's, Result.Cosine); with an embedder that cannot weight tokens the
// two are the same vector.
func TestEvidenceVectorUnweighted(t *testing.T) {
	ctx := context.Background()
	const q = "which map library draws the satellite ground tracks?"
	for _, tc := range []struct {
		name     string
		emb      memory.Embedder
		weighted bool
	}{
		{"built-in: weighted leg, plain evidence", embed.NewBuiltin(), true},
		{"no weights: the leg's vector", unweighted{embed.NewBuiltin()}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e, st := openFixtureWith(t, tc.emb, nil)
			r, err := e.Run(ctx, Query{Text: q, Prompt: true})
			if err != nil {
				t.Fatal(err)
			}
			if !r.Tested || len(r.Scored) == 0 {
				t.Fatalf("no evidence test ran (%d candidates)", len(r.Scored))
			}
			plain, err := tc.emb.Embed(ctx, []string{q})
			if err != nil {
				t.Fatal(err)
			}
			var want float64
			for _, c := range r.Scored {
				m, err := st.Get(ctx, c.ID)
				if err != nil {
					t.Fatal(err)
				}
				want = math.Max(want, memory.Cosine(plain[0], m.Embedding))
			}
			if math.Abs(r.Evidence.Cosine-want) > 1e-9 {
				t.Errorf("evidence cosine %.6f, want the unweighted query's best %.6f (leg's best %.6f)", r.Evidence.Cosine, want, r.Cosine)
			}
			if differ := math.Abs(r.Cosine-r.Evidence.Cosine) > 1e-6; differ != tc.weighted {
				t.Errorf("leg's best cosine %.6f, evidence's %.6f: differ %v, want %v", r.Cosine, r.Evidence.Cosine, differ, tc.weighted)
			}
		})
	}
}

// TestLackedNames: the names some memory contains that a memory's terms
// lack; a word not written as a name, or no memory's, is not listed.
func TestLackedNames(t *testing.T) {
	ws := []QueryWord{
		{Word: "github", Terms: []string{"github"}, Name: true},
		{Word: "rust", Terms: []string{"rust"}, Name: true},
		{Word: "caching", Terms: []string{"cach"}},
		{Word: "bazel", Terms: []string{"bazel"}, Name: true, Unknown: true},
	}
	for _, tc := range []struct {
		name string
		doc  []string
		want []string
	}{
		{"holds both names", []string{"github", "rust"}, nil},
		{"holds one", []string{"github", "cach"}, []string{"rust"}},
		{"holds none", []string{"cach"}, []string{"github", "rust"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := LackedNames(ws, termSet(tc.doc)); !slices.Equal(got, tc.want) {
				t.Errorf("LackedNames = %q, want %q", got, tc.want)
			}
		})
	}
}

// TestEvidenceBestLacks: the evidence lists the prompt's names that other
// memories hold but the one with the best coverage does not.
func TestEvidenceBestLacks(t *testing.T) {
	emb := embed.NewBuiltin()
	st := smallStore(t, emb, []string{
		"The GitHub Actions workflow caches the node_modules folder between runs keyed on the lockfile hash.",
		"The Rust crate builds with cargo build --release for the desktop binary.",
		"Run mix credo --strict and mix test before every commit.",
	})
	e := New(st, emb, config.Default().Search, memory.FixedClock{T: testNow})
	r, err := e.Run(context.Background(), Query{Text: "How do GitHub Actions cache the folder between runs of the Rust build?", Prompt: true})
	if err != nil {
		t.Fatal(err)
	}
	if !r.Tested {
		t.Fatalf("no evidence test: %+v", r)
	}
	if !slices.Equal(r.Evidence.BestLacks, []string{"rust"}) {
		t.Errorf("best lacks %q, want [rust]; evidence %+v", r.Evidence.BestLacks, r.Evidence)
	}
}

// TestAffixOf: a query word's term is found as the start or end of a
// longer term of a memory, at least MinAffixLen long, never as the whole
// term nor inside one.
func TestAffixOf(t *testing.T) {
	doc := map[string]bool{"surrealdb": true, "linuxcnc": true, "goal": true, "release": true, "grbl": true}
	cases := []struct {
		terms []string
		want  bool
	}{
		{[]string{"surreal"}, true},       // start
		{[]string{"cnc"}, true},           // end
		{[]string{"grbl"}, false},         // the whole term: known, not an affix
		{[]string{"go"}, false},           // shorter than MinAffixLen
		{[]string{"lea"}, false},          // inside a term only
		{[]string{"docker", "cnc"}, true}, // any of the word's terms
		{[]string{"surrealdbx"}, false},   // longer than the term
		{nil, false},
	}
	for _, c := range cases {
		if got := AffixOf(c.terms, doc); got != c.want {
			t.Errorf("AffixOf(%q) = %v, want %v", c.terms, got, c.want)
		}
	}
}

// TestRefusedNames: the unknown names a prompt is refused for are those
// no candidate holds as the start or end of a longer term.
func TestRefusedNames(t *testing.T) {
	ws := []QueryWord{
		{Word: "surreal", Name: true, Unknown: true, Affix: true},
		{Word: "django", Name: true, Unknown: true},
		{Word: "grbl", Name: true},
		{Word: "storage", Unknown: true},
	}
	if got, want := RefusedNames(ws), []string{"django"}; !slices.Equal(got, want) {
		t.Errorf("RefusedNames = %q, want %q", got, want)
	}
	if got, want := UnknownNames(ws), []string{"surreal", "django"}; !slices.Equal(got, want) {
		t.Errorf("UnknownNames = %q, want %q", got, want)
	}
}

// TestEvidencePromptNamingAffix: a prompt naming what a memory holds only
// as the start or end of a longer term ("Surreal" for "surrealdb", "CNC"
// for "LinuxCNC") is not refused outright: the lexical test decides, with
// the name's information counted as unknown. A prompt whose other words
// the store lacks still gets nothing, and a name no candidate holds even
// so is refused as before.
func TestEvidencePromptNamingAffix(t *testing.T) {
	emb := embed.NewBuiltin()
	st := smallStore(t, emb, []string{
		"The desktop client runs self-contained with surrealdb embedded as its storage; no database server is started.",
		"The exhaust fan maps to M8 on and M9 off for GRBL and LinuxCNC controllers; Marlin uses M106.",
		"The JavaScript bundle is built by esbuild from assets/js/app.js.",
		"Run the unit tests with pytest before every commit.",
	})
	cases := []struct {
		name, prompt string
		want         string // a memory the hits must hold; "" = none
		affix        []string
		refused      bool // NamesUnknown
	}{
		{"start of a term", "Can the desktop client use Surreal as its embedded storage?", "m0", []string{"surreal"}, false},
		{"end of a term", "Which codes does the exhaust fan map to on and off for CNC controllers?", "m1", []string{"cnc"}, false},
		{"affix, other words unknown", "How do I tune Java garbage collection pauses?", "", []string{"java"}, false},
		{"no affix", "How do I tune Kotlin garbage collection pauses?", "", nil, true},
	}
	ctx := context.Background()
	e := New(st, emb, config.Default().Search, memory.FixedClock{T: testNow})
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r, err := e.Run(ctx, Query{Text: c.prompt, Prompt: true})
			if err != nil {
				t.Fatal(err)
			}
			ids := hitIDs(r.Hits)
			if !slices.Equal(r.Evidence.AffixNames, c.affix) {
				t.Errorf("affix names %q, want %q", r.Evidence.AffixNames, c.affix)
			}
			if r.Evidence.NamesUnknown != c.refused {
				t.Errorf("NamesUnknown %v, want %v; evidence %+v", r.Evidence.NamesUnknown, c.refused, r.Evidence)
			}
			if c.want == "" && len(ids) > 0 {
				t.Errorf("hits %v, want none; evidence %+v", ids, r.Evidence)
			}
			if c.want != "" && !slices.Contains(ids, c.want) {
				t.Errorf("hits %v lack %s; evidence %+v", ids, c.want, r.Evidence)
			}
		})
	}
}

// BenchmarkAffixOf bounds what the affix test adds to a prompt naming
// something unknown: one call per unknown name and candidate, here a
// candidate of 80 terms of which none starts or ends with the name (the
// worst case: every term is compared). Run:
//
//	go test ./backend/search -run '^$' -bench AffixOf
func BenchmarkAffixOf(b *testing.B) {
	doc := map[string]bool{}
	for i := range 80 {
		doc[fmt.Sprintf("term%02dword", i)] = true
	}
	terms := []string{"kubernetes"}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if AffixOf(terms, doc) {
			b.Fatal("found")
		}
	}
}

// openUnrelatedInProject opens a real store of testdata/unrelated-in-
// project.json, written for this test: the memories of a ledger service
// and of a developer's devbox, whose shell, log and grep notes are near
// the generic prompts a developer asks anywhere.
func openUnrelatedInProject(t *testing.T) *Engine {
	t.Helper()
	e, _ := openFixtureFile(t, "testdata/unrelated-in-project.json", embed.NewBuiltin(), testNow, nil)
	return e
}

// TestEvidenceLexicalFar: prompts asked inside the ledger project. A
// generic request whose words the store knows from the devbox's memories
// ("bash", "grep", "log") shares a word or two with a ledger memory about
// something else: the lexical test holds (no word of it is unknown), the
// vector test does not, and the memory sharing the words is farther from
// the prompt than the store's typical memory, so the prompt gets nothing;
// without the nearness rule (lexicalNearness off) it got that memory.
// Questions about the ledger, paraphrased, still get theirs, whether on
// the lexical test alone (refunds) or on both.
func TestEvidenceLexicalFar(t *testing.T) {
	e := openUnrelatedInProject(t)
	ctx := context.Background()
	cases := []struct {
		prompt string
		want   string // a memory the hits must hold; "" = no hits
		far    bool   // Evidence.LexicalFar
		vector bool   // Evidence.Vector
	}{
		{"Write a bash one-liner to follow a log file and grep for ERROR", "", true, false},
		{"how do refunds show up in the books?", "l09", false, false},
		{"what happens when an entry is posted into a closed period?", "l01", false, true},
		{"which exchange rate is used for a conversion?", "l08", false, true},
		{"what should I run before I commit?", "l10", false, true},
	}
	ask := func(prompt string) *Result {
		r, err := e.Run(ctx, Query{Text: prompt, Prompt: true, Project: "ledger", ProjectScoped: true, K: 10})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	for _, c := range cases {
		t.Run(c.prompt, func(t *testing.T) {
			r := ask(c.prompt)
			ev := r.Evidence
			ids := hitIDs(r.Hits)
			if !ev.Lexical || ev.LexicalFar != c.far || ev.Vector != c.vector {
				t.Errorf("lexical %v, far %v (cosine %.3f, z %.2f against mean %.3f), vector %v; want lexical, far %v, vector %v",
					ev.Lexical, ev.LexicalFar, ev.LexicalCosine, ev.LexicalZ, ev.Mean, ev.Vector, c.far, c.vector)
			}
			if c.want == "" && len(ids) > 0 {
				t.Errorf("hits %v, want none (evidence %+v)", ids, ev)
			}
			if c.want != "" && !slices.Contains(ids, c.want) {
				t.Errorf("hits %v lack %s (evidence %+v)", ids, c.want, ev)
			}
			if c.far && len(ev.Anchors) > 0 {
				t.Errorf("anchors %q: the words it shares are general language's", ev.Anchors)
			}
			if c.far {
				// Asked as a search, not brought along by a prompt, the
				// memory holding its words answers it.
				sr, err := e.Run(ctx, Query{Text: c.prompt, Project: "ledger", ProjectScoped: true, K: 10})
				if err != nil {
					t.Fatal(err)
				}
				if sr.Evidence.LexicalFar || len(sr.Hits) == 0 {
					t.Errorf("as a search: far %v, %d hits; want the memory holding its words (evidence %+v)", sr.Evidence.LexicalFar, len(sr.Hits), sr.Evidence)
				}
				lexicalNearness = false
				defer func() { lexicalNearness = true }()
				if off := ask(c.prompt); len(off.Hits) == 0 {
					t.Errorf("without the nearness rule it got nothing too: the case no longer tests the rule (evidence %+v)", off.Evidence)
				}
			}
		})
	}
}

// TestAnchorWords: a word of the query the memory holds is an anchor when
// general language does not use it (its information is maxInfo) and no
// other memory holds it; a word general language uses, one two memories
// hold or one the memory lacks is not. Each part switched off drops its
// condition.
func TestAnchorWords(t *testing.T) {
	const maxInfo = 15
	analyze := func(w string) []string { return []string{w} }
	probs := map[string]float64{"where": math.Exp(-5), "defined": math.Exp(-7), "error": math.Exp(-6)}
	prob := func(w string) (float64, bool) { p, ok := probs[w]; return p, ok }
	df := map[string]int{"x7qk2": 1, "jetstream": 2, "error": 1, "defined": 9}
	ws := QueryWords("where is x7qk2 defined, jetstream error zq9v?", analyze, df, prob, maxInfo)
	memories := map[string]int{}
	for _, w := range ws {
		memories[w.Word] = w.Memories
	}
	if want := map[string]int{"where": 0, "is": 0, "x7qk2": 1, "defined": 9, "jetstream": 2, "error": 1, "zq9v": 0}; !reflect.DeepEqual(memories, want) {
		t.Fatalf("QueryWords' Memories = %v, want %v", memories, want)
	}
	doc := map[string]bool{"x7qk2": true, "jetstream": true, "error": true, "defined": true}
	cases := []struct {
		name        string
		unused, one bool // anchorUnused, anchorOne
		doc         map[string]bool
		want        []string
	}{
		{"the rare identifier only this memory holds", true, true, doc, []string{"x7qk2"}},
		{"a memory without it", true, true, map[string]bool{"error": true, "defined": true}, nil},
		{"general language off: a common word one memory holds too", false, true, doc, []string{"x7qk2", "error"}},
		{"one memory off: a name two memories hold too", true, false, doc, []string{"x7qk2", "jetstream"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			anchorUnused, anchorOne = c.unused, c.one
			defer func() { anchorUnused, anchorOne = true, true }()
			if got := AnchorWords(ws, c.doc, maxInfo); !slices.Equal(got, c.want) {
				t.Errorf("AnchorWords = %q, want %q", got, c.want)
			}
		})
	}
}

// openRareIdentifiers opens a real store of testdata/rare-identifiers.json,
// written for this test: the memories of a barcode scanner service, one of
// them (s20) a list of branch and temporary repository names, and of a
// homelab.
func openRareIdentifiers(t *testing.T) *Engine {
	t.Helper()
	e, _ := openFixtureFile(t, "testdata/rare-identifiers.json", embed.NewBuiltin(), testNow, nil)
	return e
}

// TestEvidenceAnchors: prompts asked inside the scanner project. A prompt
// naming a temporary repository that only the list memory (s20) holds
// gets that memory although the list embeds as noise (its cosine to the
// prompt is at or below the sample's mean, and the vector test fails):
// the name is not shared by chance (Evidence.Anchors). Without the rule
// (lexicalAnchors off) LexicalFar refused it. A generic request sharing
// words general language uses gets nothing, with no anchor.
func TestEvidenceAnchors(t *testing.T) {
	e := openRareIdentifiers(t)
	ctx := context.Background()
	cases := []struct {
		prompt  string
		want    string // a memory the hits must hold; "" = no hits
		anchors []string
	}{
		{"where is `vmgnzg` defined?", "s20", []string{"vmgnzg"}},
		{"where is `wj3deg` defined?", "s20", []string{"wj3deg"}},
		{"where is `xy97ef` defined?", "s20", []string{"xy97ef"}},
		{"Write a bash one-liner to follow a log file and grep for ERROR", "", nil},
	}
	ask := func(prompt string) *Result {
		r, err := e.Run(ctx, Query{Text: prompt, Prompt: true, Project: "scanner", ProjectScoped: true, K: 10})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	for _, c := range cases {
		t.Run(c.prompt, func(t *testing.T) {
			r := ask(c.prompt)
			ev := r.Evidence
			ids := hitIDs(r.Hits)
			if !slices.Equal(ev.Anchors, c.anchors) {
				t.Errorf("anchors %q, want %q", ev.Anchors, c.anchors)
			}
			if c.want == "" {
				if len(ids) > 0 {
					t.Errorf("hits %v, want none (evidence %+v)", ids, ev)
				}
				return
			}
			if !slices.Contains(ids, c.want) || ev.LexicalFar {
				t.Errorf("hits %v, far %v; want %s (evidence %+v)", ids, ev.LexicalFar, c.want, ev)
			}
			if !ev.Lexical || ev.Vector || ev.LexicalCosine > ev.Mean {
				t.Errorf("lexical %v, vector %v, lexical cosine %.3f (z %.2f) above the mean %.3f: the case no longer tests a noise-like memory on the lexical test alone",
					ev.Lexical, ev.Vector, ev.LexicalCosine, ev.LexicalZ, ev.Mean)
			}
			lexicalAnchors = false
			defer func() { lexicalAnchors = true }()
			if off := ask(c.prompt); len(off.Hits) > 0 || !off.Evidence.LexicalFar {
				t.Errorf("without the rule: hits %v, far %v; want none, refused as far (evidence %+v)", hitIDs(off.Hits), off.Evidence.LexicalFar, off.Evidence)
			}
		})
	}
}

// TestNameWordsForms: a word inside a name written by its form
// (memory.NameSpans) is a name, whatever general language makes of it: a
// flag, a folder, a called name, a code span, a port, an issue, a
// version; a number written bare is a count, and a number inside such a
// name is none.
func TestNameWordsForms(t *testing.T) {
	cases := []struct {
		text          string
		names, counts []string
	}{
		{"what does --firmware do?", []string{"firmware"}, nil},
		{"what does -n do with --dry-run?", []string{"n", "dry", "run"}, nil},
		{"what goes in assets/?", []string{"assets"}, nil},
		{"it now uses abs(self._value)", []string{"abs", "self._value"}, nil},
		{"run `make test` first", []string{"make", "test"}, nil},
		{"set $GOFLAGS", []string{"goflags"}, nil},
		{"the server on :8471 fixes #1234 since 2.4.1", []string{"8471", "1234", "2.4.1"}, nil},
		{"find the 10 largest files in 3 folders", nil, []string{"10", "3"}},
		{"a well-known e-mail, -5 degrees, file(s) e.g. here", nil, []string{"5"}},
	}
	for _, c := range cases {
		names, counts := nameWords(c.text)
		if got := slices.Sorted(maps.Keys(names)); !slices.Equal(got, slices.Sorted(slices.Values(c.names))) {
			t.Errorf("nameWords(%q) names %q, want %q", c.text, got, c.names)
		}
		if got := slices.Sorted(maps.Keys(counts)); !slices.Equal(got, slices.Sorted(slices.Values(c.counts))) {
			t.Errorf("nameWords(%q) counts %q, want %q", c.text, got, c.counts)
		}
	}
	namesByForm = false
	defer func() { namesByForm = true }()
	if names, _ := nameWords("what does --firmware do?"); names["firmware"] {
		t.Error("names by form off: --firmware still a name")
	}
}

// TestAnchorWordsCounts: a number written as a count anchors nothing,
// though the word model holds no number; one written as a port or a
// version anchors as any word general language does not use.
func TestAnchorWordsCounts(t *testing.T) {
	const maxInfo = 15
	analyze := func(w string) []string { return []string{w} }
	prob := func(w string) (float64, bool) { return math.Exp(-5), w == "largest" || w == "files" || w == "on" }
	df := map[string]int{"10": 1, "8471": 1, "2.4.1": 1, "largest": 3}
	ws := QueryWords("the 10 largest files on :8471 since 2.4.1", analyze, df, prob, maxInfo)
	doc := map[string]bool{"10": true, "8471": true, "2.4.1": true, "largest": true}
	if got := AnchorWords(ws, doc, maxInfo); !slices.Equal(got, []string{"8471", "2.4.1"}) {
		t.Errorf("AnchorWords = %q, want [8471 2.4.1]", got)
	}
	countsGeneral = false
	defer func() { countsGeneral = true }()
	if got := AnchorWords(ws, doc, maxInfo); !slices.Equal(got, []string{"10", "8471", "2.4.1"}) {
		t.Errorf("counts general off: AnchorWords = %q, want [10 8471 2.4.1]", got)
	}
}

// TestEvidenceNameForms: prompts asked inside the tiler project of
// testdata/name-forms.json (written for this test) naming a flag, a
// folder or a port whose words general language uses get the memory that
// writes it; with names by form off the flag prompts were refused as
// generic (a flag's one word is a common word not written as a name).
func TestEvidenceNameForms(t *testing.T) {
	e, _ := openFixtureFile(t, "testdata/name-forms.json", embed.NewBuiltin(), testNow, nil)
	ctx := context.Background()
	cases := []struct {
		prompt, want string
		genericOff   bool // refused as generic with namesByForm off
	}{
		{"what does --firmware do?", "t02", true},
		{"what does -n do?", "t05", true},
		{"what goes in assets/?", "t03", false},
	}
	ask := func(prompt string) *Result {
		r, err := e.Run(ctx, Query{Text: prompt, Prompt: true, Project: "tiler", ProjectScoped: true, K: 10})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	for _, c := range cases {
		t.Run(c.prompt, func(t *testing.T) {
			r := ask(c.prompt)
			if ids := hitIDs(r.Hits); !slices.Contains(ids, c.want) || r.Evidence.Generic {
				t.Errorf("hits %v, generic %v; want %s (evidence %+v)", ids, r.Evidence.Generic, c.want, r.Evidence)
			}
			was := namesByForm
			namesByForm = false
			defer func() { namesByForm = was }()
			if off := ask(c.prompt); c.genericOff && (len(off.Hits) > 0 || !off.Evidence.Generic) {
				t.Errorf("names by form off: hits %v, generic %v; want none, generic", hitIDs(off.Hits), off.Evidence.Generic)
			}
		})
	}
}
