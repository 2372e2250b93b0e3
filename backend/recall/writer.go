package recall

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/memtray/memtray/backend/search"
	"github.com/memtray/memtray/backend/store"
)

// Defaults of the log writer's Options.
const (
	// DefaultLogQueue is how many recalls wait for the log at most; a
	// recall beyond drops the oldest waiting.
	DefaultLogQueue = 1024
	// DefaultLogBatch is how many waiting recalls make the writer write
	// without waiting for DefaultLogEvery.
	DefaultLogBatch = 64
	// DefaultLogEvery is how long the first recall waiting waits for more
	// to share its transaction.
	DefaultLogEvery = 200 * time.Millisecond
)

// pending is a recall waiting for the log: what the recall had (its
// prompt already redacted), not yet cut to previews (that is the
// writer's work, off the hook's path).
type pending struct {
	at       time.Time
	req      search.RecallRequest
	given    []store.RecallMemory // Preview: the memory's whole text
	withheld []search.Withheld
	skipped  string
}

// logWriter writes the recall log from one goroutine: recalls queue their
// entry (add never blocks; a full queue drops the oldest, counted), and
// the goroutine writes what waits in one transaction every `every` or
// when `batch` wait, when sync asks, and when it is closed.
type logWriter struct {
	log    Log
	lim    store.RecallLimits
	logger *slog.Logger
	max    int
	batch  int
	every  time.Duration

	mu      sync.Mutex
	queue   []pending
	writing bool // the goroutine holds entries taken from the queue
	closed  bool
	dropped int64 // recalls dropped from a full queue (or after close)
	failed  int64 // recalls whose write failed

	wake    chan struct{}   // a recall was queued (capacity 1)
	syncs   chan chan error // write now and answer
	stop    chan struct{}   // closed by close
	done    chan struct{}   // closed when the goroutine ends
	lastErr error           // the last write's error, for close (goroutine only until done)
}

// newLogWriter starts the writer of o's log.
func newLogWriter(o Options) *logWriter {
	w := &logWriter{log: o.Log, lim: o.Limits, logger: o.Logger, max: o.LogQueue, batch: o.LogBatch, every: o.LogEvery,
		wake: make(chan struct{}, 1), syncs: make(chan chan error), stop: make(chan struct{}), done: make(chan struct{})}
	go w.run()
	return w
}

// add queues p; with the queue full, the oldest waiting is dropped.
func (w *logWriter) add(p pending) {
	w.mu.Lock()
	if w.closed {
		w.dropped++
		w.mu.Unlock()
		return
	}
	if len(w.queue) >= w.max {
		n := len(w.queue) - w.max + 1
		w.dropped += int64(n)
		w.queue = append(w.queue[:0], w.queue[n:]...)
	}
	w.queue = append(w.queue, p)
	n := len(w.queue)
	w.mu.Unlock()
	if n == 1 || n >= w.batch {
		select {
		case w.wake <- struct{}{}:
		default:
		}
	}
}

// counts returns how many recalls were dropped and failed to be written.
func (w *logWriter) counts() (dropped, failed int64) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.dropped, w.failed
}

// discard drops what waits (the log is being cleared) and returns how many.
func (w *logWriter) discard() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := len(w.queue)
	w.queue = nil
	return n
}

// run is the writer's goroutine.
func (w *logWriter) run() {
	defer close(w.done)
	var timer *time.Timer
	var tick <-chan time.Time
	for {
		select {
		case <-w.wake:
			w.mu.Lock()
			n := len(w.queue)
			w.mu.Unlock()
			if n >= w.batch {
				w.lastErr = w.write()
			}
		case <-tick:
			timer, tick = nil, nil
			w.lastErr = w.write()
		case reply := <-w.syncs:
			w.lastErr = w.write()
			reply <- w.lastErr
		case <-w.stop:
			if timer != nil {
				timer.Stop()
			}
			w.lastErr = w.write()
			return
		}
		w.mu.Lock()
		waiting := len(w.queue) > 0
		w.mu.Unlock()
		if waiting && timer == nil {
			timer = time.NewTimer(w.every)
			tick = timer.C
		}
	}
}

// write writes what waits in one transaction. A failure is logged and
// counted (this goroutine is the top of its call stack) and returned.
func (w *logWriter) write() error {
	w.mu.Lock()
	ps := w.queue
	w.queue = nil
	w.writing = len(ps) > 0
	w.mu.Unlock()
	if len(ps) == 0 {
		return nil
	}
	defer func() {
		w.mu.Lock()
		w.writing = false
		w.mu.Unlock()
	}()
	ctx := context.Background()
	es, err := w.entries(ctx, ps)
	stored, aerr := w.log.AddRecalls(ctx, es, w.lim)
	if err = errors.Join(err, aerr); err != nil {
		w.mu.Lock()
		w.failed += int64(len(es) - len(stored))
		w.mu.Unlock()
		err = fmt.Errorf("recall log: write %d recalls (%d written): %w", len(es), len(stored), err)
		w.logger.Warn("recall log: recalls not written", "recalls", len(es), "written", len(stored), "err", err)
	}
	return err
}

// entries makes the log's entries of ps: the memories' texts cut to
// previews, the withheld memories' previews read
// from the store (one read for the batch).
func (w *logWriter) entries(ctx context.Context, ps []pending) ([]store.RecallEntry, error) {
	var ids []string
	for _, p := range ps {
		for _, h := range p.withheld {
			ids = append(ids, h.ID)
		}
	}
	var err error
	mems := map[string]memoryText{}
	if len(ids) > 0 {
		got, gerr := w.log.GetMany(ctx, ids)
		if gerr != nil {
			err = fmt.Errorf("read the withheld memories: %w", gerr)
		}
		for id, m := range got {
			mems[id] = memoryText{kind: string(m.Kind), text: m.Text}
		}
	}
	es := make([]store.RecallEntry, len(ps))
	for i, p := range ps {
		es[i] = entry(p, mems)
	}
	return es, err
}

// memoryText is what the log shows of a withheld memory.
type memoryText struct{ kind, text string }

// sync writes what waits now and returns that write's error (nil when
// nothing waits). After close it returns nil: close wrote everything.
func (w *logWriter) sync(ctx context.Context) error {
	w.mu.Lock()
	idle := len(w.queue) == 0 && !w.writing
	w.mu.Unlock()
	if idle {
		return nil
	}
	reply := make(chan error, 1)
	select {
	case w.syncs <- reply:
	case <-w.done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
	select {
	case err := <-reply:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// close writes what waits, stops the goroutine and returns the last
// write's error; later recalls are dropped (counted). A second close
// only waits for the first.
func (w *logWriter) close() error {
	w.mu.Lock()
	first := !w.closed
	w.closed = true
	w.mu.Unlock()
	if first {
		close(w.stop)
	}
	<-w.done
	if first {
		return w.lastErr
	}
	return nil
}
