package team

import (
	"context"
	"fmt"
	"math"
)

// Counters are a memory's usage signals summed over the team's members.
type Counters struct {
	Access      int64   `json:"access"`
	Reinforced  int64   `json:"reinforced"`
	FeedbackSum float64 `json:"feedback_sum"`
	FeedbackN   int64   `json:"feedback_n"`
}

// CounterDelta is what one member's daemon counted for one memory since
// its last push. Counters merge by adding deltas, never by the last
// writer's value, so two members' accesses both count.
type CounterDelta struct {
	// ID names the delta (the daemon's outbox entry): pushing the same ID
	// twice counts it once.
	ID          string  `json:"id"`
	MemoryID    string  `json:"memory_id"`
	Access      int64   `json:"access"`
	Reinforced  int64   `json:"reinforced"`
	FeedbackSum float64 `json:"feedback_sum"`
	FeedbackN   int64   `json:"feedback_n"`
}

// Validate checks a delta before it is pushed.
func (d CounterDelta) Validate() error {
	switch {
	case d.ID == "" || len(d.ID) > 128:
		return fmt.Errorf("counter delta: id %q is not 1-128 bytes", clip(d.ID))
	case !idPattern.MatchString(d.MemoryID):
		return fmt.Errorf("counter delta %s: memory id %q is not an id", clip(d.ID), clip(d.MemoryID))
	case d.Access < 0 || d.Reinforced < 0 || d.FeedbackN < 0:
		return fmt.Errorf("counter delta %s: counts are negative", clip(d.ID))
	case math.IsNaN(d.FeedbackSum) || math.IsInf(d.FeedbackSum, 0) || math.Abs(d.FeedbackSum) > float64(d.FeedbackN):
		return fmt.Errorf("counter delta %s: feedback sum %v is not within ±%d ratings", clip(d.ID), d.FeedbackSum, d.FeedbackN)
	}
	return nil
}

// AddCounters pushes counter deltas as the connected member, in one
// transaction, idempotently by delta ID. The change feed carries an
// OpCounters change per delta with the memory's new sums.
func (s *Store) AddCounters(ctx context.Context, deltas []CounterDelta) error {
	if len(deltas) == 0 {
		return nil
	}
	if len(deltas) > maxPush {
		return fmt.Errorf("team database: add counters: %d deltas, at most %d at once", len(deltas), maxPush)
	}
	var ids, mids []string
	var access, reinforced, fbN []int64
	var fbSum []float64
	for _, d := range deltas {
		if err := d.Validate(); err != nil {
			return fmt.Errorf("team database: add counters: %w", err)
		}
		ids = append(ids, d.ID)
		mids = append(mids, d.MemoryID)
		access = append(access, d.Access)
		reinforced = append(reinforced, d.Reinforced)
		fbSum = append(fbSum, d.FeedbackSum)
		fbN = append(fbN, d.FeedbackN)
	}
	_, err := s.pool.Exec(ctx, `INSERT INTO memtray.counter_deltas (id, memory_id, access, reinforced, feedback_sum, feedback_n)
		SELECT * FROM unnest($1::text[], $2::text[], $3::int8[], $4::int8[], $5::float8[], $6::int8[])
		ON CONFLICT (id) DO NOTHING`, ids, mids, access, reinforced, fbSum, fbN)
	if err != nil {
		return fmt.Errorf("team database: add counters: %w", err)
	}
	return nil
}

// Counters returns the team's sums for memory id (zero when none).
func (s *Store) Counters(ctx context.Context, id string) (Counters, error) {
	var c Counters
	err := s.pool.QueryRow(ctx, `SELECT coalesce(sum(access), 0)::bigint, coalesce(sum(reinforced), 0)::bigint,
		coalesce(sum(feedback_sum), 0)::float8, coalesce(sum(feedback_n), 0)::bigint
		FROM memtray.counter_deltas WHERE memory_id = $1`, id).Scan(&c.Access, &c.Reinforced, &c.FeedbackSum, &c.FeedbackN)
	if err != nil {
		return Counters{}, fmt.Errorf("team database: counters of %s: %w", clip(id), err)
	}
	return c, nil
}
