package eval

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/memtray/memtray/backend/memory"
	"github.com/memtray/memtray/backend/search"
	"github.com/memtray/memtray/backend/store"
)

// LoCoMoKs are the depths LoCoMo recall is reported at.
var LoCoMoKs = []int{5, 10, 25, 50}

// LoCoMoMetrics are mean recall@k over questions: the share of a question's
// evidence turns found among the top k.
type LoCoMoMetrics struct {
	RecallAt5  float64 `json:"recall_at_5"`
	RecallAt10 float64 `json:"recall_at_10"`
	RecallAt25 float64 `json:"recall_at_25"`
	RecallAt50 float64 `json:"recall_at_50"`
	// N is the number of questions averaged.
	N int `json:"-"`
}

// LoCoMoMode is one search mode's LoCoMo results.
type LoCoMoMode struct {
	Overall    LoCoMoMetrics            `json:"overall"`
	ByCategory map[string]LoCoMoMetrics `json:"by_category"`
}

// LoCoMoReport is the result of RunLoCoMo.
type LoCoMoReport struct {
	Modes map[string]*LoCoMoMode `json:"modes"`
	// Conversations, Turns and Questions count what was evaluated;
	// Skipped counts questions without usable evidence; Unresolved counts
	// evidence ids naming no turn (dropped from their question).
	Conversations int `json:"-"`
	Turns         int `json:"-"`
	Questions     int `json:"-"`
	Skipped       int `json:"-"`
	Unresolved    int `json:"-"`
}

type locomoSample struct {
	SampleID     string                     `json:"sample_id"`
	Conversation map[string]json.RawMessage `json:"conversation"`
	QA           []struct {
		Question string          `json:"question"`
		Evidence []string        `json:"evidence"`
		Category json.RawMessage `json:"category"`
	} `json:"qa"`
}

type locomoTurn struct {
	Speaker     string `json:"speaker"`
	DiaID       string `json:"dia_id"`
	Text        string `json:"text"`
	BlipCaption string `json:"blip_caption"`
}

var (
	sessionKey = regexp.MustCompile(`^session_(\d+)$`)
	evidenceID = regexp.MustCompile(`D:?(\d+):(\d+)`)
)

// normDiaID reduces "D1:03" and "D:1:3" to "D1:3".
func normDiaID(s string) (string, bool) {
	m := evidenceID.FindStringSubmatch(s)
	if m == nil {
		return "", false
	}
	a, _ := strconv.Atoi(m[1])
	b, _ := strconv.Atoi(m[2])
	return fmt.Sprintf("D%d:%d", a, b), true
}

// RunLoCoMo runs the LoCoMo retrieval protocol on the locomo10.json at path:
// each dialog turn ("Speaker: text", plus "[image: caption]" when the turn
// shared a photo) is a memory whose project is its conversation's sample id;
// each question searches its own conversation (Filter.Project) for the top
// 50, with floors and MMR off (the protocol scores a fixed depth), in each
// mode. recall@k is the share of the question's evidence turns (dia ids,
// normalised; ids naming no turn are dropped and counted) among the top k,
// averaged per category and overall; questions without evidence are skipped.
func RunLoCoMo(ctx context.Context, path string, opts Options) (*LoCoMoReport, error) {
	data, err := readMaybeGzip(path)
	if err != nil {
		return nil, err
	}
	var samples []locomoSample
	if err := json.Unmarshal(data, &samples); err != nil {
		return nil, fmt.Errorf("locomo file %s: %w", path, err)
	}
	if len(samples) == 0 {
		return nil, fmt.Errorf("locomo file %s: no conversations", path)
	}
	if opts.Limit > 0 && opts.Limit < len(samples) {
		samples = samples[:opts.Limit]
	}
	e, err := openEnv(ctx, opts)
	if err != nil {
		return nil, err
	}
	defer e.close()

	rep := &LoCoMoReport{Modes: map[string]*LoCoMoMode{}, Conversations: len(samples)}
	type question struct {
		project, text, category string
		evidence                map[string]bool
	}
	var questions []question
	seenSample := map[string]bool{}
	for si, s := range samples {
		if s.SampleID == "" || !store.ValidID(s.SampleID) || seenSample[s.SampleID] {
			return nil, fmt.Errorf("locomo file %s: conversation %d has a missing, repeated or unusable sample_id %q", path, si, s.SampleID)
		}
		seenSample[s.SampleID] = true
		var ms []memory.Memory
		turns := map[string]bool{}
		for key, raw := range s.Conversation {
			if !sessionKey.MatchString(key) {
				continue
			}
			var ts []locomoTurn
			if err := json.Unmarshal(raw, &ts); err != nil {
				return nil, fmt.Errorf("locomo file %s: %s %s: %w", path, s.SampleID, key, err)
			}
			for _, t := range ts {
				id, ok := normDiaID(t.DiaID)
				if !ok || turns[id] {
					continue
				}
				text := t.Text
				if t.Speaker != "" {
					text = t.Speaker + ": " + text
				}
				if t.BlipCaption != "" {
					text += " [image: " + t.BlipCaption + "]"
				}
				text = cleanText(text)
				if strings.TrimSpace(text) == "" {
					continue
				}
				turns[id] = true
				ms = append(ms, memory.Memory{ID: s.SampleID + ":" + id, Text: text, Project: s.SampleID,
					Kind: memory.KindFact, Type: memory.TypeUser, Source: memory.SourceImport})
			}
		}
		sort.Slice(ms, func(i, j int) bool { return ms[i].ID < ms[j].ID })
		if err := e.load(ctx, ms); err != nil {
			return nil, err
		}
		rep.Turns += len(ms)
		for _, qa := range s.QA {
			ev := map[string]bool{}
			for _, raw := range qa.Evidence {
				for _, m := range evidenceID.FindAllString(raw, -1) {
					id, _ := normDiaID(m)
					if turns[id] {
						ev[s.SampleID+":"+id] = true
					} else {
						rep.Unresolved++
					}
				}
			}
			if len(ev) == 0 || strings.TrimSpace(qa.Question) == "" {
				rep.Skipped++
				continue
			}
			questions = append(questions, question{project: s.SampleID, text: cleanText(qa.Question),
				category: strings.Trim(string(qa.Category), `"`), evidence: ev})
		}
	}
	rep.Questions = len(questions)
	total := len(questions) * len(ModeNames)
	done := 0
	for _, mode := range ModeNames {
		acc := map[string]*LoCoMoMetrics{}
		var overall LoCoMoMetrics
		for _, q := range questions {
			ids, _, err := e.ranked(ctx, search.Query{Text: q.text, K: 50, Mode: search.Mode(mode),
				Filter: store.Filter{Project: q.project}, NoFloors: true, NoMMR: true})
			if err != nil {
				return nil, fmt.Errorf("eval: locomo question %q: %w", q.text, err)
			}
			c := acc[q.category]
			if c == nil {
				c = &LoCoMoMetrics{}
				acc[q.category] = c
			}
			for _, m := range []*LoCoMoMetrics{&overall, c} {
				m.RecallAt5 += RecallAt(ids, q.evidence, 5)
				m.RecallAt10 += RecallAt(ids, q.evidence, 10)
				m.RecallAt25 += RecallAt(ids, q.evidence, 25)
				m.RecallAt50 += RecallAt(ids, q.evidence, 50)
				m.N++
			}
			done++
			if opts.Progress != nil {
				opts.Progress(done, total)
			}
		}
		mr := &LoCoMoMode{Overall: overall.mean(), ByCategory: map[string]LoCoMoMetrics{}}
		for c, m := range acc {
			mr.ByCategory[c] = m.mean()
		}
		rep.Modes[mode] = mr
	}
	return rep, nil
}

func (m LoCoMoMetrics) mean() LoCoMoMetrics {
	if m.N == 0 {
		return m
	}
	n := float64(m.N)
	return LoCoMoMetrics{m.RecallAt5 / n, m.RecallAt10 / n, m.RecallAt25 / n, m.RecallAt50 / n, m.N}
}

// locomoCategoryNames are the usual names of LoCoMo's question categories.
var locomoCategoryNames = map[string]string{"1": "multi-hop", "2": "temporal", "3": "open-domain",
	"4": "single-hop", "5": "adversarial"}

// WriteTable prints recall@5/10/25/50 per category and overall, the modes
// side by side.
func (r *LoCoMoReport) WriteTable(w io.Writer) error {
	ew := &errWriter{w: w}
	ew.printf("LoCoMo: %d conversations, %d turns, %d questions (%d without evidence skipped, %d evidence ids unresolved); top 50, floors and MMR off\n\n",
		r.Conversations, r.Turns, r.Questions, r.Skipped, r.Unresolved)
	ew.printf("%-18s %5s", "", "")
	for _, m := range ModeNames {
		ew.printf(" | %-27s", m)
	}
	ew.printf("\n%-18s %5s", "category", "n")
	for range ModeNames {
		ew.printf(" | %6s %6s %6s %6s", "R@5", "R@10", "R@25", "R@50")
	}
	ew.printf("\n")
	cats := map[string]bool{}
	for _, m := range r.Modes {
		for c := range m.ByCategory {
			cats[c] = true
		}
	}
	var names []string
	for c := range cats {
		names = append(names, c)
	}
	sort.Strings(names)
	row := func(label string, get func(*LoCoMoMode) LoCoMoMetrics) {
		n := 0
		for _, m := range ModeNames {
			if mr := r.Modes[m]; mr != nil {
				n = max(n, get(mr).N)
			}
		}
		ew.printf("%-18s %5d", label, n)
		for _, m := range ModeNames {
			mr := r.Modes[m]
			if mr == nil {
				ew.printf(" | %27s", "")
				continue
			}
			x := get(mr)
			ew.printf(" | %6.3f %6.3f %6.3f %6.3f", x.RecallAt5, x.RecallAt10, x.RecallAt25, x.RecallAt50)
		}
		ew.printf("\n")
	}
	for _, c := range names {
		label := c
		if n, ok := locomoCategoryNames[c]; ok {
			label = c + " " + n
		}
		row(label, func(m *LoCoMoMode) LoCoMoMetrics { return m.ByCategory[c] })
	}
	row("overall", func(m *LoCoMoMode) LoCoMoMetrics { return m.Overall })
	ew.printf("(DRAGON dense retriever, LoCoMo paper, dialog level: R@5 .567, R@10 .662, R@25 .767, R@50 .827)\n")
	return ew.err
}
