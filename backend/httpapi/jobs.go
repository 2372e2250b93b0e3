package httpapi

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"time"

	"github.com/memtray/memtray/backend/embedders"
	"github.com/memtray/memtray/backend/jobs"
)

// EventJob is the live feed's event for background jobs: a Job, when one
// starts, as it progresses (at most a few times a second) and when it ends.
const EventJob = "job"

// Job kinds.
const (
	// JobPull pulls an Ollama model (PullModel).
	JobPull = embedders.JobPull
	// JobReembed switches the store to another embedding model (Reembed).
	JobReembed = embedders.JobReembed
)

// Job states (package jobs').
const (
	JobRunning  = jobs.Running
	JobDone     = jobs.Done
	JobFailed   = jobs.Failed
	JobCanceled = jobs.Canceled
)

// Job units: what Done and Total count.
const (
	UnitBytes    = jobs.UnitBytes
	UnitMemories = jobs.UnitMemories
)

// ErrJobRunning says a job of the same kind is running: one of a kind at
// a time (HTTP 409, code "job_running").
var ErrJobRunning = jobs.ErrRunning

// Job is long work the daemon does in the background (package jobs):
// pulling a model, re-embedding the store, an export or an import. It
// runs one of a kind at a time, publishes its progress as EventJob events
// and can be cancelled. GET /api/jobs keeps the newest job of each kind,
// so a page that reloads picks up a running job.
type Job = jobs.Job

// Jobs is the part of Services that reports and cancels background jobs.
type Jobs interface {
	// Jobs lists the newest job of each kind, running or finished.
	Jobs(ctx context.Context) ([]Job, error)
	// Job returns one of them by id (memory.ErrNotFound when it is not kept).
	Job(ctx context.Context, id string) (Job, error)
	// CancelJob asks a running job to stop and returns it; cancelling a
	// finished job changes nothing.
	CancelJob(ctx context.Context, id string) (Job, error)
}

// jobRoutes registers the routes of Jobs.
func (h *Handler) jobRoutes() {
	h.mux.HandleFunc("GET /api/jobs", withoutBody(func(r *http.Request) ([]Job, error) {
		return h.s.Jobs.Jobs(r.Context())
	}))
	h.mux.HandleFunc("GET /api/jobs/{id}", withoutBody(func(r *http.Request) (Job, error) {
		return h.s.Jobs.Job(r.Context(), r.PathValue("id"))
	}))
	h.mux.HandleFunc("POST /api/jobs/{id}/cancel", withoutBody(func(r *http.Request) (Job, error) {
		return h.s.Jobs.CancelJob(r.Context(), r.PathValue("id"))
	}))
}

// Jobs runs GET /api/jobs.
func (c *Client) Jobs(ctx context.Context) ([]Job, error) {
	var out []Job
	err := c.do(ctx, http.MethodGet, "/api/jobs", nil, &out)
	return out, err
}

// Job runs GET /api/jobs/{id}.
func (c *Client) Job(ctx context.Context, id string) (Job, error) {
	var out Job
	err := c.do(ctx, http.MethodGet, "/api/jobs/"+url.PathEscape(id), nil, &out)
	return out, err
}

// CancelJob runs POST /api/jobs/{id}/cancel.
func (c *Client) CancelJob(ctx context.Context, id string) (Job, error) {
	var out Job
	err := c.do(ctx, http.MethodPost, "/api/jobs/"+url.PathEscape(id)+"/cancel", nil, &out)
	return out, err
}

// WaitJob polls the job every interval (0: 200 ms) until it finishes or
// ctx ends, calling progress (which may be nil) with each state it sees,
// and returns the finished job. When ctx ends first it cancels the job.
func (c *Client) WaitJob(ctx context.Context, id string, interval time.Duration, progress func(Job)) (Job, error) {
	if interval <= 0 {
		interval = 200 * time.Millisecond
	}
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		j, err := c.Job(ctx, id)
		if err != nil {
			if ctx.Err() != nil {
				return c.cancelAfter(id, ctx.Err())
			}
			return j, err
		}
		if progress != nil {
			progress(j)
		}
		if j.Finished() {
			return j, nil
		}
		select {
		case <-ctx.Done():
			return c.cancelAfter(id, ctx.Err())
		case <-t.C:
		}
	}
}

// cancelAfter cancels the job when the waiting caller gave up (Ctrl-C).
func (c *Client) cancelAfter(id string, cause error) (Job, error) {
	cctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	j, err := c.CancelJob(cctx, id)
	if err != nil {
		return j, errors.Join(cause, err)
	}
	return j, cause
}
