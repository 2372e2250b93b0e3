package ingest

import (
	"strings"
	"testing"
)

// TestCutMendsDanglingPronoun: a sentence left opening with a pronoun
// whose referent was in the sentence cut gets the cut sentence's subject
// back, or is cut too when that subject cannot be found; a pronoun after
// a kept sentence, or a demonstrative before a noun, is left alone.
func TestCutMendsDanglingPronoun(t *testing.T) {
	tests := []struct {
		name, text string
		cut        []string
		want       string
	}{
		{"code span subject put back",
			"`retry.sh` lives in `tools/`. It backs off exponentially up to 30 seconds on HTTP 429.",
			[]string{"`retry.sh` lives in `tools/`."},
			"`retry.sh` backs off exponentially up to 30 seconds on HTTP 429."},
		{"a connective before the subject and the pronoun",
			"So `ledger.db` is ignored by git. But it IS committed, added with `git add -f` for the fixtures.",
			[]string{"So `ledger.db` is ignored by git."},
			"But `ledger.db` IS committed, added with `git add -f` for the fixtures."},
		{"the noun phrase before the verb, contraction expanded",
			"The retry helper lives in `tools/retry.sh`. It's capped at 30 seconds by `MAX_BACKOFF` in `backoff.go`.",
			[]string{"The retry helper lives in `tools/retry.sh`."},
			"The retry helper is capped at 30 seconds by `MAX_BACKOFF` in `backoff.go`."},
		{"no subject to put back: the dangling rest is cut",
			"The importer batches 500 rows per insert in `batch.go`. Maybe we could pool these workers across imports. They would share the `pool.go` worker limit.",
			[]string{"Maybe we could pool these workers across imports."},
			"The importer batches 500 rows per insert in `batch.go`."},
		{"a bare demonstrative stands for the claim cut: cut too",
			"The importer batches 500 rows per insert in `batch.go`. Probably `flush.go` is slow because it syncs each batch. That means `importer.Run` waits on disk per batch.",
			[]string{"Probably `flush.go` is slow because it syncs each batch."},
			"The importer batches 500 rows per insert in `batch.go`."},
		{"the correction after the cut stays",
			"The importer batches 500 rows per insert in `batch.go`. The cache is never pruned. That was wrong: `cache.Sweep` prunes it nightly.",
			[]string{"The cache is never pruned."},
			"The importer batches 500 rows per insert in `batch.go`. That was wrong: `cache.Sweep` prunes it nightly."},
		{"a demonstrative before a noun names its subject",
			"The importer batches 500 rows per insert in `batch.go`. Maybe `flush.go` is slow. This helper logs every flush to `flush.log` with its duration.",
			[]string{"Maybe `flush.go` is slow."},
			"The importer batches 500 rows per insert in `batch.go`. This helper logs every flush to `flush.log` with its duration."},
		{"a pronoun after a kept sentence",
			"Maybe `flush.go` is slow. The importer batches 500 rows per insert in `batch.go`. It retries a failed batch with `retryBatch`.",
			[]string{"Maybe `flush.go` is slow."},
			"The importer batches 500 rows per insert in `batch.go`. It retries a failed batch with `retryBatch`."},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := Candidate{Text: tc.text, Keep: true}
			cutSentences(&c, tc.cut, "revised later: x")
			if !c.Keep || c.Text != tc.want {
				t.Errorf("kept %v %q, want %q", c.Keep, c.Text, tc.want)
			}
			for _, p := range c.cuts {
				if strings.Contains(c.Text, p.text) {
					t.Errorf("cut piece %q still in %q", p.text, c.Text)
				}
			}
		})
	}
}

// TestReplaceMendsDanglingClause: a clause cut out of a sentence leaves
// the rest with the clause's subject in place of its pronoun, or cuts the
// sentence whole when the clause has none; a sentence after one cut whole
// is mended as cutSentences mends it.
func TestReplaceMendsDanglingClause(t *testing.T) {
	tests := []struct {
		name, text string
		repl       [][3]string
		want       string
	}{
		{"the clause's subject put back",
			"The retry helper lives in `tools/retry.sh`, and it backs off exponentially up to 30 seconds. The payments API rate-limits bursts of `POST /charges`.",
			[][3]string{{"The retry helper lives in `tools/retry.sh`, and it backs off exponentially up to 30 seconds.", "It backs off exponentially up to 30 seconds.", "The retry helper lives in `tools/retry.sh`, and"}},
			"The retry helper backs off exponentially up to 30 seconds. The payments API rate-limits bursts of `POST /charges`."},
		{"no subject: the sentence is cut whole",
			"Those two live in `tools/`, and they back off exponentially up to 30 seconds. The payments API rate-limits bursts of `POST /charges`.",
			[][3]string{{"Those two live in `tools/`, and they back off exponentially up to 30 seconds.", "They back off exponentially up to 30 seconds.", "Those two live in `tools/`, and"}},
			"The payments API rate-limits bursts of `POST /charges`."},
		{"the sentence after one cut whole",
			"`retry.sh` lives in `tools/`. It backs off exponentially up to 30 seconds on HTTP 429 from `POST /charges`.",
			[][3]string{{"`retry.sh` lives in `tools/`.", "", "`retry.sh` lives in `tools/`."}},
			"`retry.sh` backs off exponentially up to 30 seconds on HTTP 429 from `POST /charges`."},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := Candidate{Text: tc.text, Keep: true}
			replaceSentences(&c, tc.repl, "revised later: x")
			if !c.Keep || c.Text != tc.want {
				t.Errorf("kept %v %q, want %q", c.Keep, c.Text, tc.want)
			}
		})
	}
}

// TestCutTurnsKeepReferent: end to end, a statement with a clause cut
// keeps its subject for what it says of it, and one with a sentence cut
// keeps the correction that follows the sentence.
func TestCutTurnsKeepReferent(t *testing.T) {
	tests := []struct{ turn, want string }{
		{"moved", "The retry helper backs off exponentially"},
		{"self-corrected", "That was wrong: `thumbs.Sweep` runs nightly"},
	}
	for _, tc := range tests {
		t.Run(tc.turn, func(t *testing.T) {
			ct := cutTurns[tc.turn]
			if got := keptText(Distill(ct.turn, modelSaid(ct.later...))); !strings.Contains(got, tc.want) {
				t.Errorf("kept %q, want %q in it", got, tc.want)
			}
		})
	}
}

// TestCutSubject: the subject a cut piece opens with, when it is found
// reliably.
func TestCutSubject(t *testing.T) {
	tests := []struct{ piece, want string }{
		{"`retry.sh` lives in `tools/`.", "`retry.sh`"},
		{"So `ledger.db` is ignored by git.", "`ledger.db`"},
		{"The retry helper lives in `tools/`, and", "the retry helper"},
		{"It lives in `tools/`.", ""},
		{"Maybe we could pool these workers.", ""},
		{"Probably `flush.go` is slow.", ""},
		{"`RetryPolicy` is read from `retry.toml`.", "`RetryPolicy`"},
		{"RetryPolicy is read from `retry.toml`.", "RetryPolicy"},
		{"Those two live in `tools/`, and", ""},
		{"When the cache is cold and the disk is slow the importer is slow.", ""},
	}
	for _, tc := range tests {
		if got := cutSubject(tc.piece); got != tc.want {
			t.Errorf("cutSubject(%q) = %q, want %q", tc.piece, got, tc.want)
		}
	}
}

// TestPronounTakesSentenceBefore: a kept sentence opening with a bare
// pronoun, right after a sentence of the same response that was not kept
// and names something, takes that sentence as its context; a sentence
// before that names nothing, asks, or was kept itself is not joined, and
// a demonstrative before a noun names its own subject.
func TestPronounTakesSentenceBefore(t *testing.T) {
	tests := []struct {
		name   string
		text   string
		want   string // one kept statement holds it
		absent string // no kept statement holds it
	}{
		{
			name: "narration naming the block",
			text: "Here is the corrected `parse_args` block. It reads the `--limit` flag before the positional arguments, so `--limit 5 a.txt` parses.",
			want: "Here is the corrected `parse_args` block. It reads the `--limit` flag",
		},
		{
			name: "a plan naming the functions",
			text: "The two new helpers will be named `chunkGen` and `chunkAsyncGen`. They use `function*` syntax and yield every chunk of at most `size` items exactly once.",
			want: "named `chunkGen` and `chunkAsyncGen`. They use `function*` syntax",
		},
		{
			name:   "a sentence naming nothing is no context",
			text:   "Let me look at it again. They use `function*` syntax and yield every chunk of at most `size` items exactly once.",
			want:   "They use `function*` syntax",
			absent: "look at it again",
		},
		{
			name: "a demonstrative before a verb of its own",
			text: "Here is the corrected `parse_args` block. This reads the `--limit` flag before the positional arguments, so `--limit 5 a.txt` parses.",
			want: "Here is the corrected `parse_args` block. This reads the `--limit` flag",
		},
		{
			name:   "a demonstrative before a noun names its subject",
			text:   "Here is the corrected `parse_args` block. This flag parser reads `--limit` before the positional arguments, so `--limit 5 a.txt` parses.",
			want:   "This flag parser reads `--limit`",
			absent: "Here is the corrected",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			turns := GroupTurns(sessionOf("s", "how do the chunk helpers parse their flags?", tt.text)) // the final answer: no tool-loop lead
			got := keptText(Distill(turns[0], nil))
			if !strings.Contains(got, tt.want) {
				t.Errorf("kept %q, want %q in it", got, tt.want)
			}
			if tt.absent != "" && strings.Contains(got, tt.absent) {
				t.Errorf("kept %q, want no %q", got, tt.absent)
			}
		})
	}
}

// TestWithContext: the sentence before joins only a sentence opening with
// a bare pronoun, and only when it names something and corrects nothing.
func TestWithContext(t *testing.T) {
	const st = "It reads `--limit` first."
	tests := []struct{ st, before, want string }{
		{st, "Here is the corrected `parse_args` block.", "Here is the corrected `parse_args` block. " + st},
		{"They're cached in `~/.cache/chunks`.", "The helpers are `chunkGen` and `chunkAsyncGen`.", "The helpers are `chunkGen` and `chunkAsyncGen`. They're cached in `~/.cache/chunks`."},
		{st, "", st},
		{st, "Let me look at it again.", st},
		{st, "Actually `parse_args` was not the cause.", st},
		{st, "If you want, we can add a `--limit` flag to `parse_args`.", st},
		{"The `parse_args` block reads `--limit` first.", "Here is the corrected `parse_args` block.", "The `parse_args` block reads `--limit` first."},
		{"Iterating over `rows` is linear.", "Here is the `scan` loop.", "Iterating over `rows` is linear."},
		{"That leverages `bufio.Scanner` for each line.", "Here is the `scan` loop.", "Here is the `scan` loop. That leverages `bufio.Scanner` for each line."},
		{"This settings file is read first.", "Here is the `scan` loop.", "This settings file is read first."},
	}
	for _, tc := range tests {
		if got := withContext(tc.st, tc.before); got != tc.want {
			t.Errorf("withContext(%q, %q) = %q, want %q", tc.st, tc.before, got, tc.want)
		}
	}
}

// TestBarePronounWholeWord: "it" and "they" are pronouns only as whole
// words: "Iterating" or "Items" opening a sentence is no pronoun, and
// withSubject leaves it as it is.
func TestBarePronounWholeWord(t *testing.T) {
	tests := []struct {
		st   string
		want bool
	}{
		{"It reads `--limit` first.", true},
		{"It's in `tools/`.", true},
		{"They're cached.", true},
		{"So it runs nightly.", true},
		{"Iterating over `rows` is linear.", false},
		{"Items are sorted by `id`.", false},
		{"Theyre", false},
	}
	for _, tc := range tests {
		if got := barePronoun.MatchString(tc.st); got != tc.want {
			t.Errorf("barePronoun(%q) = %v, want %v", tc.st, got, tc.want)
		}
	}
	if got, ok := withSubject("Iterating over `rows` is linear.", "the scan loop"); ok || got != "Iterating over `rows` is linear." {
		t.Errorf("withSubject on %q = %q, %v; want it unchanged", "Iterating over `rows` is linear.", got, ok)
	}
}

// TestBarePronounDemonstrativeVerb: a demonstrative before a verb of its
// own ("This creates", "That leveraged") is a bare pronoun; one before a
// noun, even a noun in the shape of a verb ("This settings file", "this
// class", "These files"), names its own subject.
func TestBarePronounDemonstrativeVerb(t *testing.T) {
	tests := []struct {
		st   string
		want bool
	}{
		{"This creates the `deploy` environment on first run.", true},
		{"That leverages `sync.Pool` for the buffers.", true},
		{"So this uses it for every request.", true},
		{"This fails.", true},
		{"This applies to `cmd/` only.", true},
		{"That caused the flaky `TestSweep`.", true},
		{"These removed the stale locks.", true},
		{"This is a wrapper around `fetch`.", true},
		{"This settings file is read first.", false},
		{"This class wraps `fetch`.", false},
		{"That status flag is set by `Run`.", false},
		{"This alias points at `origin/main`.", false},
		{"These files hold the fixtures.", false},
		{"These create the tables.", false}, // a plural verb has a noun's shape: not told
		{"This feed lists releases.", false},
		{"This Postgres instance runs on 5433.", false},
		{"This new helper reads `--limit`.", false},
	}
	for _, tc := range tests {
		if got := barePronoun.MatchString(tc.st); got != tc.want {
			t.Errorf("barePronoun(%q) = %v, want %v", tc.st, got, tc.want)
		}
	}
}
