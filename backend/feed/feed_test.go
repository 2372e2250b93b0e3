package feed

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/memtray/memtray/backend/config"
	"github.com/memtray/memtray/backend/embed"
	"github.com/memtray/memtray/backend/ingest"
	"github.com/memtray/memtray/backend/memories"
	"github.com/memtray/memtray/backend/memory"
	"github.com/memtray/memtray/backend/noise"
	"github.com/memtray/memtray/backend/search"
	"github.com/memtray/memtray/backend/store"
)

// testT is the fixed time of the feed's tests.
var testT = time.Date(2026, 5, 6, 7, 8, 9, 0, time.UTC)

// openPipeline returns a real store and a write pipeline over it (built-in
// embedder, the default config, no judge), with a content scorer when
// scored.
func openPipeline(t testing.TB, scored bool) (*store.Store, *ingest.Pipeline, *embed.Builtin) {
	t.Helper()
	ctx := context.Background()
	clock := memory.FixedClock{T: testT}
	emb := embed.NewBuiltin()
	st, err := store.Open(ctx, store.Options{Dir: t.TempDir(), Model: emb.Model(), Dim: emb.Dim(), Clock: clock})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	cfg := config.Default()
	opts := ingest.Options{Config: cfg.Ingest, Embedder: emb, Store: st, Clock: clock}
	if scored {
		opts.Scorer, err = noise.New(ctx, noise.Options{Embedder: emb, BufferPath: filepath.Join(t.TempDir(), "rejections.jsonl"),
			Threshold: cfg.Ingest.ContentThreshold, Clock: clock})
		if err != nil {
			t.Fatal(err)
		}
	}
	p, err := ingest.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	return st, p, emb
}

// trasher returns the trash of a real memories service over st and p
// (memories.Service.Trash), as the daemon wires it into Options.Trash.
func trasher(t testing.TB, st *store.Store, p *ingest.Pipeline, emb memory.Embedder) func(context.Context, string, string) error {
	t.Helper()
	sw := embed.NewSwappable(emb)
	ms, err := memories.New(memories.Options{Store: st, Pipeline: p, Search: search.New(st, sw, config.Default().Search, memory.FixedClock{T: testT}),
		Embedder: sw, Clock: memory.FixedClock{T: testT}})
	if err != nil {
		t.Fatal(err)
	}
	return ms.Trash
}

// open returns the service over a real store and pipeline (built-in
// embedder, no scorer, no judge).
func open(t *testing.T) *Service {
	t.Helper()
	st, p, emb := openPipeline(t, false)
	cfg := config.Default()
	s, err := New(Options{Store: st, Pipeline: p, Embedder: emb, Trash: trasher(t, st, p, emb), Log: NewDecisionLog(cfg.Ingest.DecisionLog, nil),
		LogSize: cfg.Ingest.DecisionLog, Threshold: func() float64 { return cfg.Ingest.ContentThreshold }})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestNewNeedsParts(t *testing.T) {
	if _, err := New(Options{}); err == nil {
		t.Fatal("New without a store: no error")
	}
}

// TestIngestValidates: too many items, an invalid exchange or document
// fail the whole request before anything is decided.
func TestIngestValidates(t *testing.T) {
	s := open(t)
	for _, tc := range []struct {
		name string
		req  IngestRequest
	}{
		{"too many", IngestRequest{Documents: make([]Document, MaxIngestItems+1)}},
		{"document without a name", IngestRequest{Documents: []Document{{Text: "text"}}}},
		{"document not UTF-8", IngestRequest{Documents: []Document{{Name: "a", Text: "\xff"}}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := s.Ingest(context.Background(), tc.req); !errors.Is(err, memory.ErrInvalid) {
				t.Fatalf("Ingest = %v, want invalid", err)
			}
			if got, _ := s.Decisions(context.Background(), 10); len(got) != 0 {
				t.Fatalf("decisions after a refused request: %v", got)
			}
		})
	}
}

// TestDocumentDecidedAndLogged: a document is stored and its decision
// logged; keeping a stored (not rejected) decision is refused.
func TestDocumentDecidedAndLogged(t *testing.T) {
	ctx := context.Background()
	s := open(t)
	resp, err := s.Ingest(ctx, IngestRequest{Documents: []Document{{Name: "runbook", Project: "ops",
		Text: "Deploys go out from the release branch every Tuesday after the freeze; rollbacks use the previous image tag."}}})
	if err != nil || len(resp.Decisions) != 1 {
		t.Fatalf("Ingest = %+v, %v", resp, err)
	}
	log, _ := s.Decisions(ctx, 10)
	if len(log) != 1 || log[0].ID != resp.Decisions[0].ID || log[0].Source != "ingest:runbook" {
		t.Fatalf("Decisions = %+v", log)
	}
	// It says what became of the exchange and where, not "invalid input"
	// (at 9937c7b: "…was stored, not rejected: invalid input").
	_, err = s.Keep(ctx, log[0].ID)
	if !errors.Is(err, memory.ErrInvalid) || len(log[0].MemoryIDs) == 0 {
		t.Fatalf("Keep of a stored decision = %v, want invalid (memories %v)", err, log[0].MemoryIDs)
	}
	want := fmt.Sprintf("decision %s was stored as memory %s: it is kept already, there is nothing to keep (`memtray get %s` shows it)",
		log[0].ID, strings.Join(log[0].MemoryIDs, ", "), log[0].MemoryIDs[0])
	if err.Error() != want {
		t.Fatalf("Keep of a stored decision says %q\nwant %q", err, want)
	}
	if _, err := s.Keep(ctx, "nope"); !errors.Is(err, memory.ErrNotFound) {
		t.Fatalf("Keep of an unknown decision = %v, want not found", err)
	}
	if _, err := s.PreviewThreshold(ctx, ThresholdPreviewRequest{ContentThreshold: 2}); err == nil {
		t.Fatal("PreviewThreshold above 1: no error")
	}
	if _, err := s.NoiseProjection(ctx); !errors.Is(err, memory.ErrUnavailable) {
		t.Fatalf("NoiseProjection without a scorer = %v, want unavailable", err)
	}
}

// TestIngestNumbersTurnsAsTheUserCounts: a turn's decision, in the
// response and in the log, carries the number of the user's prompt it
// answers (UserTurn, "turn 2") beside its first exchange's number (Turn),
// which counts the tool loop's iterations too; exchanges that did not
// count the user's prompts are counted by the service when the request
// holds the session's start, else named by their exchange.
func TestIngestNumbersTurnsAsTheUserCounts(t *testing.T) {
	loop := func(turn, users int, text string) memory.Exchange {
		return memory.Exchange{SessionID: "s", Turn: turn, UserTurns: users, ToolLoop: true, Assistant: text,
			ToolCalls: []memory.ToolCall{{Name: "Read", Input: `{"file_path":"cmd/serve/main.go"}`}}}
	}
	prompt := func(turn, users int, user, text string) memory.Exchange {
		return memory.Exchange{SessionID: "s", Turn: turn, UserTurns: users, User: user, Assistant: text}
	}
	for _, tc := range []struct {
		name      string
		exs       []memory.Exchange
		userTurns []int
		turns     []int
		labels    []string
	}{
		{"counted", []memory.Exchange{
			prompt(1, 1, "why does the server start slowly?", "Let me look at the startup code."),
			loop(2, 1, "The `serve` command opens the bleve index before it listens."),
			loop(3, 1, "Opening the index takes most of the start time on a large store."),
			prompt(4, 2, "thanks, now run the tests", "All tests pass."),
		}, []int{1, 2}, []int{1, 4}, []string{"turn 1", "turn 2"}},
		{"not counted, from the session's start: counted here", []memory.Exchange{
			prompt(1, 0, "why does the server start slowly?", "Let me look at the startup code."),
			loop(2, 0, "The `serve` command opens the bleve index before it listens."),
			prompt(3, 0, "thanks, now run the tests", "All tests pass."),
		}, []int{1, 2}, []int{1, 3}, []string{"turn 1", "turn 2"}},
		{"not counted, from the session's middle: the prompts before are unknown", []memory.Exchange{
			prompt(5, 0, "why does the server start slowly?", "Let me look at the startup code."),
			loop(6, 0, "The `serve` command opens the bleve index before it listens."),
			prompt(7, 0, "thanks, now run the tests", "All tests pass."),
		}, []int{0, 0}, []int{5, 7}, []string{"exchange 5", "exchange 7"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			s := open(t)
			resp, err := s.Ingest(ctx, IngestRequest{Exchanges: tc.exs})
			if err != nil {
				t.Fatal(err)
			}
			log, _ := s.Decisions(ctx, 10)
			if len(resp.Decisions) != len(tc.turns) || len(log) != len(tc.turns) {
				t.Fatalf("%d decisions, %d logged, want %d", len(resp.Decisions), len(log), len(tc.turns))
			}
			for i, d := range resp.Decisions {
				e := log[len(log)-1-i] // newest first
				if d.UserTurn != tc.userTurns[i] || d.Turn != tc.turns[i] || d.TurnLabel() != tc.labels[i] ||
					e.UserTurn != d.UserTurn || e.Turn != d.Turn {
					t.Errorf("decision %d: user turn %d, turn %d, %q (logged %d, %d); want %d, %d, %q",
						i, d.UserTurn, d.Turn, d.TurnLabel(), e.UserTurn, e.Turn, tc.userTurns[i], tc.turns[i], tc.labels[i])
				}
			}
		})
	}
}

// TestNoiseProjectionNearestPrototypes: each recent rejected exchange
// lists its nearest noise prototypes, the nearest first, and its nearest
// quality prototype; kept exchanges are not listed.
func TestNoiseProjectionNearestPrototypes(t *testing.T) {
	ctx := context.Background()
	st, p, emb := openPipeline(t, true)
	log := NewDecisionLog(10, nil)
	s, err := New(Options{Store: st, Pipeline: p, Embedder: emb, Trash: trasher(t, st, p, emb), Log: log, LogSize: 10})
	if err != nil {
		t.Fatal(err)
	}
	log.Add(memory.Decision{ID: "r1", Verdict: memory.VerdictRejected, Stage: "content", Preview: "thanks, looks good, all done", At: testT,
		Scores: map[string]float64{"content_score": 0.1}}, memory.Exchange{})
	log.Add(memory.Decision{ID: "k1", Verdict: memory.VerdictStored, Preview: "deploys need DEPLOY_ENV set to staging first", At: testT}, memory.Exchange{})
	proj, err := s.NoiseProjection(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(proj.Rejected) != 1 {
		t.Fatalf("rejected %+v, want r1 alone", proj.Rejected)
	}
	r := proj.Rejected[0]
	if r.DecisionID != "r1" || r.Stage != "content" || r.Score == nil || *r.Score != 0.1 || r.Quality == nil {
		t.Errorf("rejected entry %+v", r)
	}
	if len(r.Noise) != NearestNoise {
		t.Fatalf("%d noise prototypes, want %d", len(r.Noise), NearestNoise)
	}
	for i, m := range r.Noise {
		if m.Label == "" || (m.Kind != PointNoise && m.Kind != PointLearned) || m.Similarity < -1 || m.Similarity > 1 ||
			(i > 0 && m.Similarity > r.Noise[i-1].Similarity) {
			t.Errorf("noise match %d: %+v", i, m)
		}
	}
}

// openScored returns the service over a real store and a pipeline with a
// content scorer, and the store.
func openScored(t *testing.T) (*Service, *store.Store) {
	t.Helper()
	st, p, emb := openPipeline(t, true)
	cfg := config.Default()
	s, err := New(Options{Store: st, Pipeline: p, Embedder: emb, Trash: trasher(t, st, p, emb), Log: NewDecisionLog(cfg.Ingest.DecisionLog, nil),
		LogSize: cfg.Ingest.DecisionLog, Threshold: func() float64 { return cfg.Ingest.ContentThreshold }})
	if err != nil {
		t.Fatal(err)
	}
	return s, st
}

// storeDoc stores text as a document memory and returns its id.
func storeDoc(t *testing.T, s *Service, name, text string) string {
	t.Helper()
	resp, err := s.Ingest(context.Background(), IngestRequest{Documents: []Document{{Name: name, Project: "ops", Text: text}}})
	if err != nil || len(resp.Decisions) != 1 || len(resp.Decisions[0].MemoryIDs) != 1 {
		t.Fatalf("Ingest = %+v, %v", resp, err)
	}
	return resp.Decisions[0].MemoryIDs[0]
}

// TestMarkNoiseTrashes: marking a memory as noise moves it to the trash
// with reason "noise" (restorable), not out of the store for good, and the
// rejection buffer learns its text; its restore takes the text back out of
// the buffer, while a restore of a memory merely deleted leaves the
// buffer as it is. Before, MarkNoise deleted the memory for good.
func TestMarkNoiseTrashes(t *testing.T) {
	ctx := context.Background()
	s, st := openScored(t)
	sc := s.o.Pipeline.Scorer()
	noisy := storeDoc(t, s, "chatter", "Sure, happy to help with that! Let me know if there is anything else you need today.")
	kept := storeDoc(t, s, "runbook", "Deploys go out from the release branch every Tuesday after the freeze; rollbacks use the previous image tag.")

	if err := s.MarkNoise(ctx, "nope"); !errors.Is(err, memory.ErrNotFound) {
		t.Fatalf("MarkNoise of an unknown id = %v, want not found", err)
	}
	if err := s.MarkNoise(ctx, noisy); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Get(ctx, noisy); !errors.Is(err, memory.ErrNotFound) {
		t.Fatalf("Get of a memory marked as noise = %v, want not found (out of the live store)", err)
	}
	trash, err := st.TrashGet(ctx, []string{noisy})
	if err != nil {
		t.Fatal(err)
	}
	if got := trash[noisy].Reason; got != NoiseReason {
		t.Fatalf("trash reason of a memory marked as noise = %q (in the trash: %v), want %q", got, len(trash) == 1, NoiseReason)
	}
	if n := sc.State().BufferLen; n != 1 {
		t.Fatalf("rejection buffer holds %d texts after a noise mark, want 1", n)
	}
	if err := s.MarkNoise(ctx, noisy); !errors.Is(err, memory.ErrNotFound) {
		t.Fatalf("MarkNoise of a trashed memory = %v, want not found", err)
	}

	// A memory deleted (trashed with another reason) and restored: its
	// text was never learned, the buffer keeps the noise mark's.
	if err := st.Apply(ctx, store.Batch{Trash: []store.TrashRequest{{ID: kept, Reason: "deleted"}}}); err != nil {
		t.Fatal(err)
	}
	if err := st.Restore(ctx, kept); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name       string
		restore    bool
		ids        []string
		wantN, len int
	}{
		{"a deleted memory restored", false, []string{kept}, 0, 1},
		{"an id not live", false, []string{noisy, "nope"}, 0, 1},
		{"the noise-marked memory restored", true, []string{noisy}, 1, 0},
		{"again", false, []string{noisy}, 0, 0},
	} {
		if tc.restore {
			if err := st.Restore(ctx, tc.ids...); err != nil {
				t.Fatalf("%s: %v", tc.name, err)
			}
		}
		n, err := s.Restored(ctx, tc.ids)
		if err != nil || n != tc.wantN {
			t.Fatalf("%s: Restored = %d, %v, want %d", tc.name, n, err, tc.wantN)
		}
		if got := sc.State().BufferLen; got != tc.len {
			t.Fatalf("%s: rejection buffer holds %d texts, want %d", tc.name, got, tc.len)
		}
	}
	if m, err := st.Get(ctx, noisy); err != nil || m.ID != noisy {
		t.Fatalf("Get after the restore = %+v, %v", m, err)
	}
}

// TestRestoredWithoutScorer: with the content scorer off (no embedder at
// start) a restore has no buffer to take texts out of.
func TestRestoredWithoutScorer(t *testing.T) {
	s := open(t)
	if n, err := s.Restored(context.Background(), []string{"nope"}); n != 0 || err != nil {
		t.Fatalf("Restored = %d, %v", n, err)
	}
}
