package daemon

import (
	"context"
	"time"

	"github.com/memtray/memtray/backend/calib"
	"github.com/memtray/memtray/backend/memory"
)

// calibTimeout bounds calibrating one model: embedding the calibration
// set (about 200 short texts) takes well under a second with the built-in
// model and seconds with a local server.
const calibTimeout = time.Minute

// calibrate makes sure the store holds a calibration of the embedder's
// model and fills the similarity thresholds d.cfg leaves unset (0) with
// it, before the components that use them are built. A model that cannot
// be calibrated keeps the values memtray used before calibration (see
// calib.Apply); the next start tries again.
func (d *Daemon) calibrate(ctx context.Context) {
	r := d.calibration(ctx, d.emb)
	vals := calib.Apply(&d.cfg, r, d.emb.Model())
	d.thresholds.Store(&vals)
}

// calibration returns the store's calibration of emb's model, calibrating
// it first when the store has none (or a stale one); nil when that fails.
func (d *Daemon) calibration(ctx context.Context, emb memory.Embedder) *calib.Result {
	cctx, cancel := context.WithTimeout(ctx, calibTimeout)
	defer cancel()
	r, made, err := calib.Ensure(cctx, d.store, emb, d.clock.Now())
	if err != nil {
		d.log.Warn("similarity thresholds not calibrated to the embedding model: the built-in model's apply", "model", emb.Model(), "err", err)
		return nil
	}
	if made {
		args := []any{"model", r.Model}
		for _, rule := range calib.Rules {
			args = append(args, rule.Name, r.Thresholds[rule.Name])
		}
		d.log.Info("similarity thresholds calibrated to the embedding model", args...)
	}
	return r
}

// recalibrate applies model's calibration r (nil: none) to the running
// components after a switch of embedding model, where the config leaves
// a threshold unset.
func (d *Daemon) recalibrate(r *calib.Result, model string) {
	cfg := *d.live.Load()
	vals := calib.Apply(&cfg, r, model)
	d.thresholds.Store(&vals)
	d.steward.SetMergeSimilarity(cfg.Steward.MergeSimilarity)
	if d.pipeline != nil {
		d.pipeline.SetSimilarity(cfg.Ingest.DuplicateSimilarity, cfg.Ingest.SourceSimilarity)
	}
	d.search.SetVectorFloor(cfg.Search.VectorFloor)
	if c := d.recaller.Skills(); c != nil {
		c.SetFloor(cfg.Recall.SkillFloor)
	}
}

// Thresholds are the similarity thresholds in effect and where each came
// from (calibrated, config, default).
func (d *Daemon) Thresholds() []calib.Value {
	if p := d.thresholds.Load(); p != nil {
		return append([]calib.Value(nil), *p...)
	}
	return nil
}
