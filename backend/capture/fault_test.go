package capture

import (
	"context"
	"errors"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/memtray/memtray/backend/config"
	"github.com/memtray/memtray/backend/memory"
)

// fire sends n concurrent streaming requests and checks every answer is
// the upstream's, byte for byte.
func fire(t *testing.T, h *harness, n int, path string, body []byte) {
	t.Helper()
	sse := readFile(t, "anthropic_tools.sse")
	h.up.reply(200, sseHeader(), sse)
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			resp, got := h.post(t, path, claudeHeader(), body)
			checkAnswered(t, resp, got, 200, sseHeader(), sse)
		})
	}
	wg.Wait()
}

func TestHandlerBlockingForeverDoesNotSlowTraffic(t *testing.T) {
	stop := make(chan struct{})
	entered := make(chan struct{}, 100)
	h := newHarness(t, harnessOpt{workers: 1, cfg: func(c *config.Capture) { c.QueueSize = 4 },
		handler: func(ctx context.Context, _ memory.Exchange) error {
			entered <- struct{}{}
			<-stop // ignores ctx: the worst case
			return nil
		}})
	t.Cleanup(func() { close(stop) }) // runs before the harness cleanup waits for Run
	fire(t, h, 20, "/v1/messages", readFile(t, "claude_code_prompt.json"))
	<-entered
	st := h.p.Stats()
	if st.Captured+st.Dropped != 20 || st.Dropped < 15 || st.QueueLen < 3 {
		t.Errorf("stats %+v", st)
	}
}

func TestHandlerPanicsRecovered(t *testing.T) {
	var mu sync.Mutex
	calls := 0
	h := newHarness(t, harnessOpt{workers: 1, handler: func(context.Context, memory.Exchange) error {
		mu.Lock()
		calls++
		mu.Unlock()
		panic("pipeline bug")
	}})
	fire(t, h, 5, "/v1/messages", readFile(t, "claude_code_prompt.json"))
	settled(t, h.p)
	st := h.p.Stats()
	if st.HandlerPanics != 5 || st.Captured != 5 || st.LastError == "" {
		t.Errorf("stats %+v", st)
	}
	// The worker survived its panics: the next exchange is still handled.
	fire(t, h, 1, "/v1/messages", readFile(t, "claude_code_prompt.json"))
	settled(t, h.p)
	if st := h.p.Stats(); st.HandlerPanics != 6 {
		t.Errorf("stats %+v", st)
	}
}

func TestHandlerErrorsCounted(t *testing.T) {
	h := newHarness(t, harnessOpt{handler: func(context.Context, memory.Exchange) error {
		return errors.New("store closed")
	}})
	fire(t, h, 3, "/v1/messages", readFile(t, "claude_code_prompt.json"))
	settled(t, h.p)
	st := h.p.Stats()
	if st.HandlerErrors != 3 || st.Handled != 0 || st.LastError != "capture: handler: store closed" {
		t.Errorf("stats %+v", st)
	}
}

// TestFullQueueDrops: QueueSize 1 and no worker draining it: all but the
// first exchange are dropped, and every client still gets its answer.
func TestFullQueueDrops(t *testing.T) {
	h := newHarness(t, harnessOpt{noRun: true, cfg: func(c *config.Capture) { c.QueueSize = 1 }})
	fire(t, h, 30, "/v1/messages", readFile(t, "claude_code_prompt.json"))
	st := h.p.Stats()
	if st.Captured != 1 || st.Dropped != 29 || st.QueueLen != 1 || st.QueueCap != 1 {
		t.Errorf("stats %+v", st)
	}
}

// TestQueueByteBudget: with room in the queue but not in its byte budget,
// exchanges are dropped; the budget is given back when a worker takes one.
func TestQueueByteBudget(t *testing.T) {
	body := readFile(t, "claude_code_prompt.json")
	h := newHarness(t, harnessOpt{noRun: true, cfg: func(c *config.Capture) {
		c.QueueSize, c.MaxCaptureBytes, c.MaxQueueBytes = 100, 1<<20, 3*len(body)
	}})
	fire(t, h, 10, "/v1/messages", body)
	st := h.p.Stats()
	if st.Captured < 1 || st.Captured > 3 || st.Captured+st.Dropped != 10 || st.QueueBytes <= 0 || st.QueueBytes > int64(3*len(body)) {
		t.Errorf("stats %+v", st)
	}
}

func TestPausedCapture(t *testing.T) {
	h := newHarness(t, harnessOpt{})
	h.p.SetEnabled(false)
	if h.p.Enabled() {
		t.Fatal("still enabled")
	}
	fire(t, h, 3, "/v1/messages", readFile(t, "claude_code_prompt.json"))
	h.sink.none(t, h.p)
	if st := h.p.Stats(); st.PausedSkipped != 3 || st.Captured != 0 || st.Enabled {
		t.Errorf("stats %+v", st)
	}
	h.p.SetEnabled(true)
	fire(t, h, 1, "/v1/messages", readFile(t, "claude_code_prompt.json"))
	h.sink.next(t)
}

func TestPausedAtStart(t *testing.T) {
	h := newHarness(t, harnessOpt{cfg: func(c *config.Capture) { c.Enabled = false }})
	fire(t, h, 1, "/v1/messages", readFile(t, "claude_code_prompt.json"))
	h.sink.none(t, h.p)
	if st := h.p.Stats(); st.PausedSkipped != 1 {
		t.Errorf("stats %+v", st)
	}
}

func TestExcludedProjects(t *testing.T) {
	// claude_code_prompt.json works in /home/dev/src/memtray,
	// claude_code_toolloop.json in /home/dev/src/secret-client.
	h := newHarness(t, harnessOpt{cfg: func(c *config.Capture) { c.ExcludeProjects = []string{"secret-client"} }})
	fire(t, h, 1, "/v1/messages", readFile(t, "claude_code_toolloop.json"))
	h.sink.none(t, h.p)
	fire(t, h, 1, "/v1/messages", readFile(t, "claude_code_prompt.json"))
	if ex := h.sink.next(t); ex.Project != "memtray" {
		t.Errorf("captured %q", ex.Project)
	}
	h.p.SetExcludedProjects([]string{"/home/dev/src"})
	fire(t, h, 1, "/v1/messages", readFile(t, "claude_code_prompt.json"))
	fire(t, h, 1, "/v1/messages", readFile(t, "claude_code_toolloop.json"))
	h.sink.none(t, h.p)
	if st := h.p.Stats(); st.Excluded != 3 || st.Handled != 1 {
		t.Errorf("stats %+v", st)
	}
}

// TestRunReturnsWhenContextEnds: Run stops its workers with ctx.
func TestRunReturnsWhenContextEnds(t *testing.T) {
	p, err := New(Options{Config: testConfig("http://127.0.0.1:1")})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { p.Run(ctx, 0, func(context.Context, memory.Exchange) error { return nil }); close(done) }()
	cancel()
	<-done
}

// TestUnknownMethodOnCapturedPath: a GET on /v1/messages passes through.
func TestUnknownMethodOnCapturedPath(t *testing.T) {
	h := newHarness(t, harnessOpt{})
	h.up.reply(405, http.Header{"Content-Type": {"application/json"}}, []byte(`{"type":"error"}`))
	req, _ := http.NewRequest(http.MethodGet, h.url+"/v1/messages", nil)
	resp, err := h.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 405 {
		t.Errorf("status %d", resp.StatusCode)
	}
	h.sink.none(t, h.p)
	if st := h.p.Stats(); st.NotCapturedStatus != 0 || st.Requests != 1 {
		t.Errorf("stats %+v", st)
	}
}

// TestSettledWaitsForTheHandler: settled returns once the workers are
// done with every captured exchange, however slow the Handler (a store
// under load): it waited for an empty queue and 20 ms more, and returned
// while a worker still held the exchange it took.
func TestSettledWaitsForTheHandler(t *testing.T) {
	h := newHarness(t, harnessOpt{workers: 1, handler: func(context.Context, memory.Exchange) error {
		time.Sleep(50 * time.Millisecond) // slow, not timed: settled must wait whatever it takes
		return errors.New("store busy")
	}})
	fire(t, h, 3, "/v1/messages", readFile(t, "claude_code_prompt.json"))
	settled(t, h.p)
	if st := h.p.Stats(); st.HandlerErrors != 3 || st.Finished != 3 || st.Captured != 3 {
		t.Errorf("stats %+v", st)
	}
}
