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
	told := make([]Told, 0, len(ns))
	for _, n := range ns {
		told = append(told, s.toldOf(ctx, n))
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	all := newest(append(slices.Clone(s.st.Told), told...), maxTold)
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
	return nil
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
	default: // "delete"
		say = fmt.Sprintf("%s deleted %s without having seen your edit of it: the team kept your edit and refused the delete", who, what)
	}
	return Told{ID: n.MemoryID, Member: n.Member, What: say, At: n.At}
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
