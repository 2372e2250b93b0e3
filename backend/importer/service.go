package importer

import (
	"context"
	"fmt"
	"log/slog"
	"os"
)

// Service is the importer as people and tools use it (the API's and the
// CLI's import-claude): Import over one store and write pipeline, with
// the user's home as the default and each import that wrote logged.
type Service struct {
	opts Options
	log  *slog.Logger
	home func() (string, error)
}

// NewService returns the service importing into opts' store through its
// pipeline; a nil logger discards.
func NewService(opts Options, log *slog.Logger) *Service {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Service{opts: opts, log: log, home: os.UserHomeDir}
}

// ImportClaude imports Claude Code's file memories
// (~/.claude/projects/*/memory/*.md) and CLAUDE.md files (the user's, and
// those of req.ProjectDirs) idempotently (see Import): a re-run creates
// nothing twice, supersedes what changed on disk, and reports what is gone
// from disk without deleting it. A dry run writes nothing. An empty
// req.Home is the home of the user running the service.
func (s *Service) ImportClaude(ctx context.Context, req Request) (Report, error) {
	if req.Home == "" {
		home, err := s.home()
		if err != nil {
			return Report{}, fmt.Errorf("import claude: no home directory: %w", err)
		}
		req.Home = home
	}
	rep, err := Import(ctx, s.opts, req)
	if err != nil {
		return Report{}, err
	}
	if !rep.DryRun {
		s.log.Info("imported Claude Code memories", "home", rep.Home, "created", rep.Created, "updated", rep.Updated,
			"unchanged", rep.Unchanged, "skipped", rep.Skipped, "missing", len(rep.Missing))
	}
	return rep, nil
}
