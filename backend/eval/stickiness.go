package eval

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"sort"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/memtray/memtray/backend/config"
	"github.com/memtray/memtray/backend/embed"
	"github.com/memtray/memtray/backend/memory"
	"github.com/memtray/memtray/backend/search"
	"github.com/memtray/memtray/backend/steward"
	"github.com/memtray/memtray/backend/store"
)

// StickinessOptions configures RunStickiness. Zero fields take the defaults
// of DefaultStickiness.
type StickinessOptions struct {
	// Topics and PerTopic shape the store: each topic has its own
	// vocabulary and PerTopic memories (1..PerTopic, varying); Broad
	// memories mention the everyday words of every project ("overviews")
	// and are relevant to no query.
	Topics, PerTopic, Broad int
	// Queries is how many recalls run, each a new session; topics are drawn
	// from a Zipf-Mandelbrot distribution, P(k) ∝ (ZipfV + k)^-ZipfS: a
	// heavy head of popular topics without one topic taking every query.
	Queries int
	ZipfS   float64
	ZipfV   float64
	// ReinforceProb is the chance the simulated user reinforces a relevant
	// memory they were given; irrelevant ones are never reinforced.
	ReinforceProb float64
	// Days is the simulated time the queries span.
	Days float64
	// SweepEvery is how many queries pass between steward sweeps in the
	// arm with the steward.
	SweepEvery int
	// Seed makes the run reproducible.
	Seed uint64
	// Sweep runs the steward over the store at now; nil runs none (the
	// "with" arm then only has the anti-stickiness factor).
	Sweep func(ctx context.Context, st *store.Store, now time.Time) error
	// TempDir holds the temporary stores.
	TempDir string
}

// DefaultStickiness is the simulation of `memtray eval stickiness`.
var DefaultStickiness = StickinessOptions{Topics: 600, PerTopic: 5, Broad: 20, Queries: 10000, ZipfS: 1.1, ZipfV: 5,
	ReinforceProb: 0.5, Days: 60, SweepEvery: 500, Seed: 7}

// StickinessArm is one arm of the simulation.
type StickinessArm struct {
	// Top3Share is the share of all injections taken by the 3 most
	// injected memories.
	Top3Share float64 `json:"top3_share"`
	// HitRate is the share of injected memories relevant to their query.
	HitRate float64 `json:"hit_rate"`
	// Injections is every memory given; Answered the queries that got any.
	Injections int `json:"injections"`
	Answered   int `json:"answered"`
	// BroadShare is the share of injections taken by broad memories.
	BroadShare float64 `json:"broad_share"`
	// Top3 are the 3 most injected memories and their counts.
	Top3 []IDCount `json:"top3"`
}

// IDCount is a memory id and how often it was injected.
type IDCount struct {
	ID    string `json:"id"`
	Count int    `json:"count"`
}

// StickinessReport compares recall with the anti-stickiness factor and the
// steward to naive recall (access boost only).
type StickinessReport struct {
	With    StickinessArm `json:"with"`
	Without StickinessArm `json:"without"`
	// Memories and Queries describe the run.
	Memories int `json:"memories"`
	Queries  int `json:"queries"`
}

// simClock is the simulation's clock, advanced query by query.
type simClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *simClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *simClock) advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// simCorpus is the generated store and query stream, the same for both arms.
type simCorpus struct {
	memories []memory.Memory
	topicOf  map[string]int // memory id -> topic (-1 for broad ones)
	queries  []simQuery
}

type simQuery struct {
	text  string
	topic int
}

// everyday are words every project uses; broad memories are made of them
// and every query carries a few.
var everyday = strings.Fields(`project service config build test deploy release error logs database
api client server cache queue job worker module package version branch review docs script setup
environment staging production monitoring alert timeout retry`)

// syllables make each topic's own words.
var syllables = strings.Fields("ka lo mi ra ten vos dri pel qua zor fin gar hul ne tis bra mon sek yul dax")

// buildCorpus generates the memories and the queries from the seed.
func buildCorpus(o StickinessOptions) simCorpus {
	r := rand.New(rand.NewPCG(o.Seed, o.Seed^0x9e3779b97f4a7c15))
	word := func() string {
		n := 2 + r.IntN(2)
		var b strings.Builder
		for range n {
			b.WriteString(syllables[r.IntN(len(syllables))])
		}
		return b.String()
	}
	pick := func(list []string, n int) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = list[r.IntN(len(list))]
		}
		return out
	}
	c := simCorpus{topicOf: map[string]int{}}
	vocab := make([][]string, o.Topics)
	for t := range vocab {
		for range 6 {
			vocab[t] = append(vocab[t], word())
		}
		for i := range 1 + r.IntN(o.PerTopic) {
			words := append(pick(vocab[t], 4), pick(everyday, 3)...)
			r.Shuffle(len(words), func(a, b int) { words[a], words[b] = words[b], words[a] })
			id := fmt.Sprintf("t%04d-%d", t, i)
			c.memories = append(c.memories, memory.Memory{ID: id, Kind: memory.KindFact, Type: memory.TypeProject,
				Text: fmt.Sprintf("The %s %s uses %s with %s; %s keeps %s %s stable.", words[0], words[1], words[2], words[3], words[4], words[5], words[6])})
			c.topicOf[id] = t
		}
	}
	for i := range o.Broad {
		words := pick(everyday, 12)
		id := fmt.Sprintf("broad-%03d", i)
		c.memories = append(c.memories, memory.Memory{ID: id, Kind: memory.KindFact, Type: memory.TypeProject,
			Text: "Overview: the " + strings.Join(words, ", ") + " all matter here."})
		c.topicOf[id] = -1
	}
	zipf := rand.NewZipf(rand.New(rand.NewPCG(o.Seed+1, o.Seed)), o.ZipfS, o.ZipfV, uint64(o.Topics-1))
	for range o.Queries {
		t := int(zipf.Uint64())
		words := append(pick(vocab[t], 2), pick(everyday, 3)...)
		c.queries = append(c.queries, simQuery{text: "how does the " + strings.Join(words, " ") + " work", topic: t})
	}
	return c
}

// RunStickiness runs the simulation twice from the same corpus and query
// stream: "without" is naive recall (the access boost, no anti-stickiness
// factor, no steward), "with" has the anti-stickiness factor and the
// steward's sweep every SweepEvery queries. In both, every recall is a new
// session (so session exclusion hides nothing), gives at most 5 memories,
// and records their access; the simulated user reinforces relevant ones
// with ReinforceProb and never an irrelevant one.
func RunStickiness(ctx context.Context, o StickinessOptions) (*StickinessReport, error) {
	d := DefaultStickiness
	if o.Topics <= 0 {
		o.Topics = d.Topics
	}
	if o.PerTopic <= 0 {
		o.PerTopic = d.PerTopic
	}
	if o.Broad < 0 {
		o.Broad = 0
	}
	if o.Queries <= 0 {
		o.Queries = d.Queries
	}
	if o.ZipfS <= 1 {
		o.ZipfS = d.ZipfS
	}
	if o.ZipfV < 1 {
		o.ZipfV = d.ZipfV
	}
	if o.ReinforceProb <= 0 {
		o.ReinforceProb = d.ReinforceProb
	}
	if o.Days <= 0 {
		o.Days = d.Days
	}
	if o.SweepEvery <= 0 {
		o.SweepEvery = d.SweepEvery
	}
	corpus := buildCorpus(o)
	rep := &StickinessReport{Memories: len(corpus.memories), Queries: o.Queries}
	var err error
	if rep.Without, err = runArm(ctx, o, corpus, false); err != nil {
		return nil, fmt.Errorf("stickiness, naive arm: %w", err)
	}
	if rep.With, err = runArm(ctx, o, corpus, true); err != nil {
		return nil, fmt.Errorf("stickiness, steward arm: %w", err)
	}
	return rep, nil
}

func runArm(ctx context.Context, o StickinessOptions, c simCorpus, with bool) (StickinessArm, error) {
	var arm StickinessArm
	dir, err := os.MkdirTemp(o.TempDir, "memtray-sticky-")
	if err != nil {
		return arm, err
	}
	defer os.RemoveAll(dir)
	clock := &simClock{t: evalNow}
	emb := embed.NewBuiltin()
	st, err := store.Open(ctx, store.Options{Dir: dir, Model: emb.Model(), Dim: emb.Dim(), Clock: clock})
	if err != nil {
		return arm, err
	}
	defer st.Close()
	ms := make([]memory.Memory, len(c.memories))
	copy(ms, c.memories)
	texts := make([]string, len(ms))
	for i := range ms {
		texts[i] = ms[i].Text
	}
	vecs, err := emb.Embed(ctx, texts)
	if err != nil {
		return arm, err
	}
	for i := range ms {
		ms[i].Embedding, ms[i].Importance, ms[i].CreatedAt = vecs[i], 0.5, evalNow
	}
	if _, err := st.PutBatch(ctx, ms); err != nil && !errors.Is(err, store.ErrIndexPending) {
		return arm, err
	}
	scfg := config.Default().Search
	scfg.AntiSticky = with
	rcfg := config.Default().Recall
	rcfg.Skills = false
	rec := search.NewRecaller(search.New(st, emb, scfg, clock), st, rcfg, clock)
	r := rand.New(rand.NewPCG(o.Seed+2, o.Seed))
	step := time.Duration(o.Days * 24 * float64(time.Hour) / float64(o.Queries))
	counts := map[string]int{}
	relevant, broad := 0, 0
	for i, q := range c.queries {
		if err := ctx.Err(); err != nil {
			return arm, err
		}
		clock.advance(step)
		got, err := rec.Recall(ctx, search.RecallRequest{SessionID: fmt.Sprintf("q%d", i), Prompt: q.text})
		if err != nil {
			return arm, err
		}
		if len(got.Hits) > 0 {
			arm.Answered++
		}
		for _, h := range got.Hits {
			id := h.Memory.ID
			counts[id]++
			arm.Injections++
			switch c.topicOf[id] {
			case q.topic:
				relevant++
				if r.Float64() < o.ReinforceProb {
					now := clock.Now()
					if _, err := st.Update(ctx, id, func(m *memory.Memory) error {
						m.Reinforce(now)
						return nil
					}); err != nil && !errors.Is(err, store.ErrIndexPending) {
						return arm, err
					}
				}
			case -1:
				broad++
			}
		}
		if with && o.Sweep != nil && (i+1)%o.SweepEvery == 0 {
			if err := o.Sweep(ctx, st, clock.Now()); err != nil {
				return arm, fmt.Errorf("sweep after query %d: %w", i+1, err)
			}
		}
	}
	ids := make([]IDCount, 0, len(counts))
	for id, n := range counts {
		ids = append(ids, IDCount{id, n})
	}
	sort.Slice(ids, func(a, b int) bool {
		if ids[a].Count != ids[b].Count {
			return ids[a].Count > ids[b].Count
		}
		return ids[a].ID < ids[b].ID
	})
	top := 0
	for _, x := range ids[:min(3, len(ids))] {
		top += x.Count
		arm.Top3 = append(arm.Top3, x)
	}
	if arm.Injections > 0 {
		arm.Top3Share = float64(top) / float64(arm.Injections)
		arm.HitRate = float64(relevant) / float64(arm.Injections)
		arm.BroadShare = float64(broad) / float64(arm.Injections)
	}
	return arm, nil
}

// WriteTable prints both arms side by side.
func (r *StickinessReport) WriteTable(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "stickiness simulation: %d memories, %d queries per arm\n\n", r.Memories, r.Queries)
	fmt.Fprintln(tw, "arm\ttop-3 share\thit rate\tbroad share\tinjections\ttop 3")
	for _, a := range []struct {
		name string
		arm  StickinessArm
	}{{"without (access boost only)", r.Without}, {"with (anti-stickiness + steward)", r.With}} {
		var top []string
		for _, x := range a.arm.Top3 {
			top = append(top, fmt.Sprintf("%s %d", x.ID, x.Count))
		}
		fmt.Fprintf(tw, "%s\t%.3f\t%.3f\t%.3f\t%d\t%s\n", a.name, a.arm.Top3Share, a.arm.HitRate, a.arm.BroadShare, a.arm.Injections, strings.Join(top, ", "))
	}
	return tw.Flush()
}

// StewardSweep is the daemon's scheduled sweep, for the simulation: plan
// every auto-applied operation and apply the plan.
func StewardSweep(cfg config.Steward) func(ctx context.Context, st *store.Store, now time.Time) error {
	return func(ctx context.Context, st *store.Store, now time.Time) error {
		dir, err := os.MkdirTemp("", "memtray-sweep-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		s := steward.New(st, cfg, steward.Options{Dir: dir, Clock: memory.FixedClock{T: now}})
		plan, err := s.Plan(ctx, steward.PlanOptions{Ops: cfg.AutoApply})
		if err != nil {
			return fmt.Errorf("plan: %w", err)
		}
		if len(plan.Actions) == 0 {
			return nil
		}
		_, err = s.Apply(ctx, plan, nil)
		return err
	}
}
