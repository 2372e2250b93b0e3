package daemon

import (
	"context"

	"github.com/memtray/memtray/backend/httpapi"
)

// publishJob announces a job's change on the live feed.
func (d *Daemon) publishJob(j httpapi.Job) {
	d.publish(httpapi.EventJob, j)
}

// Job returns a kept background job by id: the jobs service's Job, for
// the daemon's own callers (the API reaches the service directly).
func (d *Daemon) Job(ctx context.Context, id string) (httpapi.Job, error) {
	return d.jobs.Job(ctx, id)
}
