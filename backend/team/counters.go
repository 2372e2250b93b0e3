package team

import (
	"context"
	"fmt"

	"github.com/memtray/memtray/backend/store"
)

// Counters are a memory's usage signals summed over the team's members.
type Counters struct {
	Access      int64   `json:"access"`
	Reinforced  int64   `json:"reinforced"`
	FeedbackSum float64 `json:"feedback_sum"`
	FeedbackN   int64   `json:"feedback_n"`
}

// AddCounters pushes counter deltas (store.CounterDelta, the daemon's
// outbox's own) as the connected member, in one transaction, idempotently
// by delta ID. The change feed carries an OpCounters change per delta
// with the memory's new sums. A baseline is refused: the pusher turns it
// into its growth over Counters first (store.CounterDelta.Growth).
func (s *Store) AddCounters(ctx context.Context, deltas []store.CounterDelta) error {
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
		if !idPattern.MatchString(d.MemoryID) {
			return fmt.Errorf("team database: add counters: delta %s: memory id %q is not a team memory id", clip(d.ID), clip(d.MemoryID))
		}
		if d.Baseline {
			return fmt.Errorf("team database: add counters: delta %s is a baseline, not a growth", clip(d.ID))
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

// CountersOf returns the team's sums for each of ids that has any (the
// others are zero), in one query.
func (s *Store) CountersOf(ctx context.Context, ids []string) (map[string]Counters, error) {
	out := make(map[string]Counters, len(ids))
	if len(ids) == 0 {
		return out, nil
	}
	rows, err := s.pool.Query(ctx, `SELECT memory_id, sum(access)::bigint, sum(reinforced)::bigint,
		sum(feedback_sum)::float8, sum(feedback_n)::bigint
		FROM memtray.counter_deltas WHERE memory_id = ANY($1) GROUP BY memory_id`, ids)
	if err != nil {
		return nil, fmt.Errorf("team database: counters of %d memories: %w", len(ids), err)
	}
	defer rows.Close()
	for rows.Next() {
		var id string
		var c Counters
		if err := rows.Scan(&id, &c.Access, &c.Reinforced, &c.FeedbackSum, &c.FeedbackN); err != nil {
			return nil, fmt.Errorf("team database: counters of %d memories: %w", len(ids), err)
		}
		out[id] = c
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("team database: counters of %d memories: %w", len(ids), err)
	}
	return out, nil
}
