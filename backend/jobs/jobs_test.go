package jobs

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/memtray/memtray/backend/memory"
)

// recorder keeps every published job state.
type recorder struct {
	mu       sync.Mutex
	seen     []Job
	finished chan struct{} // closed when a finished state is published
}

func (r *recorder) publish(j Job) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.seen = append(r.seen, j)
	if j.Finished() {
		close(r.finished)
	}
}

func (r *recorder) last() Job {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.seen[len(r.seen)-1]
}

func TestRunnerOutcomes(t *testing.T) {
	boom := errors.New("boom")
	tests := []struct {
		name      string
		work      func(ctx context.Context, started chan<- struct{}) (string, error)
		cancel    bool
		wantState string
		wantText  string // Result or Error
	}{
		{name: "done", work: func(context.Context, chan<- struct{}) (string, error) { return "did it", nil },
			wantState: Done, wantText: "did it"},
		{name: "failed", work: func(context.Context, chan<- struct{}) (string, error) { return "", boom },
			wantState: Failed, wantText: "boom"},
		{name: "canceled", cancel: true, work: func(ctx context.Context, started chan<- struct{}) (string, error) {
			close(started)
			<-ctx.Done()
			return "", ctx.Err()
		}, wantState: Canceled, wantText: "cancelled"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := recorder{finished: make(chan struct{})}
			r := New(rec.publish)
			ctx := context.Background()
			started := make(chan struct{})
			first, err := r.Start("k", "target", "items", func(ctx context.Context, task *Task) (string, error) {
				task.Progress("working", 1, 2)
				return tt.work(ctx, started)
			})
			if err != nil || first.State != Running || first.Kind != "k" || first.Target != "target" || first.Unit != "items" || first.ID == "" {
				t.Fatalf("Start: %+v, %v", first, err)
			}
			if tt.cancel {
				<-started
				if _, err := r.CancelJob(ctx, first.ID); err != nil {
					t.Fatal(err)
				}
			}
			<-rec.finished
			got, err := r.Job(ctx, first.ID)
			if err != nil {
				t.Fatal(err)
			}
			text := got.Result
			if got.State != Done {
				text = got.Error
			}
			if got.State != tt.wantState || text != tt.wantText || got.FinishedAt == nil || !got.Finished() {
				t.Errorf("job %+v; want %s %q", got, tt.wantState, tt.wantText)
			}
			if last := rec.last(); last.State != tt.wantState {
				t.Errorf("last published %+v", last)
			}
			list, _ := r.Jobs(ctx)
			if len(list) != 1 || list[0].ID != first.ID {
				t.Errorf("Jobs: %+v", list)
			}
			r.Close()
		})
	}
}

func TestRunnerOneOfAKind(t *testing.T) {
	r := New(nil)
	ctx := context.Background()
	release := make(chan struct{})
	first, err := r.Start("k", "a", "", func(context.Context, *Task) (string, error) { <-release; return "", nil })
	if err != nil {
		t.Fatal(err)
	}
	if got, ok := r.Running("k"); !ok || got.ID != first.ID {
		t.Errorf("Running: %+v %v", got, ok)
	}
	if _, err := r.Start("k", "b", "", func(context.Context, *Task) (string, error) { return "", nil }); !errors.Is(err, ErrRunning) {
		t.Errorf("second job of a kind: %v; want ErrRunning", err)
	}
	other, err := r.Start("other", "c", "", func(context.Context, *Task) (string, error) { return "", nil })
	if err != nil {
		t.Errorf("a job of another kind: %v", err)
	}
	close(release)
	r.Close()
	if _, ok := r.Running("k"); ok {
		t.Error("a job runs after Close")
	}
	if _, err := r.Start("k", "d", "", func(context.Context, *Task) (string, error) { return "", nil }); !errors.Is(err, memory.ErrUnavailable) {
		t.Errorf("Start after Close: %v; want ErrUnavailable", err)
	}
	if _, err := r.Job(ctx, "nope"); !errors.Is(err, memory.ErrNotFound) {
		t.Errorf("Job of an unknown id: %v", err)
	}
	if list, _ := r.Jobs(ctx); len(list) != 2 || list[0].ID != first.ID || list[1].ID != other.ID {
		t.Errorf("Jobs: %+v", list)
	}
}
