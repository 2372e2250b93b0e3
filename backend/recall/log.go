package recall

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/memtray/memtray/backend/memory"
	"github.com/memtray/memtray/backend/search"
	"github.com/memtray/memtray/backend/store"
)

// Bounds of the log's reads.
const (
	// DefaultStatsDays is how many days RecallLogStats covers when asked
	// for 0; MaxStatsDays the most it covers (the log keeps 30 days).
	DefaultStatsDays = 14
	MaxStatsDays     = 30
	// TopMemories is how many memories RecallLogStats ranks.
	TopMemories = 10
	// previewRunes bounds a memory's preview in the log.
	previewRunes = 200
)

// Feedback ops the log records (feedback.OpReinforced, OpRated).
const (
	OpReinforced = "reinforced"
	OpRated      = "rated"
)

// log queues a recall that searched for the log (never blocking: the
// writer cuts the previews and writes, off the hook's path). Recall has
// masked the prompt's secrets already.
func (s *Service) log(req search.RecallRequest, out search.Recalled) {
	if s.w == nil || out.Skipped == search.SkippedToolLoop || out.Skipped == search.SkippedRepeat {
		return
	}
	// The best MaxWithheld, also of a request that asked for every one
	// (RecallRequest.AllWithheld: they come first, in the same order).
	withheld := out.Withheld[:min(len(out.Withheld), search.MaxWithheld)]
	p := pending{at: s.o.Clock.Now(), req: req, skipped: out.Skipped, withheld: withheld,
		given: make([]store.RecallMemory, len(out.Hits))}
	for i, h := range out.Hits {
		p.given[i] = store.RecallMemory{ID: h.Memory.ID, Score: h.Score, Kind: string(h.Memory.Kind), Preview: h.Memory.Text}
	}
	s.w.add(p)
}

// entry is the log's entry of p (its prompt redacted by Recall): the
// previews cut, those of the withheld memories from mems.
func entry(p pending, mems map[string]memoryText) store.RecallEntry {
	req := p.req
	e := store.RecallEntry{At: p.at, SessionID: req.SessionID, Event: req.Event, Project: req.Project, Agent: req.Agent,
		Prompt: clipBytes(req.Prompt, store.MaxRecallPrompt), Skipped: clipBytes(p.skipped, store.MaxRecallPrompt), Given: p.given}
	if e.Event == "" {
		e.Event = search.EventPrompt
	}
	for i := range e.Given {
		e.Given[i].Preview = preview(e.Given[i].Preview)
	}
	for _, w := range p.withheld {
		m := mems[w.ID]
		e.Withheld = append(e.Withheld, store.RecallMemory{ID: w.ID, Score: w.Score, Kind: m.kind, Preview: preview(m.text), Reason: w.Reason})
	}
	return e
}

// Feedback records, in the recall that gave each memory of ids last,
// what the agent or the user said of it: op is OpReinforced (score +1)
// or OpRated (+1 or -1). Memories no logged recall gave are ignored.
// The recalls still waiting for the log are written first, so feedback
// on a memory just given finds its recall.
func (s *Service) Feedback(ctx context.Context, op string, ids []string, score int) error {
	if s.w == nil {
		return nil
	}
	if op != OpReinforced && op != OpRated {
		return fmt.Errorf("%w: feedback op %q", memory.ErrInvalid, op)
	}
	serr := s.w.sync(ctx)
	_, err := s.o.Log.AddRecallFeedback(ctx, ids, store.RecallFeedback{Op: op, Score: score, At: s.o.Clock.Now()})
	return errors.Join(serr, err)
}

// ClearRecallLog deletes every logged recall, those waiting to be
// written too, and returns how many it deleted.
func (s *Service) ClearRecallLog(ctx context.Context) (int, error) {
	if s.w == nil {
		return 0, nil
	}
	n := s.w.discard()
	if err := s.w.sync(ctx); err != nil && ctx.Err() != nil {
		return n, fmt.Errorf("clear the recall log: %w", err)
	}
	m, err := s.o.Log.ClearRecallLog(ctx)
	return n + m, err
}

// RecallLog returns the logged recalls q selects, newest first.
// The recalls still waiting for the log are written first (a failure to
// write them is the writer's to log).
func (s *Service) RecallLog(ctx context.Context, q store.RecallLogQuery) ([]store.RecallEntry, error) {
	if s.w == nil {
		return []store.RecallEntry{}, nil
	}
	_ = s.w.sync(ctx)
	return s.o.Log.RecallLog(ctx, q)
}

// RecallLogStats summarises the last days of the log (today included;
// 0: DefaultStatsDays): recalls per day, those that gave memories and
// those that gave none, and the memories given most with how often they
// helped (rated +1 or reinforced for the recall that gave them), and how
// many recalls since the service started the log lost (Dropped, Failed).
func (s *Service) RecallLogStats(ctx context.Context, days int) (store.RecallLogStats, error) {
	if days == 0 {
		days = DefaultStatsDays
	}
	if days < 1 || days > MaxStatsDays {
		return store.RecallLogStats{}, fmt.Errorf("%w: days must be within 1..%d", memory.ErrInvalid, MaxStatsDays)
	}
	loc := s.o.Location
	now := s.o.Clock.Now().In(loc)
	start := time.Date(now.Year(), now.Month(), now.Day()-days+1, 0, 0, 0, 0, loc)
	out := store.RecallLogStats{Days: make([]store.RecallDay, days), Top: []store.RecallTop{}}
	index := map[string]int{}
	for i := range out.Days {
		d := time.Date(start.Year(), start.Month(), start.Day()+i, 0, 0, 0, 0, loc).Format(time.DateOnly)
		out.Days[i].Date, index[d] = d, i
	}
	top := map[string]*store.RecallTop{}
	if s.w != nil {
		_ = s.w.sync(ctx)
		out.Dropped, out.Failed = s.w.counts()
		err := s.o.Log.EachRecall(ctx, start, func(e store.RecallEntry) error {
			i, ok := index[e.At.In(loc).Format(time.DateOnly)]
			if !ok {
				return nil // a clock set back: a day after today
			}
			d := &out.Days[i]
			d.Recalls++
			d.Memories += len(e.Given)
			if len(e.Given) > 0 {
				d.Gave++
			} else {
				d.Empty++
			}
			for _, g := range e.Given {
				t := top[g.ID]
				if t == nil {
					t = &store.RecallTop{ID: g.ID}
					top[g.ID] = t
				}
				t.Kind, t.Preview = g.Kind, g.Preview // the newest
				t.Given++
				helped, misled := verdict(e.Feedback, g.ID)
				if helped {
					t.Helped++
				}
				if misled {
					t.Misled++
				}
			}
			return nil
		})
		if err != nil {
			return store.RecallLogStats{}, fmt.Errorf("recall statistics: %w", err)
		}
	}
	for _, d := range out.Days {
		out.Recalls, out.Gave, out.Empty = out.Recalls+d.Recalls, out.Gave+d.Gave, out.Empty+d.Empty
	}
	for _, t := range top {
		t.HitRate = float64(t.Helped) / float64(t.Given)
		out.Top = append(out.Top, *t)
	}
	sort.Slice(out.Top, func(i, j int) bool {
		a, b := out.Top[i], out.Top[j]
		if a.Given != b.Given {
			return a.Given > b.Given
		}
		return a.ID < b.ID
	})
	out.Top = out.Top[:min(len(out.Top), TopMemories)]
	return out, nil
}

// verdict says whether the feedback of one recall on memory id says it
// helped (rated +1 or reinforced) or misled (rated -1); the last rating
// counts.
func verdict(fb []store.RecallFeedback, id string) (helped, misled bool) {
	for _, f := range fb {
		if f.ID == id {
			helped, misled = f.Score > 0, f.Score < 0
		}
	}
	return helped, misled
}

// preview is the start of a memory's text, on one line.
func preview(text string) string {
	text = strings.Join(strings.Fields(text), " ")
	if r := []rune(text); len(r) > previewRunes {
		text = string(r[:previewRunes-1]) + "…"
	}
	return clipBytes(text, store.MaxRecallPreview)
}

// clipBytes cuts s to at most n bytes on a rune boundary.
func clipBytes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	s = s[:n]
	for !utf8.ValidString(s) {
		s = s[:len(s)-1]
	}
	return s
}
