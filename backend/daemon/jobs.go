package daemon

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/memtray/memtray/backend/httpapi"
	"github.com/memtray/memtray/backend/memory"
)

// progressEvery bounds how often a job publishes its progress: a pull
// reports many lines a second, the feed needs a few.
const progressEvery = 150 * time.Millisecond

// jobs runs the daemon's background jobs (httpapi.Job): one of a kind at
// a time, on a context that ends when the daemon closes, each change
// published through publish. It keeps the newest job of each kind.
type jobs struct {
	publish func(httpapi.Job)
	now     func() time.Time

	ctx  context.Context // ends at close
	stop context.CancelFunc
	wg   sync.WaitGroup

	mu     sync.Mutex
	closed bool
	byKind map[string]*job
}

// job is one job; its methods are safe for concurrent use.
type job struct {
	js     *jobs
	cancel context.CancelFunc

	mu      sync.Mutex
	st      httpapi.Job
	lastPub time.Time
}

// newJobs returns a job runner that announces jobs with publish (nil: not at all).
func newJobs(publish func(httpapi.Job)) *jobs {
	ctx, stop := context.WithCancel(context.Background())
	if publish == nil {
		publish = func(httpapi.Job) {}
	}
	return &jobs{publish: publish, now: time.Now, ctx: ctx, stop: stop, byKind: map[string]*job{}}
}

// running returns the running job of kind, if any.
func (js *jobs) running(kind string) (httpapi.Job, bool) {
	js.mu.Lock()
	defer js.mu.Unlock()
	if j := js.byKind[kind]; j != nil {
		if s := j.snapshot(); !s.Finished() {
			return s, true
		}
	}
	return httpapi.Job{}, false
}

// busy is the error for a second job of a kind.
func busy(j httpapi.Job) error {
	return fmt.Errorf("%w: %s %s (job %s) is running since %s; wait for it or cancel it",
		httpapi.ErrJobRunning, j.Kind, j.Target, j.ID, j.StartedAt.Format(time.TimeOnly))
}

// start runs fn in the background as a job of kind working on target,
// counting its progress in unit, unless a job of kind runs
// (httpapi.ErrJobRunning). fn's result says what a successful job did; its
// error fails the job, or cancels it when the job's context ended.
func (js *jobs) start(kind, target, unit string, fn func(ctx context.Context, j *job) (string, error)) (httpapi.Job, error) {
	js.mu.Lock()
	if js.closed {
		js.mu.Unlock()
		return httpapi.Job{}, fmt.Errorf("memtray is stopping: %w", memory.ErrUnavailable)
	}
	if cur := js.byKind[kind]; cur != nil {
		if s := cur.snapshot(); !s.Finished() {
			js.mu.Unlock()
			return s, busy(s)
		}
	}
	ctx, cancel := context.WithCancel(js.ctx)
	j := &job{js: js, cancel: cancel, st: httpapi.Job{ID: newJobID(), Kind: kind, State: httpapi.JobRunning,
		Target: target, Unit: unit, StartedAt: js.now().UTC()}}
	js.byKind[kind] = j
	js.wg.Add(1)
	js.mu.Unlock()
	first := j.snapshot()
	js.publish(first)
	go func() {
		defer js.wg.Done()
		defer cancel()
		result, err := fn(ctx, j)
		j.finish(ctx, result, err)
	}()
	return first, nil
}

// list returns the newest job of each kind, oldest first.
func (js *jobs) list() []httpapi.Job {
	js.mu.Lock()
	out := make([]httpapi.Job, 0, len(js.byKind))
	for _, j := range js.byKind {
		out = append(out, j.snapshot())
	}
	js.mu.Unlock()
	slices.SortFunc(out, func(a, b httpapi.Job) int { return a.StartedAt.Compare(b.StartedAt) })
	return out
}

// find returns the kept job with id.
func (js *jobs) find(id string) (*job, error) {
	js.mu.Lock()
	defer js.mu.Unlock()
	for _, j := range js.byKind {
		if j.st.ID == id { // ID never changes
			return j, nil
		}
	}
	return nil, fmt.Errorf("job %q: %w (only the newest job of each kind is kept)", id, memory.ErrNotFound)
}

// close cancels the running jobs and waits for them to end.
func (js *jobs) close() {
	js.mu.Lock()
	js.closed = true
	js.mu.Unlock()
	js.stop()
	js.wg.Wait()
}

// snapshot returns the job's state.
func (j *job) snapshot() httpapi.Job {
	j.mu.Lock()
	defer j.mu.Unlock()
	s := j.st
	if s.FinishedAt != nil {
		t := *s.FinishedAt
		s.FinishedAt = &t
	}
	return s
}

// progress records what the job does and how far it is, and publishes it
// when the status changed, the count reached the total, or progressEvery
// passed since the last time.
func (j *job) progress(status string, done, total int64) {
	j.mu.Lock()
	changed := status != j.st.Status
	j.st.Status, j.st.Done, j.st.Total = status, done, total
	now := j.js.now()
	if !changed && !(total > 0 && done >= total) && now.Sub(j.lastPub) < progressEvery {
		j.mu.Unlock()
		return
	}
	j.lastPub = now
	s := j.st
	// Publish under the lock, so events leave in the order of the changes.
	j.js.publish(s)
	j.mu.Unlock()
}

// finish ends the job with fn's outcome and publishes it.
func (j *job) finish(ctx context.Context, result string, err error) {
	j.mu.Lock()
	now := j.js.now().UTC()
	j.st.FinishedAt = &now
	switch {
	case err == nil:
		j.st.State, j.st.Result = httpapi.JobDone, result
	case ctx.Err() != nil:
		j.st.State, j.st.Error = httpapi.JobCanceled, "cancelled"
	default:
		j.st.State, j.st.Error = httpapi.JobFailed, err.Error()
	}
	s := j.st
	j.js.publish(s)
	j.mu.Unlock()
}

// newJobID is a random 64-bit hex id.
func newJobID() string {
	var b [8]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// Jobs lists the newest job of each kind (see httpapi.Jobs).
func (d *Daemon) Jobs(context.Context) ([]httpapi.Job, error) {
	return d.jobs.list(), nil
}

// Job returns a kept job by id.
func (d *Daemon) Job(_ context.Context, id string) (httpapi.Job, error) {
	j, err := d.jobs.find(id)
	if err != nil {
		return httpapi.Job{}, err
	}
	return j.snapshot(), nil
}

// CancelJob asks a running job to stop; it ends as canceled as soon as
// its work notices (a re-embedding between two batches, a pull at once).
func (d *Daemon) CancelJob(_ context.Context, id string) (httpapi.Job, error) {
	j, err := d.jobs.find(id)
	if err != nil {
		return httpapi.Job{}, err
	}
	j.cancel()
	return j.snapshot(), nil
}

// publishJob announces a job's change on the live feed.
func (d *Daemon) publishJob(j httpapi.Job) {
	d.publish(httpapi.EventJob, j)
}
