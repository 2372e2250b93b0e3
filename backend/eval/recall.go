package eval

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"

	"github.com/memtray/memtray/backend/memory"
	"github.com/memtray/memtray/backend/search"
	"github.com/memtray/memtray/backend/store"
)

// RecallK is how many hits a recall-file query asks for (enough for
// Recall@10 and nDCG@10).
const RecallK = 10

// MaxDatasetBytes bounds a dataset file read whole.
const MaxDatasetBytes = 1 << 30

// RecallFile is a recall dataset: memories and queries with the ids of their
// relevant memories. A query without relevant ids is a negative query: the
// right answer is nothing.
type RecallFile struct {
	Memories []RecallMemory `json:"memories"`
	Queries  []RecallQuery  `json:"queries"`
}

// RecallMemory is one memory of a recall file.
type RecallMemory struct {
	ID      string `json:"id"`
	Text    string `json:"text"`
	Kind    string `json:"kind"`
	Project string `json:"project"`
}

// RecallQuery is one query of a recall file.
type RecallQuery struct {
	Q        string   `json:"q"`
	Relevant []string `json:"relevant"`
	Type     string   `json:"type"`
	// Project, if set, is the caller's current project (project boost).
	Project string `json:"project,omitempty"`
}

// Metrics are the mean retrieval metrics over a set of queries; see
// RecallAt, ReciprocalRank and NDCGAt for the definitions.
type Metrics struct {
	RecallAt5  float64 `json:"recall_at_5"`
	RecallAt10 float64 `json:"recall_at_10"`
	MRR        float64 `json:"mrr"`
	NDCGAt10   float64 `json:"ndcg_at_10"`
	// N is the number of queries averaged.
	N int `json:"-"`
}

// ModeReport is one search mode's results on a recall file.
type ModeReport struct {
	// Overall averages every query that has relevant memories.
	Overall Metrics `json:"overall"`
	// ByType averages per query type (negative queries excluded).
	ByType map[string]Metrics `json:"by_type"`
	// NegativeEmptyRate is the share of negative queries that returned
	// nothing (0 when there are none).
	NegativeEmptyRate float64 `json:"negative_empty_rate"`
	// Negatives is the number of negative queries.
	Negatives int `json:"-"`
}

// QueryResult is one query's ranked ids in one mode (Options.Details).
type QueryResult struct {
	Mode     string   `json:"mode"`
	Floors   bool     `json:"floors"`
	Q        string   `json:"q"`
	Type     string   `json:"type"`
	Relevant []string `json:"relevant"`
	Ranked   []string `json:"ranked"`
	// Coverage and Cosine are the best candidate's evidence (search.Result).
	Coverage float64 `json:"coverage"`
	Cosine   float64 `json:"cosine"`
}

// RecallReport is the result of RunRecall.
type RecallReport struct {
	// Modes holds hybrid, bm25 and vector through the full pipeline.
	Modes map[string]*ModeReport `json:"modes"`
	// WithoutFloors is the same run with the relative and absolute floors off
	// (MMR still on): the floors' effect on recall.
	WithoutFloors map[string]*ModeReport `json:"without_floors"`
	// Memories and Queries count the file's contents.
	Memories int `json:"-"`
	Queries  int `json:"-"`
	// Details holds every query's results when Options.Details is set.
	Details []QueryResult `json:"details,omitempty"`
}

// LoadRecallFile reads and validates a recall file.
func LoadRecallFile(path string) (*RecallFile, error) {
	data, err := readMaybeGzip(path)
	if err != nil {
		return nil, err
	}
	var rf RecallFile
	if err := json.Unmarshal(data, &rf); err != nil {
		return nil, fmt.Errorf("recall file %s: %w", path, err)
	}
	if err := rf.Validate(); err != nil {
		return nil, fmt.Errorf("recall file %s: %w", path, err)
	}
	return &rf, nil
}

// Validate checks ids, texts, kinds and that every relevant id names a memory.
func (rf *RecallFile) Validate() error {
	var problems []string
	add := func(format string, args ...any) {
		if len(problems) < 20 {
			problems = append(problems, fmt.Sprintf(format, args...))
		}
	}
	if len(rf.Memories) == 0 {
		add("no memories")
	}
	if len(rf.Queries) == 0 {
		add("no queries")
	}
	ids := map[string]bool{}
	for i, m := range rf.Memories {
		switch {
		case m.ID == "":
			add("memory %d has no id", i)
		case ids[m.ID]:
			add("memory id %q is repeated", m.ID)
		}
		ids[m.ID] = true
		mm := memory.Memory{Text: m.Text, Kind: memory.Kind(m.Kind), Project: m.Project}
		if err := mm.Validate(); err != nil {
			add("memory %q: %v", m.ID, err)
		}
	}
	for i, q := range rf.Queries {
		if strings.TrimSpace(q.Q) == "" || !memory.ValidUTF8(q.Q) {
			add("query %d: text is empty or not UTF-8", i)
		}
		for _, id := range q.Relevant {
			if !ids[id] {
				add("query %d: relevant id %q is not a memory", i, id)
			}
		}
	}
	if len(problems) > 0 {
		return &memory.ValidationError{Problems: problems}
	}
	return nil
}

// RunRecall loads the recall file at path into a temporary store and runs
// every query in every mode, with and without floors.
func RunRecall(ctx context.Context, path string, opts Options) (*RecallReport, error) {
	rf, err := LoadRecallFile(path)
	if err != nil {
		return nil, err
	}
	return RunRecallFile(ctx, rf, opts)
}

// RunRecallFile is RunRecall on an already loaded file.
func RunRecallFile(ctx context.Context, rf *RecallFile, opts Options) (*RecallReport, error) {
	if err := rf.Validate(); err != nil {
		return nil, fmt.Errorf("recall file: %w", err)
	}
	e, err := openEnv(ctx, opts)
	if err != nil {
		return nil, err
	}
	defer e.close()
	storeID := map[string]string{} // file id -> store id
	fileID := map[string]string{}
	ms := make([]memory.Memory, len(rf.Memories))
	for i, m := range rf.Memories {
		sid := m.ID
		if !store.ValidID(sid) {
			sid = fmt.Sprintf("m%d", i)
		}
		storeID[m.ID], fileID[sid] = sid, m.ID
		ms[i] = memory.Memory{ID: sid, Text: m.Text, Kind: memory.Kind(m.Kind), Project: m.Project,
			Type: memory.TypeProject, Source: memory.SourceImport}
	}
	if err := e.load(ctx, ms); err != nil {
		return nil, err
	}
	rep := &RecallReport{Modes: map[string]*ModeReport{}, WithoutFloors: map[string]*ModeReport{},
		Memories: len(rf.Memories), Queries: len(rf.Queries)}
	total := 2 * len(ModeNames) * len(rf.Queries)
	done := 0
	for _, floors := range []bool{true, false} {
		for _, mode := range ModeNames {
			acc := newRecallAcc()
			for _, q := range rf.Queries {
				ids, r, err := e.ranked(ctx, search.Query{Text: q.Q, Project: q.Project, K: RecallK,
					Mode: search.Mode(mode), NoFloors: !floors})
				if err != nil {
					return nil, fmt.Errorf("eval: query %q: %w", q.Q, err)
				}
				for i, id := range ids {
					ids[i] = fileID[id]
				}
				acc.add(q, ids)
				if opts.Details {
					rep.Details = append(rep.Details, QueryResult{Mode: mode, Floors: floors, Q: q.Q, Type: q.Type,
						Relevant: q.Relevant, Ranked: ids, Coverage: r.Coverage, Cosine: r.Cosine})
				}
				done++
				if opts.Progress != nil {
					opts.Progress(done, total)
				}
			}
			if floors {
				rep.Modes[mode] = acc.report()
			} else {
				rep.WithoutFloors[mode] = acc.report()
			}
		}
	}
	return rep, nil
}

type recallAcc struct {
	overall   Metrics
	byType    map[string]*Metrics
	negatives int
	negEmpty  int
}

func newRecallAcc() *recallAcc { return &recallAcc{byType: map[string]*Metrics{}} }

func (a *recallAcc) add(q RecallQuery, ranked []string) {
	if len(q.Relevant) == 0 {
		a.negatives++
		if len(ranked) == 0 {
			a.negEmpty++
		}
		return
	}
	rel := map[string]bool{}
	for _, id := range q.Relevant {
		rel[id] = true
	}
	typ := q.Type
	if typ == "" {
		typ = "untyped"
	}
	m := a.byType[typ]
	if m == nil {
		m = &Metrics{}
		a.byType[typ] = m
	}
	for _, m := range []*Metrics{&a.overall, m} {
		m.RecallAt5 += RecallAt(ranked, rel, 5)
		m.RecallAt10 += RecallAt(ranked, rel, 10)
		m.MRR += ReciprocalRank(ranked, rel)
		m.NDCGAt10 += NDCGAt(ranked, rel, 10)
		m.N++
	}
}

func (m Metrics) mean() Metrics {
	if m.N == 0 {
		return m
	}
	n := float64(m.N)
	return Metrics{m.RecallAt5 / n, m.RecallAt10 / n, m.MRR / n, m.NDCGAt10 / n, m.N}
}

func (a *recallAcc) report() *ModeReport {
	r := &ModeReport{Overall: a.overall.mean(), ByType: map[string]Metrics{}, Negatives: a.negatives}
	for t, m := range a.byType {
		r.ByType[t] = m.mean()
	}
	if a.negatives > 0 {
		r.NegativeEmptyRate = float64(a.negEmpty) / float64(a.negatives)
	}
	return r
}

// WriteTable prints the report as a table: one row per query type and
// overall, the three modes side by side, then the floors' effect.
func (r *RecallReport) WriteTable(w io.Writer) error {
	ew := &errWriter{w: w}
	ew.printf("recall: %d memories, %d queries; K = %d, full pipeline (floors and MMR on)\n\n", r.Memories, r.Queries, RecallK)
	writeRecallModes(ew, r.Modes, true)
	if len(r.WithoutFloors) > 0 {
		ew.printf("\nwithout floors (MMR on):\n")
		writeRecallModes(ew, r.WithoutFloors, false)
	}
	return ew.err
}

func writeRecallModes(ew *errWriter, modes map[string]*ModeReport, negatives bool) {
	ew.printf("%-18s %4s", "", "")
	for _, m := range ModeNames {
		ew.printf(" | %-27s", m)
	}
	ew.printf("\n%-18s %4s", "type", "n")
	for range ModeNames {
		ew.printf(" | %6s %6s %6s %6s", "R@5", "R@10", "MRR", "nDCG10")
	}
	ew.printf("\n")
	types := map[string]bool{}
	for _, m := range modes {
		for t := range m.ByType {
			types[t] = true
		}
	}
	var names []string
	for t := range types {
		names = append(names, t)
	}
	sort.Strings(names)
	row := func(label string, get func(*ModeReport) Metrics) {
		n := 0
		for _, m := range ModeNames {
			if mr := modes[m]; mr != nil {
				n = max(n, get(mr).N)
			}
		}
		ew.printf("%-18s %4d", label, n)
		for _, m := range ModeNames {
			mr := modes[m]
			if mr == nil {
				ew.printf(" | %27s", "")
				continue
			}
			x := get(mr)
			ew.printf(" | %6.3f %6.3f %6.3f %6.3f", x.RecallAt5, x.RecallAt10, x.MRR, x.NDCGAt10)
		}
		ew.printf("\n")
	}
	for _, t := range names {
		row(t, func(m *ModeReport) Metrics { return m.ByType[t] })
	}
	row("overall", func(m *ModeReport) Metrics { return m.Overall })
	if negatives {
		n := 0
		ew.printf("%-18s", "negatives empty")
		for _, m := range ModeNames {
			if mr := modes[m]; mr != nil {
				n = max(n, mr.Negatives)
			}
		}
		ew.printf(" %4d", n)
		for _, m := range ModeNames {
			if mr := modes[m]; mr != nil {
				ew.printf(" | %6.3f %20s", mr.NegativeEmptyRate, "")
			}
		}
		ew.printf("\n")
	}
}

type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) printf(format string, args ...any) {
	if e.err == nil {
		_, e.err = fmt.Fprintf(e.w, format, args...)
	}
}

// readMaybeGzip reads a whole file, gunzipping it when it starts with the
// gzip magic bytes.
func readMaybeGzip(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("open dataset: %w", err)
	}
	defer f.Close()
	r, err := maybeGunzip(f)
	if err != nil {
		return nil, fmt.Errorf("dataset %s: %w", path, err)
	}
	data, err := io.ReadAll(io.LimitReader(r, MaxDatasetBytes+1))
	if err != nil {
		return nil, fmt.Errorf("read dataset %s: %w", path, err)
	}
	if len(data) > MaxDatasetBytes {
		return nil, fmt.Errorf("dataset %s: larger than %d bytes", path, MaxDatasetBytes)
	}
	return data, nil
}
