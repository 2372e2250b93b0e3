package ingest

import "sync/atomic"

// similarity is the pair of cosine thresholds dedup uses.
type similarity struct{ duplicate, source float64 }

// thresholds holds what SetSimilarity set; nil uses the config's.
type thresholds struct{ p atomic.Pointer[similarity] }

// SetSimilarity replaces the near-duplicate and source-link thresholds
// (ingest.duplicate_similarity, ingest.source_similarity) the pipeline was
// made with: the daemon sets the new embedding model's calibrated values
// when it switches models. A value of 0 keeps the config's.
func (p *Pipeline) SetSimilarity(duplicate, source float64) {
	s := similarity{duplicate: p.cfg.Duplicate(), source: p.cfg.Source()}
	if duplicate > 0 {
		s.duplicate = duplicate
	}
	if source > 0 {
		s.source = source
	}
	p.sim.p.Store(&s)
}

// dupThreshold is the near-duplicate threshold in effect.
func (p *Pipeline) dupThreshold() float64 {
	if s := p.sim.p.Load(); s != nil {
		return s.duplicate
	}
	return p.cfg.Duplicate()
}

// sourceThreshold is the source-link threshold in effect.
func (p *Pipeline) sourceThreshold() float64 {
	if s := p.sim.p.Load(); s != nil {
		return s.source
	}
	return p.cfg.Source()
}
