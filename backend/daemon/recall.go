package daemon

import (
	"context"
	"errors"
	"slices"

	"github.com/memtray/memtray/backend/feedback"
	"github.com/memtray/memtray/backend/ingest"
	"github.com/memtray/memtray/backend/memories"
	"github.com/memtray/memtray/backend/memory"
	"github.com/memtray/memtray/backend/recall"
)

// openFeedback builds the feedback service (reinforce, rate, snooze, pin)
// over the store, announcing each change on the live feed.
func (d *Daemon) openFeedback() {
	d.feedback = feedback.New(feedback.Options{Store: d.store, Clock: d.clock, Logger: d.log, Publish: d.publishMemory, IndexLag: d.indexLag,
		Observe: func(ctx context.Context, op string, ids []string, score int) {
			// The recall log notes it beside the recall that gave the memory.
			if err := d.recall.Feedback(ctx, op, ids, score); err != nil {
				d.log.Warn("recall log: feedback not recorded", "op", op, "err", err)
			}
		}})
}

// Feedback is the feedback service: reinforce, rate, snooze and pin.
func (d *Daemon) Feedback() *feedback.Service { return d.feedback }

// Memories is the memories service: add, search, list, edit, delete,
// history, export and import, and MCP's Remember and IngestDocument.
func (d *Daemon) Memories() *memories.Service { return d.memories }

// noteUse reinforces the memories the recall of t's prompt gave that t
// used (recall.Service.Used: once per recall and memory, so a turn read
// again or retried reinforces nothing more). Implicit feedback is a side
// of capture: its failure is logged, never the turn's.
func (d *Daemon) noteUse(ctx context.Context, t ingest.Turn) {
	ids, err := d.recall.Used(ctx, usedTurn(t))
	if err != nil {
		d.log.Warn("implicit feedback: the turn's use of its recalled memories not checked", "session", t.SessionID, "turn", t.Turn, "err", err)
	}
	for _, id := range ids {
		if _, err := d.feedback.ReinforceUsed(ctx, id); err != nil && !errors.Is(err, memory.ErrNotFound) {
			d.log.Warn("implicit feedback: a used memory not reinforced", "id", id, "err", err)
		}
	}
}

// usedTurn is what recall.Service.Used reads of t: the user's words, and
// what each model response read (the results of the calls before it) and
// then wrote (its text, its calls). A compaction summary is nobody's writing of the turn.
func usedTurn(t ingest.Turn) recall.Turn {
	out := recall.Turn{SessionID: t.SessionID}
	if len(t.User) > 0 {
		out.Prompt, out.UserText = t.User[0], slices.Clone(t.User[1:])
	}
	for _, a := range t.Answers {
		out.UserText = append(out.UserText, a.Text())
	}
	for _, st := range t.Steps {
		if st.Summary {
			continue
		}
		s := recall.TurnStep{Wrote: []string{st.Text}}
		for _, c := range st.Calls {
			s.Wrote = append(s.Wrote, c.Name+" "+c.Input)
		}
		for _, r := range st.Results {
			s.Read = append(s.Read, r.Content)
		}
		out.Steps = append(out.Steps, s)
	}
	return out
}
