package daemon

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/memtray/memtray/backend/config"
	"github.com/memtray/memtray/backend/memory"
	"github.com/memtray/memtray/backend/project"
	"github.com/memtray/memtray/backend/store"
	"github.com/memtray/memtray/backend/tail"
)

// ProjectsMigrated, in the data dir, records that the project labels of
// older versions (a working directory's own name) were moved to the
// repository names of package project, and which were.
const ProjectsMigrated = "projects-migrated.json"

// projectsMigration is the version of the migration ProjectsMigrated
// records; a data dir with an older one (or none) is migrated at Open.
const projectsMigration = 1

// Bounds of the search for working directories in the agents' session
// folders: files read, bytes read of each (the working directory is on
// the first lines), newest files per Claude Code project folder.
const (
	maxProjectFiles     = 2000
	maxProjectHead      = 64 << 10
	projectFilesPerDir  = 3
	projectRenameBatch  = 256
	maxDirsPerProjectLn = 3
)

// projectRename is one label moved: From (a directory's own name) to To
// (its repository's project).
type projectRename struct {
	From     string   `json:"from"`
	To       string   `json:"to"`
	Memories int      `json:"memories"`
	Dirs     []string `json:"dirs"` // some of the directories that tell
}

// projectPlan is what migrateProjects does: the renames, and the names it
// leaves because their directories disagree (name -> the projects they
// resolve to).
type projectPlan struct {
	Renames   []projectRename     `json:"renames"`
	Ambiguous map[string][]string `json:"ambiguous,omitempty"`
}

// planProjectRenames decides which stored labels (counts: label -> live
// memories) to move. A label moves when it is the own name of working
// directories seen on this machine that all resolve to one repository
// project of another name, and no directory seen resolves to a project of
// that label (then the label may be right). Labels no directory explains
// (a user-given project, a machine not this one) are left as they are.
func planProjectRenames(counts map[string]int, dirs []string, res *project.Resolver) projectPlan {
	targets := map[string]map[string]bool{} // old label -> resolved names
	tell := map[string][]string{}
	resolved := map[string]bool{}
	for _, dir := range dirs {
		old := project.DirName(dir)
		if counts[old] == 0 {
			continue
		}
		info, err := res.Resolve(dir)
		if err != nil || info.Name == "" || info.Source == project.FromPath {
			continue // not on this machine: it tells nothing
		}
		resolved[info.Name] = true
		if targets[old] == nil {
			targets[old] = map[string]bool{}
		}
		targets[old][info.Name] = true
		if len(tell[old]) < maxDirsPerProjectLn && !slices.Contains(tell[old], dir) {
			tell[old] = append(tell[old], dir)
		}
	}
	var plan projectPlan
	for old, to := range targets {
		names := make([]string, 0, len(to))
		for n := range to {
			names = append(names, n)
		}
		sort.Strings(names)
		switch {
		case len(names) > 1:
			if plan.Ambiguous == nil {
				plan.Ambiguous = map[string][]string{}
			}
			plan.Ambiguous[old] = names
		case names[0] == old, resolved[old]:
			// Already a project's name.
		default:
			plan.Renames = append(plan.Renames, projectRename{From: old, To: names[0], Memories: counts[old], Dirs: tell[old]})
		}
	}
	sort.Slice(plan.Renames, func(i, j int) bool { return plan.Renames[i].From < plan.Renames[j].From })
	return plan
}

// migrateProjects moves the project labels of older versions to
// repository names once per data dir (ProjectsMigrated records it): it
// counts the labels in the store, finds the working directories this
// machine has seen (the transcript capture's cursors, the first lines of
// the agents' session files) and applies planProjectRenames. Each batch of
// records is one store transaction and the record is written only after
// the last, so a crash midway is finished by the next start (a label
// already moved no longer matches). The caller logs the outcome.
func (d *Daemon) migrateProjects(ctx context.Context) (projectPlan, error) {
	marker := filepath.Join(d.cfg.DataDir, ProjectsMigrated)
	var done struct {
		Version int `json:"version"`
	}
	if data, err := os.ReadFile(marker); err == nil && json.Unmarshal(data, &done) == nil && done.Version >= projectsMigration {
		return projectPlan{}, nil
	}
	counts := map[string]int{}
	err := d.store.Iterate(ctx, store.Filter{IncludeSnoozed: true, IncludeSuperseded: true}, func(m memory.Memory) error {
		if m.Project != "" {
			counts[m.Project]++
		}
		return nil
	})
	if err != nil {
		return projectPlan{}, fmt.Errorf("migrate projects: count labels: %w", err)
	}
	var plan projectPlan
	if len(counts) > 0 {
		plan = planProjectRenames(counts, d.seenDirs(), project.NewResolver(project.Options{}))
		for _, r := range plan.Renames {
			if err := relabel(ctx, d.store, r.From, r.To); err != nil {
				return plan, fmt.Errorf("migrate projects: %s -> %s: %w", r.From, r.To, err)
			}
		}
	}
	data, err := json.MarshalIndent(struct {
		Version int       `json:"version"`
		At      time.Time `json:"at"`
		projectPlan
	}{projectsMigration, d.clock.Now().UTC(), plan}, "", "  ")
	if err != nil {
		return plan, fmt.Errorf("migrate projects: %w", err)
	}
	if err := config.WriteFileAtomic(marker, data, 0o600); err != nil {
		return plan, fmt.Errorf("migrate projects: record: %w", err)
	}
	return plan, nil
}

// relabel moves every memory labelled from to the project to, in
// transactions of projectRenameBatch records that each hold only if the
// records did not change since read.
func relabel(ctx context.Context, st *store.Store, from, to string) error {
	var ids []string
	err := st.Iterate(ctx, store.Filter{Project: from, IncludeSnoozed: true, IncludeSuperseded: true}, func(m memory.Memory) error {
		ids = append(ids, m.ID)
		return nil
	})
	if err != nil {
		return err
	}
	for len(ids) > 0 {
		n := min(len(ids), projectRenameBatch)
		got, err := st.GetMany(ctx, ids[:n])
		if err != nil {
			return err
		}
		b := store.Batch{IfUpdatedAt: map[string]time.Time{}}
		for _, id := range ids[:n] {
			m, ok := got[id]
			if !ok || m.Project != from {
				continue // deleted or changed meanwhile
			}
			b.IfUpdatedAt[id] = m.UpdatedAt
			m.Project = to
			b.Put = append(b.Put, m)
		}
		if err := st.Apply(ctx, b); err != nil {
			return err
		}
		ids = ids[n:]
	}
	return nil
}

// seenDirs lists the working directories this machine's sessions ran in,
// as far as memtray can tell: those the transcript capture's cursors
// recorded, and those the first lines of the agents' session files name
// (the newest few files of each Claude Code project folder, Codex CLI's
// rollouts), within maxProjectFiles files.
func (d *Daemon) seenDirs() []string {
	seen := map[string]bool{}
	var out []string
	add := func(dir string) {
		dir = strings.TrimSpace(dir)
		if dir != "" && !seen[dir] && project.Validate(dir) == nil {
			seen[dir] = true
			out = append(out, dir)
		}
	}
	cursors, _ := tail.SavedCursors(filepath.Join(d.cfg.DataDir, TranscriptsDir)) // damaged ones tell nothing
	for _, c := range cursors {
		add(c.CWD)
	}
	roots := map[string][]string{}
	if home, err := os.UserHomeDir(); err == nil {
		roots = tail.DefaultRoots(home)
	}
	tc := d.cfg.Capture.Transcripts
	if len(tc.ClaudeCodeDirs) > 0 {
		roots[tail.AgentClaudeCode] = tc.ClaudeCodeDirs
	}
	if len(tc.CodexDirs) > 0 {
		roots[tail.AgentCodex] = tc.CodexDirs
	}
	budget := maxProjectFiles
	for _, root := range roots[tail.AgentClaudeCode] {
		dirs, _ := os.ReadDir(root)
		for _, e := range dirs {
			if !e.IsDir() {
				continue
			}
			for _, f := range newestJSONL(filepath.Join(root, e.Name()), projectFilesPerDir) {
				if budget--; budget < 0 {
					return out
				}
				for _, cwd := range headCWDs(f) {
					add(cwd)
				}
			}
		}
	}
	for _, root := range roots[tail.AgentCodex] {
		_ = filepath.WalkDir(root, func(path string, e fs.DirEntry, err error) error {
			if err != nil || e.IsDir() || !strings.HasSuffix(e.Name(), ".jsonl") {
				return nil
			}
			if budget--; budget < 0 {
				return filepath.SkipAll
			}
			for _, cwd := range headCWDs(path) {
				add(cwd)
			}
			return nil
		})
	}
	return out
}

// newestJSONL returns the n newest .jsonl files of dir.
func newestJSONL(dir string, n int) []string {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	type file struct {
		path string
		mod  time.Time
	}
	var files []file
	for _, e := range entries {
		if !e.Type().IsRegular() || !strings.HasSuffix(e.Name(), ".jsonl") {
			continue
		}
		if fi, err := e.Info(); err == nil {
			files = append(files, file{filepath.Join(dir, e.Name()), fi.ModTime()})
		}
	}
	sort.Slice(files, func(i, j int) bool { return files[i].mod.After(files[j].mod) })
	var out []string
	for i := 0; i < len(files) && i < n; i++ {
		out = append(out, files[i].path)
	}
	return out
}

// cwdField matches a JSON "cwd" member with a string value (Claude Code's
// lines, Codex CLI's session_meta and turn_context).
var cwdField = regexp.MustCompile(`"cwd"\s*:\s*("(?:[^"\\]|\\.)*")`)

// headCWDs returns the distinct working directories the first
// maxProjectHead bytes of a session file name (a line cut by the limit
// still counts: only the member is read).
func headCWDs(path string) []string {
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	head, err := io.ReadAll(io.LimitReader(f, maxProjectHead))
	if err != nil {
		return nil
	}
	var out []string
	for _, m := range cwdField.FindAllSubmatch(head, 64) {
		var cwd string
		if json.Unmarshal(m[1], &cwd) != nil || !memory.ValidUTF8(cwd) || slices.Contains(out, cwd) {
			continue
		}
		if bytes.IndexByte(m[1], 0) < 0 {
			out = append(out, cwd)
		}
	}
	return out
}

// migrateProjectsAtOpen runs migrateProjects and logs what it did; a
// failure is logged and leaves the store as it is (the next start tries
// again: nothing was recorded).
func (d *Daemon) migrateProjectsAtOpen(ctx context.Context) {
	plan, err := d.migrateProjects(ctx)
	if err != nil {
		d.log.Warn("project labels of older versions not migrated; tried again at the next start", "err", err)
		return
	}
	for _, r := range plan.Renames {
		d.log.Info("project label migrated to the repository's name", "from", r.From, "to", r.To, "memories", r.Memories, "dirs", r.Dirs)
	}
	for name, to := range plan.Ambiguous {
		d.log.Info("project label left as it is: its directories belong to several repositories", "project", name, "repositories", to)
	}
}
