package daemon

import (
	"context"
	"errors"
	"fmt"

	"github.com/memtray/memtray/backend/feedback"
	"github.com/memtray/memtray/backend/memory"
	"github.com/memtray/memtray/backend/store"
)

// openFeedback builds the feedback service (reinforce, rate, snooze, pin)
// over the store, announcing each change on the live feed.
func (d *Daemon) openFeedback() {
	d.feedback = feedback.New(feedback.Options{Store: d.store, Clock: d.clock, Logger: d.log, Publish: d.publishMemory})
}

// Feedback is the feedback service: reinforce, rate, snooze and pin.
func (d *Daemon) Feedback() *feedback.Service { return d.feedback }

// Remember stores a memory stated on purpose (MCP memory_store) through the
// write pipeline's redaction, chunking and dedup; the Decision says stored,
// updated, merged or skipped-duplicate. It joins the decision log.
func (d *Daemon) Remember(ctx context.Context, m memory.Memory) (memory.Decision, error) {
	if m.Source == "" {
		m.Source = memory.SourceMCP
	}
	dec, err := d.pipeline.Remember(ctx, m)
	if err != nil {
		return dec, d.indexLag(err)
	}
	d.decisions.add(dec, memory.Exchange{Assistant: m.Text, Project: m.Project, Source: m.Source})
	return dec, nil
}

// IngestDocument stores a document as source memories "ingest:<name>".
func (d *Daemon) IngestDocument(ctx context.Context, name, project, text string) (memory.Decision, error) {
	if !memory.ValidUTF8(text) || len(text) > maxDocumentBytes {
		return memory.Decision{}, fmt.Errorf("%w: at most %d bytes of UTF-8 text", memory.ErrInvalid, maxDocumentBytes)
	}
	dec, err := d.pipeline.Document(ctx, name, project, text)
	if err != nil {
		return dec, d.indexLag(err)
	}
	d.decisions.add(dec, memory.Exchange{Assistant: text, Project: project, Source: "ingest:" + name})
	return dec, nil
}

const maxDocumentBytes = 1 << 20

// update changes one memory; a lagging text index is not a failure.
func (d *Daemon) update(ctx context.Context, id string, fn func(*memory.Memory) error) (memory.Memory, error) {
	m, err := d.store.Update(ctx, id, fn)
	if errors.Is(err, store.ErrIndexPending) {
		d.log.Warn("text index lags behind the records; it catches up at the next write or start", "err", err)
		err = nil
	}
	m.Embedding = nil
	return m, err
}
