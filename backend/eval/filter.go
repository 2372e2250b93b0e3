package eval

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/memtray/memtray/backend/config"
	"github.com/memtray/memtray/backend/embed"
	"github.com/memtray/memtray/backend/ingest"
	"github.com/memtray/memtray/backend/memory"
	"github.com/memtray/memtray/backend/noise"
	"github.com/memtray/memtray/backend/store"
)

// The labels of a filter file.
const (
	LabelNoise       = "noise"
	LabelLow         = "low"
	LabelSubstantive = "substantive"
)

// FilterItem is one labelled exchange of a filter file (the format of
// ../shared/eval/filter-dev.jsonl).
type FilterItem struct {
	ID        string `json:"id"`
	User      string `json:"user"`
	Assistant string `json:"assistant"`
	Label     string `json:"label"`
	Why       string `json:"why,omitempty"`
}

// maxFilterLine bounds one line of a filter file.
const maxFilterLine = 4 << 20

// LoadFilterFile reads and validates a filter file: one JSON object a line,
// every field checked, errors naming the line.
func LoadFilterFile(path string) ([]FilterItem, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("eval filter: %w", err)
	}
	defer f.Close()
	return ParseFilterItems(f)
}

// ParseFilterItems reads filter items from r (see LoadFilterFile).
func ParseFilterItems(r io.Reader) ([]FilterItem, error) {
	var items []FilterItem
	seen := map[string]bool{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), maxFilterLine)
	n := 0
	for sc.Scan() {
		n++
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		var it FilterItem
		dec := json.NewDecoder(strings.NewReader(line))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&it); err != nil {
			return nil, fmt.Errorf("eval filter: line %d: %w", n, err)
		}
		switch {
		case it.ID == "":
			return nil, fmt.Errorf("eval filter: line %d: no id", n)
		case seen[it.ID]:
			return nil, fmt.Errorf("eval filter: line %d: id %q appears twice", n, it.ID)
		case it.Label != LabelNoise && it.Label != LabelLow && it.Label != LabelSubstantive:
			return nil, fmt.Errorf("eval filter: line %d: label %q is not noise, low or substantive", n, it.Label)
		case !memory.ValidUTF8(it.User) || !memory.ValidUTF8(it.Assistant):
			return nil, fmt.Errorf("eval filter: line %d: text is not valid UTF-8", n)
		}
		seen[it.ID] = true
		items = append(items, it)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("eval filter: line %d: %w", n+1, err)
	}
	if len(items) == 0 {
		return nil, errors.New("eval filter: no items")
	}
	return items, nil
}

// FilterOptions configures RunFilter.
type FilterOptions struct {
	// Passes repeats the run (1 if 0): the store is wiped between passes,
	// the noise scorer's rejection buffer is kept (the seed's protocol).
	Passes int
	// Ingest holds the pipeline's constants; nil means the defaults.
	Ingest *config.Ingest
	// Embedder; nil means the built-in embedder.
	Embedder memory.Embedder
	// Judge, if set, is asked after the gates.
	Judge memory.Judge
	// TempDir is where the temporary stores live ("" = the system's).
	TempDir string
	// Details keeps every item's decision in the report.
	Details bool
	// Progress, if set, is called as items complete.
	Progress func(done, total int)
}

// LabelReport counts what happened to the items of one label.
type LabelReport struct {
	Total      int            `json:"total"`
	Stored     int            `json:"stored"`
	FilteredBy map[string]int `json:"filtered_by"`
}

// PassReport is one pass over the file.
type PassReport struct {
	ByLabel           map[string]*LabelReport `json:"by_label"`
	SubstantiveRecall float64                 `json:"substantive_recall"`
	NoiseRejection    float64                 `json:"noise_rejection"`
	LowRejection      float64                 `json:"low_rejection"`
	// PreJudgeShare is the share of all items rejected before the judge stage.
	PreJudgeShare float64 `json:"pre_judge_share"`
	// Memories is how many memories the pass's store holds at its end.
	Memories int `json:"memories"`
	// BufferLen is the rejection buffer's length at the end of the pass.
	BufferLen int `json:"buffer_len"`
	// Items lists each item's decision (with Details).
	Items []FilterDecision `json:"items,omitempty"`
}

// FilterDecision is one item's outcome.
type FilterDecision struct {
	ID      string  `json:"id"`
	Label   string  `json:"label"`
	Verdict string  `json:"verdict"`
	Stage   string  `json:"stage"`
	Reason  string  `json:"reason"`
	Score   float64 `json:"content_score,omitempty"`
}

// FilterReport is the result of RunFilter.
type FilterReport struct {
	Items    int          `json:"items"`
	Embedder string       `json:"embedder"`
	Judge    string       `json:"judge"`
	Passes   []PassReport `json:"passes"`
}

// RunFilter runs every item of a filter file through the whole write
// pipeline on a fresh temporary store, pass by pass.
func RunFilter(ctx context.Context, path string, opts FilterOptions) (*FilterReport, error) {
	items, err := LoadFilterFile(path)
	if err != nil {
		return nil, err
	}
	return RunFilterItems(ctx, items, opts)
}

// RunFilterItems is RunFilter on items already read.
func RunFilterItems(ctx context.Context, items []FilterItem, opts FilterOptions) (*FilterReport, error) {
	if opts.Passes <= 0 {
		opts.Passes = 1
	}
	if opts.Passes > 10 {
		return nil, errors.New("eval filter: at most 10 passes")
	}
	cfg := config.Default().Ingest
	if opts.Ingest != nil {
		cfg = *opts.Ingest
	}
	emb := opts.Embedder
	if emb == nil {
		emb = embed.NewBuiltin()
	}
	root, err := os.MkdirTemp(opts.TempDir, "memtray-eval-filter-")
	if err != nil {
		return nil, fmt.Errorf("eval filter: %w", err)
	}
	defer os.RemoveAll(root)
	clock := memory.FixedClock{T: evalNow}
	scorer, err := noise.New(ctx, noise.Options{Embedder: emb, BufferPath: filepath.Join(root, "rejections.jsonl"),
		BufferSize: cfg.NoiseBufferSize, Recent: cfg.NoiseRecent, RebuildEvery: cfg.NoiseRebuildEvery,
		Threshold: cfg.ContentThreshold, Clock: clock})
	if err != nil {
		return nil, fmt.Errorf("eval filter: %w", err)
	}
	rep := &FilterReport{Items: len(items), Embedder: emb.Model(), Judge: "none"}
	if opts.Judge != nil {
		rep.Judge = opts.Judge.Name()
	}
	total := opts.Passes * len(items)
	for pass := 0; pass < opts.Passes; pass++ {
		pr, err := runFilterPass(ctx, items, filepath.Join(root, fmt.Sprintf("pass%d", pass+1)), cfg, emb, scorer, opts, clock,
			func(done int) {
				if opts.Progress != nil {
					opts.Progress(pass*len(items)+done, total)
				}
			})
		if err != nil {
			return nil, err
		}
		rep.Passes = append(rep.Passes, *pr)
	}
	return rep, nil
}

func runFilterPass(ctx context.Context, items []FilterItem, dir string, cfg config.Ingest, emb memory.Embedder,
	scorer *noise.Scorer, opts FilterOptions, clock memory.Clock, progress func(int)) (*PassReport, error) {
	st, err := store.Open(ctx, store.Options{Dir: dir, Model: emb.Model(), Dim: emb.Dim(), Clock: clock, NewID: SeededIDs()})
	if err != nil {
		return nil, fmt.Errorf("eval filter: store: %w", err)
	}
	defer st.Close()
	p, err := ingest.New(ingest.Options{Config: cfg, Embedder: emb, Store: st, Scorer: scorer, Judge: opts.Judge, Clock: clock})
	if err != nil {
		return nil, fmt.Errorf("eval filter: %w", err)
	}
	pr := &PassReport{ByLabel: map[string]*LabelReport{}}
	for _, l := range []string{LabelNoise, LabelLow, LabelSubstantive} {
		pr.ByLabel[l] = &LabelReport{FilteredBy: map[string]int{}}
	}
	preJudge := 0
	for i, it := range items {
		ex := memory.Exchange{SessionID: "eval-filter", Turn: i + 1, UserTurns: i + 1, Source: "eval",
			User: it.User, Assistant: it.Assistant}
		d, err := p.Process(ctx, ex)
		if err != nil {
			return nil, fmt.Errorf("eval filter: item %s: %w", it.ID, err)
		}
		lr := pr.ByLabel[it.Label]
		lr.Total++
		if d.Kept() {
			lr.Stored++
		} else {
			lr.FilteredBy[d.Stage]++
			if slices.Contains(ingest.PreJudgeStages, d.Stage) {
				preJudge++
			}
		}
		if opts.Details {
			pr.Items = append(pr.Items, FilterDecision{ID: it.ID, Label: it.Label, Verdict: string(d.Verdict),
				Stage: d.Stage, Reason: d.Reason, Score: d.Scores["content_score"]})
		}
		if progress != nil {
			progress(i + 1)
		}
	}
	rate := func(l string, stored bool) float64 {
		lr := pr.ByLabel[l]
		if lr.Total == 0 {
			return 0
		}
		if stored {
			return float64(lr.Stored) / float64(lr.Total)
		}
		return float64(lr.Total-lr.Stored) / float64(lr.Total)
	}
	pr.SubstantiveRecall = rate(LabelSubstantive, true)
	pr.NoiseRejection = rate(LabelNoise, false)
	pr.LowRejection = rate(LabelLow, false)
	pr.PreJudgeShare = float64(preJudge) / float64(len(items))
	pr.Memories = st.Count()
	pr.BufferLen = scorer.State().BufferLen
	return pr, nil
}

// WriteTable prints one column per pass: per label, how many were stored
// and how many each stage filtered; then the rates.
func (r *FilterReport) WriteTable(w io.Writer) error {
	ew := &errWriter{w: w}
	ew.printf("filter: %d exchanges, embedder %s, judge %s, %d pass(es)\n\n", r.Items, r.Embedder, r.Judge, len(r.Passes))
	ew.printf("%-34s", "")
	for i := range r.Passes {
		ew.printf(" %8s", fmt.Sprintf("pass %d", i+1))
	}
	ew.printf("\n")
	row := func(name string, v func(p *PassReport) string) {
		ew.printf("%-34s", name)
		for i := range r.Passes {
			ew.printf(" %8s", v(&r.Passes[i]))
		}
		ew.printf("\n")
	}
	for _, l := range []string{LabelSubstantive, LabelLow, LabelNoise} {
		stages := map[string]bool{}
		for i := range r.Passes {
			for s := range r.Passes[i].ByLabel[l].FilteredBy {
				stages[s] = true
			}
		}
		row(l+" total", func(p *PassReport) string { return fmt.Sprint(p.ByLabel[l].Total) })
		row("  stored", func(p *PassReport) string { return fmt.Sprint(p.ByLabel[l].Stored) })
		for _, s := range stageOrder(stages) {
			row("  filtered by "+s, func(p *PassReport) string { return fmt.Sprint(p.ByLabel[l].FilteredBy[s]) })
		}
	}
	ew.printf("\n")
	pct := func(f func(p *PassReport) float64) func(p *PassReport) string {
		return func(p *PassReport) string { return fmt.Sprintf("%.3f", f(p)) }
	}
	row("substantive recall", pct(func(p *PassReport) float64 { return p.SubstantiveRecall }))
	row("noise rejection", pct(func(p *PassReport) float64 { return p.NoiseRejection }))
	row("low-value rejection", pct(func(p *PassReport) float64 { return p.LowRejection }))
	row("decided before the judge", pct(func(p *PassReport) float64 { return p.PreJudgeShare }))
	row("memories in the store", func(p *PassReport) string { return fmt.Sprint(p.Memories) })
	row("rejection buffer", func(p *PassReport) string { return fmt.Sprint(p.BufferLen) })
	if len(r.Passes) > 0 && len(r.Passes[len(r.Passes)-1].Items) > 0 {
		ew.printf("\nmisclassified in the last pass:\n")
		for _, it := range r.Passes[len(r.Passes)-1].Items {
			stored := it.Verdict != string(memory.VerdictRejected)
			if stored == (it.Label == LabelSubstantive) {
				continue
			}
			ew.printf("  %-8s %-12s %-18s %s\n", it.ID, it.Label, it.Verdict, it.Reason)
		}
	}
	return ew.err
}

// stageOrder sorts stage names in pipeline order.
func stageOrder(set map[string]bool) []string {
	order := append(append([]string{}, ingest.PreJudgeStages...), ingest.StageJudge, ingest.StageChunk)
	var out []string
	for _, s := range order {
		if set[s] {
			out = append(out, s)
			delete(set, s)
		}
	}
	var rest []string
	for s := range set {
		rest = append(rest, s)
	}
	slices.Sort(rest)
	return append(out, rest...)
}
