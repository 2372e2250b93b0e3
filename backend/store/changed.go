package store

import (
	"context"
	"fmt"
)

// ChangedSince returns the ids of the live records (snoozed and superseded
// included; trashed ones are not live) whose last write has a store
// sequence number above seq, and the store's sequence number now, read
// together: a write after the call has a higher number, so
// ChangedSince(now) later finds it. Every write sets the number (Put,
// Insert, InsertBatch, Import, Update, Supersede, Apply and its Restore,
// ApplyTeam), whatever timestamps the record carries, so a memory imported
// or restored with an old updated_at is found too. A re-embedding keeps
// the numbers. seq 0 returns every record.
func (s *Store) ChangedSince(ctx context.Context, seq uint64) (map[string]struct{}, uint64, error) {
	if err := ctx.Err(); err != nil {
		return nil, 0, fmt.Errorf("changed since %d: %w", seq, err)
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return nil, 0, fmt.Errorf("changed since %d: %w", seq, errClosed)
	}
	out := map[string]struct{}{}
	if seq >= s.seq {
		return out, s.seq, nil
	}
	for id, e := range s.entries {
		if e.seq > seq {
			out[id] = struct{}{}
		}
	}
	return out, s.seq, nil
}
