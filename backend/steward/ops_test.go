package steward

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/memtray/memtray/backend/config"
	"github.com/memtray/memtray/backend/memory"
)

var nonMerge = []string{OpDecayStale, OpBoostActive, OpPrune, OpDecayUnreinforced, OpSnoozeSticky}

// want is one expected action: the importance after it, or a snooze
// (cooldown now+30d), or the trash.
type want struct {
	importance float64
	snooze     bool
	trash      bool
}

func TestOperations(t *testing.T) {
	feedbackCfg := defaults()
	feedbackCfg.Types = map[string]config.StewardType{
		"default":  feedbackCfg.Types["default"],
		"user":     feedbackCfg.Types["user"],
		"feedback": {StaleDays: 10, DecayFactor: 0.5, DecayFloor: 0.2, PruneImportance: 0.3, PruneAgeDays: 5},
	}
	text := func(id string) string { return "memory " + id + " about the " + id + " subsystem and its quirks" }
	r := func(id string, typ memory.Type, imp float64, access, reinforced, created, accessed int) rec {
		return rec{id: id, text: text(id), typ: typ, importance: imp, access: access, reinforced: reinforced, created: created, accessed: accessed}
	}
	snoozedAgo := r("snoozedago", memory.TypeProject, 0.5, 12, 1, 100, 10)
	snoozedAgo.cooldown = daysAgo(5)
	snoozedNow := r("snoozednow", memory.TypeProject, 0.5, 12, 1, 100, 40)
	snoozedNow.cooldown = now.Add(5 * day)
	backAndUsed := r("backandused", memory.TypeProject, 0.5, 12, 1, 100, 1)
	backAndUsed.cooldown = daysAgo(5)
	pinned := r("pinned", memory.TypeProject, 0.012, 30, 0, 400, -1)
	pinned.pinned = true
	superseded := r("superseded", memory.TypeProject, 0.012, 30, 0, 400, -1)
	superseded.superseded = true

	cases := []struct {
		name string
		cfg  config.Steward
		rec  rec
		want map[string]want // op -> expectation; nil: untouched
	}{
		{"fresh memory", defaults(), r("fresh", memory.TypeProject, 0.5, 0, 0, 10, -1), nil},
		{"stale project memory decays", defaults(), r("stale", memory.TypeProject, 0.5, 0, 0, 200, -1),
			map[string]want{OpDecayStale: {importance: 0.4}}},
		{"stale by last access, not creation", defaults(), r("staleacc", memory.TypeProject, 0.5, 2, 0, 400, 100),
			map[string]want{OpDecayStale: {importance: 0.4}}},
		{"recently accessed is not stale", defaults(), r("recent", memory.TypeProject, 0.5, 2, 0, 400, 30), nil},
		{"user type: 100 days is not stale", defaults(), r("user100", memory.TypeUser, 0.5, 0, 0, 100, -1), nil},
		{"user type: 200 days decays gently", defaults(), r("user200", memory.TypeUser, 0.5, 0, 0, 200, -1),
			map[string]want{OpDecayStale: {importance: 0.475}}},
		{"decay stops at the floor, then prune", defaults(), r("floor", memory.TypeProject, 0.012, 0, 0, 200, -1),
			map[string]want{OpDecayStale: {importance: 0.01}, OpPrune: {trash: true}}},
		{"young low-importance memory is kept", defaults(), r("young", memory.TypeProject, 0.03, 0, 0, 20, -1), nil},
		{"user prune thresholds", defaults(), r("userold", memory.TypeUser, 0.01, 0, 0, 400, -1),
			map[string]want{OpPrune: {trash: true}}},
		{"user memory above its prune threshold stays", defaults(), r("userkeep", memory.TypeUser, 0.03, 0, 0, 400, 200), nil},
		{"per-type thresholds from config", feedbackCfg, r("fb", memory.TypeFeedback, 0.5, 0, 0, 20, -1),
			map[string]want{OpDecayStale: {importance: 0.25}, OpPrune: {trash: true}}},
		{"active memory boosted", defaults(), r("active", memory.TypeProject, 0.5, 6, 2, 50, 1),
			map[string]want{OpBoostActive: {importance: 0.55}}},
		{"boost capped at 1", defaults(), r("capped", memory.TypeProject, 0.95, 6, 6, 50, 1),
			map[string]want{OpBoostActive: {importance: 1}}},
		{"sticky memory not boosted but decayed", defaults(), r("sticky", memory.TypeProject, 0.5, 6, 0, 50, 1),
			map[string]want{OpDecayUnreinforced: {importance: 0.45}}},
		{"very sticky memory decayed and snoozed", defaults(), r("verysticky", memory.TypeProject, 0.5, 12, 1, 50, 1),
			map[string]want{OpDecayUnreinforced: {importance: 0.45}, OpSnoozeSticky: {snooze: true}}},
		{"snoozed memory not snoozed again", defaults(), snoozedNow,
			map[string]want{OpDecayUnreinforced: {importance: 0.45}}},
		{"back from a snooze, not retrieved since: not snoozed again", defaults(), snoozedAgo,
			map[string]want{OpDecayUnreinforced: {importance: 0.45}}},
		{"back from a snooze and retrieved since: snoozed again", defaults(), backAndUsed,
			map[string]want{OpDecayUnreinforced: {importance: 0.45}, OpSnoozeSticky: {snooze: true}}},
		{"pinned never touched", defaults(), pinned, nil},
		{"superseded left alone", defaults(), superseded, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, sw := fixture(t, c.cfg, c.rec)
			p, err := sw.Plan(context.Background(), PlanOptions{Ops: nonMerge})
			if err != nil {
				t.Fatal(err)
			}
			got := actionsFor(p, c.rec.id)
			if len(got) != len(c.want) {
				var ops []string
				for op, a := range got {
					ops = append(ops, op+": "+a.Reason)
				}
				t.Fatalf("actions %v, want %v", ops, c.want)
			}
			for op, w := range c.want {
				a, ok := got[op]
				if !ok {
					t.Fatalf("no %s action", op)
				}
				if a.Reason == "" || a.Preview == "" || a.Type != c.rec.typ {
					t.Errorf("%s action lacks reason, preview or type: %+v", op, a)
				}
				switch {
				case w.trash:
					if !a.After.Trashed {
						t.Errorf("%s: not trashed", op)
					}
				case w.snooze:
					if !a.After.CooldownUntil.Equal(now.Add(30 * day)) {
						t.Errorf("%s: cooldown %v", op, a.After.CooldownUntil)
					}
				default:
					if math.Abs(a.After.Importance-w.importance) > 1e-9 {
						t.Errorf("%s: importance %v -> %v, want %v", op, a.Before.Importance, a.After.Importance, w.importance)
					}
				}
			}
			if p.Scanned != 1 || len(p.Actions) != len(c.want) {
				t.Errorf("scanned %d, %d actions", p.Scanned, len(p.Actions))
			}
		})
	}
}

// mergeRecs are two near-duplicates; the second carries more retrieval signal.
func mergeRecs(textA, textB string) (rec, rec) {
	a := rec{id: "dupa", text: textA, typ: memory.TypeProject, importance: 0.4, access: 2, reinforced: 0, created: 20, accessed: 3}
	b := rec{id: "dupb", text: textB, typ: memory.TypeProject, importance: 0.6, access: 4, reinforced: 1, created: 30, accessed: 1}
	return a, b
}

func TestMerge(t *testing.T) {
	ctx := context.Background()
	base := "The deploy script pushes the api service image to the staging cluster after the integration tests pass on the main branch"
	cases := []struct {
		name      string
		textA     string // dupa: less signal
		textB     string // dupb: survivor
		project   string // dupa's project ("" = same as dupb)
		all       bool
		pinnedA   bool
		merged    bool
		keptText  string
		refusedOn string
	}{
		{name: "same text wording: survivor keeps its text", textA: base + ".", textB: base + " .", merged: true, keptText: base + " ."},
		{name: "same tokens: survivor keeps its own text",
			textA: base + " using deploy.sh v2.4.1.", textB: base + " using deploy.sh v2.4.1 quickly.", merged: true,
			keptText: base + " using deploy.sh v2.4.1 quickly."},
		{name: "better text wins", textA: base + " via scripts/deploy.sh", textB: base, merged: true, keptText: base + " via scripts/deploy.sh"},
		{name: "refused: a load-bearing token would be lost", textA: base + " with timeout 300s", textB: base + " with timeout 120s",
			refusedOn: "300s"},
		{name: "a token the kept text writes otherwise: merged", textA: base + " and the docs build with MkDocs from ci.yml",
			textB: base + " and the docs build with mkdocs from .github/workflows/ci.yml", merged: true,
			keptText: base + " and the docs build with mkdocs from .github/workflows/ci.yml"},
		{name: "refused: a version the kept text only extends", textA: base + " on version 1.2", textB: base + " on version 1.2.3",
			refusedOn: `"1.2"`},
		{name: "other project: not merged", textA: base + ".", textB: base + " .", project: "elsewhere"},
		{name: "other project with all: merged", textA: base + ".", textB: base + " .", project: "elsewhere", all: true, merged: true, keptText: base + " ."},
		{name: "pinned: never merged", textA: base + ".", textB: base + " .", pinnedA: true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			a, b := mergeRecs(c.textA, c.textB)
			a.project, a.pinned = c.project, c.pinnedA
			other := rec{id: "other", text: "Unrelated note: the frontend uses svelte with vite and typescript", typ: memory.TypeProject, created: 5, accessed: -1}
			st, sw := fixture(t, defaults(), a, b, other)
			p, err := sw.Plan(ctx, PlanOptions{All: c.all, Ops: []string{OpMerge}})
			if err != nil {
				t.Fatal(err)
			}
			if !c.merged {
				if len(p.Actions) != 0 {
					t.Fatalf("unexpected merge: %+v", p.Actions)
				}
				if c.refusedOn != "" && (len(p.Refused) != 1 || !strings.Contains(p.Refused[0].Reason, c.refusedOn)) {
					t.Errorf("refusal not reported with the token %q: %+v", c.refusedOn, p.Refused)
				}
				return
			}
			if len(p.Actions) != 1 {
				t.Fatalf("actions: %+v (refused %+v)", p.Actions, p.Refused)
			}
			act := p.Actions[0]
			if act.ID != "dupb" || act.Survivor != "dupb" || len(act.MergedIDs) != 1 || act.MergedIDs[0] != "dupa" {
				t.Fatalf("survivor/merged: %+v", act)
			}
			if act.KeptText != c.keptText || act.Similarity < defaults().MergeSimilarity {
				t.Errorf("kept %q (sim %.3f), want %q", act.KeptText, act.Similarity, c.keptText)
			}
			if _, err := sw.Apply(ctx, p, nil); err != nil {
				t.Fatal(err)
			}
			s, err := st.Get(ctx, "dupb")
			if err != nil {
				t.Fatal(err)
			}
			if s.Text != c.keptText || s.AccessCount != 6 || s.ReinforcedCount != 1 || s.Importance != 0.6 || len(s.Hits) != 2 ||
				!s.LastAccessed.Equal(daysAgo(1)) {
				t.Errorf("survivor after merge: %+v", s)
			}
			vecs, _ := testEmb.Embed(ctx, []string{c.keptText})
			if fmt.Sprint(s.Embedding) != fmt.Sprint(vecs[0]) {
				t.Error("survivor's embedding is not its kept text's")
			}
			tr, _ := st.Trash(ctx)
			if len(tr) != 1 || tr[0].Memory.ID != "dupa" || !strings.Contains(tr[0].Reason, "dupb") {
				t.Errorf("trash: %+v", tr)
			}
		})
	}
}

// TestMergeCandidatesFromVectorSearch: among many memories, only the
// near-duplicate pairs merge, each memory at most once per plan.
func TestMergeCandidatesFromVectorSearch(t *testing.T) {
	ctx := context.Background()
	topics := []string{"postgres connection pool", "redis cache eviction", "kafka consumer lag", "docker image build", "svelte store updates",
		"oauth token refresh", "s3 bucket policy", "terraform state lock", "helm chart values", "pnpm workspace layout"}
	var recs []rec
	for i, tp := range topics {
		text := fmt.Sprintf("Notes on the %s: we keep the defaults and document every change in the team wiki page", tp)
		recs = append(recs, rec{id: fmt.Sprintf("m%02d", i), text: text, typ: memory.TypeProject, created: 10, accessed: -1})
		if i%3 == 0 {
			recs = append(recs, rec{id: fmt.Sprintf("m%02dd", i), text: text + ".", typ: memory.TypeProject, created: 12, accessed: -1})
		}
	}
	// Three copies of one text: one merge now, the third waits for the next sweep.
	recs = append(recs, rec{id: "m00t", text: recs[0].text + " ", typ: memory.TypeProject, created: 14, accessed: -1})
	_, sw := fixture(t, defaults(), recs...)
	p, err := sw.Plan(ctx, PlanOptions{Ops: []string{OpMerge}})
	if err != nil {
		t.Fatal(err)
	}
	if p.Counts[OpMerge] != 4 {
		t.Fatalf("merges %d, want 4: %+v", p.Counts[OpMerge], p.Actions)
	}
	seen := map[string]bool{}
	for _, a := range p.Actions {
		for _, id := range append([]string{a.ID}, a.MergedIDs...) {
			if seen[id] {
				t.Errorf("%s in two merges", id)
			}
			seen[id] = true
		}
		if !strings.HasPrefix(a.MergedIDs[0], a.ID[:3]) {
			t.Errorf("merged different topics: %s + %s", a.ID, a.MergedIDs[0])
		}
	}
	if _, err := sw.Apply(ctx, p, nil); err != nil {
		t.Fatal(err)
	}
	p2, err := sw.Plan(ctx, PlanOptions{Ops: []string{OpMerge}})
	if err != nil {
		t.Fatal(err)
	}
	if p2.Counts[OpMerge] != 1 {
		t.Errorf("second sweep merges %d, want 1 (the third copy)", p2.Counts[OpMerge])
	}
}

// TestIncrementalMergeScan: a second plan searches only what changed since
// the first, and still proposes the first's unapplied merges.
func TestIncrementalMergeScan(t *testing.T) {
	ctx := context.Background()
	a, b := mergeRecs("The deploy script pushes the api image to staging after the tests pass.", "The deploy script pushes the api image to staging after the tests pass .")
	other := rec{id: "other", text: "Unrelated note: the frontend uses svelte with vite and typescript", typ: memory.TypeProject, created: 5, accessed: -1}
	st, sw := fixture(t, defaults(), a, b, other)
	p1, err := sw.Plan(ctx, PlanOptions{Ops: []string{OpMerge}})
	if err != nil {
		t.Fatal(err)
	}
	if !p1.MergeSince.IsZero() || p1.MergeQueried != 3 || p1.Counts[OpMerge] != 1 {
		t.Fatalf("first plan: since %v queried %d counts %v", p1.MergeSince, p1.MergeQueried, p1.Counts)
	}
	sw.clock = memory.FixedClock{T: now.Add(time.Hour)}
	p2, err := sw.Plan(ctx, PlanOptions{Ops: []string{OpMerge}})
	if err != nil {
		t.Fatal(err)
	}
	if !p2.MergeSince.Equal(now) || p2.MergeQueried != 0 || p2.Counts[OpMerge] != 1 || p2.Actions[0].MergedIDs[0] != "dupa" {
		t.Fatalf("incremental plan: since %v queried %d actions %+v", p2.MergeSince, p2.MergeQueried, p2.Actions)
	}
	// A new near-duplicate of "other" is searched and found.
	vecs, _ := testEmb.Embed(ctx, []string{other.text + "."})
	if _, err := st.Put(ctx, memory.Memory{ID: "other2", Text: other.text + ".", Embedding: vecs[0], Project: "proj", CreatedAt: now.Add(2 * time.Hour)}); err != nil {
		t.Fatal(err)
	}
	sw.clock = memory.FixedClock{T: now.Add(3 * time.Hour)}
	p3, err := sw.Plan(ctx, PlanOptions{Ops: []string{OpMerge}})
	if err != nil {
		t.Fatal(err)
	}
	if p3.MergeQueried != 1 || p3.Counts[OpMerge] != 2 {
		t.Errorf("after a new memory: queried %d, merges %d", p3.MergeQueried, p3.Counts[OpMerge])
	}
	p4, err := sw.Plan(ctx, PlanOptions{Ops: []string{OpMerge}, FullMerge: true})
	if err != nil {
		t.Fatal(err)
	}
	if !p4.MergeSince.IsZero() || p4.MergeQueried != 4 || p4.Counts[OpMerge] != 2 {
		t.Errorf("full plan: since %v queried %d merges %d", p4.MergeSince, p4.MergeQueried, p4.Counts[OpMerge])
	}
}

// TestMergeTieKeepsStandaloneText: issue 21 bug 11. Two near-duplicates with
// no retrieval signal either way (0/0): the merge keeps the text that reads
// as a standalone statement, not the conversational reply, and its reason
// says what decided, never "more retrieval signal".
func TestMergeTieKeepsStandaloneText(t *testing.T) {
	ctx := context.Background()
	crisp := "The staging ClusterIssuer points at the Let's Encrypt staging endpoint, so browsers reject the certificates it issues for the preview hosts."
	chatty := "Yes, same cause: the staging ClusterIssuer points at the Let's Encrypt staging endpoint, so browsers reject the certificates it issues for the preview hosts."
	cases := []struct {
		name             string
		crispRec, chatty rec
		wantKept         string
		wantReason       []string
		notReason        []string
	}{
		{name: "0/0 tie, the reply is newer",
			crispRec: rec{id: "crisp", text: crisp, typ: memory.TypeProject, created: 9, accessed: -1},
			chatty:   rec{id: "chatty", text: chatty, typ: memory.TypeProject, created: 2, accessed: -1},
			wantKept: crisp, wantReason: []string{"retrieval signal tied", "standalone", "conversational reply"},
			notReason: []string{"more retrieval signal"}},
		{name: "0/0 tie, the reply is more important",
			crispRec: rec{id: "crisp", text: crisp, typ: memory.TypeProject, importance: 0.4, created: 2, accessed: -1},
			chatty:   rec{id: "chatty", text: chatty, typ: memory.TypeProject, importance: 0.7, created: 9, accessed: -1},
			wantKept: crisp, wantReason: []string{"retrieval signal tied", "standalone"},
			notReason: []string{"more retrieval signal"}},
		{name: "the reply was reinforced: it survives and says so",
			crispRec: rec{id: "crisp", text: crisp, typ: memory.TypeProject, created: 9, accessed: -1},
			chatty:   rec{id: "chatty", text: chatty, typ: memory.TypeProject, access: 3, reinforced: 2, created: 2, accessed: 1},
			wantKept: chatty, wantReason: []string{"more retrieval signal (reinforced 2 vs 0"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, sw := fixture(t, defaults(), c.crispRec, c.chatty)
			p, err := sw.Plan(ctx, PlanOptions{Ops: []string{OpMerge}})
			if err != nil {
				t.Fatal(err)
			}
			if len(p.Actions) != 1 {
				t.Fatalf("actions %+v, refused %+v", p.Actions, p.Refused)
			}
			a := p.Actions[0]
			if a.KeptText != c.wantKept {
				t.Errorf("kept %q\nwant %q\nreason: %s", a.KeptText, c.wantKept, a.Reason)
			}
			for _, w := range c.wantReason {
				if !strings.Contains(a.Reason, w) {
					t.Errorf("reason %q lacks %q", a.Reason, w)
				}
			}
			for _, w := range c.notReason {
				if strings.Contains(a.Reason, w) {
					t.Errorf("reason %q says %q", a.Reason, w)
				}
			}
		})
	}
}

// TestRefusedMergesCarryBothTexts: near-duplicates that are not merged are
// listed with both texts and why, so the pair can be shown side by side.
func TestRefusedMergesCarryBothTexts(t *testing.T) {
	ctx := context.Background()
	base := "The deploy script pushes the api service image to the staging cluster after the integration tests pass on the main branch"
	cases := []struct {
		name   string
		a, b   rec
		reason string
	}{
		{name: "a load-bearing token would be lost",
			a:      rec{id: "dupa", text: base + " with timeout 300s", typ: memory.TypeProject, created: 3, accessed: -1},
			b:      rec{id: "dupb", text: base + " with timeout 120s", typ: memory.TypeProject, created: 4, accessed: -1},
			reason: "carries \"120s\" that the kept text lacks"},
		{name: "pinned",
			a:      rec{id: "dupa", text: base + ".", typ: memory.TypeProject, created: 3, accessed: -1, pinned: true},
			b:      rec{id: "dupb", text: base + " .", typ: memory.TypeProject, created: 4, accessed: -1},
			reason: "dupa is pinned"},
		{name: "types differ",
			a:      rec{id: "dupa", text: base + ".", typ: memory.TypeProject, created: 3, accessed: -1},
			b:      rec{id: "dupb", text: base + " .", typ: memory.TypeUser, created: 4, accessed: -1},
			reason: "types differ"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, sw := fixture(t, defaults(), c.a, c.b)
			p, err := sw.Plan(ctx, PlanOptions{Ops: []string{OpMerge}})
			if err != nil {
				t.Fatal(err)
			}
			if len(p.Actions) != 0 || len(p.Refused) != 1 {
				t.Fatalf("actions %+v, refused %+v", p.Actions, p.Refused)
			}
			r := p.Refused[0]
			texts := []string{r.Before.Text, r.MergedBefore[0].Text}
			if !slices.Contains(texts, c.a.text) || !slices.Contains(texts, c.b.text) {
				t.Errorf("texts %q", texts)
			}
			if !strings.Contains(r.Reason, c.reason) || r.Similarity < defaults().MergeSimilarity {
				t.Errorf("reason %q (sim %.3f), want %q", r.Reason, r.Similarity, c.reason)
			}
		})
	}
}

// TestIncrementalScanKeepsRefused: a plan whose merge scan is incremental
// still lists the near-duplicates the last scan refused, while they are
// still refused, so the list does not empty on the second plan.
func TestIncrementalScanKeepsRefused(t *testing.T) {
	ctx := context.Background()
	base := "The deploy script pushes the api service image to the staging cluster after the integration tests pass on the main branch"
	a := rec{id: "dupa", text: base + " with timeout 300s", typ: memory.TypeProject, created: 3, accessed: -1}
	b := rec{id: "dupb", text: base + " with timeout 120s", typ: memory.TypeProject, created: 4, accessed: -1}
	c := rec{id: "pin", text: "Release notes are written in docs/releases by hand, one file a version.", typ: memory.TypeProject, created: 3, accessed: -1, pinned: true}
	d := rec{id: "pin2", text: "Release notes are written by hand in docs/releases, one file a version.", typ: memory.TypeProject, created: 3, accessed: -1}
	st, sw := fixture(t, defaults(), a, b, c, d)
	p1, err := sw.Plan(ctx, PlanOptions{Ops: []string{OpMerge}})
	if err != nil {
		t.Fatal(err)
	}
	if len(p1.Refused) != 2 {
		t.Fatalf("first plan refused %+v", p1.Refused)
	}
	sw.clock = memory.FixedClock{T: now.Add(time.Hour)}
	p2, err := sw.Plan(ctx, PlanOptions{Ops: []string{OpMerge}})
	if err != nil {
		t.Fatal(err)
	}
	if p2.MergeSince.IsZero() || p2.MergeQueried != 0 {
		t.Fatalf("second plan not incremental: since %v queried %d", p2.MergeSince, p2.MergeQueried)
	}
	reasons := func(p *Plan) []string {
		var out []string
		for _, r := range p.Refused {
			out = append(out, r.ID+"+"+r.MergedIDs[0]+": "+r.Reason)
		}
		slices.Sort(out)
		return out
	}
	if fmt.Sprint(reasons(p2)) != fmt.Sprint(reasons(p1)) {
		t.Errorf("incremental plan refused\n%v\nwant\n%v", reasons(p2), reasons(p1))
	}
	// Unpinned, the pair merges on the next plan and is no longer refused.
	if _, err := st.Update(ctx, "pin", func(m *memory.Memory) error { m.Pinned = false; return nil }); err != nil {
		t.Fatal(err)
	}
	sw.clock = memory.FixedClock{T: now.Add(2 * time.Hour)}
	p3, err := sw.Plan(ctx, PlanOptions{Ops: []string{OpMerge}})
	if err != nil {
		t.Fatal(err)
	}
	if len(p3.Refused) != 1 || p3.Counts[OpMerge] != 1 {
		t.Errorf("after unpinning: refused %v, merges %d", reasons(p3), p3.Counts[OpMerge])
	}
}
