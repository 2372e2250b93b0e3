package ingest

import (
	"bufio"
	"encoding/json"
	"os"
	"testing"

	"github.com/memtray/memtray/backend/memory"
)

// sharedFilterSet is the write pipeline's labelled dev set in ../shared,
// beside the repository; it is not part of it.
const sharedFilterSet = "../../../shared/eval/filter-dev.jsonl"

// filterSeeds returns the replies and prompts of the filter dev set, as
// fuzz seeds; none when it is absent.
func filterSeeds() []string {
	f, err := os.Open(sharedFilterSet)
	if err != nil {
		return nil
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var l struct{ User, Assistant string }
		if json.Unmarshal(sc.Bytes(), &l) == nil {
			out = append(out, l.Assistant, l.User)
		}
	}
	return out
}

// FuzzAnalyze: the gates' reading of any reply never panics and its counts
// agree with each other.
func FuzzAnalyze(f *testing.F) {
	f.Add("Okay. Running `go test ./...` now.\n\n```\n$ go test\nok\n```")
	f.Add("Root cause: `cmd/x/main.go` sets FOO=bar because the default is wrong; never change it.")
	f.Add("1. \"Title\" (example.com)\n2. r/go thread: \"x\"\n- Updated `a.go`")
	f.Add("...\n```unterminated\nfoo")
	for _, s := range filterSeeds() {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		sig := Analyze(s)
		n := 0
		for _, c := range sig.ByClass {
			n += c
		}
		if n != sig.Sentences || sig.Content() > sig.Sentences {
			t.Fatalf("classes %v do not add up to %d sentences", sig.ByClass, sig.Sentences)
		}
		if sig.Specificity < 0 || sig.FenceShare < 0 || sig.FenceShare > 1.0001 {
			t.Fatalf("out of range: %+v", sig)
		}
		_ = memory.LoadBearing(s)
		_ = GuessKind(s)
	})
}
