package teamsync

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/memtray/memtray/backend/memory"
	"github.com/memtray/memtray/backend/store"
)

// A change of a team memory the team refused (another member's memory,
// or invalid) stays on this machine as a held edit: the loop does not
// push that version again when a later write leaves it as it is (an
// access counted by recall writes the record and queues it), since the
// team would refuse it again. An edit made here (a new version), any
// change of the team's pulled back (the owner's edit or the counters, which
// replaces the local copy with the team's version), and an explicit push
// of every memory (PushAll, `memtray team push --all`) end the hold. A
// change of the team's pulled while a write of the memory waits in the
// outbox is left to the push (store.ApplyTeam keeps the local copy): the
// hold then stays, marked stale, and the push acknowledges that write if
// it is the held version, without sending it, and takes the team's
// version then. Dropped at the pull instead, the hold let the waiting
// write (an access) send the refused edit again, to be refused again.
// An edit the team refuses as stale (it holds another edit of the same
// field, made on another machine and pushed first), a delete it refuses
// as stale (the text changed since) and an edit it merged onto its newer
// version are held stale the same way, with their acknowledgement, until
// the push took the team's version: taken after the acknowledgement
// without a hold, a stop in between left the edit to be pushed, and
// refused as stale, again at its next write.
//
// The store keeps the held edits with the status's refusals, in one value
// (Store.TeamRefusals) written in the transaction that removes the refused
// entries from the outbox (Store.AckOutboxRefusals), so a crash neither
// loses a refusal nor pushes the edit again.

// heldEdit is a refused version of a team memory kept on this machine.
type heldEdit struct {
	ID string `json:"id"`
	// Version is version() of the memory the team refused.
	Version string `json:"version"`
	// Invalid: refused as invalid (its counter deltas are dropped too).
	Invalid bool `json:"invalid,omitempty"`
	// Stale: a pull brought a change of the team's while a local write
	// waited to be pushed, the team refused the edit (or a delete,
	// Version deletedVersion) as stale, or merged it onto its own newer
	// version (team.PushMerged: nothing refused); the push takes the
	// team's version.
	Stale bool `json:"stale,omitempty"`
	// Copy, for an edit the team refused as stale, is the id its
	// conflict copy takes in the trash when takeStale gives this machine
	// the team's version (store.TeamConflict). A later edit of the memory
	// refused before that take keeps the id (Syncer.copyFor): one copy,
	// of the version the user left, holds both edits.
	Copy string `json:"copy,omitempty"`
	// Refusals, with Copy, is how many refusals of the memory's pushes
	// name the copy (the team recorded each: team.Store.Notices): all are
	// withdrawn when the copy turns out never to be made, however many of
	// the status's last lines (maxRefused) still show them. 0 in a hold
	// stored before it was kept: the status's lines are counted then.
	Refusals int `json:"refusals,omitempty"`
}

// maxHeld bounds the held edits. Past it the oldest is forgotten: its
// memory is pushed again at its next write, and held again.
const maxHeld = 256

// heldEdits are the held edits, oldest first, one per id.
type heldEdits []heldEdit

// find returns the held edit of id.
func (h heldEdits) find(id string) (heldEdit, bool) {
	for _, e := range h {
		if e.ID == id {
			return e, true
		}
	}
	return heldEdit{}, false
}

// drop forgets the held edit of id and reports whether there was one.
func (h *heldEdits) drop(id string) bool {
	n := len(*h)
	*h = slices.DeleteFunc(*h, func(e heldEdit) bool { return e.ID == id })
	return len(*h) != n
}

// markStale marks the held edit of id stale and reports whether it
// changed.
func (h heldEdits) markStale(id string) bool {
	for i := range h {
		if h[i].ID == id && !h[i].Stale {
			h[i].Stale = true
			return true
		}
	}
	return false
}

// hold records e as the newest held edit of its id.
func (h *heldEdits) hold(e heldEdit) {
	h.drop(e.ID)
	*h = append(*h, e)
	if n := len(*h) - maxHeld; n > 0 {
		*h = slices.Delete(*h, 0, n)
	}
}

// version identifies what the team compares of a pushed memory (the
// fields team.Push tells an unchanged memory by), not its counters, times
// or local fields: a write that changes none of them leaves it the same.
func version(m memory.Memory) string {
	b, err := json.Marshal(struct {
		Text, Kind, KindOrigin, Type, Project, Source, Surface, Supersedes string
		Importance                                                         float64
	}{m.Text, string(m.Kind), string(m.KindOrigin), string(m.Type), m.Project, m.Source, m.Surface, m.Supersedes, m.Importance})
	if err != nil { // strings and a float: only a NaN importance fails
		b = fmt.Appendf(nil, "%q %v", m.Text, err)
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:16])
}

// storedRefusals is the team sync's value in the store (TeamRefusals).
// Daemons before held edits stored the refusals alone, as a JSON array.
type storedRefusals struct {
	Refused []Refusal `json:"refused"`
	Held    heldEdits `json:"held,omitempty"`
	// Told are the latest conflicts told (Status.Told); ToldSeq is where
	// the next read of the team's conflicts starts (team.Notices).
	Told    []Told `json:"told,omitempty"`
	ToldSeq int64  `json:"told_seq,omitempty"`
}

// decodeRefusals reads a stored value of either form, trimmed to the
// bounds (maxRefused, maxHeld: the newest kept), without held edits that
// name no id or version.
func decodeRefusals(b []byte) (storedRefusals, error) {
	var v storedRefusals
	b = bytes.TrimSpace(b)
	var err error
	if len(b) > 0 && b[0] == '[' {
		err = json.Unmarshal(b, &v.Refused)
	} else {
		err = json.Unmarshal(b, &v)
	}
	if err != nil {
		return storedRefusals{}, err
	}
	v.Refused = newest(v.Refused, maxRefused)
	v.Told = newest(v.Told, maxTold)
	var held heldEdits
	for _, e := range v.Held {
		if e.ID != "" && e.Version != "" {
			held.hold(e)
		}
	}
	v.Held = held
	return v, nil
}

// encode is v as stored, within store.MaxTeamRefusals: the oldest held
// edits are forgotten if it would not fit.
func (v storedRefusals) encode() ([]byte, error) {
	v.Refused = newest(v.Refused, maxRefused)
	v.Told = newest(v.Told, maxTold)
	v.Held = newest(v.Held, maxHeld)
	for {
		b, err := json.Marshal(v)
		if err != nil {
			return nil, fmt.Errorf("team sync: encode the refused writes: %w", err)
		}
		if len(b) <= store.MaxTeamRefusals || len(v.Held) == 0 {
			return b, nil
		}
		v.Held = v.Held[(len(v.Held)+1)/2:]
	}
}

// newest is the last n of s.
func newest[S ~[]E, E any](s S, n int) S {
	if k := len(s) - n; k > 0 {
		return s[k:]
	}
	return s
}
