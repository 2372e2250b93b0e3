package cli

import (
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/memtray/memtray/backend/httpapi"
)

// runImportClaude imports Claude Code's file memories and CLAUDE.md files
// through the daemon (or the store opened here), idempotently.
func runImportClaude(env *Env, args []string) error {
	var c common
	fs := newFlags("import-claude", env, &c, true)
	home := fs.String("home", "", "home directory holding .claude (default: your home)")
	var dirs []string
	fs.Func("project-dir", "a project directory whose CLAUDE.md and .claude/CLAUDE.md to import (repeatable)", func(v string) error {
		if strings.TrimSpace(v) == "" {
			return fmt.Errorf("empty project dir")
		}
		dirs = append(dirs, v)
		return nil
	})
	dryRun := fs.Bool("dry-run", false, "report what would change and write nothing")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usagef("unexpected argument %q (project directories go with --project-dir)", pos[0])
	}
	req := httpapi.ImportClaudeRequest{DryRun: *dryRun}
	if *home != "" {
		if req.Home, err = filepath.Abs(*home); err != nil {
			return fmt.Errorf("--home: %w", err)
		}
	}
	for _, d := range dirs {
		abs, err := filepath.Abs(d)
		if err != nil {
			return fmt.Errorf("--project-dir %s: %w", d, err)
		}
		req.ProjectDirs = append(req.ProjectDirs, abs)
	}
	return c.with(env, func(svc httpapi.Services) error {
		rep, err := svc.Importer.ImportClaude(env.Ctx, req)
		if err != nil {
			return err
		}
		if c.json {
			return printJSON(env.Stdout, rep)
		}
		printImportClaude(env.Stdout, rep)
		return nil
	})
}

// printImportClaude prints a report for people: one line a file, the
// reasons of what was skipped, the memories missing on disk, the totals.
func printImportClaude(w io.Writer, rep httpapi.ImportClaudeReport) {
	for _, f := range rep.Files {
		proj := ""
		if f.Project != "" {
			proj = " [" + f.Project + "]"
		}
		if f.SkippedReason != "" {
			fmt.Fprintf(w, "%s%s: skipped: %s\n", f.Path, proj, f.SkippedReason)
		} else {
			fmt.Fprintf(w, "%s%s: %s\n", f.Path, proj, importCounts(f.Counts))
		}
		for _, n := range f.Notes {
			fmt.Fprintf(w, "  note: %s\n", n)
		}
		for _, it := range f.Items {
			frag := strings.TrimPrefix(it.Source, "import:claude:"+f.Path)
			if frag != "" {
				frag += " "
			}
			switch {
			case it.Action == "skipped":
				fmt.Fprintf(w, "  %sskipped: %s\n", frag, it.Reason)
			case it.Action != "unchanged":
				fmt.Fprintf(w, "  %s%s %s (%s, %s)\n", frag, it.Action, it.ID, it.Type, it.Kind)
			}
			if it.Note != "" {
				fmt.Fprintf(w, "  %snote: %s\n", frag, it.Note)
			}
		}
	}
	for _, n := range rep.Notes {
		fmt.Fprintf(w, "note: %s\n", n)
	}
	if len(rep.Missing) > 0 {
		fmt.Fprintf(w, "missing on disk (kept; `memtray delete ID` removes one):\n")
		for _, m := range rep.Missing {
			fmt.Fprintf(w, "  %s  %s\n", m.ID, strings.TrimPrefix(m.Source, "import:claude:"))
		}
	}
	total := fmt.Sprintf("%d files: %s, %d missing on disk", len(rep.Files), importCounts(rep.Counts), len(rep.Missing))
	if rep.DryRun {
		total += " (dry run: nothing written)"
	}
	fmt.Fprintln(w, total)
}

func importCounts(c httpapi.ImportClaudeCounts) string {
	return fmt.Sprintf("%d created, %d updated, %d unchanged, %d skipped", c.Created, c.Updated, c.Unchanged, c.Skipped)
}
