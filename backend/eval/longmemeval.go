package eval

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/memtray/memtray/backend/memory"
	"github.com/memtray/memtray/backend/search"
	"github.com/memtray/memtray/backend/store"
)

// LongMemEvalMetrics are LongMemEval's session-level retrieval metrics,
// means over questions; see RecallAllAt and NDCGAnyAt.
type LongMemEvalMetrics struct {
	RecallAllAt5  float64 `json:"recall_all_at_5"`
	RecallAllAt10 float64 `json:"recall_all_at_10"`
	NDCGAnyAt5    float64 `json:"ndcg_any_at_5"`
	NDCGAnyAt10   float64 `json:"ndcg_any_at_10"`
	// N is the number of questions averaged.
	N int `json:"-"`
}

// LongMemEvalMode is one search mode's LongMemEval results.
type LongMemEvalMode struct {
	Overall LongMemEvalMetrics            `json:"overall"`
	ByType  map[string]LongMemEvalMetrics `json:"by_type"`
}

// LongMemEvalReport is the result of RunLongMemEval.
type LongMemEvalReport struct {
	Modes map[string]*LongMemEvalMode `json:"modes"`
	// Questions were evaluated; Abstention questions and Skipped ones
	// (no answer session among the documents) were not. Sessions counts the
	// documents stored.
	Questions  int `json:"-"`
	Abstention int `json:"-"`
	Skipped    int `json:"-"`
	Sessions   int `json:"-"`
}

type lmeQuestion struct {
	QuestionID         string   `json:"question_id"`
	QuestionType       string   `json:"question_type"`
	Question           string   `json:"question"`
	AnswerSessionIDs   []string `json:"answer_session_ids"`
	HaystackSessionIDs []string `json:"haystack_session_ids"`
	HaystackSessions   [][]struct {
		Role    string `json:"role"`
		Content string `json:"content"`
	} `json:"haystack_sessions"`
}

// RunLongMemEval runs LongMemEval's session-level retrieval protocol on the
// file at path (the oracle or S file; .json or gzip-compressed): for each
// question, each haystack session becomes one document made of the
// session's user turns (joined by newlines, clipped to 64 KiB), scoped to
// the question (project = its index); the question searches its own
// documents for the top 10 with floors and MMR off, in each mode. Questions
// whose id ends in "_abs" (abstention) are excluded, as are questions none
// of whose answer sessions has user text.
func RunLongMemEval(ctx context.Context, path string, opts Options) (*LongMemEvalReport, error) {
	data, err := readMaybeGzip(path)
	if err != nil {
		return nil, err
	}
	var qs []lmeQuestion
	if err := json.Unmarshal(data, &qs); err != nil {
		return nil, fmt.Errorf("longmemeval file %s: %w", path, err)
	}
	data = nil
	if len(qs) == 0 {
		return nil, fmt.Errorf("longmemeval file %s: no questions", path)
	}
	e, err := openEnv(ctx, opts)
	if err != nil {
		return nil, err
	}
	defer e.close()

	rep := &LongMemEvalReport{Modes: map[string]*LongMemEvalMode{}}
	type question struct {
		project, text, typ string
		answers            map[string]bool
	}
	var questions []question
	for qi, q := range qs {
		if opts.Limit > 0 && len(questions) >= opts.Limit {
			break
		}
		if strings.HasSuffix(q.QuestionID, "_abs") {
			rep.Abstention++
			continue
		}
		if len(q.HaystackSessionIDs) != len(q.HaystackSessions) {
			return nil, fmt.Errorf("longmemeval file %s: question %q has %d session ids for %d sessions",
				path, q.QuestionID, len(q.HaystackSessionIDs), len(q.HaystackSessions))
		}
		project := fmt.Sprintf("q%d", qi)
		answer := map[string]bool{}
		for _, id := range q.AnswerSessionIDs {
			answer[id] = true
		}
		rel := map[string]bool{}
		var ms []memory.Memory
		seen := map[string]bool{}
		for si, sess := range q.HaystackSessions {
			sid := q.HaystackSessionIDs[si]
			if seen[sid] {
				continue
			}
			var user []string
			for _, turn := range sess {
				if turn.Role == "user" && strings.TrimSpace(turn.Content) != "" {
					user = append(user, turn.Content)
				}
			}
			text := cleanText(strings.Join(user, "\n"))
			if strings.TrimSpace(text) == "" {
				continue
			}
			seen[sid] = true
			id := fmt.Sprintf("%s-s%d", project, si)
			if answer[sid] {
				rel[id] = true
			}
			ms = append(ms, memory.Memory{ID: id, Text: text, Project: project, Kind: memory.KindFact,
				Type: memory.TypeUser, Source: memory.SourceImport})
		}
		if len(rel) == 0 || strings.TrimSpace(q.Question) == "" {
			rep.Skipped++
			continue
		}
		if err := e.load(ctx, ms); err != nil {
			return nil, err
		}
		rep.Sessions += len(ms)
		questions = append(questions, question{project: project, text: cleanText(q.Question), typ: q.QuestionType, answers: rel})
	}
	rep.Questions = len(questions)
	total := len(questions) * len(ModeNames)
	done := 0
	for _, mode := range ModeNames {
		acc := map[string]*LongMemEvalMetrics{}
		var overall LongMemEvalMetrics
		for _, q := range questions {
			ids, _, err := e.ranked(ctx, search.Query{Text: q.text, K: 10, Mode: search.Mode(mode),
				Filter: store.Filter{Project: q.project}, NoFloors: true, NoMMR: true})
			if err != nil {
				return nil, fmt.Errorf("eval: longmemeval question %q: %w", q.text, err)
			}
			c := acc[q.typ]
			if c == nil {
				c = &LongMemEvalMetrics{}
				acc[q.typ] = c
			}
			for _, m := range []*LongMemEvalMetrics{&overall, c} {
				m.RecallAllAt5 += RecallAllAt(ids, q.answers, 5)
				m.RecallAllAt10 += RecallAllAt(ids, q.answers, 10)
				m.NDCGAnyAt5 += NDCGAnyAt(ids, q.answers, 5)
				m.NDCGAnyAt10 += NDCGAnyAt(ids, q.answers, 10)
				m.N++
			}
			done++
			if opts.Progress != nil {
				opts.Progress(done, total)
			}
		}
		mr := &LongMemEvalMode{Overall: overall.mean(), ByType: map[string]LongMemEvalMetrics{}}
		for t, m := range acc {
			mr.ByType[t] = m.mean()
		}
		rep.Modes[mode] = mr
	}
	return rep, nil
}

func (m LongMemEvalMetrics) mean() LongMemEvalMetrics {
	if m.N == 0 {
		return m
	}
	n := float64(m.N)
	return LongMemEvalMetrics{m.RecallAllAt5 / n, m.RecallAllAt10 / n, m.NDCGAnyAt5 / n, m.NDCGAnyAt10 / n, m.N}
}

// WriteTable prints recall_all@5/@10 and ndcg_any@5/@10 per question type
// and overall, the modes side by side.
func (r *LongMemEvalReport) WriteTable(w io.Writer) error {
	ew := &errWriter{w: w}
	ew.printf("LongMemEval (session level): %d questions, %d session documents (%d abstention questions excluded, %d skipped); floors and MMR off\n\n",
		r.Questions, r.Sessions, r.Abstention, r.Skipped)
	ew.printf("%-26s %4s", "", "")
	for _, m := range ModeNames {
		ew.printf(" | %-31s", m)
	}
	ew.printf("\n%-26s %4s", "type", "n")
	for range ModeNames {
		ew.printf(" | %7s %7s %7s %7s", "rAll@5", "rAll@10", "nDCG@5", "nDCG@10")
	}
	ew.printf("\n")
	types := map[string]bool{}
	for _, m := range r.Modes {
		for t := range m.ByType {
			types[t] = true
		}
	}
	var names []string
	for t := range types {
		names = append(names, t)
	}
	sort.Strings(names)
	row := func(label string, get func(*LongMemEvalMode) LongMemEvalMetrics) {
		n := 0
		for _, m := range ModeNames {
			if mr := r.Modes[m]; mr != nil {
				n = max(n, get(mr).N)
			}
		}
		ew.printf("%-26s %4d", label, n)
		for _, m := range ModeNames {
			mr := r.Modes[m]
			if mr == nil {
				ew.printf(" | %31s", "")
				continue
			}
			x := get(mr)
			ew.printf(" | %7.3f %7.3f %7.3f %7.3f", x.RecallAllAt5, x.RecallAllAt10, x.NDCGAnyAt5, x.NDCGAnyAt10)
		}
		ew.printf("\n")
	}
	for _, t := range names {
		row(t, func(m *LongMemEvalMode) LongMemEvalMetrics { return m.ByType[t] })
	}
	row("overall", func(m *LongMemEvalMode) LongMemEvalMetrics { return m.Overall })
	return ew.err
}
