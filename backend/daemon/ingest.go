package daemon

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/url"
	"path/filepath"
	"strings"
	"sync"

	"github.com/memtray/memtray/backend/httpapi"
	"github.com/memtray/memtray/backend/ingest"
	"github.com/memtray/memtray/backend/judge"
	"github.com/memtray/memtray/backend/memory"
	"github.com/memtray/memtray/backend/noise"
	"github.com/memtray/memtray/backend/redact"
)

// NoiseBufferFile is the noise scorer's rejection buffer, inside the data dir.
const NoiseBufferFile = "noise/rejections.jsonl"

// openPipeline builds the content scorer, the judge and the write
// pipeline. Neither a scorer that cannot embed its prototypes (the
// embedder is away) nor a misconfigured judge stops the daemon: the
// pipeline runs without them and the log says why.
func (d *Daemon) openPipeline(ctx context.Context) error {
	cfg := d.cfg.Ingest
	sc, err := noise.New(ctx, noise.Options{Embedder: d.emb, BufferPath: filepath.Join(d.cfg.DataDir, NoiseBufferFile),
		BufferSize: cfg.NoiseBufferSize, Recent: cfg.NoiseRecent, RebuildEvery: cfg.NoiseRebuildEvery,
		Threshold: cfg.ContentThreshold, Clock: d.clock})
	if err != nil {
		d.log.Warn("content score gate off", "err", err)
		sc = nil
	}
	jcfg := d.cfg.Judge
	if jcfg.Provider == "ollama" && jcfg.OllamaHost == "" {
		jcfg.OllamaHost = d.cfg.Embedder.OllamaHost
	}
	if jcfg.Provider == "anthropic" && pointsAt(jcfg.AnthropicURL, d.cfg.Listen) {
		// The judge's own calls must not pass the capture proxy: they would
		// be captured and judged in turn.
		d.log.Warn("judge.anthropic_url is memtray's own proxy; the judge calls the capture upstream directly",
			"anthropic_url", jcfg.AnthropicURL, "upstream", d.cfg.Capture.AnthropicUpstream)
		jcfg.AnthropicURL = d.cfg.Capture.AnthropicUpstream
	}
	j, err := judge.New(jcfg, d.clock)
	if err != nil {
		d.log.Warn("judge off", "provider", jcfg.Provider, "err", err)
		j = nil
	}
	if j != nil {
		// The judge (a *judge.Budgeted) is also a memory.TurnJudge: ProcessTurn
		// asks it once per user turn, the old per-exchange path per exchange.
		_, turns := j.(memory.TurnJudge)
		d.log.Info("judge on", "judge", j.Name(), "whole_turns", turns, "max_per_hour", jcfg.MaxPerHour, "max_per_day", jcfg.MaxPerDay)
	}
	p, err := ingest.New(ingest.Options{Config: cfg, Embedder: d.emb, Store: d.store, Scorer: sc, Judge: j, Clock: d.clock})
	if err != nil {
		return err
	}
	d.pipeline, d.judge = p, j
	d.decisions = newDecisionLog(cfg.DecisionLog)
	d.decisions.publish = d.publishDecision
	return nil
}

// Pipeline is the write pipeline.
func (d *Daemon) Pipeline() *ingest.Pipeline { return d.pipeline }

// Ingest runs exchanges through the write pipeline and stores documents,
// one Decision each, in order. An invalid exchange fails the request before
// anything is processed.
func (d *Daemon) Ingest(ctx context.Context, req httpapi.IngestRequest) (httpapi.IngestResponse, error) {
	if n := len(req.Exchanges) + len(req.Documents); n > httpapi.MaxIngestItems {
		return httpapi.IngestResponse{}, fmt.Errorf("%w: %d items, at most %d", memory.ErrInvalid, n, httpapi.MaxIngestItems)
	}
	for i, ex := range req.Exchanges {
		if err := ingest.Validate(ex); err != nil {
			return httpapi.IngestResponse{}, fmt.Errorf("exchange %d: %w", i, err)
		}
	}
	for i, doc := range req.Documents {
		if doc.Name == "" || !memory.ValidUTF8(doc.Text) || len(doc.Text) > ingest.MaxTextBytes {
			return httpapi.IngestResponse{}, fmt.Errorf("document %d: %w: a name and at most 1 MiB of UTF-8 text are required", i, memory.ErrInvalid)
		}
	}
	// The exchanges of a request are all there is of their sessions (a
	// transcript is complete): a headless session is decided by the most
	// user turns it reaches in the request.
	reach := map[string]int{}
	for _, ex := range req.Exchanges {
		if ex.Headless && ex.SessionID != "" {
			reach[ex.SessionID] = max(reach[ex.SessionID], ex.UserTurns)
		}
	}
	// The unit of knowledge is the user turn: a request's exchanges are cut
	// into turns, and each turn is distilled knowing what its session said
	// after it (a statement a later turn corrects is not stored).
	var resp httpapi.IngestResponse
	turns := ingest.GroupTurns(req.Exchanges)
	for i, t := range turns {
		dec, _, err := d.pipeline.ProcessTurn(ctx, t, ingest.LaterTexts(turns[i+1:], t.SessionID), ingest.SessionState{UserTurns: reach[t.SessionID], Ended: true})
		if err != nil {
			return resp, d.indexLag(err)
		}
		d.decisions.add(dec, t.Exchange())
		resp.Decisions = append(resp.Decisions, dec)
	}
	for _, doc := range req.Documents {
		dec, err := d.pipeline.Document(ctx, doc.Name, doc.Project, doc.Text)
		if err != nil {
			return resp, d.indexLag(err)
		}
		d.decisions.add(dec, memory.Exchange{Project: doc.Project, Source: "ingest:" + doc.Name})
		resp.Decisions = append(resp.Decisions, dec)
	}
	return resp, nil
}

// Decisions lists the newest decisions first.
func (d *Daemon) Decisions(_ context.Context, limit int) ([]httpapi.DecisionEntry, error) {
	return d.decisions.newest(limit), nil
}

// Keep stores the rejected exchange of a logged decision.
func (d *Daemon) Keep(ctx context.Context, decisionID string) (memory.Decision, error) {
	e, ok := d.decisions.find(decisionID)
	if !ok {
		return memory.Decision{}, fmt.Errorf("decision %q is not in the recent log: %w", decisionID, memory.ErrNotFound)
	}
	if e.Verdict != memory.VerdictRejected {
		return memory.Decision{}, fmt.Errorf("decision %q was %s, not rejected: %w", decisionID, e.Verdict, memory.ErrInvalid)
	}
	ex := memory.Exchange{SessionID: e.SessionID, Turn: e.Turn, User: e.User, Assistant: e.Assistant,
		Project: e.Project, Source: e.Source}
	dec, err := d.pipeline.Keep(ctx, ex)
	if err != nil {
		return dec, d.indexLag(err)
	}
	d.decisions.add(dec, ex)
	return dec, nil
}

// MarkNoise deletes a memory and adds its text to the noise model.
func (d *Daemon) MarkNoise(ctx context.Context, id string) error {
	m, err := d.store.Get(ctx, id)
	if err != nil {
		return err
	}
	if sc := d.pipeline.Scorer(); sc != nil {
		if err := sc.Learn(ctx, m.Text, noise.SourceUser); err != nil {
			return fmt.Errorf("mark noise: %w", err)
		}
	}
	if err := d.indexLag(d.store.Delete(ctx, id)); err != nil {
		return err
	}
	d.publishMemory(httpapi.MemoryDeleted, []string{id}, nil)
	return nil
}

// Noise describes the content scorer and the judge.
func (d *Daemon) Noise(_ context.Context) (httpapi.NoiseState, error) {
	var st httpapi.NoiseState
	if sc := d.pipeline.Scorer(); sc != nil {
		b, err := json.Marshal(sc.State())
		if err != nil {
			return st, err
		}
		st.Scorer = b
	}
	if d.judge != nil {
		st.Judge = d.judge.Name()
		if b, ok := d.judge.(*judge.Budgeted); ok {
			raw, err := json.Marshal(b.Stats())
			if err != nil {
				return st, err
			}
			st.JudgeStats = raw
		}
	}
	return st, nil
}

// pipelineStats summarises the write pipeline for Stats.
func (d *Daemon) pipelineStats() httpapi.PipelineStats {
	ps := httpapi.PipelineStats{Decisions: map[string]int{}}
	if sc := d.pipeline.Scorer(); sc != nil {
		ps.ContentGate, ps.NoiseBuffer = true, sc.State().BufferLen
	}
	if d.judge != nil {
		ps.Judge = d.judge.Name()
		if b, ok := d.judge.(*judge.Budgeted); ok {
			st := b.Stats()
			ps.JudgeCallsHr, ps.JudgeCallsDay = st.CallsLastHour, st.CallsLastDay
			ps.JudgeMaxHr, ps.JudgeMaxDay = st.MaxPerHour, st.MaxPerDay
			ps.JudgeTokens = st.InputTokens + st.OutputTokens
		}
	}
	for _, e := range d.decisions.newest(d.cfg.Ingest.DecisionLog) {
		ps.Decisions[string(e.Verdict)]++
	}
	return ps
}

// decisionLog keeps the newest decisions with their (redacted) exchanges,
// for the feed and for "keep".
type decisionLog struct {
	mu      sync.Mutex
	size    int
	entries []httpapi.DecisionEntry // ring, oldest at next once full
	next    int
	// publish, if set, announces each added entry (the live feed).
	publish func(httpapi.DecisionEntry)
}

func newDecisionLog(size int) *decisionLog {
	if size < 1 {
		size = 1
	}
	return &decisionLog{size: size}
}

// add records dec with the redacted texts of ex.
func (l *decisionLog) add(dec memory.Decision, ex memory.Exchange) {
	user, _ := redact.Redact(ex.User)
	asst, _ := redact.Redact(ex.Assistant)
	e := httpapi.DecisionEntry{Decision: dec, User: user, Assistant: asst, Project: ex.Project, Source: ex.Source}
	l.mu.Lock()
	if len(l.entries) < l.size {
		l.entries = append(l.entries, e)
	} else {
		l.entries[l.next] = e
		l.next = (l.next + 1) % l.size
	}
	l.mu.Unlock()
	if l.publish != nil {
		l.publish(e)
	}
}

func (l *decisionLog) newest(limit int) []httpapi.DecisionEntry {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := len(l.entries)
	out := make([]httpapi.DecisionEntry, 0, min(limit, n))
	for i := 0; i < n && len(out) < limit; i++ {
		// next is the oldest entry once the ring is full, and 0 before.
		out = append(out, l.entries[(l.next-1-i+2*n)%n])
	}
	return out
}

func (l *decisionLog) find(id string) (httpapi.DecisionEntry, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, e := range l.entries {
		if e.ID == id {
			return e, true
		}
	}
	return httpapi.DecisionEntry{}, false
}

// pointsAt reports whether the URL raw addresses the loopback listener listen.
func pointsAt(raw, listen string) bool {
	u, err := url.Parse(raw)
	if err != nil {
		return false
	}
	_, port, err := net.SplitHostPort(listen)
	if err != nil || u.Port() != port {
		return false
	}
	switch strings.ToLower(u.Hostname()) {
	case "localhost", "127.0.0.1", "::1":
		return true
	}
	ip := net.ParseIP(u.Hostname())
	return ip != nil && ip.IsLoopback()
}
