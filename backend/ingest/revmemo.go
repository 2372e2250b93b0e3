package ingest

import (
	"strings"
	"unsafe"
)

// What a revising sentence says (its subject, focus, objects, what it
// says is so: revision) is worked out by a dozen regular expressions,
// and live capture works it out again and again for the same sentences:
// each new turn that revises something distils the session's recent
// turns again (reviseEarlier, within maxRedistillBytes), each knowing the
// turns after it, so a sentence of the newest turns is read once for
// every earlier turn distilled: the square of the session's recent turns
// per new turn (about a second a turn on a session of 50 turns whose
// every prompt says "instead of", BenchmarkRestartThenTurn's setup at
// 7034821). reviserMemo holds what one call read, for the rest of that
// call: no state outlives it (the ablation switches a test sets between
// two calls are read anew).

// revision is what a later sentence with a revision cue says, read once
// (dropRevised): the sentence's own reading, independent of where it was
// said.
type revision struct {
	subject map[string]bool
	focus   map[string]bool   // the subject of the clauses holding the cue
	objects []map[string]bool // what its "instead of X" cues replace (cueObjects), nil when not only such cues
	near    bool              // it says nothing specific: it revises only within revisionReach
	written []string          // those objects as written (cueObjects)
	so      sayso             // what it says is so (whatIsSo)
	order   []string          // what a user's order replaces (userReplaced): it revises what says one of them
	names   replacedNames     // order, read for saidBy
}

// readRevision reads a later sentence (the user's when user) as
// dropRevised weighs it: nil when it cannot revise (no revision cue, a
// plan or narration, a cue that revises nothing); a user's order putting
// one thing in another's place (userReplaced) revises what names them.
func readRevision(text string, user bool) *revision {
	if user {
		if objs := userReplaced(text); len(objs) > 0 {
			return &revision{focus: replacedFocus(objs), so: whatIsSo(text), order: objs, names: readReplaced(objs)}
		}
	}
	if !correcting(lower(text)) || actionOnly(text) || cannotRevise(text) {
		return nil
	}
	near := !revisionOff["vague-near"] && sentenceClass(text, OriginFinal) == ClassVague
	objs, written := cueObjects(text)
	return &revision{subject: withoutCue(subjectOf(text)), focus: cueFocus(text), objects: objs, near: near, written: written, so: whatIsSo(text)}
}

// reviserMemo remembers readRevision's answers by sentence, for one
// caller distilling several turns of a session (reviseEarlier,
// continueTurn) or a batch request's turns (Revisions). A nil
// *reviserMemo remembers nothing. It holds at most maxRevMemoBytes (its
// sentences' bytes and their entries), then starts again empty. Not safe
// for concurrent use.
type reviserMemo struct {
	m     map[revKey]*revision
	bytes int
	limit int // maxRevMemoBytes; smaller in a test
}

// maxRevMemoBytes bounds what a reviserMemo holds: twice maxLaterBytes,
// so that the sentences a turn is distilled against (its own and at most
// maxLaterBytes of later text) fit, and the next turn of a batch request
// (its window moved by one turn) finds most of them.
func maxRevMemoBytes() int { return 2 * maxLaterBytes }

// revEntryBytes is what an entry takes beyond its sentence's bytes, about:
// its slot (key and pointer) with the map's free slots, the sentence's
// allocation's header; a revision's own maps are not counted (only a
// sentence with a revision cue has one, a few words).
var revEntryBytes = 5*int(unsafe.Sizeof(revKey{})+unsafe.Sizeof(uintptr(0)))/2 + int(unsafe.Sizeof(uintptr(0)))

// revKey is a sentence and whether the user said it.
type revKey struct {
	text string
	user bool
}

// newReviserMemo returns an empty memo.
func newReviserMemo() *reviserMemo {
	return &reviserMemo{m: map[revKey]*revision{}, limit: maxRevMemoBytes()}
}

// of returns readRevision(text, user), remembered. The *revision is
// shared: read only.
func (rm *reviserMemo) of(text string, user bool) *revision {
	if rm == nil || revMemoOff {
		return readRevision(text, user)
	}
	k := revKey{text, user}
	if r, ok := rm.m[k]; ok {
		return r
	}
	r := readRevision(text, user)
	size := len(text) + revEntryBytes
	if size > rm.limit/16 {
		return r // a pasted blob: read again if it comes again
	}
	if rm.bytes+size > rm.limit {
		clear(rm.m)
		rm.bytes = 0
	}
	k.text = strings.Clone(text) // not the whole later text it was cut from
	rm.m[k] = r
	rm.bytes += size
	return r
}

// Revisions remembers, for the turns of one batch request (feed.Ingest),
// what each later sentence with a revision cue says: every turn of a
// session is distilled against the texts of the turns after it
// (Later.After), so without it a sentence is read again for each turn
// before it. It holds at most maxRevMemoBytes and nothing outlives the
// request; a nil *Revisions remembers nothing. Not safe for concurrent
// use.
type Revisions struct{ rm *reviserMemo }

// NewRevisions returns an empty Revisions, for one request.
func NewRevisions() *Revisions { return &Revisions{rm: newReviserMemo()} }

// memo returns r's memo, nil for a nil r.
func (r *Revisions) memo() *reviserMemo {
	if r == nil {
		return nil
	}
	return r.rm
}

// revMemoOff switches reviserMemo off (every sentence read anew, as at
// 7034821), for tests that measure it.
var revMemoOff = false
