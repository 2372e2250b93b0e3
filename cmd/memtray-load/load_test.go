package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/memtray/memtray/backend/cli"
)

// TestMain lets the test binary be the daemon: with MEMTRAY_LOAD_DAEMON
// set it runs memtray's command line instead of the tests.
func TestMain(m *testing.M) {
	if os.Getenv("MEMTRAY_LOAD_DAEMON") == "1" {
		os.Exit(cli.Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

// selfDaemon runs this test binary as `memtray ARGS...`.
func selfDaemon(args ...string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), "MEMTRAY_LOAD_DAEMON=1")
	return cmd
}

// TestLoadSmoke is the short version of `make load` for `make test`: 8
// sessions for 3 s through a daemon subprocess, then 2 s with a pipeline
// so slow (and a queue so small) that it must drop. No agent request may
// fail, drops must be counted, and the summary line is written.
func TestLoadSmoke(t *testing.T) {
	var log bytes.Buffer
	o := Options{Sessions: 8, Duration: 3 * time.Second, QueueSize: 4, Daemon: selfDaemon, Log: &log,
		Pace: Pace{FirstEvent: 30 * time.Millisecond, Gap: 5 * time.Millisecond, Deltas: 10}}
	// A generous bound on the added latency: the race detector and other
	// tests share the machine; `make load` applies the real one.
	out, err := Both(context.Background(), o, 2*time.Second, 300*time.Millisecond, 2*time.Second)
	t.Log(log.String())
	if err != nil {
		t.Fatal(err)
	}
	var table bytes.Buffer
	Print(&table, out)
	t.Log("\n" + table.String())
	r, s := out.Normal, out.Slow
	if r.Proxied.Requests == 0 || r.Direct.Requests == 0 || r.Proxied.Failed+r.Direct.Failed > 0 {
		t.Errorf("normal run: %+v / %+v (%s)", r.Proxied, r.Direct, r.FirstFailure)
	}
	// Under the race detector the daemon's first recall (the word vectors
	// loading) can outlast the run: one of the three loops is enough here.
	if r.Handled == 0 || r.Memories == 0 || r.PeakRSSMB <= 0 || r.Recall.N+r.Search.N+r.Plan.N == 0 || r.APIErrs > 0 {
		t.Errorf("normal run: handled %d, memories %d, rss %.0f, api %d/%d/%d, errors %d", r.Handled, r.Memories, r.PeakRSSMB, r.Recall.N, r.Search.N, r.Plan.N, r.APIErrs)
	}
	if s == nil || s.Dropped == 0 || s.Proxied.Failed+s.Direct.Failed > 0 {
		t.Errorf("slow pipeline run: %+v", s)
	}
	if !out.OK {
		t.Errorf("not ok: %v", out.Why)
	}
	dir := t.TempDir()
	if err := WriteSoak(dir, out); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(filepath.Join(dir, "load.json"))
	lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	var res Result
	var held struct {
		Name, Metric, Value string
		OK                  bool
	}
	if len(lines) != 2 || json.Unmarshal([]byte(lines[0]), &res) != nil || res.Name != "load" || res.Metric != "requests/s" || res.Value <= 0 || !strings.Contains(res.Detail, "p99") ||
		json.Unmarshal([]byte(lines[1]), &held) != nil || held.Metric != "load held" || !strings.Contains(held.Value, "req/s") || held.OK != out.OK {
		t.Errorf("load.json %q", b)
	}
}

func TestSummarizeFaults(t *testing.T) {
	in := strings.Join([]string{
		`{"Action":"run","Package":"p","Test":"TestFaultDiskFull"}`,
		`{"Action":"output","Package":"p","Test":"TestFaultDiskFull","Output":"    fault_test.go:1: cannot mount a tmpfs (needs root): operation not permitted\n"}`,
		`{"Action":"skip","Package":"p","Test":"TestFaultDiskFull","Elapsed":0}`,
		`{"Action":"pass","Package":"p","Test":"TestFaultUpstreamDown","Elapsed":3.7}`,
		`{"Action":"pass","Package":"p","Test":"TestFaultUpstreamDown/sub","Elapsed":1}`,
		`{"Action":"skip","Package":"p","Test":"TestFaultHelperDaemon","Elapsed":0}`,
		`{"Action":"pass","Package":"p","Test":"TestOther","Elapsed":1}`,
		`not json`,
	}, "\n")
	dir := t.TempDir()
	t.Setenv("SOAK_OUT", dir)
	var out, errb bytes.Buffer
	if code := summarizeFaults(strings.NewReader(in), &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s %s", code, out.String(), errb.String())
	}
	if !strings.Contains(out.String(), "faults survived: 1 of 2 (1 skipped, 0 failed)") {
		t.Errorf("output %q", out.String())
	}
	b, _ := os.ReadFile(filepath.Join(dir, "faults.json"))
	var r Result
	if json.Unmarshal(b, &r) != nil || r.Name != "faults" || r.Value != 1 || !r.OK || !strings.Contains(r.Detail, "DiskFull skipped (") {
		t.Errorf("faults.json %s", b)
	}
	fail := in + "\n" + `{"Action":"fail","Package":"p","Test":"TestFaultClockJump","Elapsed":2}`
	if code := summarizeFaults(strings.NewReader(fail), &out, &errb); code != 1 {
		t.Errorf("a failed fault test: exit %d", code)
	}
}
