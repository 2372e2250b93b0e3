package eval

import (
	"context"
	"io"
	"os"
	"strings"
	"testing"
)

// sharedFile returns a path under /work/shared (or $MEMTRAY_SHARED), skipping
// the test when it is absent.
func sharedFile(t testing.TB, rel string) string {
	t.Helper()
	root := os.Getenv("MEMTRAY_SHARED")
	if root == "" {
		root = "../../../shared"
	}
	p := root + "/" + rel
	if _, err := os.Stat(p); err != nil {
		t.Skipf("%s absent: %v", p, err)
	}
	return p
}

// logTable logs a report's table, so `go test -v` shows the numbers.
func logTable(t testing.TB, rep interface{ WriteTable(io.Writer) error }) {
	t.Helper()
	var b strings.Builder
	if err := rep.WriteTable(&b); err != nil {
		t.Fatal(err)
	}
	t.Log("\n" + b.String())
}

func TestRecallDevShared(t *testing.T) {
	path := sharedFile(t, "eval/recall-dev.json")
	rep, err := RunRecall(context.Background(), path, Options{TempDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	logTable(t, rep)
}

func TestLoCoMoShared(t *testing.T) {
	if testing.Short() || os.Getenv("MEMTRAY_EVAL_LONG") == "" {
		t.Skip("set MEMTRAY_EVAL_LONG=1 to run LoCoMo (about a minute)")
	}
	path := sharedFile(t, "data/locomo/locomo10.json")
	rep, err := RunLoCoMo(context.Background(), path, Options{TempDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	logTable(t, rep)
}

func TestLongMemEvalShared(t *testing.T) {
	if testing.Short() || os.Getenv("MEMTRAY_EVAL_LONG") == "" {
		t.Skip("set MEMTRAY_EVAL_LONG=1 to run LongMemEval")
	}
	file := os.Getenv("MEMTRAY_LME_FILE")
	if file == "" {
		file = "longmemeval_oracle.json"
	}
	path := sharedFile(t, "data/longmemeval/"+file)
	rep, err := RunLongMemEval(context.Background(), path, Options{TempDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	logTable(t, rep)
}
