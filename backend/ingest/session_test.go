package ingest

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/memtray/memtray/backend/memory"
	"github.com/memtray/memtray/backend/store"
)

// correctedSession is three turns of one session: turn 1 states a cause,
// turn 2 something unrelated, turn 3 corrects turn 1.
func correctedSession(id string, keepRevision bool) []Turn {
	fix := "Actually the `payments/retry.go` backoff was not the cause: `TestCheckout` fails because the `orders/lock.go` mutex is held across the webhook call, so the handler waits for the 30 s lock timeout."
	if !keepRevision {
		fix = "The `TestCheckout` failure still shows up with the `payments/retry.go` backoff disabled."
	}
	var exs []memory.Exchange
	for i, tt := range [][]string{
		{"why is TestCheckout flaky?", "Let me look at the test.", "The flaky `TestCheckout` failure comes from the `payments/retry.go` backoff, which sleeps on the real clock instead of the injected `Clock`."},
		{"where is the API documented?", "The `docs/api.md` page lists every endpoint of the shop with its request schema and error codes."},
		{"it still fails sometimes", "Let me rerun it with -count=50.", fix},
	} {
		for _, ex := range sessionOf(id, tt[0], tt[1:]...) {
			ex.UserTurns = i + 1
			exs = append(exs, ex)
		}
	}
	return GroupTurns(exs)
}

// liveTexts lists the texts of the memories recall sees, sorted.
func liveTexts(t *testing.T, st *store.Store) []string {
	t.Helper()
	var out []string
	if err := st.Iterate(context.Background(), store.Filter{}, func(m memory.Memory) error {
		if !m.Superseded() {
			out = append(out, m.Text)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	slices.Sort(out)
	return out
}

// TestReviseEarlierTurns: a session distilled turn by turn as it happens
// (live: later turns unknown) ends with the memories of the same session
// distilled knowing every turn (batch): the corrected statement of turn 1
// is superseded by the kept correction, or trashed when the correction is
// no memory of its own.
func TestReviseEarlierTurns(t *testing.T) {
	ctx := context.Background()
	for _, keep := range []bool{true, false} {
		name := map[bool]string{true: "superseded", false: "trashed"}[keep]
		t.Run(name, func(t *testing.T) {
			turns := correctedSession("s-"+name, keep)
			if len(turns) != 3 {
				t.Fatalf("%d turns", len(turns))
			}
			batch, live := newFixture(t, nil), newFixture(t, nil)
			var last memory.Decision
			for i, tn := range turns {
				if _, _, err := batch.p.ProcessTurn(ctx, tn, LaterTexts(turns[i+1:], tn.SessionID), SessionState{Ended: true}); err != nil {
					t.Fatal(err)
				}
				dec, _, err := live.p.ProcessTurn(ctx, tn, nil, SessionState{})
				if err != nil {
					t.Fatal(err)
				}
				last = dec
			}
			want, got := liveTexts(t, batch.st), liveTexts(t, live.st)
			if !slices.Equal(want, got) {
				t.Fatalf("live store differs from batch:\nbatch %q\nlive  %q", want, got)
			}
			if len(got) == 0 || slices.ContainsFunc(got, func(s string) bool { return strings.Contains(s, "sleeps on the real clock") }) {
				t.Fatalf("store %q", got)
			}
			var rev *memory.CandidateVerdict
			for i, c := range last.Candidates {
				if c.Origin == OriginEarlier {
					rev = &last.Candidates[i]
				}
			}
			if rev == nil || rev.MemoryID == "" || !strings.Contains(last.Reason, "revised 1 memories") {
				t.Fatalf("turn 3 decision does not show the revision: %q %+v", last.Reason, last.Candidates)
			}
			trash, err := live.st.Trash(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if keep {
				if !strings.Contains(rev.Reason, "superseded by") || len(trash) != 0 {
					t.Fatalf("revision %+v, trash %d", rev, len(trash))
				}
				old, err := live.st.Get(ctx, rev.MemoryID)
				if err != nil || old.SupersededBy == "" {
					t.Fatalf("old memory %+v, %v", old, err)
				}
			} else if !strings.Contains(rev.Reason, "trash") || len(trash) != 1 || trash[0].Memory.ID != rev.MemoryID {
				t.Fatalf("revision %+v, trash %+v", rev, trash)
			}
		})
	}
}

// TestRecentTurnsBounds: the per-session memory forgets the least recently
// used session and a session's oldest statements.
func TestRecentTurnsBounds(t *testing.T) {
	var r recentTurns
	for i := range maxRecentSessions + 1 {
		r.add(string(rune('a'+i%26))+strings.Repeat("x", i), []storedStatement{{id: "m"}})
		if i == 0 {
			continue
		}
		r.statements("a") // keep the first one in use
	}
	if len(r.sessions) != maxRecentSessions || first(r.statements("a")) == nil {
		t.Fatalf("%d sessions; first kept %v", len(r.sessions), first(r.statements("a")) != nil)
	}
	for i := range maxRecentStatements + 5 {
		r.add("a", []storedStatement{{id: string(rune(i))}})
	}
	if got, _ := r.statements("a"); len(got) != maxRecentStatements || got[len(got)-1].id != string(rune(maxRecentStatements+4)) {
		t.Fatalf("%d statements", len(got))
	}
	r.forget("a", map[string]bool{string(rune(maxRecentStatements + 4)): true})
	if got, _ := r.statements("a"); len(got) != maxRecentStatements-1 {
		t.Fatalf("%d statements after forget", len(got))
	}
}

func first[A, B any](a A, _ B) A { return a }
