package store

import (
	"context"
	"time"
)

// textUpgrade is the background rebuild that replaces a text index of an
// older mapping version Open found servable (servableMapping).
type textUpgrade struct {
	cancel context.CancelFunc
	done   chan struct{} // closed when the rebuild has ended, done or not
}

// upgradeGate, when set (by tests), is called by the background rebuild
// before it starts.
var upgradeGate func()

// startTextUpgrade rebuilds the text index from the records in the
// background, as RebuildText does beside a running daemon (`memtray
// doctor --rebuild-index`): the old index serves searches and takes every
// write meanwhile; the records written since the rebuild's snapshot are
// caught up with writes held off, then the new index replaces the old
// one. Open returns at once rather than after the whole rebuild (100k
// memories: 417 s against 13 s, BenchmarkOpenOldMapping, exp-rank2). A
// rebuild that fails or is stopped by Close leaves the old index, which
// the next Open upgrades again. Called by Open, before the store is
// shared.
func (s *Store) startTextUpgrade() {
	ctx, cancel := context.WithCancel(context.Background())
	s.upgrade = textUpgrade{cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(s.upgrade.done)
		if upgradeGate != nil {
			upgradeGate()
		}
		s.runTextUpgrade(ctx)
	}()
}

// runTextUpgrade runs the rebuild and logs it (Options.Logger).
func (s *Store) runTextUpgrade(ctx context.Context) {
	log := s.opts.Logger
	start := time.Now()
	if log != nil {
		log.Warn("building the text index of the current version in the background; the old one serves meanwhile, "+oldNames(s.textOld),
			"old", s.textOld, "version", mappingVersion, "dir", s.dir)
	}
	n, err := s.RebuildText(ctx, nil)
	switch {
	case err != nil && log != nil:
		log.Warn("text index not upgraded: the old one serves until the next open", "err", err)
	case err == nil && log != nil:
		log.Info("text index upgraded", "version", mappingVersion, "memories", n, "took", time.Since(start).Round(time.Millisecond))
	}
}

// stopTextUpgrade stops a background rebuild still going and waits until
// it has ended. Called by Close, before it takes the write lock the
// rebuild's last step holds.
func (s *Store) stopTextUpgrade() {
	if s.upgrade.cancel == nil {
		return
	}
	s.upgrade.cancel()
	<-s.upgrade.done
}

// waitTextUpgrade waits until a background rebuild started by Open has
// ended (at once if there is none).
func (s *Store) waitTextUpgrade() {
	if s.upgrade.done != nil {
		<-s.upgrade.done
	}
}
