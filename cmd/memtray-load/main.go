// Command memtray-load is memtray's load test (issue "Reliability and
// security", item 6; `make load`). It runs `memtray serve` as a
// subprocess on a fresh data dir, with a fake Anthropic provider on
// loopback that streams answers event by event at a realistic pace, and
// drives N concurrent agent sessions for a bounded time, each alternating
// a request through memtray's proxy and one straight to the provider, so
// the added latency is measured against the same load in the same run.
// Beside the agents, recall, search and steward plans run in loops
// against the daemon's API.
//
// A second run makes the write pipeline slow (a fake Ollama that takes
// -slow-embed per embedding) to show the capture queue drops and counts
// what does not fit instead of slowing the agent.
//
// It prints both runs (requests/s, time to first byte and total, p50 and
// p99, proxied, direct, added and their ratio; failed requests; the API's
// latencies; the daemon's peak RSS from /proc/PID/status VmHWM; the queue's
// captured, handled and dropped counts) and, when $SOAK_OUT is set, writes
// $SOAK_OUT/load.json for the soak summary. It exits 1 when an
// agent request failed, the proxy added more than -max-added at p99 (time
// to first byte), or the slow run dropped nothing.
//
// `memtray-load -faults` reads `go test -json` output of the fault tests
// (`make faults`: every TestFault… of backend/daemon and backend/cli),
// prints which faults were survived and writes $SOAK_OUT/faults.json.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

func main() {
	if len(os.Args) > 1 && os.Args[1] == "-faults" {
		os.Exit(summarizeFaults(os.Stdin, os.Stdout, os.Stderr))
	}
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// Result is the one-line summary written to $SOAK_OUT/load.json.
type Result struct {
	Name   string  `json:"name"`
	Metric string  `json:"metric"`
	Value  float64 `json:"value"`
	OK     bool    `json:"ok"`
	Detail string  `json:"detail"`
}

// Outcome is both runs and the verdict.
type Outcome struct {
	Normal Report   `json:"normal"`
	Slow   *Report  `json:"slow_pipeline,omitempty"`
	OK     bool     `json:"ok"`
	Why    []string `json:"why,omitempty"`
}

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("memtray-load", flag.ContinueOnError)
	fs.SetOutput(stderr)
	bin := fs.String("bin", "bin/memtray", "the memtray binary to run as the daemon")
	sessions := fs.Int("sessions", 64, "concurrent agent sessions")
	duration := fs.Duration("duration", 60*time.Second, "length of the normal run")
	slowDur := fs.Duration("slow-duration", 20*time.Second, "length of the run with a slow pipeline (0: skip it)")
	slowEmbed := fs.Duration("slow-embed", 200*time.Millisecond, "how long the slow run's embedder takes per request")
	first := fs.Duration("first-event", 150*time.Millisecond, "the provider's wait before its first event")
	gap := fs.Duration("gap", 25*time.Millisecond, "the provider's wait between two text deltas")
	deltas := fs.Int("deltas", 20, "text deltas per answer")
	queue := fs.Int("queue", 0, "capture.queue_size (0: the default)")
	maxAdded := fs.Duration("max-added", 100*time.Millisecond, "most the proxy may add to the p99 time to first byte")
	asJSON := fs.Bool("json", false, "print the outcome as JSON")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	bp, err := filepath.Abs(*bin)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 2
	}
	if _, err := os.Stat(bp); err != nil {
		fmt.Fprintf(stderr, "memtray-load: %v (build it with `make build`, or pass -bin)\n", err)
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	opts := Options{Sessions: *sessions, Duration: *duration, QueueSize: *queue, Log: stderr,
		Pace:   Pace{FirstEvent: *first, Gap: *gap, Deltas: *deltas},
		Daemon: func(a ...string) *exec.Cmd { return exec.Command(bp, a...) }}
	out, err := Both(ctx, opts, *slowDur, *slowEmbed, *maxAdded)
	if err != nil {
		fmt.Fprintln(stderr, "memtray-load:", err)
		return 1
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		enc.Encode(out)
	} else {
		Print(stdout, out)
	}
	if dir := os.Getenv("SOAK_OUT"); dir != "" {
		if err := WriteSoak(dir, out); err != nil {
			fmt.Fprintln(stderr, "memtray-load:", err)
			return 1
		}
	}
	if !out.OK {
		return 1
	}
	return 0
}

// Both runs the normal load, then (slowDur > 0) the same load with a slow
// pipeline, and judges them: no failed agent request, the proxy's added
// p99 time to first byte under maxAdded in both, and drops counted (not
// blocking) when the pipeline falls behind.
func Both(ctx context.Context, o Options, slowDur, slowEmbed, maxAdded time.Duration) (Outcome, error) {
	var out Outcome
	fmt.Fprintf(o.Log, "normal run: %d sessions for %s\n", o.Sessions, o.Duration)
	r, err := Run(ctx, o)
	if err != nil {
		return out, err
	}
	out.Normal = r
	judge := func(name string, r Report) {
		if r.Proxied.Failed+r.Direct.Failed > 0 {
			out.Why = append(out.Why, fmt.Sprintf("%s: %d proxied and %d direct requests failed (first: %s)", name, r.Proxied.Failed, r.Direct.Failed, r.FirstFailure))
		}
		if r.Proxied.Requests == 0 {
			out.Why = append(out.Why, name+": no request completed")
		}
		if added := time.Duration(r.AddedTTFB.P99 * float64(time.Millisecond)); added > maxAdded {
			out.Why = append(out.Why, fmt.Sprintf("%s: the proxy added %v to the p99 time to first byte (at most %v)", name, added, maxAdded))
		}
		if r.APIErrs > 0 {
			out.Why = append(out.Why, fmt.Sprintf("%s: %d API errors", name, r.APIErrs))
		}
	}
	judge("normal", r)
	if slowDur > 0 {
		so := o
		so.Duration, so.SlowEmbed = slowDur, slowEmbed
		fmt.Fprintf(o.Log, "slow pipeline run: %d sessions for %s, embeddings take %s\n", o.Sessions, slowDur, slowEmbed)
		s, err := Run(ctx, so)
		if err != nil {
			return out, err
		}
		out.Slow = &s
		judge("slow pipeline", s)
		if s.Dropped == 0 {
			out.Why = append(out.Why, "slow pipeline: nothing was dropped, so the queue never filled: make the run longer or the embedder slower")
		}
	}
	out.OK = len(out.Why) == 0
	return out, nil
}

// Print writes the outcome as a table.
func Print(w io.Writer, out Outcome) {
	runs := []struct {
		name string
		r    Report
	}{{"normal", out.Normal}}
	if out.Slow != nil {
		runs = append(runs, struct {
			name string
			r    Report
		}{"slow pipeline (" + out.Slow.SlowEmbed + " per embedding)", *out.Slow})
	}
	for _, x := range runs {
		r := x.r
		fmt.Fprintf(w, "== %s: %d sessions, %.0f s\n", x.name, r.Sessions, r.Seconds)
		fmt.Fprintf(w, "agent requests   proxied %d (%.1f/s, %d failed), direct %d (%.1f/s, %d failed)\n",
			r.Proxied.Requests, r.Proxied.PerSec, r.Proxied.Failed, r.Direct.Requests, r.Direct.PerSec, r.Direct.Failed)
		fmt.Fprintf(w, "first byte ms    proxied p50 %.1f p99 %.1f | direct p50 %.1f p99 %.1f | added p50 %.1f p99 %.1f | ratio %.3f / %.3f\n",
			r.Proxied.TTFB.P50, r.Proxied.TTFB.P99, r.Direct.TTFB.P50, r.Direct.TTFB.P99, r.AddedTTFB.P50, r.AddedTTFB.P99, r.RatioTTFB[0], r.RatioTTFB[1])
		fmt.Fprintf(w, "whole answer ms  proxied p50 %.1f p99 %.1f | direct p50 %.1f p99 %.1f | added p50 %.1f p99 %.1f | ratio %.3f / %.3f\n",
			r.Proxied.Total.P50, r.Proxied.Total.P99, r.Direct.Total.P50, r.Direct.Total.P99, r.AddedTotal.P50, r.AddedTotal.P99, r.RatioTotal[0], r.RatioTotal[1])
		fmt.Fprintf(w, "beside it ms     recall p50 %.1f p99 %.1f (%d) | search p50 %.1f p99 %.1f (%d) | steward plan p50 %.1f p99 %.1f (%d) | %d errors\n",
			r.Recall.P50, r.Recall.P99, r.Recall.N, r.Search.P50, r.Search.P99, r.Search.N, r.Plan.P50, r.Plan.P99, r.Plan.N, r.APIErrs)
		fmt.Fprintf(w, "daemon           peak RSS %.0f MB (now %.0f MB); capture queue: %d captured, %d handled, %d dropped; %d memories\n",
			r.PeakRSSMB, r.RSSMB, r.Captured, r.Handled, r.Dropped, r.Memories)
	}
	if out.OK {
		fmt.Fprintln(w, "load held")
	} else {
		for _, why := range out.Why {
			fmt.Fprintln(w, "FAILED:", why)
		}
	}
}

// WriteSoak writes dir/load.json for the soak summary (cmd/soakreport):
// a line with the requests/s, and a line for its "load held" row.
func WriteSoak(dir string, out Outcome) error {
	r := out.Normal
	detail := fmt.Sprintf("%d sessions %.0f s: ttfb p50 %.1f ms p99 %.1f ms (added %.1f / %.1f, ratio %.2f / %.2f), total p99 %.0f ms; failed %d; peak rss %.0f MB; dropped %d",
		r.Sessions, r.Seconds, r.Proxied.TTFB.P50, r.Proxied.TTFB.P99, r.AddedTTFB.P50, r.AddedTTFB.P99, r.RatioTTFB[0], r.RatioTTFB[1],
		r.Proxied.Total.P99, r.Proxied.Failed+r.Direct.Failed, r.PeakRSSMB, r.Dropped)
	if s := out.Slow; s != nil {
		detail += fmt.Sprintf("; slow pipeline: %d dropped of %d, ttfb p99 added %.1f ms, failed %d", s.Dropped, s.Captured+s.Dropped, s.AddedTTFB.P99, s.Proxied.Failed+s.Direct.Failed)
	}
	rate, err := json.Marshal(Result{Name: "load", Metric: "requests/s", Value: float64(int(r.Proxied.PerSec*10+0.5)) / 10, OK: out.OK, Detail: detail})
	if err != nil {
		return err
	}
	held := fmt.Sprintf("%d sessions, %.1f req/s, ttfb p99 +%.0f ms, rss %.0f MB", r.Sessions, r.Proxied.PerSec, r.AddedTTFB.P99, r.PeakRSSMB)
	heldLine, err := json.Marshal(map[string]any{"name": "load", "metric": "load held", "value": held, "ok": out.OK, "detail": strings.Join(out.Why, "; ")})
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "load.json"), append(append(append(rate, '\n'), heldLine...), '\n'), 0o644)
}
