// Package tidy classifies an agent's markdown plan files (e.g.
// ~/.claude/plans/*.md) as active, completed, stale, dormant or recent, and
// moves the completed ones to an archive and the stale ones to a trash folder,
// with an undo journal. Classification (Classify, DetectMarker) is pure;
// Scan reads a directory, Apply and Undo move files.
//
// The rules, in order:
//   - active: modified on the same local calendar day as now (or later), or
//     the current session's plan (Options.Current). Never touched.
//   - completed: a terminal marker in the H1 or the last non-empty line (see
//     DetectMarker). Archived to archive/YYYY-MM/ (the month of its last
//     modification).
//   - stale: not completed, older than Options.StaleAfter and smaller than
//     Options.StaleBytes. Moved to .trash/ (a safe delete).
//   - dormant: not completed, not stale, older than Options.DormantAfter.
//     Reported, not touched.
//   - recent: everything else. Kept.
//
// An agent sub-plan, <parent>-agent-<anything>.md next to <parent>.md,
// inherits its parent's class (and, when completed, its archive folder)
// unless it is itself active. Symlinks, files over MaxFileBytes and other
// non-regular files are reported as skipped and never read, followed or moved.
package tidy

import (
	"fmt"
	"path"
	"sort"
	"strings"
	"time"
)

// Class is a plan's classification.
type Class string

// The classes, in the order Classify tries them (Skipped aside).
const (
	Active    Class = "active"
	Completed Class = "completed"
	Stale     Class = "stale"
	Dormant   Class = "dormant"
	Recent    Class = "recent"
	Skipped   Class = "skipped"
)

// Classes lists every class in report order.
var Classes = []Class{Active, Completed, Stale, Dormant, Recent, Skipped}

// Action is what Apply does with a plan.
type Action string

// The actions.
const (
	Keep    Action = "keep"    // left where it is (active, dormant, recent)
	Archive Action = "archive" // moved to archive/YYYY-MM/ (completed)
	Trash   Action = "trash"   // moved to .trash/ (stale): a safe delete
	Skip    Action = "skip"    // never read or moved (symlinks, huge files)
)

// Folders under the plans directory, and the undo journal's name.
const (
	ArchiveDir  = "archive"
	TrashDir    = ".trash"
	JournalName = ".tidy-undo.json"
)

// MaxFileBytes is the largest plan file that is read; larger ones are skipped.
const MaxFileBytes = 10 << 20

// Options are the thresholds and the clock of a classification.
type Options struct {
	// Now is the time the ages are measured from.
	Now time.Time
	// Location decides the calendar day of "modified today"; nil is time.Local.
	Location *time.Location
	// StaleAfter and StaleBytes: a plan older than StaleAfter and smaller than
	// StaleBytes is stale.
	StaleAfter time.Duration
	StaleBytes int64
	// DormantAfter: a plan older than this is dormant.
	DormantAfter time.Duration
	// Current is the file name of the current session's plan, or "". Scan
	// also accepts a path to it.
	Current string
}

// DefaultOptions returns the defaults: stale after 7 days under 2048 bytes,
// dormant after 14 days.
func DefaultOptions(now time.Time) Options {
	return Options{Now: now, StaleAfter: 7 * 24 * time.Hour, StaleBytes: 2048, DormantAfter: 14 * 24 * time.Hour}
}

// File is what classification needs to know about one plan file.
type File struct {
	// Name is the file's base name, e.g. "auth.md".
	Name    string
	Size    int64
	ModTime time.Time
	// Content is the file's text (not needed when Skip is set).
	Content []byte
	// Skip, when set, says why the file is reported but never read or moved.
	Skip string
}

// Plan is the classification of one file, and what Apply would do with it.
type Plan struct {
	Name       string    `json:"name"`
	Size       int64     `json:"size"`
	ModTime    time.Time `json:"mtime"`
	AgeSeconds int64     `json:"age_seconds"`
	Class      Class     `json:"class"`
	Action     Action    `json:"action"`
	// Dest is where Apply moves the file, relative to the plans directory.
	Dest   string `json:"dest,omitempty"`
	Reason string `json:"reason"`
	// Marker is the terminal marker of a completed plan (its own).
	Marker *Marker `json:"marker,omitempty"`
	// Parent is the parent plan a sub-plan inherited its class from.
	Parent string `json:"parent,omitempty"`
}

// Age is the plan's age at the time of classification.
func (p Plan) Age() time.Duration { return time.Duration(p.AgeSeconds) * time.Second }

// Classify classifies files (all from one directory) and returns one Plan per
// file, sorted by name.
func Classify(files []File, opts Options) []Plan {
	loc := opts.Location
	if loc == nil {
		loc = time.Local
	}
	ny, nm, nd := opts.Now.In(loc).Date()
	byName := make(map[string]int, len(files))
	plans := make([]Plan, len(files))
	for i, f := range files {
		byName[f.Name] = i
		plans[i] = own(f, opts, loc, ny, nm, nd)
	}
	// Sub-plans inherit, resolved parent first (memoized by done).
	done := make([]bool, len(files))
	var resolve func(i int, depth int)
	resolve = func(i int, depth int) {
		if done[i] {
			return
		}
		done[i] = true
		p := &plans[i]
		if p.Class == Skipped || p.Class == Active || depth > len(files) {
			return
		}
		j, ok := parentOf(p.Name, byName, plans)
		if !ok {
			return
		}
		resolve(j, depth+1)
		par := plans[j]
		p.Parent = par.Name
		p.Class, p.Action, p.Dest = par.Class, par.Action, ""
		switch par.Class {
		case Completed:
			p.Dest = path.Join(path.Dir(par.Dest), p.Name)
			p.Reason = fmt.Sprintf("sub-plan of %s (completed): archived with it", par.Name)
		case Stale:
			p.Dest = path.Join(TrashDir, p.Name)
			p.Reason = fmt.Sprintf("sub-plan of %s (stale): moved to %s/ with it", par.Name, TrashDir)
		default:
			p.Reason = fmt.Sprintf("sub-plan of %s: inherits %s", par.Name, par.Class)
		}
	}
	for i := range plans {
		resolve(i, 0)
	}
	sort.Slice(plans, func(a, b int) bool { return plans[a].Name < plans[b].Name })
	return plans
}

// own classifies one file on its own.
func own(f File, opts Options, loc *time.Location, ny int, nm time.Month, nd int) Plan {
	age := opts.Now.Sub(f.ModTime)
	p := Plan{Name: f.Name, Size: f.Size, ModTime: f.ModTime, AgeSeconds: int64(age / time.Second), Action: Keep}
	if f.Skip != "" {
		p.Class, p.Action, p.Reason = Skipped, Skip, f.Skip
		return p
	}
	y, m, d := f.ModTime.In(loc).Date()
	switch {
	case opts.Current != "" && f.Name == opts.Current:
		p.Class, p.Reason = Active, "the current session's plan"
		return p
	case age < 0:
		p.Class, p.Reason = Active, "modified after now (clock skew?)"
		return p
	case y == ny && m == nm && d == nd:
		p.Class, p.Reason = Active, "modified today"
		return p
	}
	if mk := DetectMarker(f.Content); mk != nil {
		p.Class, p.Action, p.Marker = Completed, Archive, mk
		p.Dest = path.Join(ArchiveDir, f.ModTime.In(loc).Format("2006-01"), f.Name)
		p.Reason = fmt.Sprintf("%s: %q", mk.Where, mk.Phrase)
		return p
	}
	switch {
	case age > opts.StaleAfter && f.Size < opts.StaleBytes:
		p.Class, p.Action, p.Dest = Stale, Trash, path.Join(TrashDir, f.Name)
		p.Reason = fmt.Sprintf("older than %s and under %d bytes, no terminal marker", days(opts.StaleAfter), opts.StaleBytes)
	case age > opts.DormantAfter:
		p.Class = Dormant
		p.Reason = fmt.Sprintf("older than %s, no terminal marker: your call", days(opts.DormantAfter))
	default:
		p.Class, p.Reason = Recent, "recent, no terminal marker"
	}
	return p
}

// parentOf finds the parent of an agent sub-plan <parent>-agent-<x>.md: the
// longest <parent> whose file is in the same directory and not skipped.
func parentOf(name string, byName map[string]int, plans []Plan) (int, bool) {
	stem, ok := strings.CutSuffix(name, ".md")
	if !ok {
		return 0, false
	}
	const sep = "-agent-"
	for end := len(stem); end > 0; {
		i := strings.LastIndex(stem[:end], sep)
		if i <= 0 {
			break
		}
		if i+len(sep) < len(stem) {
			if j, ok := byName[stem[:i]+".md"]; ok && plans[j].Class != Skipped {
				return j, true
			}
		}
		end = i
	}
	return 0, false
}

func days(d time.Duration) string {
	if d%(24*time.Hour) == 0 {
		return fmt.Sprintf("%dd", d/(24*time.Hour))
	}
	return d.String()
}

// Summary counts the plans of each class and the moves.
type Summary struct {
	Total    int           `json:"total"`
	ByClass  map[Class]int `json:"by_class"`
	Archived int           `json:"archive"`
	Trashed  int           `json:"trash"`
}

// Summarize counts plans.
func Summarize(plans []Plan) Summary {
	s := Summary{Total: len(plans), ByClass: map[Class]int{}}
	for _, c := range Classes {
		s.ByClass[c] = 0
	}
	for _, p := range plans {
		s.ByClass[p.Class]++
		switch p.Action {
		case Archive:
			s.Archived++
		case Trash:
			s.Trashed++
		}
	}
	return s
}
