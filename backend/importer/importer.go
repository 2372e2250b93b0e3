// Package importer brings in the memories people already keep for their
// agents, so memtray starts with them: Claude Code's file memories
// (~/.claude/projects/<dir>/memory/*.md with YAML front matter name, type
// and description, and a body; the MEMORY.md index is not a memory) and
// CLAUDE.md files (the user's ~/.claude/CLAUDE.md, a project's CLAUDE.md
// and .claude/CLAUDE.md, one memory per top-level "##" section).
//
// Importing is idempotent. Every imported memory carries the source
// "import:claude:<absolute file path>" ("#<section slug>" added for a
// CLAUDE.md section, "~<n>" for the n-th part of a text longer than a
// memory may be), and a run compares each item with the live memory of
// that exact source: the same text (content hash) is unchanged, another
// text supersedes it (the old version stays as history), no memory is a
// new one. A memory whose item is gone from disk is reported missing,
// never deleted: the user decides.
//
// A run first scans every file (bounded sizes and counts, regular files,
// symlinks followed only inside the home, valid UTF-8), then plans against
// the store, and writes only when the whole scan succeeded and it is not a
// dry run. Every write goes through the write pipeline's Write (package
// ingest: redaction, embedding, exact dedup, supersession, one store entry
// point); see Import.
package importer

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sort"
	"sync"

	"github.com/memtray/memtray/backend/ingest"
	"github.com/memtray/memtray/backend/memory"
	"github.com/memtray/memtray/backend/store"
)

// SourcePrefix starts the source of every memory imported from Claude Code.
const SourcePrefix = memory.SourceImport + ":claude:"

// Limits of one import.
const (
	// MaxFileBytes bounds one file; a larger one is skipped.
	MaxFileBytes = 1 << 20
	// MaxFiles bounds the files of one import; more fail the whole scan.
	MaxFiles = 10000
	// MaxProjectDirs bounds Request.ProjectDirs.
	MaxProjectDirs = 1000
	// maxTranscriptHead is how much of a transcript is read for its cwd.
	maxTranscriptHead = 64 << 10
	// maxTranscriptsTried: transcripts read, newest first, for a cwd.
	maxTranscriptsTried = 3
	// maxSourceBytes is the store's bound on a source.
	maxSourceBytes = 256
)

// File formats of a FileReport.
const (
	FormatMemory   = "memory"    // a Claude Code file memory
	FormatClaudeMD = "claude-md" // a CLAUDE.md file
)

// Actions of an ItemReport.
const (
	ActionCreated   = "created"
	ActionUpdated   = "updated"
	ActionUnchanged = "unchanged"
	ActionSkipped   = "skipped"
)

// Request says what to import (the API's POST /api/import/claude takes
// it as JSON).
type Request struct {
	// Home is the absolute home directory holding .claude; Import needs
	// it, and Service.ImportClaude takes empty as the user's home.
	Home string `json:"home,omitempty"`
	// ProjectDirs are absolute project directories whose CLAUDE.md and
	// .claude/CLAUDE.md are imported as project memories.
	ProjectDirs []string `json:"project_dirs,omitempty"`
	// DryRun computes the report and writes nothing.
	DryRun bool `json:"dry_run,omitempty"`
}

// Counts counts items by action.
type Counts struct {
	Created   int `json:"created"`
	Updated   int `json:"updated"`
	Unchanged int `json:"unchanged"`
	Skipped   int `json:"skipped"`
}

func (c *Counts) add(action string) {
	switch action {
	case ActionCreated:
		c.Created++
	case ActionUpdated:
		c.Updated++
	case ActionUnchanged:
		c.Unchanged++
	case ActionSkipped:
		c.Skipped++
	}
}

// ItemReport is what happened (or, in a dry run, would happen) to one memory.
type ItemReport struct {
	Source string `json:"source"`
	Action string `json:"action"`
	ID     string `json:"id,omitempty"`
	// Supersedes is the previous version's id of an update by a new version.
	Supersedes string `json:"supersedes,omitempty"`
	Kind       string `json:"kind,omitempty"`
	Type       string `json:"type,omitempty"`
	Project    string `json:"project,omitempty"`
	// Reason says why an item is skipped or what an update changed.
	Reason string `json:"reason,omitempty"`
	// Note tells what the reader should know (a type read as project,
	// secrets redacted, a text cut into parts).
	Note string `json:"note,omitempty"`
}

// FileReport is one file's share of a Report.
type FileReport struct {
	Path    string `json:"path"`
	Format  string `json:"format"`
	Project string `json:"project,omitempty"`
	Counts
	// SkippedReason says why the whole file was skipped ("" when it was read).
	SkippedReason string       `json:"skipped_reason,omitempty"`
	Notes         []string     `json:"notes,omitempty"`
	Items         []ItemReport `json:"items"`
}

// Missing is a live imported memory whose item is gone from disk: kept,
// reported, for the user to delete or not.
type Missing struct {
	Source  string `json:"source"`
	ID      string `json:"id"`
	Project string `json:"project,omitempty"`
}

// Report is what an import did, or in a dry run would do.
type Report struct {
	DryRun bool   `json:"dry_run"`
	Home   string `json:"home"`
	// Counts totals the items of every file.
	Counts
	Missing []Missing    `json:"missing"`
	Files   []FileReport `json:"files"`
	Notes   []string     `json:"notes,omitempty"`
}

// Options are what an import works with.
type Options struct {
	// Store is read for the plan, and takes metadata-only updates.
	Store *store.Store
	// Pipeline writes every new memory and new version.
	Pipeline *ingest.Pipeline
}

// mu makes imports one at a time: two concurrent runs would both see an
// item as new.
var mu sync.Mutex

// Import imports Claude Code's memories (see the package documentation).
//
// New memories and new versions go through the write pipeline's Write
// with exact dedup (ingest.WriteRequest.Exact): an imported item is one
// memory of one source, whole, never merged into another memory or
// superseding one of another source (that would make the next run create
// it again). An item whose exact text is already stored live under
// another source is skipped with a reason instead.
func Import(ctx context.Context, opts Options, req Request) (Report, error) {
	if opts.Store == nil || opts.Pipeline == nil {
		return Report{}, errors.New("import claude: a store and a write pipeline are required")
	}
	if err := validate(req); err != nil {
		return Report{}, err
	}
	mu.Lock()
	defer mu.Unlock()
	sc, err := newScanner(req.Home)
	if err != nil {
		return Report{}, fmt.Errorf("import claude: %w", err)
	}
	if err := sc.scan(req.ProjectDirs); err != nil {
		return Report{}, fmt.Errorf("import claude: scan: %w", err)
	}
	p, err := plan(ctx, opts.Store, sc)
	if err != nil {
		return Report{}, fmt.Errorf("import claude: %w", err)
	}
	p.rep.DryRun, p.rep.Home = req.DryRun, sc.home
	if req.DryRun {
		return p.report(), nil
	}
	if err := p.apply(ctx, opts); err != nil {
		return p.report(), fmt.Errorf("import claude: %w", err)
	}
	return p.report(), nil
}

func validate(req Request) error {
	var problems []string
	if req.Home == "" || !filepath.IsAbs(req.Home) || !memory.ValidUTF8(req.Home) {
		problems = append(problems, "home must be an absolute path")
	}
	if len(req.ProjectDirs) > MaxProjectDirs {
		problems = append(problems, fmt.Sprintf("at most %d project dirs", MaxProjectDirs))
	}
	for _, d := range req.ProjectDirs {
		if d == "" || !filepath.IsAbs(d) || !memory.ValidUTF8(d) {
			problems = append(problems, fmt.Sprintf("project dir %q is not an absolute path", d))
		}
	}
	if len(problems) > 0 {
		return &memory.ValidationError{Problems: problems}
	}
	return nil
}

// step is one planned write.
type step struct {
	file, item int
	it         item
	old        *memory.Memory // the live memory of the item's source
	metaOnly   bool           // same text: only type or project change
}

// planned is a plan and its report.
type planned struct {
	rep   Report
	steps []step
}

// plan compares what the scan found with the store.
func plan(ctx context.Context, st *store.Store, sc *scanner) (*planned, error) {
	live := map[string][]memory.Memory{}
	err := st.Iterate(ctx, store.Filter{Source: SourcePrefix, IncludeSnoozed: true}, func(m memory.Memory) error {
		m.Embedding = nil
		live[m.Source] = append(live[m.Source], m)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read imported memories: %w", err)
	}
	for _, ms := range live {
		sort.SliceStable(ms, func(i, j int) bool { return ms[i].CreatedAt.After(ms[j].CreatedAt) })
	}
	p := &planned{rep: Report{Missing: []Missing{}, Files: []FileReport{}, Notes: sc.notes}}
	seen := map[string]bool{}         // sources the scan produced
	skippedFiles := map[string]bool{} // files skipped whole: their memories are not missing
	newText := map[string]string{}    // project and content hash -> source, of the items created in this run
	for fi, f := range sc.files {
		fr := FileReport{Path: f.path, Format: f.format, Project: f.project, SkippedReason: f.skip, Notes: f.notes, Items: []ItemReport{}}
		if f.skip != "" {
			skippedFiles[f.path] = true
		}
		for _, it := range f.items {
			seen[it.source] = true
			ir := ItemReport{Source: it.source, Kind: string(it.kind), Type: string(it.typ), Project: it.project, Note: it.note}
			ms := live[it.source]
			if len(ms) > 1 {
				ir.Note = joinNotes(ir.Note, fmt.Sprintf("%d live memories carry this source; compared with the newest", len(ms)))
			}
			var s *step
			switch {
			case it.skip != "":
				ir.Action, ir.Reason = ActionSkipped, it.skip
				if len(ms) > 0 {
					ir.ID = ms[0].ID
				}
			case len(ms) > 0:
				old := ms[0]
				ir.ID = old.ID
				if it.guessed && old.Project != "" {
					// A folder-name fallback never overrides a project a
					// transcript once named (transcripts get cleaned up).
					it.project, ir.Project = old.Project, old.Project
				}
				switch {
				case memory.ContentHash(it.text) != old.ContentHash:
					ir.Action, ir.Supersedes, ir.Reason = ActionUpdated, old.ID, "the text changed"
					s = &step{it: it, old: &old}
				case old.Type != it.typ || old.Project != it.project:
					ir.Action, ir.Reason = ActionUpdated, changes(old, it)
					s = &step{it: it, old: &old, metaOnly: true}
				default:
					ir.Action, ir.Kind, ir.Type, ir.Project = ActionUnchanged, string(old.Kind), string(old.Type), old.Project
				}
			default:
				h := memory.ContentHash(it.text)
				key := it.project + "\x00" + h // exact-text dedup is per project (store.FindByHash)
				if src, ok := newText[key]; ok {
					ir.Action, ir.Reason = ActionSkipped, "the same text as "+src+", imported in this run"
					break
				}
				dup, ok, err := st.FindByHash(ctx, h, it.project)
				if err != nil {
					return nil, fmt.Errorf("find %s: %w", it.source, err)
				}
				if ok && !dup.Superseded() {
					ir.Action, ir.ID = ActionSkipped, dup.ID
					ir.Reason = fmt.Sprintf("the same text is already stored as %s (source %q)", dup.ID, dup.Source)
					break
				}
				newText[key] = it.source
				ir.Action = ActionCreated
				s = &step{it: it}
			}
			if s != nil {
				s.file, s.item = fi, len(fr.Items)
				p.steps = append(p.steps, *s)
			}
			fr.add(ir.Action)
			p.rep.add(ir.Action)
			fr.Items = append(fr.Items, ir)
		}
		p.rep.Files = append(p.rep.Files, fr)
	}
	var srcs []string
	for src := range live {
		srcs = append(srcs, src)
	}
	sort.Strings(srcs)
	for _, src := range srcs {
		file := fileOfSource(src)
		if seen[src] || skippedFiles[file] || !sc.inScope(file) {
			continue
		}
		for _, m := range live[src] {
			p.rep.Missing = append(p.rep.Missing, Missing{Source: src, ID: m.ID, Project: m.Project})
		}
	}
	return p, nil
}

func changes(old memory.Memory, it item) string {
	var s string
	if old.Type != it.typ {
		s = fmt.Sprintf("type %s -> %s", old.Type, it.typ)
	}
	if old.Project != it.project {
		s = joinNotes(s, fmt.Sprintf("project %q -> %q", old.Project, it.project))
	}
	return s
}

func (p *planned) report() Report { return p.rep }

// apply writes the plan.
func (p *planned) apply(ctx context.Context, opts Options) error {
	lag := false
	for _, s := range p.steps {
		ir := &p.rep.Files[s.file].Items[s.item]
		var err error
		if s.metaOnly {
			_, err = opts.Store.Update(ctx, s.old.ID, func(m *memory.Memory) error {
				m.Type, m.Project = s.it.typ, s.it.project
				return nil
			})
		} else {
			err = p.write(ctx, opts.Pipeline, s, ir)
		}
		if errors.Is(err, store.ErrIndexPending) {
			lag, err = true, nil
		}
		if err != nil {
			return fmt.Errorf("%s: %w", s.it.source, err)
		}
	}
	if lag {
		p.rep.Notes = append(p.rep.Notes, "the text index lags behind the records; it catches up at the next write or start")
	}
	return nil
}

// write stores one item through the write pipeline: a new memory, or the
// new version of its source's live memory (keeping its importance and pin;
// the text was stripped and redacted when it was read).
func (p *planned) write(ctx context.Context, pipe *ingest.Pipeline, s step, ir *ItemReport) error {
	req := ingest.WriteRequest{Exact: true, Memory: memory.Memory{Text: s.it.text, Kind: s.it.kind, Type: s.it.typ,
		Project: s.it.project, Source: s.it.source}}
	want := memory.VerdictStored
	if s.old != nil {
		req.Replaces, want = s.old.ID, memory.VerdictUpdated
		req.Memory.Importance, req.Memory.Pinned = s.old.Importance, s.old.Pinned
	}
	res, err := pipe.Write(ctx, req)
	if res.Memory.ID != "" {
		ir.ID = res.Memory.ID
	}
	if err != nil {
		return err // a lagging text index included: the memory is stored
	}
	if res.Decision.Verdict != want {
		// Only a write racing this import gets here (the plan skipped
		// stored texts): say what the pipeline did instead.
		fc, rc := &p.rep.Files[s.file].Counts, &p.rep.Counts
		for _, c := range []*Counts{fc, rc} {
			if s.old != nil {
				c.Updated--
			} else {
				c.Created--
			}
			c.add(ActionSkipped)
		}
		ir.Action, ir.Supersedes = ActionSkipped, ""
		ir.Reason = fmt.Sprintf("the write pipeline answered %s: %s", res.Decision.Verdict, res.Decision.Reason)
	}
	return nil
}
