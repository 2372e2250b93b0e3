package eval

import (
	"context"
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

func TestRecallDevShared(t *testing.T) {
	path := sharedFile(t, "eval/recall-dev.json")
	rep, err := RunRecall(context.Background(), path, Options{TempDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	rep.WriteTable(&b)
	t.Log("\n" + b.String())
}
