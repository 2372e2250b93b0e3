package daemon

import (
	"context"
	"fmt"
	"os"

	"github.com/memtray/memtray/backend/httpapi"
	"github.com/memtray/memtray/backend/importer"
)

// ImportClaude imports Claude Code's file memories
// (~/.claude/projects/*/memory/*.md) and CLAUDE.md files (the user's, and
// those of req.ProjectDirs) idempotently (package importer): a re-run
// creates nothing twice, supersedes what changed on disk, and reports what
// is gone from disk without deleting it. A dry run writes nothing. An
// empty req.Home is the daemon user's home.
func (d *Daemon) ImportClaude(ctx context.Context, req httpapi.ImportClaudeRequest) (httpapi.ImportClaudeReport, error) {
	if req.Home == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return httpapi.ImportClaudeReport{}, fmt.Errorf("import claude: no home directory: %w", err)
		}
		req.Home = home
	}
	rep, err := importer.Import(ctx, importer.Options{Store: d.store, Pipeline: d.pipeline},
		importer.Request{Home: req.Home, ProjectDirs: req.ProjectDirs, DryRun: req.DryRun})
	if err != nil {
		return httpapi.ImportClaudeReport{}, err
	}
	if !rep.DryRun {
		d.log.Info("imported Claude Code memories", "home", rep.Home, "created", rep.Created, "updated", rep.Updated,
			"unchanged", rep.Unchanged, "skipped", rep.Skipped, "missing", len(rep.Missing))
	}
	return importReport(rep), nil
}

// importReport is the API's form of an importer.Report.
func importReport(rep importer.Report) httpapi.ImportClaudeReport {
	out := httpapi.ImportClaudeReport{DryRun: rep.DryRun, Home: rep.Home, ImportClaudeCounts: httpapi.ImportClaudeCounts(rep.Counts),
		Missing: make([]httpapi.ImportClaudeMissing, 0, len(rep.Missing)), Files: make([]httpapi.ImportClaudeFile, 0, len(rep.Files)),
		Notes: rep.Notes}
	for _, m := range rep.Missing {
		out.Missing = append(out.Missing, httpapi.ImportClaudeMissing(m))
	}
	for _, f := range rep.Files {
		fr := httpapi.ImportClaudeFile{Path: f.Path, Format: f.Format, Project: f.Project, ImportClaudeCounts: httpapi.ImportClaudeCounts(f.Counts),
			SkippedReason: f.SkippedReason, Notes: f.Notes, Items: make([]httpapi.ImportClaudeItem, 0, len(f.Items))}
		for _, it := range f.Items {
			fr.Items = append(fr.Items, httpapi.ImportClaudeItem(it))
		}
		out.Files = append(out.Files, fr)
	}
	return out
}
