package daemon

import (
	"context"

	"github.com/memtray/memtray/backend/feedback"
	"github.com/memtray/memtray/backend/memories"
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
