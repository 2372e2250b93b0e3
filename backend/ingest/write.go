package ingest

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/memtray/memtray/backend/embed"
	"github.com/memtray/memtray/backend/memory"
)

// WriteRequest is one memory written on purpose, its text given by the
// caller: an API or CLI add, a UI edit, an item of the Claude Code
// importer.
type WriteRequest struct {
	// Memory is the record to store. Its text is redacted before anything
	// else sees it; an empty kind is guessed from the text, an empty type
	// follows the kind, an empty source is "capture", a zero importance is
	// 0.5. A kind given without a kind origin is "given" for a new memory.
	// Every other field (pinned, counters, timestamps, links) is stored as
	// given; the id, content hash, embedding and supersession links are
	// the store's and the pipeline's.
	Memory memory.Memory
	// Replaces, when set, is the id of the live memory the text supersedes
	// (the old version stays as history). The same text held by another
	// live memory stops it: the Decision is skipped-duplicate naming that
	// memory, which is not reinforced.
	Replaces string
	// Exact limits dedup to the same text held by a live memory: no near
	// duplicate reinforces or is superseded, and an older, superseded
	// version holding the text does not count (an imported item is one
	// memory of its own source). Without it, dedup is the pipeline's, as
	// for a captured reply.
	Exact bool
}

// WriteResult is what Write did.
type WriteResult struct {
	// Decision says stored, updated, merged or skipped-duplicate, with the
	// memory's id.
	Decision memory.Decision
	// Memory is the memory stored, the new version, or the stored memory
	// the text duplicates.
	Memory memory.Memory
	// Redactions counts the secrets masked in the text.
	Redactions int
}

// Write stores one memory whose text the caller gives, through the stages
// that apply to it: redact, validate, embed, then (under the pipeline's
// write lock, like every memory the pipeline stores) dedup or supersede,
// and store. It is the one writer for memories that do not come from a
// conversation; when the store switched models while it ran
// (memory.ErrModelMismatch) the text is embedded again with the new model
// and placed again (placeMemory). An error wrapping store.ErrIndexPending
// means the memory is stored and the text index lags.
func (p *Pipeline) Write(ctx context.Context, req WriteRequest) (WriteResult, error) {
	m := req.Memory
	start := time.Now()
	text, n := redactText(m.Text)
	m.Text = text
	redacted := time.Since(start)
	if err := m.Validate(); err != nil {
		return WriteResult{}, err
	}
	ex := memory.Exchange{Assistant: m.Text, Project: m.Project, Source: m.Source}
	if err := Validate(ex); err != nil {
		return WriteResult{}, err
	}
	r := p.newRun(ex, true, "")
	r.given, r.whole, r.exact, r.replaces = &m, true, req.Exact, req.Replaces
	r.kind, r.kindOrigin = m.Kind, m.KindOrigin
	if m.Kind != "" && m.KindOrigin == "" && req.Replaces == "" {
		r.kindOrigin = memory.KindGiven
	}
	r.dec.Preview = preview(m.Text)
	r.dec.Chunks = 1
	r.score("redactions", float64(n))
	r.dec.Timings = append(r.dec.Timings, memory.StageTiming{Stage: StageRedact, Duration: redacted})

	start = time.Now()
	emb := embed.Snapshot(p.emb)
	vecs, err := emb.Embed(ctx, []string{m.Text})
	if err != nil {
		return WriteResult{}, fmt.Errorf("ingest: write: embed: %w", err)
	}
	if len(vecs) != 1 {
		return WriteResult{}, errors.New("ingest: write: the embedder returned no vector")
	}
	r.model = emb.Model()
	r.dec.Timings = append(r.dec.Timings, memory.StageTiming{Stage: StageEmbed, Duration: time.Since(start)})

	start = time.Now()
	select {
	case p.wmu <- struct{}{}:
	case <-ctx.Done():
		return WriteResult{}, ctx.Err()
	}
	out, stored, why, err := p.placeMemory(ctx, r, m.Text, vecs[0])
	<-p.wmu
	r.dec.Timings = append(r.dec.Timings, memory.StageTiming{Stage: StageDedup, Duration: time.Since(start)})
	if stored.ID != "" {
		r.dec.MemoryIDs = []string{stored.ID}
	}
	r.dec.Verdict, r.dec.Stage, r.dec.Reason = verdicts[out], StageDedup, why
	if out == outCreated {
		r.dec.Stage = StageStore
	}
	res := WriteResult{Decision: r.dec, Memory: stored, Redactions: n}
	if err != nil {
		return res, fmt.Errorf("ingest: write: %w", err)
	}
	return res, nil
}

// Redact masks the secrets of text as the redact stage does and says
// whether it found any: for a writer that must compare or rewrite a text
// before it is written (an edit's "same text" check, the records of an
// export file).
func Redact(text string) (string, bool) {
	out, n := redactText(text)
	return out, n > 0
}

// verdicts names what dedup did with a text.
var verdicts = map[outcome]memory.Verdict{outCreated: memory.VerdictStored, outUpdated: memory.VerdictUpdated,
	outMerged: memory.VerdictMerged, outDuplicate: memory.VerdictDuplicate}
