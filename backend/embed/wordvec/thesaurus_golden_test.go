package wordvec

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"strings"
	"testing"
)

// thesaurusProbes are the forms TestBuiltinThesaurusUnchanged looks up for
// every entry: the word itself and inflections that go through each of
// morphy's detachment rules (most of them miss, which is pinned too).
var thesaurusProbes = []string{"", "s", "es", "ed", "ing", "er", "est", "zz"}

// hashRelated writes word and what Related gives for it to h.
func hashRelated(h io.Writer, th *Thesaurus, word string) {
	b := append(make([]byte, 0, 256), word...)
	b = append(b, '\t')
	th.Related(word, func(r string, synonym bool) {
		b = append(b, r...)
		b = append(b, ' ', "HS"[b2i(synonym)], ',')
	})
	h.Write(append(b, '\n'))
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// TestBuiltinThesaurusUnchanged: the built-in thesaurus relates every one of
// its words, and their inflections, to exactly the words (in order, with the
// same synonym flags) it did at 1368516, before its storage changed
// (exp-speed), and WriteTo writes the same bytes. A change of the thesaurus
// data must change this hash with it.
func TestBuiltinThesaurusUnchanged(t *testing.T) {
	const want = "0c3167153fabe99016957d8312d45d4331d3795c536adc400790c1febf31be18"
	th, err := BuiltinThesaurus()
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if _, err := th.WriteTo(&out); err != nil {
		t.Fatal(err)
	}
	sum := sha256.New()
	h := bufio.NewWriterSize(sum, 64<<10)
	h.Write(out.Bytes())
	fmt.Fprintf(h, "%d entries\n", th.Len())
	sc := bufio.NewScanner(bytes.NewReader(out.Bytes()))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	sc.Scan() // the header
	n := 0
	for sc.Scan() {
		word, _, _ := strings.Cut(sc.Text(), "\t")
		for _, p := range thesaurusProbes {
			hashRelated(h, th, word+p)
		}
		n++
	}
	if n != th.Len() {
		t.Errorf("WriteTo wrote %d entries, Len is %d", n, th.Len())
	}
	for _, w := range []string{"", "a", "zzzzzz", "0", "-", "xyzzy", "ſ", "Bill", "bill ", "bill\t"} {
		hashRelated(h, th, w)
	}
	h.Flush()
	if got := hex.EncodeToString(sum.Sum(nil)); got != want {
		t.Errorf("built-in thesaurus hash %s, want %s", got, want)
	}
}
