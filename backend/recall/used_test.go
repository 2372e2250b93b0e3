package recall

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/memtray/memtray/backend/search"
	"github.com/memtray/memtray/backend/store"
)

// TestUsableTokens: a memory's paths, file names, identifiers, settings,
// flags and URLs can show it was used; its words, names written as words
// and bare numbers never can.
func TestUsableTokens(t *testing.T) {
	cases := []struct {
		text string
		want []string
	}{
		{"Run the integration tests with --wal-dir=/tmp/wal via scripts/itest.sh.", []string{"--wal-dir=/tmp/wal", "/tmp/wal", "scripts/itest.sh"}},
		{"Retries live in payment_retry and use maxBackoff from config.yaml.", []string{"config.yaml", "maxBackoff", "payment_retry"}},
		{"Set LOG_LEVEL=debug, see https://example.com/docs.", []string{"/example.com/docs", "LOG_LEVEL", "LOG_LEVEL=debug", "https://example.com/docs"}},
		{"We deploy on Fridays with Postgres and Redis after 30 days.", nil},
		{"The port is 8080 and the timeout 200 ms.", nil},
	}
	for _, tc := range cases {
		got := UsableTokens(tc.text)
		slices.Sort(got)
		if !slices.Equal(got, tc.want) {
			t.Errorf("UsableTokens(%q) = %q, want %q", tc.text, got, tc.want)
		}
	}
}

// TestUsedIn: a token counts as used when a step wrote it, the user's
// words did not, and no result the turn read before showed it.
func TestUsedIn(t *testing.T) {
	toks := []string{"scripts/itest.sh"}
	cases := []struct {
		name  string
		user  []string
		steps []TurnStep
		want  bool
	}{
		{"a call wrote it", []string{"run the tests"}, []TurnStep{{Wrote: []string{`Bash {"command":"bash scripts/itest.sh"}`}}}, true},
		{"the text wrote it", []string{"run the tests"}, []TurnStep{{}, {Wrote: []string{"I ran `scripts/itest.sh`."}}}, true},
		{"the prompt held it", []string{"run scripts/itest.sh"}, []TurnStep{{Wrote: []string{"bash scripts/itest.sh"}}}, false},
		{"the user added it later", []string{"run the tests", "use scripts/itest.sh"}, []TurnStep{{Wrote: []string{"bash scripts/itest.sh"}}}, false},
		{"a result showed it first", []string{"run the tests"}, []TurnStep{{Wrote: []string{"ls scripts"}}, {Read: []string{"scripts/itest.sh"}, Wrote: []string{"bash scripts/itest.sh"}}}, false},
		{"a result showed it after", []string{"run the tests"}, []TurnStep{{Wrote: []string{"bash scripts/itest.sh"}}, {Read: []string{"scripts/itest.sh: ok"}}}, true},
		{"a longer path", []string{"run the tests"}, []TurnStep{{Wrote: []string{"bash /src/ledgerd/scripts/itest.sh"}}}, true},
		{"another file", []string{"run the tests"}, []TurnStep{{Wrote: []string{"bash scripts/itest.sh.bak"}}}, false},
		{"nothing written", []string{"run the tests"}, []TurnStep{{Wrote: []string{"go test ./..."}}}, false},
	}
	for _, tc := range cases {
		if got := usedIn(toks, tc.user, tc.steps); got != tc.want {
			t.Errorf("%s: usedIn = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// BenchmarkUsed measures what implicit feedback adds to a captured turn,
// against a prompt recall in the same run (the baseline): the log holds
// 2,000 recalls of other sessions; "absent" is a turn of a session that
// recalled nothing (Used reads the log's usedScan newest entries and
// stops), "found" one whose prompt's recall is the newest (the memories
// read and matched; recorded once, then found recorded).
func BenchmarkUsed(b *testing.B) {
	ctx := context.Background()
	rec, built, st := openStore(b)
	s, err := New(Options{Recaller: rec, Built: built, Log: st, Clock: &testClock{T: time.Date(2026, 5, 6, 7, 8, 9, 0, time.UTC)}})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = s.Close() })
	out, err := s.Recall(ctx, search.RecallRequest{SessionID: "filler", Prompt: prompt})
	if err != nil || len(out.Hits) == 0 {
		b.Fatalf("recalled %d, %v", len(out.Hits), err)
	}
	es := make([]store.RecallEntry, 2000)
	for i := range es {
		es[i] = store.RecallEntry{At: time.Date(2026, 5, 6, 7, 8, 9, 0, time.UTC), SessionID: fmt.Sprint("other", i), Event: search.EventPrompt, Prompt: prompt,
			Given: []store.RecallMemory{{ID: out.Hits[0].Memory.ID, Score: 0.5, Preview: "p"}}}
	}
	if _, err := st.AddRecalls(ctx, es, store.RecallLimits{}); err != nil {
		b.Fatal(err)
	}
	if _, err := s.Recall(ctx, search.RecallRequest{SessionID: "found", Prompt: prompt}); err != nil {
		b.Fatal(err)
	}
	turn := func(sid string) Turn {
		return Turn{SessionID: sid, Prompt: prompt, Steps: []TurnStep{{Wrote: []string{"I read backend/payments/retry.go and ran go test ./..."}}}}
	}
	for _, sid := range []string{"absent", "found"} {
		b.Run("used/"+sid, func(b *testing.B) {
			for range b.N {
				if _, err := s.Used(ctx, turn(sid)); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	// After the turns: its recalls would push "found" out of the scan.
	n := 0
	b.Run("recall", func(b *testing.B) {
		for range b.N {
			n++
			if _, err := s.Recall(ctx, search.RecallRequest{SessionID: fmt.Sprint("bench", n), Prompt: prompt}); err != nil {
				b.Fatal(err)
			}
		}
	})
}
