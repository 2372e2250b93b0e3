package daemon

import (
	"context"
	"time"
)

// vectorRepairTimeout bounds one re-embedding of damaged vectors (at start
// and at each retry): an embedder that does not answer leaves them to the
// next retry.
const vectorRepairTimeout = 30 * time.Second

// vectorRepairRetry is how often a daemon whose embedder could not repair
// the damaged vectors at start tries again (embed.Reconnecting retries an
// embedder away at start every 15 s, and a call to one still away fails
// at once); a test shortens it.
var vectorRepairRetry = 30 * time.Second

// repairVectors re-embeds, with the daemon's embedder (of the store's
// model: Open checked), the few records whose stored vector Open found
// damaged, so they are found by meaning again without a full reindex.
// A failure is logged and marks the repair for retryVectorRepair; the
// store's warning stays meanwhile.
func (d *Daemon) repairVectors(ctx context.Context) {
	if _, err := d.repairVectorsOnce(ctx); err != nil {
		d.log.Warn("could not re-embed the memories whose vector is damaged; retrying while the daemon runs", "every", vectorRepairRetry, "err", err)
		d.vecRepair = true
	}
}

// repairVectorsOnce is one bounded attempt of the repair, logging what it
// repaired; it returns how many.
func (d *Daemon) repairVectorsOnce(ctx context.Context) (int, error) {
	ctx, cancel := context.WithTimeout(ctx, vectorRepairTimeout)
	defer cancel()
	n, err := d.store.RepairVectors(ctx, d.emb)
	if n > 0 {
		d.log.Warn("re-embedded the memories whose stored vector was damaged", "count", n)
	}
	return n, err
}

// retryVectorRepair, at the end of open, tries the repair every
// vectorRepairRetry when it failed at start (the embedder was away or
// failed), until it succeeds (the store's list of damaged vectors is
// empty: a re-embedding to another model, an edit or a delete empties it
// too) or the daemon closes; the warning goes with the success. A failed
// retry is only logged at debug level: the start said so, and the
// embedder's own state shows in the Overview.
func (d *Daemon) retryVectorRepair() {
	if !d.vecRepair {
		return
	}
	d.startVectorRepairRetry()
}

// vectorsKept starts the retry of the vector repair when an import stored
// memories without their vector while the daemon runs (their file held
// none and the embedder did not answer: memories.Options.VectorsKept),
// so that they are found by meaning once it answers, not only after the
// next start.
func (d *Daemon) vectorsKept() {
	d.log.Warn("imported memories without their vector (the embedder did not answer); retrying while the daemon runs", "every", vectorRepairRetry)
	d.startVectorRepairRetry()
}

// startVectorRepairRetry runs the repair every vectorRepairRetry until a
// run finds nothing left to repair, unless such a retry runs already (an
// import that kept memories while one ran has them repaired by its next
// run).
func (d *Daemon) startVectorRepairRetry() {
	if !d.vecRetrying.CompareAndSwap(false, true) {
		return
	}
	d.retryEvery(vectorRepairRetry, func(ctx context.Context) bool {
		n, err := d.repairVectorsOnce(ctx)
		if err != nil {
			d.log.Debug("damaged vectors still not re-embedded", "err", err)
			return false
		}
		if n > 0 {
			return false // once more: what was kept meanwhile
		}
		d.vecRetrying.Store(false)
		return true
	})
}
