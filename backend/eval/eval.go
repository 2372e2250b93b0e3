// Package eval measures memtray's retrieval: the engine behind
// `memtray eval recall FILE [--locomo FILE | --longmemeval FILE] [--json]`.
//
// Each run loads a dataset into a temporary store (a real store in a
// temporary directory, the built-in embedder unless Options says otherwise)
// and runs every query in the three search modes (hybrid, bm25, vector) from
// the same load, so the rows are comparable:
//
//   - RunRecall: a recall file in the format of ../shared/eval/recall-dev.json
//     through the full read pipeline (floors and MMR on, as a user gets it),
//     K = 10: Recall@5, Recall@10, MRR and nDCG@10 per query type and
//     overall, and the share of negative queries (no relevant memory) that
//     return nothing. The same metrics without the floors show their effect.
//   - RunLoCoMo: every dialog turn is a memory, scoped per conversation
//     (project = sample id, searches filtered to it); recall@k is the share of
//     a question's evidence turns among the top k, k = 5, 10, 25, 50. The
//     searches return a fixed depth of 50: floors and MMR are off.
//   - RunLongMemEval: per question, each haystack session is one document
//     made of its user turns (scoped to the question); recall_all@5/@10 and
//     ndcg_any@5/@10; abstention questions (id ending in _abs) are excluded.
//     Floors and MMR are off.
//
// Every evaluation store names its memories with SeededIDs rather than the
// store's random ids, so the ties broken by id fall the same way in every
// run: reports and dumps compare byte for byte between runs and builds.
package eval

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/memtray/memtray/backend/calib"
	"github.com/memtray/memtray/backend/config"
	"github.com/memtray/memtray/backend/embed"
	"github.com/memtray/memtray/backend/memory"
	"github.com/memtray/memtray/backend/search"
	"github.com/memtray/memtray/backend/store"
)

// Options configures a run.
type Options struct {
	// Embedder embeds memories and queries; nil means the built-in embedder.
	Embedder memory.Embedder
	// Search holds the read pipeline's constants; nil means the defaults.
	Search *config.Search
	// TempDir is where the temporary store is created ("" = the system's);
	// it is removed at the end.
	TempDir string
	// Limit, if positive, caps the conversations (LoCoMo) or questions
	// (LongMemEval) evaluated, for quick runs.
	Limit int
	// Progress, if set, is called as queries complete.
	Progress func(done, total int)
	// Details keeps every query's ranked ids in the report.
	Details bool
}

// evalNow is the fixed time of every evaluation: memories are created at it,
// so recency and access factors are neutral.
var evalNow = time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)

// ModeNames are the search modes in report order.
var ModeNames = []string{string(search.ModeHybrid), string(search.ModeBM25), string(search.ModeVector)}

// env is a temporary store with an engine over it.
type env struct {
	dir    string
	st     *store.Store
	emb    memory.Embedder
	engine *search.Engine
	// cfg holds the similarity thresholds in effect: the embedder's
	// calibration where the options leave them unset, as the daemon does.
	cfg config.Config
}

func openEnv(ctx context.Context, opts Options) (*env, error) {
	emb := opts.Embedder
	if emb == nil {
		emb = embed.NewBuiltin()
	}
	cfg := config.Default().Search
	if opts.Search != nil {
		cfg = *opts.Search
	}
	dir, err := os.MkdirTemp(opts.TempDir, "memtray-eval-")
	if err != nil {
		return nil, fmt.Errorf("eval: temporary store: %w", err)
	}
	clock := memory.FixedClock{T: evalNow}
	st, err := store.Open(ctx, store.Options{Dir: dir, Model: emb.Model(), Dim: emb.Dim(), Clock: clock, NewID: SeededIDs()})
	if err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("eval: temporary store: %w", err)
	}
	full := config.Default()
	full.Search = cfg
	// Calibrated as the daemon calibrates; a model that cannot be gets
	// the values memtray used before calibration, as in the daemon.
	r, _ := calib.Calibrate(ctx, emb, calib.Builtin(), evalNow)
	calib.Apply(&full, r, emb.Model())
	return &env{dir: dir, st: st, emb: emb, engine: search.New(st, emb, full.Search, clock), cfg: full}, nil
}

func (e *env) close() {
	e.st.Close()
	os.RemoveAll(e.dir)
}

// load embeds and stores ms (ids, texts and fields set) in batches.
func (e *env) load(ctx context.Context, ms []memory.Memory) error {
	const batch = 256
	for i := 0; i < len(ms); i += batch {
		chunk := ms[i:min(i+batch, len(ms))]
		texts := make([]string, len(chunk))
		for j := range chunk {
			texts[j] = chunk[j].Text
		}
		vecs, err := e.emb.Embed(ctx, texts)
		if err != nil {
			return fmt.Errorf("eval: embed: %w", err)
		}
		for j := range chunk {
			chunk[j].Embedding = vecs[j]
			if chunk[j].CreatedAt.IsZero() {
				chunk[j].CreatedAt = evalNow
			}
			if chunk[j].Importance == 0 {
				chunk[j].Importance = 0.5
			}
		}
		if _, err := e.st.PutBatch(ctx, chunk); err != nil {
			return fmt.Errorf("eval: store: %w", err)
		}
	}
	return nil
}

// ranked runs q and returns the hit ids in order.
func (e *env) ranked(ctx context.Context, q search.Query) ([]string, *search.Result, error) {
	r, err := e.engine.Run(ctx, q)
	if err != nil {
		return nil, nil, err
	}
	ids := make([]string, len(r.Hits))
	for i, h := range r.Hits {
		ids[i] = h.Memory.ID
	}
	return ids, r, nil
}

// cleanText makes dataset text storable: invalid UTF-8 and NUL bytes
// replaced, clipped to memory.MaxTextBytes.
func cleanText(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	s = strings.ReplaceAll(s, "\x00", " ")
	return memory.CutRunes(s, memory.MaxTextBytes)
}
