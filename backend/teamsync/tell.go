package teamsync

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/memtray/memtray/backend/memory"
	"github.com/memtray/memtray/backend/team"
)

// A push that meets a version of the team's another machine wrote since
// its base is merged onto it or refused as stale; its pusher is told by
// the answer (a refusal, a conflict copy). The machine whose version it
// met is told too, at its next pull: the team records each such conflict
// for the member and machine that wrote the version (team.Notices), and
// tell turns the ones for this machine into sentences in Status.Told
// (memtray team status, the Overview's team line, GET /api/team), kept
// across restarts with the refusals.

// Told is a teammate's write that met an edit of this machine's: which
// memory, who, and what they changed, in words.
type Told struct {
	ID string `json:"id"`
	// Member is the teammate (a database role; this machine's own on
	// another of its machines).
	Member string `json:"member"`
	// What says what they changed and what became of it.
	What string `json:"what"`
	// At is when their push met it (the database's clock).
	At time.Time `json:"at"`
	// Seq is the conflict's number in the team's log (0 when told by a
	// daemon from before it was kept): a withdrawal names it.
	Seq int64 `json:"seq,omitempty"`
	// Withdrawn: their machine withdrew the refusal (schema 8): their
	// next edit, made before it took yours, put back what conflicted and
	// merged, so it keeps no conflict copy. What says so; the edit no
	// longer "met yours" (memtray team status lists it as resolved).
	Withdrawn bool `json:"withdrawn,omitempty"`
	// Why, with Withdrawn, is what made their refusal moot: "" their next
	// edit merged; "relinked", "team_deleted", "deleted", "personal" or
	// "refused" (team.WithdrawRelinked, …; schema 9). What says it in
	// words.
	Why string `json:"why,omitempty"`
}

// maxTold bounds Status.Told.
const maxTold = 10

// tell reads the conflicts recorded since the last read that met versions
// this machine wrote, adds them to the status and stores them with the
// read's position (s.cycle held). A failure is the pull's: the next pull
// reads again from the same position.
func (s *Syncer) tell(ctx context.Context) error {
	ns, last, err := s.ts.Notices(ctx, s.toldSeq, s.machine)
	if err != nil {
		return err
	}
	if last == s.toldSeq {
		return nil
	}
	s.mu.Lock()
	prev := slices.Clone(s.st.Told)
	s.mu.Unlock()
	told := make([]Told, 0, len(ns))
	var withdrawn []Told
	for _, n := range ns {
		t := s.toldOf(ctx, n)
		if n.Outcome == team.ConflictWithdrawn {
			// Amends the refusal it names, told before or in this read;
			// one no longer listed has nothing left to amend.
			if withdraw(prev, n.Withdraws, t) || withdraw(told, n.Withdraws, t) {
				withdrawn = append(withdrawn, t)
			}
			continue
		}
		told = append(told, t)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	all := newest(append(prev, told...), maxTold)
	b, err := (storedRefusals{Refused: s.st.Refused, Held: s.held, Told: all, ToldSeq: last}).encode()
	if err != nil {
		return err
	}
	if err := s.o.Store.SetTeamRefusals(ctx, b); err != nil {
		return fmt.Errorf("team sync: %w", err)
	}
	s.st.Told, s.toldSeq, s.heldDirty = all, last, false
	for _, t := range told {
		s.log.Info("team sync: a teammate's write met an edit of this machine's", "id", t.ID, "what", t.What)
	}
	for _, t := range withdrawn {
		s.log.Info("team sync: a teammate withdrew a refusal told before: their next edit merged", "id", t.ID, "what", t.What)
	}
	return nil
}

// withdraw replaces the refusal numbered seq in told by w, the sentence
// of its withdrawal, in place, and reports whether it was there.
func withdraw(told []Told, seq int64, w Told) bool {
	if seq == 0 {
		return false
	}
	for i := range told {
		if told[i].Seq == seq && !told[i].Withdrawn {
			told[i] = w
			return true
		}
	}
	return false
}

// toldOf is notice n in words.
func (s *Syncer) toldOf(ctx context.Context, n team.Notice) Told {
	who := n.Member
	if who == s.ts.Role() {
		who = "you, on another machine,"
	}
	what := "a memory (" + n.MemoryID + ")"
	if m, err := s.o.Store.Get(ctx, n.MemoryID); err == nil {
		what = quote(m.Text)
	} else if !errors.Is(err, memory.ErrNotFound) {
		s.log.Debug("team sync: read a memory for a conflict", "id", n.MemoryID, "err", err)
	}
	fields := fieldWords(n.Changed)
	theirs := ""
	if n.Text != "" {
		theirs = " (their text: " + quote(n.Text) + ")"
	}
	var say string
	switch n.Outcome {
	case "merged":
		say = fmt.Sprintf("%s changed %s of %s at the same time as your edit, without having seen it: the team kept both changes%s", who, fields, what, theirs)
	case "refused":
		say = fmt.Sprintf("%s also changed %s of %s, without having seen your edit: the team kept yours, pushed first, and refused theirs%s, which their machine keeps as a conflict copy in its trash (unless their next edit, made before it took yours, put back what conflicted)", who, fields, what, theirs)
	case team.ConflictWithdrawn:
		say = fmt.Sprintf("%s also changed %s of %s, without having seen your edit, and the team refused it%s; %s", who, fields, what, theirs, withdrawnWords(n.Why))
		return Told{ID: n.MemoryID, Member: n.Member, What: say, At: n.At, Seq: n.Withdraws, Withdrawn: true, Why: n.Why}
	default: // "delete"
		say = fmt.Sprintf("%s deleted %s without having seen your edit of it: the team kept your edit and refused the delete", who, what)
	}
	return Told{ID: n.MemoryID, Member: n.Member, What: say, At: n.At, Seq: n.Seq}
}

// withdrawnWords says what made a refusal moot (a withdrawal's why), and
// that no conflict copy was kept.
func withdrawnWords(why string) string {
	switch why {
	case team.WithdrawRelinked:
		return "their next edit, made before their machine took yours, gave it the text of another team memory, which their copy became: resolved, no conflict copy was kept"
	case team.WithdrawTeamDeleted:
		return "the memory was deleted from the team before their machine took yours, and their edit went to their trash with it: resolved, no conflict copy was kept"
	case team.WithdrawDeleted:
		return "their machine then deleted it, before it took yours: resolved, no conflict copy was kept"
	case team.WithdrawPersonal:
		return "their machine then made it personal (out of the team), before it took yours: resolved, their version stays on their machine and no conflict copy was kept"
	case team.WithdrawRefused:
		return "their next edit, made before their machine took yours, was refused too (not theirs to change, or invalid) and stays on their machine: resolved, no conflict copy was kept"
	default: // a merge
		return "their next edit, made before their machine took yours, put back what conflicted and the team merged it with yours: resolved by merge, your edit stands and no conflict copy was kept"
	}
}

// fieldWords names the changed fields for a sentence: "the text", "the
// text and importance".
func fieldWords(fs []string) string {
	if len(fs) == 0 {
		return "it"
	}
	if len(fs) == 1 {
		return "the " + fs[0]
	}
	return "the " + strings.Join(fs[:len(fs)-1], ", ") + " and " + fs[len(fs)-1]
}

// quote is text, shortened, in quotation marks.
func quote(text string) string {
	const max = 80
	if r := []rune(text); len(r) > max {
		text = string(r[:max]) + "…"
	}
	return "“" + text + "”"
}
