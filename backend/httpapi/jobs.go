package httpapi

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"time"
)

// EventJob is the live feed's event for background jobs: a Job, when one
// starts, as it progresses (at most a few times a second) and when it ends.
const EventJob = "job"

// Job kinds.
const (
	// JobPull pulls an Ollama model (PullModel).
	JobPull = "pull"
	// JobReembed switches the store to another embedding model (Reembed).
	JobReembed = "reembed"
)

// Job states.
const (
	JobRunning  = "running"
	JobDone     = "done"
	JobFailed   = "failed"
	JobCanceled = "canceled"
)

// Job units: what Done and Total count.
const (
	UnitBytes    = "bytes"
	UnitMemories = "memories"
)

// ErrJobRunning says a job of the same kind is running: one of a kind at
// a time (HTTP 409, code "job_running").
var ErrJobRunning = errors.New("a job of this kind is already running")

// Job is long work the daemon does in the background, such as pulling a
// model or re-embedding the store: it runs one of a kind at a time,
// publishes its progress as EventJob events and can be cancelled. GET
// /api/jobs keeps the newest job of each kind, so a page that reloads picks
// up a running job.
type Job struct {
	ID   string `json:"id"`
	Kind string `json:"kind"`
	// State is running, done, failed or canceled.
	State string `json:"state"`
	// Target is what the job works on: the model pulled or switched to.
	Target string `json:"target"`
	// Status says what the job does now, e.g. "pulling 970aa74c0a90" or
	// "embedding".
	Status string `json:"status,omitempty"`
	// Done and Total count the progress in Unit: the bytes of the layer a
	// pull downloads, the memories a re-embedding embedded. Total 0: not
	// known yet.
	Done  int64  `json:"done"`
	Total int64  `json:"total"`
	Unit  string `json:"unit"`
	// Error says why a failed job failed.
	Error string `json:"error,omitempty"`
	// Result says what a finished job did.
	Result     string     `json:"result,omitempty"`
	StartedAt  time.Time  `json:"started_at"`
	FinishedAt *time.Time `json:"finished_at,omitempty"`
}

// Finished reports whether the job has ended (done, failed or canceled).
func (j Job) Finished() bool { return j.State != JobRunning }

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
