package cli

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/memtray/memtray/backend/daemon"
	"github.com/memtray/memtray/backend/httpapi"
)

// TestRebuildIndexBesideDaemon: `memtray doctor --rebuild-index` while a
// daemon serves the store on loopback runs through the daemon (POST
// /api/doctor/rebuild-index, a job the command follows) instead of being
// refused: the daemon keeps serving, memories stored through it while the
// rebuild runs are found by their words after, the check finds no damage
// and the route wants the token. (That a write during the build reaches
// the new index is store.TestRebuildTextLive's.)
func TestRebuildIndexBesideDaemon(t *testing.T) {
	ctx := context.Background()
	cfg := mcpIsolate(t)
	dd := "--data-dir=" + cfg.DataDir
	const n = 40
	for i := range n {
		if code, _, errs := run(t, ctx, "", "add", dd, fmt.Sprintf("Worker %d retries a failed upload of batch-%d.bin three times.", i, i)); code != 0 {
			t.Fatalf("add: %d %s", code, errs)
		}
	}
	runDaemon(t, cfg)
	added := make(chan error, 1)
	go func() {
		var err error
		for i := range 5 {
			if code, _, errs := run(t, ctx, "", "add", dd, fmt.Sprintf("Logrotate job %d rotates logs/app-%d.log at 02:00.", i, i)); code != 0 {
				err = fmt.Errorf("add during the rebuild: %d %s", code, errs)
			}
		}
		added <- err
	}()
	code, out, errs := run(t, ctx, "", "doctor", dd, "--rebuild-index")
	if err := <-added; err != nil {
		t.Fatal(err)
	}
	if code != 0 || !strings.Contains(errs, "the running daemon") || !strings.Contains(errs, "keeps serving") ||
		!strings.Contains(out, "text index rebuilt from the records by the running daemon, which kept serving:") {
		t.Fatalf("doctor --rebuild-index beside the daemon: exit %d\n%s%s", code, out, errs)
	}
	code, out, errs = run(t, ctx, "", "search", dd, "--mode", "bm25", "-k", "10", "logrotate")
	if code != 0 || strings.Count(out, "Logrotate job") != 5 {
		t.Errorf("the memories stored while the daemon rebuilt are not all found by their words: exit %d\n%s%s", code, out, errs)
	}
	code, out, errs = run(t, ctx, "", "doctor", dd)
	if code != 0 || !strings.Contains(out, fmt.Sprintf("text index:  %d documents", n+5)) || !strings.Contains(out, "no damage found") {
		t.Errorf("doctor after the rebuild: exit %d\n%s%s", code, out, errs)
	}
	rt, err := daemon.ReadRuntime(cfg.DataDir)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.Post("http://"+rt.Listen+"/api/doctor/rebuild-index", "application/json", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("POST /api/doctor/rebuild-index without the token: %s", resp.Status)
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
