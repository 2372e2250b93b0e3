package calib_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/memtray/memtray/backend/calib"
	"github.com/memtray/memtray/backend/config"
	"github.com/memtray/memtray/backend/embed"
	"github.com/memtray/memtray/backend/ingest"
	"github.com/memtray/memtray/backend/memory"
	"github.com/memtray/memtray/backend/search"
	"github.com/memtray/memtray/backend/steward"
	"github.com/memtray/memtray/backend/store"
)

// The fixtures below are not in the calibration set: they check that
// thresholds derived on the set carry over to other texts.

// dedupCases: a stored memory, then a second one written through the
// pipeline.
var dedupCases = []struct{ stored, next string }{
	{"The billing worker retries a failed Stripe webhook three times with a one minute backoff before it gives up.",
		"The billing worker retries a failed Stripe webhook three times with a one-minute backoff before it gives up."},
	{"Search results are cached per user for thirty seconds in the gateway's memory, not in Redis.",
		"Search results are cached per user for thirty seconds in the gateway memory, not in Redis."},
	{"The billing worker retries a failed Stripe webhook three times with a one minute backoff before it gives up.",
		"The billing worker retries failed Stripe webhooks up to three times, one minute apart, then gives up."},
	{"Invoices are rendered to PDF by a headless Chromium sidecar in the invoice service pod.",
		"A headless Chromium sidecar in the invoice pod renders invoices as PDF files."},
	{"The mobile app talks to the backend only through the GraphQL gateway at /graphql.",
		"Every request from the phone app goes via the GraphQL gateway endpoint rather than straight to services."},
	{"Invoices are rendered to PDF by a headless Chromium sidecar in the invoice service pod.",
		"The invoice service stores generated PDFs in the invoices S3 bucket for seven years."},
	{"Feature branches deploy preview environments named after the branch on every push.",
		"The nightly backup of the user database is copied to a second region."},
}

// mergeMemories: one project's memories; the steward's merge plan is
// compared.
var mergeMemories = []string{
	"The billing worker retries a failed Stripe webhook three times with a one minute backoff.",
	"A failed Stripe webhook is retried by the billing worker three times, waiting a minute between tries.",
	"The billing worker writes every webhook payload to the webhook_events table before handling it.",
	"Search results are cached per user for thirty seconds in the gateway's memory, not in Redis.",
	"The gateway keeps each user's search results in process memory for 30 seconds instead of Redis.",
	"The mobile app talks to the backend only through the GraphQL gateway at /graphql.",
	"Invoices are rendered to PDF by a headless Chromium sidecar in the invoice service pod.",
	"Feature branches deploy preview environments named after the branch on every push.",
	"The nightly backup of the user database is copied to a second region.",
}

// recallQueries are asked of a store of mergeMemories.
var recallQueries = []string{
	"how often does the billing worker retry a stripe webhook?",
	"where are search results cached?",
	"how does the phone app reach the backend?",
	"how are invoice PDFs produced?",
	"what are good names for a goldfish?",
	"write a haiku about autumn leaves",
}

// skills and skillPrompts check skill suggestions.
var skills = []search.Skill{
	{Name: "release-notes", Description: "Draft release notes from the merged pull requests since the last tag."},
	{Name: "db-migration", Description: "Write a new database schema migration and its rollback for Postgres."},
	{Name: "flaky-test", Description: "Find out why a test fails intermittently and make it deterministic."},
}
var skillPrompts = []string{
	"draft the release notes for the pull requests merged since the last tag",
	"add a column to the orders table with a postgres migration",
	"this test fails intermittently on CI, can you make it deterministic?",
	"what is a good recipe for pancakes?",
	"explain quantum entanglement simply",
}

// behaviour is what the thresholds decide on the fixtures.
type behaviour struct {
	dedup  []string
	merges []string
	recall []string
	skills []string
}

// observe runs every fixture with emb and cfg (thresholds applied).
func observe(t *testing.T, emb memory.Embedder, cfg config.Config) behaviour {
	t.Helper()
	ctx := context.Background()
	clock := memory.FixedClock{T: time.Date(2026, 11, 27, 6, 0, 0, 0, time.UTC)}
	open := func() *store.Store {
		st, err := store.Open(ctx, store.Options{Dir: t.TempDir(), Model: emb.Model(), Dim: emb.Dim(), Clock: clock})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		return st
	}
	var b behaviour
	for _, c := range dedupCases {
		st := open()
		p, err := ingest.New(ingest.Options{Config: cfg.Ingest, Embedder: emb, Store: st, Clock: clock})
		if err != nil {
			t.Fatal(err)
		}
		var verdicts []string
		for _, text := range []string{c.stored, c.next} {
			dec, err := p.Remember(ctx, memory.Memory{Text: text, Project: "p", Kind: memory.KindFact})
			if err != nil {
				t.Fatal(err)
			}
			verdicts = append(verdicts, string(dec.Verdict))
		}
		b.dedup = append(b.dedup, strings.Join(verdicts, ","))
	}

	st := open()
	ids := map[string]int{}
	for i, text := range mergeMemories {
		vecs, err := emb.Embed(ctx, []string{text})
		if err != nil {
			t.Fatal(err)
		}
		m, err := st.Put(ctx, memory.Memory{Text: text, Project: "p", Kind: memory.KindFact, Type: memory.TypeProject,
			Importance: 0.5, Embedding: vecs[0], EmbeddingModel: emb.Model()})
		if err != nil {
			t.Fatal(err)
		}
		ids[m.ID] = i
	}
	sw := steward.New(st, cfg.Steward, steward.Options{Clock: clock, Embedder: emb})
	plan, err := sw.Plan(ctx, steward.PlanOptions{Ops: []string{"merge"}, FullMerge: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range plan.Actions {
		if a.Op != "merge" {
			continue
		}
		var group []int
		for _, id := range append([]string{a.ID}, a.MergedIDs...) {
			group = append(group, ids[id])
		}
		slices.Sort(group)
		b.merges = append(b.merges, fmt.Sprint(group))
	}
	slices.Sort(b.merges)

	// With the evidence gate (which scales itself to the store's cosines)
	// and without it, so that the floors alone decide.
	for _, gate := range []bool{true, false} {
		sc := cfg.Search
		sc.EvidenceGate = gate
		eng := search.New(st, emb, sc, clock)
		for _, q := range recallQueries {
			res, err := eng.Run(ctx, search.Query{Text: q, Project: "p"})
			if err != nil {
				t.Fatal(err)
			}
			var got []int
			for _, h := range res.Hits {
				got = append(got, ids[h.Memory.ID])
			}
			// What passes the floors; the order is MMR's, whose diversity
			// term is a cosine too (not calibrated).
			slices.Sort(got)
			b.recall = append(b.recall, fmt.Sprintf("gate %v: %v", gate, got))
		}
	}

	x, err := search.NewSkillIndex(ctx, emb, skills, cfg.Recall.SkillFloor)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range skillPrompts {
		hits, err := x.Suggest(ctx, p, 2)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, h := range hits {
			names = append(names, h.Skill.Name)
		}
		b.skills = append(b.skills, strings.Join(names, ","))
	}
	return b
}

// calibrated returns the default config with emb's calibrated thresholds.
func calibrated(t *testing.T, emb memory.Embedder) config.Config {
	t.Helper()
	r, err := calib.Calibrate(context.Background(), emb, calib.Builtin(), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	cfg := config.Default()
	for _, v := range calib.Apply(&cfg, r, emb.Model()) {
		if v.Source != calib.SourceCalibrated {
			t.Fatalf("%s from %s", v.Name, v.Source)
		}
	}
	return cfg
}

// TestScaledModelBehavesAlike: a model whose cosines live on another
// scale (the built-in model's compressed into 0.6..1, as many semantic
// models score) dedups, merges, floors recall and suggests skills as the
// built-in model does, once both are calibrated; with the built-in
// model's thresholds it does not.
func TestScaledModelBehavesAlike(t *testing.T) {
	if testing.Short() {
		t.Skip("embeds the calibration set four times")
	}
	base := calib.Scaled{Inner: embed.NewBuiltin(), Offset: 0} // the built-in cosines, as a plain embedder
	want := observe(t, base, calibrated(t, base))
	t.Logf("built-in: %+v", want)
	if !slices.Contains(want.dedup, "merged,merged") && !slices.ContainsFunc(want.dedup, func(s string) bool { return strings.HasSuffix(s, ",merged") }) {
		t.Errorf("the fixtures' near duplicates were not deduplicated with the built-in model: %v", want.dedup)
	}
	if len(want.merges) == 0 || !slices.Contains(want.recall, "gate true: []") || !slices.Contains(want.skills, "") {
		t.Errorf("the fixtures exercise nothing: %+v", want)
	}
	for _, off := range []float64{0.5, calib.Compressed, 2} {
		t.Run(fmt.Sprintf("offset %.2f", off), func(t *testing.T) {
			sc := calib.Scaled{Inner: embed.NewBuiltin(), Offset: off}
			got := observe(t, sc, calibrated(t, sc))
			for _, c := range []struct {
				name      string
				got, want []string
			}{
				{"dedup", got.dedup, want.dedup}, {"merge", got.merges, want.merges},
				{"recall", got.recall, want.recall}, {"skills", got.skills, want.skills},
			} {
				if !slices.Equal(c.got, c.want) {
					t.Errorf("%s: %q, built-in %q", c.name, c.got, c.want)
				}
			}
		})
	}
	t.Run("uncalibrated", func(t *testing.T) {
		sc := calib.Scaled{Inner: embed.NewBuiltin(), Offset: calib.Compressed}
		cfg := config.Default()
		calib.Apply(&cfg, nil, "builtin-wordvec-v1") // the built-in model's values
		got := observe(t, sc, cfg)
		t.Logf("compressed with the built-in thresholds: %+v", got)
		for _, c := range []struct {
			name      string
			got, want []string
		}{{"dedup", got.dedup, want.dedup}, {"merge", got.merges, want.merges}, {"recall", got.recall, want.recall}, {"skills", got.skills, want.skills}} {
			if slices.Equal(c.got, c.want) {
				t.Errorf("%s: the built-in thresholds behave alike on the compressed scale too: the fixtures show nothing", c.name)
			}
		}
	})
}
