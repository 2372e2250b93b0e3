package agentsetup

import (
	"fmt"
	"io"
	"strings"
)

// Plan is what setup, or its undo, would do for one client, read from the
// files as they are now. Making one writes nothing; Apply carries it out.
type Plan struct {
	Client string
	// Undo says the plan takes memtray out (Env.PlanUndo).
	Undo bool
	// Files are the client's config files, changed or not, in order.
	Files []File
	// Notes are what the client cannot do, and caveats.
	Notes []string

	setup setupPlan
	undo  undoPlan
	// recordPath is the record Apply updates (setup) or removes (undo).
	recordPath string
	// flags are Env.Flags, for the undo hint.
	flags []string
}

// File is one config file of a plan.
type File struct {
	Path string
	// Existed says whether the file is there now.
	Existed bool
	// Changed says whether the plan writes or removes it.
	Changed bool
	// Remove says the plan removes it (an undo of a file setup created).
	Remove bool
	// State is how the file stands: "up to date" or "to change" for a
	// setup; for an undo, e.g. "unchanged since setup: restore …".
	State string
	// What lists the changes, one line each.
	What []string
	// Diff is the change as a unified diff ("" when unchanged).
	Diff string
	// SHA256 is the hex SHA-256 of the file as the plan read it, "" when
	// it does not exist.
	SHA256 string
	// AfterSHA256 is the hex SHA-256 of what the plan writes, "" when it
	// writes nothing (unchanged, or removed).
	AfterSHA256 string
}

// FileHash is a file of a plan someone saw: its path and hashes (File's).
type FileHash struct {
	Path        string
	SHA256      string
	AfterSHA256 string
}

// Result is what Apply did.
type Result struct {
	Client string
	// Changed lists the files written or removed.
	Changed []string
	// Backups lists the copies of the files as they were before setup:
	// after a setup every backup of the client's record, after an undo
	// the ones kept (of files changed since setup).
	Backups []string
	// Message is the one-line report `memtray setup` prints.
	Message string
}

// Plan plans setting client up with o, reading the files and writing
// nothing. A file setup cannot change safely (malformed JSON, memtray's
// entries where setup does not put them) is an error naming it.
func (e Env) Plan(client string, o Options) (*Plan, error) {
	if err := e.check(true); err != nil {
		return nil, err
	}
	sp, err := planSetup(client, e.options(o))
	if err != nil {
		return nil, err
	}
	sp.notes = append(append([]string(nil), e.Notes...), sp.notes...)
	p := &Plan{Client: client, Notes: sp.notes, setup: sp, recordPath: e.RecordPath(client), flags: e.Flags}
	for _, f := range sp.files {
		state := "up to date"
		if f.changed() {
			state = "to change"
		}
		p.Files = append(p.Files, fileOf(f, state))
	}
	return p, nil
}

// PlanUndo plans taking memtray out of the files setup changed for client
// (the undo's preview), writing nothing. A file still as setup left it (or
// any, with force) is restored from its backup, or removed when setup
// created it; from a file changed since only memtray's entries are removed.
// Without a record of setup it is ErrNothingToUndo.
func (e Env) PlanUndo(client string, force bool) (*Plan, error) {
	if err := e.check(false); err != nil {
		return nil, err
	}
	up, err := planUndo(client, e.RecordPath(client), e.Listen, e.Binary, e.Flags, force)
	if err != nil {
		return nil, err
	}
	p := &Plan{Client: client, Undo: true, Notes: up.notes, undo: up, recordPath: up.recordPath}
	for _, f := range up.files {
		p.Files = append(p.Files, fileOf(f.fileChange, f.state))
	}
	return p, nil
}

func fileOf(f fileChange, state string) File {
	out := File{Path: f.path, Existed: f.existed, Changed: f.changed(), Remove: f.remove, State: state,
		What: f.what}
	if f.existed {
		out.SHA256 = sha(f.before)
	}
	if out.Changed {
		out.Diff = unifiedDiff(f.path, f.existed, f.before, f.after)
		if !f.remove {
			out.AfterSHA256 = sha(f.after)
		}
	}
	return out
}

// Changes counts the files the plan writes or removes.
func (p *Plan) Changes() int {
	n := 0
	for _, f := range p.Files {
		if f.Changed {
			n++
		}
	}
	return n
}

// Hashes lists the plan's files with their hashes, for Verify.
func (p *Plan) Hashes() []FileHash {
	out := make([]FileHash, len(p.Files))
	for i, f := range p.Files {
		out[i] = FileHash{Path: f.Path, SHA256: f.SHA256, AfterSHA256: f.AfterSHA256}
	}
	return out
}

// Verify checks that p is the plan seen (a preview's Hashes): the same
// files, each read as the same content and changed into the same. Else it
// is ErrStale naming what differs.
func (p *Plan) Verify(seen []FileHash) error {
	byPath := make(map[string]FileHash, len(seen))
	for _, h := range seen {
		byPath[h.Path] = h
	}
	var problems []string
	for _, f := range p.Files {
		h, ok := byPath[f.Path]
		delete(byPath, f.Path)
		switch {
		case !ok:
			problems = append(problems, f.Path+" was not in the preview")
		case h.SHA256 != f.SHA256:
			problems = append(problems, f.Path+" changed")
		case h.AfterSHA256 != f.AfterSHA256:
			problems = append(problems, f.Path+" would now be changed differently")
		}
	}
	for _, h := range seen {
		if _, left := byPath[h.Path]; left {
			problems = append(problems, h.Path+" is no longer part of the change")
		}
	}
	if len(problems) > 0 {
		return fmt.Errorf("%w: %s: preview again", ErrStale, strings.Join(problems, "; "))
	}
	return nil
}

// Apply carries the plan out. A setup keeps a backup of each existing file
// before its first change, updates the record, then replaces each file
// atomically; an undo writes or removes each file, removes the backups of
// the files it restored, then the record. A plan with no change writes
// nothing (an undo still removes the record).
func (p *Plan) Apply() (Result, error) {
	if p.Undo {
		return undoApply(p.undo)
	}
	return setupApply(p.setup, p.recordPath, p.flags)
}

// Run is `memtray setup`: it plans client's setup (or undo) with o,
// reports the plan on w (each file's state and changes, the diffs, the
// notes) and, unless printOnly, applies it and reports what it did.
func Run(w io.Writer, e Env, client string, o Options, undo, printOnly bool) error {
	if undo {
		p, err := e.PlanUndo(client, o.Force)
		if err != nil {
			return err
		}
		writeUndoListing(w, p.undo)
		if printOnly {
			fmt.Fprintln(w, "--print: nothing was changed.")
			return nil
		}
		res, err := p.Apply()
		if err != nil {
			return err
		}
		fmt.Fprintln(w, res.Message)
		return nil
	}
	p, err := e.Plan(client, o)
	if err != nil {
		return err
	}
	writeSetupListing(w, p.setup, printOnly)
	switch {
	case p.Changes() == 0:
		fmt.Fprintf(w, "%s is already set up: nothing to change.\n", client)
		return nil
	case printOnly:
		fmt.Fprintln(w, "--print: nothing was changed.")
		return nil
	}
	res, err := p.Apply()
	if err != nil {
		return err
	}
	fmt.Fprintln(w, res.Message)
	return nil
}
