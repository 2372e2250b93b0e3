package ingest

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/memtray/memtray/backend/config"
	"github.com/memtray/memtray/backend/embed"
	"github.com/memtray/memtray/backend/memory"
	"github.com/memtray/memtray/backend/noise"
	"github.com/memtray/memtray/backend/store"
)

var t0 = time.Date(2025, 5, 1, 9, 0, 0, 0, time.UTC)

type fixture struct {
	p     *Pipeline
	st    *store.Store
	emb   memory.Embedder
	clock memory.Clock
}

func newFixture(t testing.TB, judge memory.Judge) *fixture {
	t.Helper()
	ctx := context.Background()
	emb := embed.NewBuiltin()
	clock := memory.FixedClock{T: t0}
	st, err := store.Open(ctx, store.Options{Dir: t.TempDir(), Model: emb.Model(), Dim: emb.Dim(), Clock: clock})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	cfg := config.Default().Ingest
	sc, err := noise.New(ctx, noise.Options{Embedder: emb, Clock: clock, BufferSize: cfg.NoiseBufferSize,
		Recent: cfg.NoiseRecent, RebuildEvery: cfg.NoiseRebuildEvery, Threshold: cfg.ContentThreshold})
	if err != nil {
		t.Fatal(err)
	}
	p, err := New(Options{Config: cfg, Embedder: emb, Store: st, Scorer: sc, Judge: judge, Clock: clock})
	if err != nil {
		t.Fatal(err)
	}
	return &fixture{p: p, st: st, emb: emb, clock: clock}
}

func (f *fixture) process(t testing.TB, ex memory.Exchange) memory.Decision {
	t.Helper()
	d, err := f.p.Process(context.Background(), ex)
	if err != nil {
		t.Fatalf("process %q: %v", preview(ex.Assistant), err)
	}
	return d
}

type item struct{ ID, User, Assistant, Label string }

func loadItems(t *testing.T) []item {
	f, err := os.Open("testdata/exchanges.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []item
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var it item
		if err := json.Unmarshal(sc.Bytes(), &it); err != nil {
			t.Fatal(err)
		}
		out = append(out, it)
	}
	return out
}

// TestLabelledExchanges runs the hand-written fixture: every substantive
// exchange is stored, every noise and low-value one rejected, with the
// stage that should catch it.
func TestLabelledExchanges(t *testing.T) {
	f := newFixture(t, nil)
	for i, it := range loadItems(t) {
		d := f.process(t, memory.Exchange{SessionID: "s", Turn: i + 1, UserTurns: i + 1, User: it.User, Assistant: it.Assistant})
		if d.Kept() != (it.Label == "substantive") {
			t.Errorf("%s (%s): %s at %s: %s", it.ID, it.Label, d.Verdict, d.Stage, d.Reason)
		}
		if len(d.Timings) == 0 || d.Reason == "" || d.At != t0 {
			t.Errorf("%s: incomplete decision %+v", it.ID, d)
		}
		if d.Kept() && len(d.MemoryIDs) == 0 {
			t.Errorf("%s: kept without a memory id", it.ID)
		}
	}
}

func TestStages(t *testing.T) {
	long := "The payments service retries webhooks with exponential backoff because the provider rate-limits us; keep `RETRY_MAX=6` in `payments/config.yaml` or deliveries get dropped."
	tests := []struct {
		name  string
		ex    memory.Exchange
		stage string
	}{
		{"error response", memory.Exchange{User: "why", Assistant: long, Error: true}, StageSource},
		{"tool loop iteration", memory.Exchange{Assistant: long, ToolLoop: true, ToolCalls: []memory.ToolCall{{Name: "Edit"}}}, StageSource},
		{"tool loop conclusion", memory.Exchange{Assistant: long, ToolLoop: true, ToolResults: []memory.ToolResult{{Content: "ok"}}}, StageStore},
		{"tool output only", memory.Exchange{User: "ls", ToolResults: []memory.ToolResult{{Content: "a.go b.go"}}}, StageSource},
		{"empty reply", memory.Exchange{User: "hi"}, StageSource},
		{"raw web search", memory.Exchange{User: "search it", Assistant: "Results: 1. \"Backoff\" (example.com)",
			ToolCalls: []memory.ToolCall{{Name: "web_search", Input: `{"q":"backoff"}`}}}, StageSource},
		{"headless single turn", memory.Exchange{User: "why", Assistant: long, Headless: true, UserTurns: 1}, StageHeadless},
		{"ack then procedural", memory.Exchange{User: "go ahead", Assistant: "Applying the change to every handler now, then I'll run the whole test suite again."}, StagePrefilter},
		{"narration", memory.Exchange{User: "fix it", Assistant: "Let me look at the handler. Reading `payments/webhook.go` now. I'll then check the retry loop and report back."}, StageProcedural},
		{"short", memory.Exchange{User: "status?", Assistant: "Tests are green."}, StageProcedural},
		{"short fragment", memory.Exchange{User: "where", Assistant: "The handler is somewhere in the payments code."}, StageLength},
		{"generic", memory.Exchange{User: "what is backoff", Assistant: "Exponential backoff is a retry strategy in which the wait between attempts grows geometrically, usually with random jitter so that many clients do not retry in lockstep. It protects an overloaded service while still letting requests through eventually."}, StageSpecific},
		{"stored", memory.Exchange{User: "why the retries?", Assistant: long}, StageStore},
		{"short but specific", memory.Exchange{User: "port?", Assistant: "The admin API listens on 127.0.0.1:9443, never on 0.0.0.0."}, StageStore},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, nil)
			tt.ex.UserTurns = max(tt.ex.UserTurns, 5)
			if tt.name == "headless single turn" {
				tt.ex.UserTurns = 1
			}
			d := f.process(t, tt.ex)
			if d.Stage != tt.stage {
				t.Errorf("decided at %s (%s: %s), want %s", d.Stage, d.Verdict, d.Reason, tt.stage)
			}
			if (tt.stage == StageStore) != d.Kept() {
				t.Errorf("verdict %s", d.Verdict)
			}
			if tt.stage != StageStore && f.st.Count() != 0 {
				t.Errorf("a rejected exchange left %d memories", f.st.Count())
			}
		})
	}
}

// TestToolLoopFindings: with ingest.tool_loop_findings on, the text between
// tool calls goes through the gates and is kept only when it states a
// finding with a reason or rule.
func TestToolLoopFindings(t *testing.T) {
	long := "The payments service retries webhooks with exponential backoff because the provider rate-limits us; keep `RETRY_MAX=6` in `payments/config.yaml` or deliveries get dropped."
	tests := []struct {
		name  string
		text  string
		stage string
	}{
		{"narration", "Reading the handler now. Let me check the retry loop next.", StageProcedural},
		{"no finding", "The handler file has three functions and about two hundred lines in `payments/webhook.go`, mostly glue code.", StageProcedural},
		{"finding", long, StageStore},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, nil)
			f.p.cfg.ToolLoopFindings = true
			d := f.process(t, memory.Exchange{Assistant: tt.text, ToolLoop: true, UserTurns: 3,
				ToolCalls: []memory.ToolCall{{Name: "Read"}}})
			if d.Stage != tt.stage {
				t.Errorf("decided at %s (%s), want %s", d.Stage, d.Reason, tt.stage)
			}
		})
	}
}

func TestStripInjected(t *testing.T) {
	f := newFixture(t, nil)
	reply := "<memtray-context>\n- the deploy key lives in vault\n</memtray-context>\nThe nightly job runs `scripts/rotate.sh` because the provider expires keys after 30 days; never rotate by hand."
	d := f.process(t, memory.Exchange{User: "<system-reminder>be brief</system-reminder>why the cron?", Assistant: reply, UserTurns: 4})
	if !d.Kept() {
		t.Fatalf("not kept: %s %s", d.Stage, d.Reason)
	}
	m, err := f.st.Get(context.Background(), d.MemoryIDs[0])
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(m.Text, "memtray-context") || strings.Contains(m.Text, "deploy key lives") {
		t.Errorf("stored our own injected block: %q", m.Text)
	}
}

// TestDedup: the same text reinforces; a near duplicate without new
// load-bearing tokens merges; one with a new port supersedes, each reason
// naming the memory by its whole id; replaying a session adds nothing.
func TestDedup(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, nil)
	base := "Integration tests run against Postgres 16 on port 55433 started by docker-compose.test.yml; never point them at the dev database."
	d1 := f.process(t, memory.Exchange{User: "which db", Assistant: base, UserTurns: 3})
	if d1.Verdict != memory.VerdictStored {
		t.Fatalf("first: %s %s", d1.Verdict, d1.Reason)
	}
	d2 := f.process(t, memory.Exchange{User: "which db", Assistant: base + "  ", UserTurns: 3})
	if d2.Verdict != memory.VerdictDuplicate || d2.MemoryIDs[0] != d1.MemoryIDs[0] {
		t.Fatalf("exact duplicate: %s %v", d2.Verdict, d2.MemoryIDs)
	}
	m, _ := f.st.Get(ctx, d1.MemoryIDs[0])
	if m.ReinforcedCount != 1 || !m.LastReinforcedAt.Equal(t0) {
		t.Errorf("not reinforced: %d %v", m.ReinforcedCount, m.LastReinforcedAt)
	}
	near := "Integration tests run against Postgres 16 on port 55433, started by docker-compose.test.yml; never point them at the dev database!"
	d3 := f.process(t, memory.Exchange{User: "db?", Assistant: near, UserTurns: 3})
	if d3.Verdict != memory.VerdictMerged || d3.MemoryIDs[0] != d1.MemoryIDs[0] {
		t.Fatalf("near duplicate: %s %s (nearest %.3f)", d3.Verdict, d3.Reason, d3.Scores["nearest_similarity"])
	}
	changed := "Integration tests run against Postgres 16 on port 55434 started by docker-compose.test.yml; never point them at the dev database."
	d4 := f.process(t, memory.Exchange{User: "db?", Assistant: changed, UserTurns: 3})
	if d4.Verdict != memory.VerdictUpdated || !strings.Contains(d4.Reason, "55434") {
		t.Fatalf("update: %s %s (nearest %.3f)", d4.Verdict, d4.Reason, d4.Scores["nearest_similarity"])
	}
	// The reasons name the memory by its whole id, which every command
	// takes (exp-ui3): at 1368516 they cut it to 8 characters.
	for _, c := range []struct{ reason, want string }{
		{d3.Reason, "near duplicate of " + d1.MemoryIDs[0] + " ("},
		{d4.Reason, "updates " + d1.MemoryIDs[0] + " ("},
	} {
		if !strings.HasPrefix(c.reason, c.want) {
			t.Errorf("reason %q, want it to begin %q", c.reason, c.want)
		}
	}
	old, _ := f.st.Get(ctx, d1.MemoryIDs[0])
	nw, _ := f.st.Get(ctx, d4.MemoryIDs[0])
	if old.SupersededBy != nw.ID || nw.Supersedes != old.ID {
		t.Errorf("history not kept: old.superseded_by=%q new.supersedes=%q", old.SupersededBy, nw.Supersedes)
	}
	if f.st.Count() != 2 {
		t.Errorf("%d memories, want 2 (the old version kept)", f.st.Count())
	}
	// Replaying everything adds nothing.
	for _, a := range []string{base, near, changed} {
		f.process(t, memory.Exchange{User: "db?", Assistant: a, UserTurns: 3})
	}
	if f.st.Count() != 2 {
		t.Errorf("replay added memories: %d", f.st.Count())
	}
}

func TestSourceLink(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, nil)
	doc := "Releases are cut from main by `make release`, which tags vX.Y.Z, builds the binaries with goreleaser and uploads them to the GitHub release; the changelog comes from the PR titles."
	vecs, _ := f.emb.Embed(ctx, []string{doc})
	src, err := f.st.Put(ctx, memory.Memory{Text: doc, Source: "ingest:RELEASING.md", Embedding: vecs[0]})
	if err != nil {
		t.Fatal(err)
	}
	reply := "Releases are cut from main with `make release`: it tags vX.Y.Z and goreleaser builds the binaries for the GitHub release; we never tag by hand because the changelog is generated from PR titles."
	d := f.process(t, memory.Exchange{User: "how do we release", Assistant: reply, UserTurns: 3})
	if !d.Kept() {
		t.Fatalf("%s %s", d.Stage, d.Reason)
	}
	m, _ := f.st.Get(ctx, d.MemoryIDs[0])
	if d.Verdict == memory.VerdictStored && m.ExtendsSource != src.ID {
		t.Errorf("not linked to the source (similarity %.3f): %s", d.Scores["nearest_similarity"], d.Reason)
	}
	if m.ExtendsSource != "" && !strings.Contains(d.Reason, "extending source "+src.ID+" (") {
		t.Errorf("reason %q does not name the source by its whole id %s", d.Reason, src.ID)
	}
}

// TestConcurrentSameText: two copies arriving together form one memory.
func TestConcurrentSameText(t *testing.T) {
	f := newFixture(t, nil)
	text := "The search index is rebuilt nightly by `cmd/reindex` because incremental updates drift; never run it during business hours."
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := f.p.Process(context.Background(), memory.Exchange{User: "why", Assistant: text, UserTurns: 3}); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if f.st.Count() != 1 {
		t.Errorf("%d memories, want 1", f.st.Count())
	}
}

func TestValidate(t *testing.T) {
	f := newFixture(t, nil)
	bad := []memory.Exchange{
		{Assistant: string([]byte{0xff, 0xfe})},
		{Assistant: "a\x00b"},
		{Assistant: strings.Repeat("a", MaxTextBytes+1)},
		{Assistant: "ok", Turn: -1},
		{Assistant: "ok", ToolResults: []memory.ToolResult{{Content: strings.Repeat("x", MaxToolBytes+1)}}},
	}
	for i, ex := range bad {
		if _, err := f.p.Process(context.Background(), ex); !errors.Is(err, memory.ErrInvalid) {
			t.Errorf("%d: err = %v, want ErrInvalid", i, err)
		}
	}
}

// fakeJudge answers from a table; the real judges are tested in package judge.
type fakeJudge struct {
	skip  bool
	mem   string
	err   error
	calls int
	mu    sync.Mutex
}

func (j *fakeJudge) Name() string { return "table" }
func (j *fakeJudge) Judge(_ context.Context, ex memory.Exchange) (memory.JudgeVerdict, error) {
	j.mu.Lock()
	j.calls++
	j.mu.Unlock()
	if j.err != nil {
		return memory.JudgeVerdict{}, j.err
	}
	return memory.JudgeVerdict{Skip: j.skip, Memory: j.mem, Kind: memory.KindDecision}, nil
}

func TestJudge(t *testing.T) {
	reply := "We moved sessions from Redis to Postgres because the Redis instance was evicting keys under memory pressure; `SESSION_BACKEND=postgres` is the setting."
	t.Run("skip trains the scorer", func(t *testing.T) {
		j := &fakeJudge{skip: true}
		f := newFixture(t, j)
		d := f.process(t, memory.Exchange{User: "why", Assistant: reply, UserTurns: 3})
		if d.Stage != StageJudge || d.Kept() {
			t.Fatalf("%s %s", d.Stage, d.Verdict)
		}
		if f.p.Scorer().State().BufferLen != 1 {
			t.Error("the judge's SKIP did not reach the rejection buffer")
		}
	})
	t.Run("distilled memory stored", func(t *testing.T) {
		j := &fakeJudge{mem: "Sessions live in Postgres (SESSION_BACKEND=postgres), not Redis: Redis evicted keys under memory pressure."}
		f := newFixture(t, j)
		d := f.process(t, memory.Exchange{User: "why", Assistant: reply, UserTurns: 3})
		m, err := f.st.Get(context.Background(), d.MemoryIDs[0])
		if err != nil || m.Text != j.mem || m.Kind != memory.KindDecision {
			t.Errorf("stored %q kind %s (%v)", m.Text, m.Kind, err)
		}
	})
	t.Run("judge error lets the gates decide", func(t *testing.T) {
		j := &fakeJudge{err: errors.New("budget")}
		f := newFixture(t, j)
		d := f.process(t, memory.Exchange{User: "why", Assistant: reply, UserTurns: 3})
		if !d.Kept() || d.Scores["judge_error"] != 1 {
			t.Errorf("%s %s", d.Verdict, d.Reason)
		}
	})
	t.Run("gates spare the judge", func(t *testing.T) {
		j := &fakeJudge{}
		f := newFixture(t, j)
		f.process(t, memory.Exchange{User: "ok", Assistant: "Done.", UserTurns: 3})
		if j.calls != 0 {
			t.Error("the judge was asked about noise the gates reject")
		}
	})
}

func TestGuessKind(t *testing.T) {
	tests := map[string]memory.Kind{
		"You prefer squash merges.":                                   memory.KindPreference,
		"We decided on Kafka instead of NATS because of replay.":      memory.KindDecision,
		"Root cause: the cache key ignored the locale.":               memory.KindDebugging,
		"Line items must never change after an invoice is finalised.": memory.KindInvariant,
		"Set MAX_WORKERS=4 in deploy.yaml.":                           memory.KindConfig,
		"The billing service owns the invoices table.":                memory.KindFact,
		// an offer to the reader states no preference of theirs
		"Migrations live in db/migrate; run them when you want to seed staging.": memory.KindFact,
		"If you like, the exporter can write CSV too.":                           memory.KindFact,
		"You want the exporter to write CSV, not XLSX.":                          memory.KindPreference,
		// contracted: "you'd like" (the cue once wanted a space before 'd)
		"You'd like the exporter to write CSV, not XLSX.": memory.KindPreference,
		"If you'd like, the exporter can write CSV too.":  memory.KindFact,
	}
	for text, want := range tests {
		if got := GuessKind(text); got != want {
			t.Errorf("%q: %s, want %s", text, got, want)
		}
	}
}

// BenchmarkPipeline runs a mixed stream (the labelled fixture, or
// $MEMTRAY_FILTER_SET in the format of ../shared/eval/filter-dev.jsonl)
// through the whole pipeline on a real store: ns/op is the cost of one
// exchange (throughput = 1e9 / ns/op), and gates-p50/p99-us the time the
// pre-judge stages (strip, redact and the gates) took per exchange. The
// embed-us metric is one built-in embedding of a reply, the baseline the
// gates compare with (the content gate embeds once).
func BenchmarkPipeline(b *testing.B) {
	items := benchItems(b)
	f := newFixture(b, nil)
	ctx := context.Background()
	pre := map[string]bool{StageStrip: true, StageRedact: true}
	for _, s := range PreJudgeStages {
		pre[s] = true
	}
	var gates []time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		it := items[i%len(items)]
		// A new suffix each round keeps dedup from short-cutting repeats.
		ex := memory.Exchange{User: it.User, Assistant: fmt.Sprintf("%s (round %d)", it.Assistant, i/len(items)), UserTurns: 5}
		d, err := f.p.Process(ctx, ex)
		if err != nil {
			b.Fatal(err)
		}
		var g time.Duration
		for _, t := range d.Timings {
			if pre[t.Stage] {
				g += t.Duration
			}
		}
		gates = append(gates, g)
	}
	b.StopTimer()
	slices.Sort(gates)
	us := func(q float64) float64 { return float64(gates[int(q*float64(len(gates)-1))].Nanoseconds()) / 1e3 }
	b.ReportMetric(us(0.5), "gates-p50-us")
	b.ReportMetric(us(0.99), "gates-p99-us")
	start := time.Now()
	const n = 200
	for i := 0; i < n; i++ {
		f.emb.Embed(ctx, []string{items[i%len(items)].Assistant + fmt.Sprint(i)})
	}
	b.ReportMetric(float64(time.Since(start).Nanoseconds())/n/1e3, "embed-us")
}

func benchItems(b *testing.B) []item {
	path := os.Getenv("MEMTRAY_FILTER_SET")
	if path == "" {
		path = "testdata/exchanges.jsonl"
	}
	data, err := os.ReadFile(path)
	if err != nil {
		b.Fatal(err)
	}
	var out []item
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var it item
		if err := json.Unmarshal([]byte(line), &it); err != nil {
			b.Fatal(err)
		}
		out = append(out, it)
	}
	return out
}

// TestValidateAnswers: the user's answers are checked like the texts,
// each problem naming the first answer that has it.
func TestValidateAnswers(t *testing.T) {
	q := func(question, answer string) memory.Answer { return memory.Answer{Question: question, Answer: answer} }
	tests := []struct {
		name    string
		answers []memory.Answer
		want    string // in the error; "" for valid
	}{
		{"an answer", []memory.Answer{q("Which?", "this")}, ""},
		{"a refusal's words", []memory.Answer{{Answer: "use pnpm", Refused: true}}, ""},
		{"none", nil, ""},
		{"invalid UTF-8", []memory.Answer{q("Which?", "this"), q("Which?", "caf\xe9")}, "answers[1] is not valid UTF-8"},
		{"no answer", []memory.Answer{q("Which?", " ")}, "answers[0] has no answer"},
		{"a refusal without words", []memory.Answer{{Refused: true}}, "answers[0] has no answer"},
		{"no question", []memory.Answer{q("Which?", "this"), q("", "this")}, "answers[1] has no question"},
		{"a refusal with a question", []memory.Answer{{Question: "Which?", Answer: "this", Refused: true}}, "answers[0] is refused and has a question"},
		{"over 1 MiB", []memory.Answer{q("Which?", strings.Repeat("x", MaxTextBytes))}, "answers are longer than 1 MiB"},
		{"too many", make([]memory.Answer, MaxToolEntries+1), "more than 1000 answers"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := Validate(memory.Exchange{User: "hi", Answers: tt.answers})
			switch {
			case tt.want == "" && err != nil:
				t.Fatalf("valid answers refused: %v", err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want) || !errors.Is(err, memory.ErrInvalid)):
				t.Fatalf("error %v, want one saying %q", err, tt.want)
			}
		})
	}
}

// TestGuessedPreferenceStoredType: a text stored without a kind (a
// document, an exchange of the per-exchange path) whose kind is guessed a
// preference is typed by what it is about (ruleType): what the user wants
// of the project's content is the project's, what they want of the
// agent's way of working is theirs. The project case fails without it.
func TestGuessedPreferenceStoredType(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		text string
		kind memory.Kind
		typ  memory.Type
	}{
		{"You want the invoice totals on the summary page rounded to whole euros, never shown with cents.", memory.KindConvention, memory.TypeProject},
		{"You prefer short replies, and you want to be asked before anything is pushed.", memory.KindPreference, memory.TypeUser},
	} {
		t.Run(tc.text, func(t *testing.T) {
			f := newFixture(t, nil)
			dec, err := f.p.Document(ctx, "notes.md", "shop", tc.text)
			if err != nil || len(dec.MemoryIDs) != 1 {
				t.Fatalf("document: %v, %+v", err, dec)
			}
			ms, err := f.st.GetMany(ctx, dec.MemoryIDs)
			if m := ms[dec.MemoryIDs[0]]; err != nil || m.Kind != tc.kind || m.Type != tc.typ {
				t.Fatalf("stored %q %s/%s (%v), want %s/%s", m.Text, m.Kind, m.Type, err, tc.kind, tc.typ)
			}
		})
	}
}
