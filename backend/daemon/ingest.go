package daemon

import (
	"context"
	"net"
	"net/url"
	"path/filepath"
	"strings"

	"github.com/memtray/memtray/backend/feed"
	"github.com/memtray/memtray/backend/httpapi"
	"github.com/memtray/memtray/backend/ingest"
	"github.com/memtray/memtray/backend/judge"
	"github.com/memtray/memtray/backend/memory"
	"github.com/memtray/memtray/backend/noise"
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
	// The feed's decisions and their counters survive restarts (in the store).
	d.decisions, err = feed.OpenDecisionLog(feed.LogOptions{Size: cfg.DecisionLog, Store: d.store, Publish: d.publishDecision,
		Failed: func(err error) { d.log.Warn("the feed's decision log", "err", err) }})
	return err
}

// Feed is the feed service: ingest, the decision log, keep, mark noise
// and the noise model.
func (d *Daemon) Feed() *feed.Service { return d.feed }

// Pipeline is the write pipeline.
func (d *Daemon) Pipeline() *ingest.Pipeline { return d.pipeline }

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
	for _, e := range d.decisions.Newest(d.cfg.Ingest.DecisionLog) {
		ps.Decisions[string(e.Verdict)]++
	}
	return ps
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
