package eval

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sort"
	"text/tabwriter"

	"github.com/memtray/memtray/backend/memory"
	"github.com/memtray/memtray/backend/steward"
)

// MergeMeta is a recall file's companion (recall-dev.meta.json): which
// memories are near-duplicate pairs and which are distractors (similar
// wording, different facts).
type MergeMeta struct {
	NearDuplicatePairs [][2]string `json:"near_duplicate_pairs"`
	Distractors        []struct {
		ID string `json:"id"`
	} `json:"distractors"`
}

// MergeReport is how the steward's merge operation does on a labelled
// store: labelled pairs merged, distractors and unlabelled memories merged
// wrongly, near-duplicates refused (and why), tokens lost.
type MergeReport struct {
	Memories int `json:"memories"`
	// Pairs and PairsMerged: labelled near-duplicate pairs, and those the
	// plan merges into one survivor.
	Pairs       int `json:"pairs"`
	PairsMerged int `json:"pairs_merged"`
	// PairsAbove is how many labelled pairs reach the merge similarity at
	// all (the rest are not candidates for this embedder).
	PairsAbove int `json:"pairs_above_threshold"`
	// Distractors and DistractorsMerged: labelled distractors, and those a
	// merge would absorb or be absorbed by.
	Distractors       int `json:"distractors"`
	DistractorsMerged int `json:"distractors_merged"`
	// OtherMerges are merges of two memories that are no labelled pair.
	OtherMerges int `json:"other_merges"`
	// Refused is the near-duplicate pairs above the threshold the plan
	// refused (Plan.Refused), and RefusedBy counts them by the plan's own
	// reason (steward.RefusalKind: a load-bearing token the merge would
	// lose, a pinned or snoozed memory, different types).
	Refused   int            `json:"refused"`
	RefusedBy map[string]int `json:"refused_by"`
	// LostTokens counts load-bearing tokens a merge drops (must be 0).
	LostTokens int `json:"lost_tokens"`
	// Precision is labelled pairs merged / all merges.
	Precision float64 `json:"precision"`
	// Threshold is the merge similarity used.
	Threshold float64 `json:"threshold"`
	// PairSimilarity lists each labelled pair's cosine, for tuning.
	PairSimilarity map[string]float64 `json:"pair_similarity"`
	// UnpairedMax is the highest cosine between two memories that are no
	// labelled pair, and DistractorMax the highest between a distractor and
	// any other memory: a threshold must stay above them.
	UnpairedMax   float64 `json:"unpaired_max"`
	DistractorMax float64 `json:"distractor_max"`
}

// RunMerge loads a recall file's memories into a temporary store and plans
// the steward's merge operation over it (within projects, as the scheduled
// sweep does), then scores the plan against the meta file's labels.
// A threshold of 0 uses the embedder's default merge similarity.
func RunMerge(ctx context.Context, recallPath, metaPath string, threshold float64, opts Options) (*MergeReport, error) {
	rf, err := LoadRecallFile(recallPath)
	if err != nil {
		return nil, err
	}
	data, err := os.ReadFile(metaPath)
	if err != nil {
		return nil, fmt.Errorf("merge meta: %w", err)
	}
	var meta MergeMeta
	if err := json.Unmarshal(data, &meta); err != nil {
		return nil, fmt.Errorf("merge meta %s: %w", metaPath, err)
	}
	e, err := openEnv(ctx, opts)
	if err != nil {
		return nil, err
	}
	defer e.close()
	ms := make([]memory.Memory, len(rf.Memories))
	texts := map[string]string{}
	for i, m := range rf.Memories {
		ms[i] = memory.Memory{ID: m.ID, Text: m.Text, Kind: memory.Kind(m.Kind), Project: m.Project, Type: memory.TypeProject}
		texts[m.ID] = m.Text
	}
	if err := e.load(ctx, ms); err != nil {
		return nil, err
	}
	cfg := e.cfg.Steward // the embedder's calibrated merge similarity
	if threshold > 0 {
		cfg.MergeSimilarity = threshold
	}
	dir, err := os.MkdirTemp(opts.TempDir, "memtray-merge-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	s := steward.New(e.st, cfg, steward.Options{Dir: dir, Clock: memory.FixedClock{T: evalNow}})
	plan, err := s.Plan(ctx, steward.PlanOptions{Ops: []string{steward.OpMerge}})
	if err != nil {
		return nil, err
	}
	rep := &MergeReport{Memories: len(ms), Pairs: len(meta.NearDuplicatePairs), Distractors: len(meta.Distractors),
		Refused: len(plan.Refused), RefusedBy: map[string]int{}, Threshold: cfg.MergeSimilarity, PairSimilarity: map[string]float64{}}
	for _, r := range plan.Refused {
		rep.RefusedBy[steward.RefusalKind(r.Reason)]++
	}
	group := map[string]string{} // memory id -> survivor
	merges := 0
	for _, a := range plan.Actions {
		if a.Op != steward.OpMerge {
			continue
		}
		group[a.ID] = a.ID
		for _, id := range a.MergedIDs {
			group[id] = a.ID
			merges++
		}
		// No load-bearing token of any merged text may be missing from the kept
		// text, written the same way or otherwise (memory.HoldsToken).
		kept := memory.LoadBearing(a.KeptText)
		for _, id := range append([]string{a.ID}, a.MergedIDs...) {
			for tok := range memory.LoadBearing(texts[id]) {
				if !kept[tok] && !memory.HoldsToken(a.KeptText, tok) {
					rep.LostTokens++
				}
			}
		}
	}
	pairOf := map[string]string{}
	for _, p := range meta.NearDuplicatePairs {
		pairOf[p[0]], pairOf[p[1]] = p[1], p[0]
		va, vb := vectorOf(ctx, e, p[0]), vectorOf(ctx, e, p[1])
		sim := memory.Cosine(va, vb)
		rep.PairSimilarity[p[0]+"~"+p[1]] = sim
		if sim >= cfg.MergeSimilarity {
			rep.PairsAbove++
		}
		if g, ok := group[p[0]]; ok && g == group[p[1]] {
			rep.PairsMerged++
		}
	}
	isDistractor := map[string]bool{}
	for _, d := range meta.Distractors {
		isDistractor[d.ID] = true
	}
	for i := range ms {
		for j := i + 1; j < len(ms); j++ {
			a, b := ms[i].ID, ms[j].ID
			if pairOf[a] == b {
				continue
			}
			sim := memory.Cosine(ms[i].Embedding, ms[j].Embedding)
			rep.UnpairedMax = max(rep.UnpairedMax, sim)
			if isDistractor[a] || isDistractor[b] {
				rep.DistractorMax = max(rep.DistractorMax, sim)
			}
		}
	}
	for id, g := range group {
		if id != g && pairOf[id] != g && pairOf[g] != id {
			rep.OtherMerges++
		}
	}
	for _, d := range meta.Distractors {
		if _, ok := group[d.ID]; ok {
			rep.DistractorsMerged++
		}
	}
	if merges > 0 {
		rep.Precision = float64(rep.PairsMerged) / float64(merges)
	}
	return rep, nil
}

func vectorOf(ctx context.Context, e *env, id string) []float32 {
	m, err := e.st.Get(ctx, id)
	if err != nil {
		return nil
	}
	return m.Embedding
}

// WriteTable prints the merge report.
func (r *MergeReport) WriteTable(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "steward merge on %d memories (threshold %.2f)\n\n", r.Memories, r.Threshold)
	fmt.Fprintf(tw, "labelled near-duplicate pairs\t%d\n", r.Pairs)
	fmt.Fprintf(tw, "  above the threshold\t%d\n", r.PairsAbove)
	fmt.Fprintf(tw, "  merged\t%d\n", r.PairsMerged)
	fmt.Fprintf(tw, "near-duplicates refused\t%d\n", r.Refused)
	kinds := make([]string, 0, len(r.RefusedBy))
	for k := range r.RefusedBy {
		kinds = append(kinds, k)
	}
	sort.Strings(kinds)
	for _, k := range kinds {
		fmt.Fprintf(tw, "  %s\t%d\n", k, r.RefusedBy[k])
	}
	fmt.Fprintf(tw, "distractors merged (of %d)\t%d\n", r.Distractors, r.DistractorsMerged)
	fmt.Fprintf(tw, "other merges\t%d\n", r.OtherMerges)
	fmt.Fprintf(tw, "precision\t%.3f\n", r.Precision)
	fmt.Fprintf(tw, "load-bearing tokens lost\t%d\n", r.LostTokens)
	sims := make([]float64, 0, len(r.PairSimilarity))
	for _, s := range r.PairSimilarity {
		sims = append(sims, s)
	}
	sort.Float64s(sims)
	if len(sims) > 0 {
		fmt.Fprintf(tw, "pair cosine min / median / max\t%.3f / %.3f / %.3f\n", sims[0], sims[len(sims)/2], sims[len(sims)-1])
	}
	fmt.Fprintf(tw, "highest cosine of an unlabelled pair / of a distractor\t%.3f / %.3f\n", r.UnpairedMax, r.DistractorMax)
	return tw.Flush()
}
