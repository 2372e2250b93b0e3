package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// testEvent is one line of `go test -json`.
type testEvent struct {
	Action  string
	Package string
	Test    string
	Output  string
	Elapsed float64
}

// FaultRun is what `make faults` found: each fault test and how it ended.
type FaultRun struct {
	Passed, Failed, Skipped []string
	Why                     map[string]string // a skipped or failed test's last words
}

// ReadFaults reads `go test -json` output and keeps the top-level
// TestFault… tests (the helper process test excluded).
func ReadFaults(r io.Reader) (FaultRun, error) {
	fr := FaultRun{Why: map[string]string{}}
	last := map[string]string{}
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var e testEvent
		if json.Unmarshal(sc.Bytes(), &e) != nil {
			continue
		}
		if !strings.HasPrefix(e.Test, "TestFault") || strings.Contains(e.Test, "/") || e.Test == "TestFaultHelperDaemon" {
			continue
		}
		name := e.Test
		switch e.Action {
		case "output":
			if o := strings.TrimSpace(e.Output); o != "" && !strings.HasPrefix(o, "===") && !strings.HasPrefix(o, "---") {
				last[name] = o
			}
		case "pass":
			fr.Passed = append(fr.Passed, fmt.Sprintf("%s (%.1f s)", name, e.Elapsed))
		case "fail":
			fr.Failed = append(fr.Failed, name)
			fr.Why[name] = last[name]
		case "skip":
			fr.Skipped = append(fr.Skipped, name)
			fr.Why[name] = last[name]
		}
	}
	for _, l := range [][]string{fr.Passed, fr.Failed, fr.Skipped} {
		sort.Strings(l)
	}
	return fr, sc.Err()
}

// summarizeFaults prints the fault tests read from stdin and, with
// $SOAK_OUT set, writes $SOAK_OUT/faults.json. It fails when a fault
// test failed or none ran.
func summarizeFaults(stdin io.Reader, stdout, stderr io.Writer) int {
	fr, err := ReadFaults(stdin)
	if err != nil {
		fmt.Fprintln(stderr, "memtray-load -faults:", err)
		return 1
	}
	for _, p := range fr.Passed {
		fmt.Fprintln(stdout, "survived ", p)
	}
	for _, s := range fr.Skipped {
		fmt.Fprintf(stdout, "skipped   %s: %s\n", s, fr.Why[s])
	}
	for _, f := range fr.Failed {
		fmt.Fprintf(stdout, "FAILED    %s: %s\n", f, fr.Why[f])
	}
	ok := len(fr.Failed) == 0 && len(fr.Passed) > 0
	total := len(fr.Passed) + len(fr.Failed) + len(fr.Skipped)
	fmt.Fprintf(stdout, "faults survived: %d of %d (%d skipped, %d failed)\n", len(fr.Passed), total, len(fr.Skipped), len(fr.Failed))
	if dir := os.Getenv("SOAK_OUT"); dir != "" {
		detail := fmt.Sprintf("%d of %d fault tests passed", len(fr.Passed), total)
		for _, s := range fr.Skipped {
			detail += fmt.Sprintf("; %s skipped (%s)", strings.TrimPrefix(s, "TestFault"), fr.Why[s])
		}
		for _, f := range fr.Failed {
			detail += "; " + strings.TrimPrefix(f, "TestFault") + " FAILED"
		}
		b, _ := json.Marshal(Result{Name: "faults", Metric: "faults survived", Value: float64(len(fr.Passed)), OK: ok, Detail: detail})
		if err := os.MkdirAll(dir, 0o755); err == nil {
			err = os.WriteFile(filepath.Join(dir, "faults.json"), append(b, '\n'), 0o644)
		}
		if err != nil {
			fmt.Fprintln(stderr, "memtray-load -faults:", err)
			return 1
		}
	}
	if !ok {
		return 1
	}
	return 0
}
