package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func writeFile(t *testing.T, path, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestTable(t *testing.T) {
	for _, c := range []struct {
		name  string
		files map[string]string
		args  []string
		code  int
		want  []string // lines (whitespace folded) the table must hold
	}{
		{
			name: "parts add up, missing ones are not run",
			files: map[string]string{
				"crash.json": `{"name":"crash","metric":"kills survived","value":400,"ok":true,"detail":"400 of 400"}
{"name":"crash","metric":"memories lost","value":0,"ok":true}`,
				"store-crash.json": `{"name":"store-crash","metric":"kills survived","value":600,"ok":true}` + "\n",
				"load.json":        `{"name":"load","metric":"load held","value":"64 sessions, p99 +3 ms","ok":true}`,
			},
			code: 0,
			want: []string{
				"kills survived 1000 yes crash+store-crash crash: 400 of 400",
				"faults survived not run -",
				"load held 64 sessions, p99 +3 ms yes load",
				"memories lost 0 yes crash",
			},
		},
		{
			name:  "a failed part fails the table",
			files: map[string]string{"secrets.json": `{"name":"secrets","metric":"secrets leaked","value":2,"ok":false,"detail":"2 hits in the log"}`},
			code:  1,
			want:  []string{"secrets leaked 2 NO secrets secrets: 2 hits in the log"},
		},
		{
			name:  "an expected part that wrote nothing fails it",
			files: map[string]string{"crash.json": `{"name":"crash","metric":"kills survived","value":3,"ok":true}`},
			args:  []string{"-expect", "crash,fuzz"},
			code:  1,
			want:  []string{"no result from: fuzz"},
		},
		{
			name:  "metrics outside the list come last",
			files: map[string]string{"x.json": `{"name":"x","metric":"disk full survived","value":"yes","ok":true}`},
			code:  0,
			want:  []string{"memories lost not run -", "disk full survived yes yes x"},
		},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			for name, data := range c.files {
				writeFile(t, filepath.Join(dir, name), data)
			}
			var out, errb bytes.Buffer
			code := run(append([]string{"-dir", dir}, c.args...), &out, &errb)
			if code != c.code {
				t.Errorf("exit %d, want %d; %s%s", code, c.code, out.String(), errb.String())
			}
			var lines []string
			for _, l := range strings.Split(out.String(), "\n") {
				lines = append(lines, strings.Join(strings.Fields(l), " "))
			}
			all := strings.Join(lines, "\n")
			for _, w := range c.want {
				if !strings.Contains(all, w) {
					t.Errorf("table lacks %q:\n%s", w, out.String())
				}
			}
			if strings.Index(all, "kills survived") > strings.Index(all, "memories lost") {
				t.Errorf("rows out of order:\n%s", all)
			}
		})
	}
}

func TestMarkdown(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "crash.json"), `{"name":"crash","metric":"kills survived","value":20,"ok":true,"detail":"a|b"}`)
	var out bytes.Buffer
	if code := run([]string{"-dir", dir, "-markdown"}, &out, &out); code != 0 {
		t.Fatalf("exit %d: %s", code, out.String())
	}
	if !strings.Contains(out.String(), "| kills survived | 20 | yes | crash | crash: a\\|b |") || !strings.Contains(out.String(), "| faults survived | not run | - |  |  |") {
		t.Errorf("markdown:\n%s", out.String())
	}
}

func TestBadResultFiles(t *testing.T) {
	for name, data := range map[string]string{
		"not json":      `kills: 3`,
		"no metric":     `{"name":"crash","value":1,"ok":true}`,
		"no name":       `{"metric":"kills survived","value":1,"ok":true}`,
		"object value":  `{"name":"crash","metric":"kills survived","value":{"n":1},"ok":true}`,
		"unknown field": `{"name":"crash","metric":"kills survived","value":1,"ok":true,"oops":1}`,
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			writeFile(t, filepath.Join(dir, "bad.json"), data)
			var out, errb bytes.Buffer
			if code := run([]string{"-dir", dir}, &out, &errb); code != 2 || !strings.Contains(errb.String(), "bad.json line 1") {
				t.Errorf("exit %d, stderr %q", code, errb.String())
			}
		})
	}
}

func TestRecord(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "store-crash.json")
	for _, args := range [][]string{
		{"record", "-out", out, "-name", "store-crash", "-metric", "kills survived", "-value", "600", "-ok=true", "-detail", "3 tests"},
		{"record", "-out", out, "-name", "store-crash", "-metric", "memories lost", "-value", "none", "-ok=false"},
	} {
		var errb bytes.Buffer
		if code := run(args, &errb, &errb); code != 0 {
			t.Fatalf("record: exit %d: %s", code, errb.String())
		}
	}
	rs, err := readFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(rs) != 2 || string(rs[0].Value) != "600" || !rs[0].OK || string(rs[1].Value) != `"none"` || rs[1].OK {
		t.Errorf("recorded %+v", rs)
	}
	var errb bytes.Buffer
	if code := run([]string{"record", "-name", "x"}, &errb, &errb); code != 2 {
		t.Errorf("record without -out: exit %d", code)
	}
}

// fuzzOutput is what `make -i fuzz` prints for a passing target, a
// failing one, a package that does not build and a run stopped by Go's
// coordinator race (go.dev/issue/75804).
const fuzzOutput = `go test -run '^$' -fuzz '^FuzzSplit$' -fuzztime 3s ./backend/chunk/
fuzz: elapsed: 0s, gathering baseline coverage: 0/312 completed
fuzz: elapsed: 1s, gathering baseline coverage: 312/312 completed, now fuzzing with 2 workers
fuzz: elapsed: 3s, execs: 34724 (11574/sec), new interesting: 9 (total: 321)
fuzz: elapsed: 4s, execs: 34724 (0/sec), new interesting: 9 (total: 321)
PASS
ok  	github.com/memtray/memtray/backend/chunk	4.195s
go test -run '^$' -fuzz '^FuzzSSE$' -fuzztime 3s ./backend/capture/
fuzz: elapsed: 0s, gathering baseline coverage: 0/20 completed
fuzz: elapsed: 2s, execs: 1000 (500/sec), new interesting: 1 (total: 21)
--- FAIL: FuzzSSE (2.10s)
    --- FAIL: FuzzSSE (0.00s)
        sse_test.go:40: boom

    Failing input written to testdata/fuzz/FuzzSSE/0123abcd
    To re-run:
    go test -run=FuzzSSE/0123abcd
FAIL
exit status 1
FAIL	github.com/memtray/memtray/backend/capture	2.301s
make: [Makefile:164: fuzz] Error 1 (ignored)
go test -run '^$' -fuzz '^FuzzX$' -fuzztime 3s ./backend/nope/
FAIL	github.com/memtray/memtray/backend/nope [build failed]
go test -run '^$' -fuzz '^FuzzClassify$' -fuzztime 1s ./backend/tidy/
fuzz: elapsed: 1s, execs: 6190 (5415/sec), new interesting: 0 (total: 204)
--- FAIL: FuzzClassify (1.24s)
    context deadline exceeded
FAIL
exit status 1
FAIL	github.com/memtray/memtray/backend/tidy	1.260s
`

func TestFuzzRows(t *testing.T) {
	lg, err := parseFuzzLog(strings.NewReader(fuzzOutput))
	if err != nil {
		t.Fatal(err)
	}
	if lg.targets != 4 || lg.failed != 2 || lg.execs != 41914 || len(lg.written) != 1 || len(lg.flaked) != 1 {
		t.Errorf("parsed %+v", lg)
	}
	if len(lg.failures) != 2 || lg.failures[0] != "FuzzSSE github.com/memtray/memtray/backend/capture" {
		t.Errorf("failures %q", lg.failures)
	}
	flake := fuzzOutput[strings.Index(fuzzOutput, "go test -run '^$' -fuzz '^FuzzClassify$'"):]
	if lg, err := parseFuzzLog(strings.NewReader(flake)); err != nil || lg.targets != 1 || lg.failed != 0 || len(lg.flaked) != 1 {
		t.Errorf("the coordinator's deadline race alone: %+v %v", lg, err)
	}

	root := t.TempDir()
	writeFile(t, filepath.Join(root, "backend/capture/testdata/fuzz/FuzzSSE/seed1"), "go test fuzz v1\n")
	writeFile(t, filepath.Join(root, "before.txt"), "./backend/capture/testdata/fuzz/FuzzSSE/seed1\n")
	writeFile(t, filepath.Join(root, "backend/capture/testdata/fuzz/FuzzSSE/0123abcd"), "go test fuzz v1\n")
	writeFile(t, filepath.Join(root, "fuzz.log"), fuzzOutput)
	out := filepath.Join(root, "out", "fuzz.json")
	os.MkdirAll(filepath.Dir(out), 0o755)
	if err := fuzz([]string{"-log", filepath.Join(root, "fuzz.log"), "-before", filepath.Join(root, "before.txt"), "-out", out}, root); err != nil {
		t.Fatal(err)
	}
	rs, err := readFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(rs) != 2 || rs[0].Metric != "fuzz executions" || string(rs[0].Value) != "41914" || rs[0].OK ||
		!strings.Contains(rs[0].Detail, "1 stopped with Go's") ||
		rs[1].Metric != "fuzz crashers" || string(rs[1].Value) != "1" || rs[1].OK ||
		!strings.Contains(rs[1].Detail, "backend/capture/testdata/fuzz/FuzzSSE/0123abcd") {
		t.Errorf("fuzz rows %+v", rs)
	}
}
