package daemon

import (
	"context"
	"fmt"

	"github.com/memtray/memtray/backend/httpapi"
	"github.com/memtray/memtray/backend/jobs"
	"github.com/memtray/memtray/backend/store"
)

// doctorService is the daemon's httpapi.Doctor: the checks and the text
// index rebuild of its open store, made while it serves.
type doctorService struct{ d *Daemon }

// Check implements httpapi.Doctor.
func (s doctorService) Check(ctx context.Context) (*store.CheckReport, error) {
	return s.d.store.Check(ctx)
}

// RebuildIndex implements httpapi.Doctor: a job that rebuilds the open
// store's text index from the records (store.Store.RebuildText), searches
// and writes going on.
func (s doctorService) RebuildIndex(context.Context) (httpapi.Job, error) {
	return s.d.jobs.Start(httpapi.JobRebuildIndex, "text index", jobs.UnitMemories, func(ctx context.Context, j *jobs.Task) (string, error) {
		n, err := s.d.store.RebuildText(ctx, func(done, total int) {
			j.Progress("indexing", int64(done), int64(total))
		})
		if err != nil {
			return "", err
		}
		s.d.log.Info("text index rebuilt from the records", "documents", n)
		return fmt.Sprintf("text index rebuilt from the records by the running daemon, which kept serving: %d documents", n), nil
	})
}
