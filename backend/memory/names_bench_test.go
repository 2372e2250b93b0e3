package memory

import "testing"

// nameBenchTexts are memory-like texts: prose, names written bare, names
// inside typographic quotes and brackets, settings and URLs.
var nameBenchTexts = []string{
	"The team decided to keep the retry budget at three attempts and to log every failure with its cause.",
	"Run the slicer with --export-gcode and -a, the config from ./profiles/ and the output in build/out/ (see cmd/opk/main.go).",
	"The CLI is called with “--load <ini>” for the Slic3r family and ‘-a’ for all of it; «assets/» holds the images.",
	"Set MEMTRAY_PORT=7432 and $GOFLAGS before `make test`; issue #1234 on :8080 was fixed in v0.4.1-rc.1.",
	"Docs (see https://example.com/a/b) say os.path.join(a, b) replaced abs(self._value) in self._value's getter.",
}

// BenchmarkNameTerms measures NameTerms, which Open runs on every record
// (the names field's count) and every write runs on its text.
func BenchmarkNameTerms(b *testing.B) {
	for b.Loop() {
		for _, t := range nameBenchTexts {
			NameTerms(t)
		}
	}
}

// BenchmarkLoadBearing measures LoadBearing, which dedup and the steward
// run on both texts of a pair.
func BenchmarkLoadBearing(b *testing.B) {
	for b.Loop() {
		for _, t := range nameBenchTexts {
			LoadBearing(t)
		}
	}
}
