package cli

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/memtray/memtray/backend/httpapi"
)

// TestRebuildIndexBesideDaemon: `memtray doctor --rebuild-index` while a
// daemon serves the store on loopback is refused, the error naming the
// daemon's pid, how to stop it and that nothing is lost; a memory stored
// through the daemon meanwhile is in the index the rebuild makes once the
// daemon is stopped, and the word search finds it.
func TestRebuildIndexBesideDaemon(t *testing.T) {
	ctx := context.Background()
	cfg := mcpIsolate(t)
	dd := "--data-dir=" + cfg.DataDir
	for i := range 5 {
		if code, _, errs := run(t, ctx, "", "add", dd, fmt.Sprintf("Worker %d retries a failed upload of batch-%d.bin three times.", i, i)); code != 0 {
			t.Fatalf("add: %d %s", code, errs)
		}
	}
	_, stop := runDaemon(t, cfg)
	code, out, errs := run(t, ctx, "", "doctor", dd, "--rebuild-index")
	for _, w := range []string{"memtray is running on this data dir", fmt.Sprintf("stop `memtray serve` (pid %d)", os.Getpid()),
		fmt.Sprintf("`kill %d`", os.Getpid()), "then run `memtray doctor --rebuild-index` again", "Nothing is lost"} {
		if code != 1 || !strings.Contains(errs, w) {
			t.Errorf("doctor --rebuild-index beside the daemon: exit %d, does not say %q:\n%s%s", code, w, out, errs)
		}
	}
	if code, _, errs := run(t, ctx, "", "add", dd, "The nightly job rotates logs/app.log at 02:00 with logrotate."); code != 0 {
		t.Fatalf("add through the daemon: %d %s", code, errs)
	}
	stop()
	code, out, errs = run(t, ctx, "", "doctor", dd, "--rebuild-index")
	if code != 0 || !strings.Contains(out, "text index rebuilt from the records: 6 documents") {
		t.Fatalf("doctor --rebuild-index once the daemon stopped: exit %d\n%s%s", code, out, errs)
	}
	code, out, errs = run(t, ctx, "", "search", dd, "--mode", "bm25", "logrotate")
	if code != 0 || !strings.Contains(out, "rotates logs/app.log") {
		t.Errorf("the memory stored through the daemon is not found by its words after the rebuild: exit %d\n%s%s", code, out, errs)
	}
}

// TestRepairWhileRunningSaysHowToStop: the refusal names the way to stop
// the daemon that runs: the app, one `memtray mcp` started (which exits by
// itself after idle_exit), or `memtray serve`.
func TestRepairWhileRunningSaysHowToStop(t *testing.T) {
	for _, tc := range []struct {
		h      httpapi.Health
		repair string
		want   []string
	}{
		{httpapi.Health{PID: 41, Window: true}, "--rebuild-index", []string{"quit the memtray app", "then run `memtray doctor --rebuild-index` again", "Nothing is lost"}},
		{httpapi.Health{PID: 42, OnDemand: true}, "--rebuild-index", []string{"started by `memtray mcp` for an agent (pid 42)", "exits by itself 10m0s after the last agent leaves", "`kill 42`"}},
		{httpapi.Health{PID: 43}, "--salvage", []string{"stop `memtray serve` (pid 43)", "`kill 43`", "then run `memtray doctor --salvage` again"}},
		{httpapi.Health{PID: 44}, "--reembed-damaged", []string{"embeds damaged vectors anew itself"}},
	} {
		err := repairWhileRunning("127.0.0.1:7077", tc.h, 10*time.Minute, tc.repair)
		for _, w := range tc.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%+v %s: does not say %q:\n%v", tc.h, tc.repair, w, err)
			}
		}
	}
}
