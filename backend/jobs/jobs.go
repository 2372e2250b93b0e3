// Package jobs runs long work in the background, one job of a kind at a
// time, each change announced (the live feed's job events) and every job
// cancellable: a pull of a model, a re-embedding, an export or an import.
// It keeps the newest job of each kind, so a page that reloads picks up a
// running one.
package jobs

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/memtray/memtray/backend/memory"
)

// Job states.
const (
	Running  = "running"
	Done     = "done"
	Failed   = "failed"
	Canceled = "canceled"
)

// Units: what a job's Done and Total count.
const (
	UnitBytes    = "bytes"
	UnitMemories = "memories"
)

// ErrRunning says a job of the same kind is running: one of a kind at
// a time (HTTP 409, code "job_running").
var ErrRunning = errors.New("a job of this kind is already running")

// Job is long work the daemon does in the background, such as pulling a
// model or re-embedding the store: it runs one of a kind at a time,
// publishes its progress (the API's EventJob events) and can be cancelled. GET
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
func (j Job) Finished() bool { return j.State != Running }

// progressEvery bounds how often a job publishes its progress: a pull
// reports many lines a second, the feed needs a few.
const progressEvery = 150 * time.Millisecond

// Runner runs background jobs: one of a kind at a time, on a context
// that ends at Close, each change published through publish. It keeps the
// newest job of each kind. Its methods are safe for concurrent use.
type Runner struct {
	publish func(Job)
	now     func() time.Time

	ctx  context.Context // ends at close
	stop context.CancelFunc
	wg   sync.WaitGroup

	mu     sync.Mutex
	closed bool
	byKind map[string]*Task
}

// Task is one job as its work sees it; its methods are safe for concurrent use.
type Task struct {
	js     *Runner
	cancel context.CancelFunc

	mu      sync.Mutex
	st      Job
	lastPub time.Time
}

// New returns a job runner that announces jobs with publish (nil: not at all).
func New(publish func(Job)) *Runner {
	ctx, stop := context.WithCancel(context.Background())
	if publish == nil {
		publish = func(Job) {}
	}
	return &Runner{publish: publish, now: time.Now, ctx: ctx, stop: stop, byKind: map[string]*Task{}}
}

// Running returns the running job of kind, if any.
func (js *Runner) Running(kind string) (Job, bool) {
	js.mu.Lock()
	defer js.mu.Unlock()
	if j := js.byKind[kind]; j != nil {
		if s := j.snapshot(); !s.Finished() {
			return s, true
		}
	}
	return Job{}, false
}

// Busy is the error for a second job of a kind while j runs (it wraps ErrRunning).
func Busy(j Job) error {
	return fmt.Errorf("%w: %s %s (job %s) is running since %s; wait for it or cancel it",
		ErrRunning, j.Kind, j.Target, j.ID, j.StartedAt.Format(time.TimeOnly))
}

// Start runs fn in the background as a job of kind working on target,
// counting its progress in unit, unless a job of kind runs
// (ErrRunning). fn's result says what a successful job did; its
// error fails the job, or cancels it when the job's context ended.
func (js *Runner) Start(kind, target, unit string, fn func(ctx context.Context, j *Task) (string, error)) (Job, error) {
	js.mu.Lock()
	if js.closed {
		js.mu.Unlock()
		return Job{}, fmt.Errorf("memtray is stopping: %w", memory.ErrUnavailable)
	}
	if cur := js.byKind[kind]; cur != nil {
		if s := cur.snapshot(); !s.Finished() {
			js.mu.Unlock()
			return s, Busy(s)
		}
	}
	ctx, cancel := context.WithCancel(js.ctx)
	j := &Task{js: js, cancel: cancel, st: Job{ID: newJobID(), Kind: kind, State: Running,
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
func (js *Runner) list() []Job {
	js.mu.Lock()
	out := make([]Job, 0, len(js.byKind))
	for _, j := range js.byKind {
		out = append(out, j.snapshot())
	}
	js.mu.Unlock()
	slices.SortFunc(out, func(a, b Job) int { return a.StartedAt.Compare(b.StartedAt) })
	return out
}

// find returns the kept job with id.
func (js *Runner) find(id string) (*Task, error) {
	js.mu.Lock()
	defer js.mu.Unlock()
	for _, j := range js.byKind {
		if j.st.ID == id { // ID never changes
			return j, nil
		}
	}
	return nil, fmt.Errorf("job %q: %w (only the newest job of each kind is kept)", id, memory.ErrNotFound)
}

// Close cancels the running jobs and waits for them to end; no job
// starts after.
func (js *Runner) Close() {
	js.mu.Lock()
	js.closed = true
	js.mu.Unlock()
	js.stop()
	js.wg.Wait()
}

// snapshot returns the job's state.
func (j *Task) snapshot() Job {
	j.mu.Lock()
	defer j.mu.Unlock()
	s := j.st
	if s.FinishedAt != nil {
		t := *s.FinishedAt
		s.FinishedAt = &t
	}
	return s
}

// Progress records what the job does and how far it is, and publishes it
// when the status changed, the count reached the total, or progressEvery
// passed since the last time.
func (j *Task) Progress(status string, done, total int64) {
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
func (j *Task) finish(ctx context.Context, result string, err error) {
	j.mu.Lock()
	now := j.js.now().UTC()
	j.st.FinishedAt = &now
	switch {
	case err == nil:
		j.st.State, j.st.Result = Done, result
	case ctx.Err() != nil:
		j.st.State, j.st.Error = Canceled, "cancelled"
	default:
		j.st.State, j.st.Error = Failed, err.Error()
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

// Jobs lists the newest job of each kind, oldest first.
func (js *Runner) Jobs(context.Context) ([]Job, error) {
	return js.list(), nil
}

// Job returns a kept job by id (memory.ErrNotFound when none is).
func (js *Runner) Job(_ context.Context, id string) (Job, error) {
	j, err := js.find(id)
	if err != nil {
		return Job{}, err
	}
	return j.snapshot(), nil
}

// CancelJob asks a running job to stop; it ends as canceled as soon as
// its work notices (a re-embedding between two batches, a pull at once).
func (js *Runner) CancelJob(_ context.Context, id string) (Job, error) {
	j, err := js.find(id)
	if err != nil {
		return Job{}, err
	}
	j.cancel()
	return j.snapshot(), nil
}
