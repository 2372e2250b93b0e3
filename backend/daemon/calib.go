package daemon

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/memtray/memtray/backend/calib"
	"github.com/memtray/memtray/backend/embed"
	"github.com/memtray/memtray/backend/memory"
)

// calibTimeout bounds calibrating one model: embedding the calibration
// set (about 200 short texts) takes well under a second with the built-in
// model and seconds with a local server.
const calibTimeout = time.Minute

// calibRetry is how often a daemon whose model could not be calibrated at
// open because its server did not answer tries again (embed.Reconnecting
// retries the server every 15 s).
var calibRetry = 30 * time.Second

// calibState is the daemon's side of calibration (the thresholds in
// effect are the embedders service's).
type calibState struct {
	// mu serialises applying a calibration to the components.
	mu sync.Mutex
	// retry is the model whose calibration failed at open because its
	// server did not answer ("" when none did); set during open only.
	retry string
}

// calibrate makes sure the store holds a calibration of the embedder's
// model and fills the similarity thresholds d.cfg leaves unset (0) with
// it, before the components that use them are built. A model that cannot
// be calibrated keeps the values memtray used before calibration (see
// calib.Apply); one whose server does not answer is tried again after
// open (retryCalibration).
func (d *Daemon) calibrate(ctx context.Context) {
	model := d.emb.Model()
	r, err := d.calibration(ctx, d.emb)
	if err != nil {
		d.log.Warn("similarity thresholds not calibrated to the embedding model: the built-in model's apply", "model", model, "err", err)
		if errors.Is(err, memory.ErrUnavailable) {
			d.cal.retry = model
		}
	}
	d.embedders.SetThresholds(calib.Apply(&d.cfg, r, model))
}

// calibration returns the store's calibration of emb's model, calibrating
// it first when the store has none (or a stale one).
func (d *Daemon) calibration(ctx context.Context, emb memory.Embedder) (*calib.Result, error) {
	cctx, cancel := context.WithTimeout(ctx, calibTimeout)
	defer cancel()
	r, made, err := calib.Ensure(cctx, d.store, emb, d.clock.Now())
	if err != nil {
		return nil, err
	}
	if made {
		args := []any{"model", r.Model}
		for _, rule := range calib.Rules {
			args = append(args, rule.Name, r.Thresholds[rule.Name])
		}
		d.log.Info("similarity thresholds calibrated to the embedding model", args...)
	}
	return r, nil
}

// calibrationOrWarn is calibration, logging a failure; nil then.
func (d *Daemon) calibrationOrWarn(ctx context.Context, emb memory.Embedder) *calib.Result {
	r, err := d.calibration(ctx, emb)
	if err != nil {
		d.log.Warn("similarity thresholds not calibrated to the embedding model: the built-in model's apply", "model", emb.Model(), "err", err)
	}
	return r
}

// retryCalibration, at the end of open, tries every calibRetry to
// calibrate a model whose server did not answer at open, until it
// succeeds, fails otherwise, the store switches models (the switch
// calibrates) or the daemon closes; a success applies at once.
func (d *Daemon) retryCalibration() {
	model := d.cal.retry
	if model == "" {
		return
	}
	d.retryEvery(calibRetry, func(ctx context.Context) bool {
		emb := embed.Snapshot(d.emb)
		if emb.Model() != model {
			return true
		}
		r, err := d.calibration(ctx, emb)
		switch {
		case err == nil:
			d.recalibrate(r, model)
			return true
		case !errors.Is(err, memory.ErrUnavailable):
			d.log.Warn("similarity thresholds not calibrated to the embedding model: the built-in model's apply", "model", model, "err", err)
			return true
		}
		return false
	})
}

// retryEvery calls try every interval, in a goroutine the daemon's close
// cancels and waits for, until try reports it is done (true) or the
// daemon closes: the shape of the retries of what failed at open.
func (d *Daemon) retryEvery(interval time.Duration, try func(ctx context.Context) (done bool)) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	d.closers.push(func() error { cancel(); <-done; return nil })
	go func() {
		defer close(done)
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			if try(ctx) {
				return
			}
		}
	}()
}

// recalibrate applies model's calibration r (nil: none) to the running
// components, where the config leaves a threshold unset: after a switch
// of embedding model, or when a model's server answered after open. It
// does nothing once the daemon embeds with another model.
func (d *Daemon) recalibrate(r *calib.Result, model string) {
	d.cal.mu.Lock()
	defer d.cal.mu.Unlock()
	if embed.Snapshot(d.emb).Model() != model {
		return
	}
	cfg := *d.settings.Live()
	d.embedders.SetThresholds(calib.Apply(&cfg, r, model))
	d.steward.SetMergeSimilarity(cfg.Steward.MergeSimilarity)
	if d.pipeline != nil {
		d.pipeline.SetSimilarity(cfg.Ingest.DuplicateSimilarity, cfg.Ingest.SourceSimilarity)
	}
	d.search.SetVectorFloor(cfg.Search.VectorFloor)
	if c := d.recaller.Skills(); c != nil {
		c.SetFloor(cfg.Recall.SkillFloor)
	}
}
