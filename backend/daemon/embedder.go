package daemon

import (
	"github.com/memtray/memtray/backend/config"
	"github.com/memtray/memtray/backend/embed"
	"github.com/memtray/memtray/backend/embedders"
	"github.com/memtray/memtray/backend/memory"
	"github.com/memtray/memtray/backend/noise"
)

// setEmbedder makes e the embedder every component uses (at start).
func (d *Daemon) setEmbedder(e memory.Embedder, c embed.Choice) {
	d.emb = embed.NewSwappable(e)
	d.choice.Store(&c)
}

// openEmbedders builds the embedders service (the embedder's information,
// pulls, re-embeddings, the thresholds in effect) over the swappable
// embedder, the store and the jobs; the live config, the content scorer
// and the calibration are read when used.
func (d *Daemon) openEmbedders() error {
	var err error
	d.embedders, err = embedders.New(embedders.Options{Embedder: d.emb, Store: d.store, Jobs: d.jobs, Logger: d.log,
		Live:      func() config.Embedder { return d.settings.Live().Embedder },
		Choice:    d.EmbedderChoice,
		SetChoice: func(c embed.Choice) { d.choice.Store(&c) },
		Degraded:  d.embedderDegraded,
		Scorer:    func() *noise.Scorer { return d.pipeline.Scorer() },
		Calibrate: d.calibrationOrWarn, Recalibrate: d.recalibrate,
		Update: func(change func(*config.Config) error, filePatch map[string]any) error {
			return d.settings.Update(change, filePatch)
		}})
	return err
}
