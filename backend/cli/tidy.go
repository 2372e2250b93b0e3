package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"text/tabwriter"
	"time"

	"github.com/memtray/memtray/backend/tidy"
)

// tidyResult is what `memtray tidy --json` prints for a dry run or --apply.
type tidyResult struct {
	tidy.Report
	Applied bool `json:"applied"`
	// Journal is the undo journal's path when files were moved.
	Journal string       `json:"journal,omitempty"`
	Moves   []tidy.Move  `json:"moves,omitempty"`
	Options tidyOptsJSON `json:"options"`
}

type tidyOptsJSON struct {
	StaleDays   int    `json:"stale_days"`
	StaleBytes  int64  `json:"stale_bytes"`
	DormantDays int    `json:"dormant_days"`
	Current     string `json:"current,omitempty"`
}

func runTidy(env *Env, args []string) error {
	var c common
	fs := newFlags("tidy", env, &c, true)
	apply := fs.Bool("apply", false, "move completed plans to archive/YYYY-MM/ and stale ones to .trash/ (default: dry run)")
	undo := fs.Bool("undo", false, "reverse the last applied run")
	nowFlag := fs.String("now", "", "the time to classify at, RFC 3339 (default now)")
	staleDays := fs.Int("stale-days", 7, "a plan older than this many days and under --stale-bytes is stale")
	staleBytes := fs.Int64("stale-bytes", 2048, "a stale plan is smaller than this many bytes")
	dormantDays := fs.Int("dormant-days", 14, "a plan older than this many days is dormant")
	current := fs.String("current", "", "the current session's plan file (name or path): always active")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("want exactly one PLANS_DIR")
	}
	dir := pos[0]
	if *apply && *undo {
		return usagef("--apply and --undo do not go together")
	}
	if *staleDays < 0 || *dormantDays < 0 || *staleBytes < 0 {
		return usagef("--stale-days, --stale-bytes and --dormant-days must not be negative")
	}
	if *undo {
		res, err := tidy.Undo(dir)
		if err != nil {
			return err
		}
		if c.json {
			if res.Restored == nil {
				res.Restored = []tidy.Move{}
			}
			return printJSON(env.Stdout, res)
		}
		printUndo(env.Stdout, res)
		return nil
	}
	now := time.Now()
	if *nowFlag != "" {
		if now, err = time.Parse(time.RFC3339, *nowFlag); err != nil {
			return usagef("--now: %v", err)
		}
	}
	opts := tidy.DefaultOptions(now)
	opts.StaleAfter = time.Duration(*staleDays) * 24 * time.Hour
	opts.StaleBytes = *staleBytes
	opts.DormantAfter = time.Duration(*dormantDays) * 24 * time.Hour
	opts.Current = *current
	rep, err := tidy.Scan(dir, opts)
	if err != nil {
		return err
	}
	res := tidyResult{Report: rep, Options: tidyOptsJSON{StaleDays: *staleDays, StaleBytes: *staleBytes, DormantDays: *dormantDays, Current: *current}}
	if res.Plans == nil {
		res.Plans = []tidy.Plan{}
	}
	if *apply {
		if _, err := os.Stat(filepath.Join(rep.Dir, tidy.JournalName)); !errors.Is(err, os.ErrNotExist) && rep.Summary.Archived+rep.Summary.Trashed > 0 {
			fmt.Fprintln(env.Stderr, "note: this run's undo journal replaces the previous run's (files that run moved stay in archive/ and .trash/)")
		}
		j, err := tidy.Apply(rep, time.Now())
		res.Moves = j.Moves
		if len(j.Moves) > 0 {
			res.Applied, res.Journal = true, filepath.Join(rep.Dir, tidy.JournalName)
		}
		if err != nil {
			if len(j.Moves) > 0 {
				printTidy(env.Stdout, res)
			}
			return err
		}
	}
	if c.json {
		return printJSON(env.Stdout, res)
	}
	printTidy(env.Stdout, res)
	return nil
}

func printTidy(w io.Writer, res tidyResult) {
	if len(res.Plans) == 0 {
		fmt.Fprintf(w, "no plan files (*.md) in %s\n", res.Dir)
		return
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "CLASS\tFILE\tSIZE\tAGE\tACTION\tREASON")
	for _, p := range res.Plans {
		action := string(p.Action)
		if p.Dest != "" {
			action = "-> " + p.Dest
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", p.Class, p.Name, humanBytes(p.Size), humanAge(p.Age()), action, p.Reason)
	}
	tw.Flush()
	s := res.Summary
	fmt.Fprintf(w, "\n%d plans: %d active, %d completed, %d stale, %d dormant, %d recent, %d skipped.\n", s.Total,
		s.ByClass[tidy.Active], s.ByClass[tidy.Completed], s.ByClass[tidy.Stale], s.ByClass[tidy.Dormant], s.ByClass[tidy.Recent], s.ByClass[tidy.Skipped])
	if s.ByClass[tidy.Dormant] > 0 {
		fmt.Fprintln(w, "Dormant plans are only reported: decide on them yourself.")
	}
	switch {
	case res.Applied:
		fmt.Fprintf(w, "Moved %d: %d archived to %s/, %d stale to %s/ (a safe delete: nothing is erased).\nUndo journal: %s; `memtray tidy %s --undo` puts everything back.\n",
			len(res.Moves), s.Archived, tidy.ArchiveDir, s.Trashed, tidy.TrashDir, res.Journal, res.Dir)
	case s.Archived+s.Trashed == 0:
		fmt.Fprintln(w, "Nothing to move.")
	default:
		fmt.Fprintf(w, "Dry run: nothing changed. --apply would archive %d to %s/ and move %d stale to %s/ (a safe delete, undone with --undo).\n",
			s.Archived, tidy.ArchiveDir, s.Trashed, tidy.TrashDir)
	}
}

func printUndo(w io.Writer, res tidy.UndoResult) {
	for _, m := range res.Restored {
		fmt.Fprintf(w, "restored %s (from %s)\n", m.From, m.To)
	}
	for _, n := range res.NotMoved {
		fmt.Fprintf(w, "%s was never moved: left as it is\n", n)
	}
	for _, n := range res.Changed {
		fmt.Fprintf(w, "note: %s changed after it was moved: it keeps its new content and modification time\n", n)
	}
	fmt.Fprintf(w, "restored %d files; the undo journal is removed\n", len(res.Restored))
}

func humanBytes(n int64) string {
	switch {
	case n < 1024:
		return fmt.Sprintf("%d B", n)
	case n < 1<<20:
		return fmt.Sprintf("%.1f KiB", float64(n)/1024)
	default:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	}
}

func humanAge(d time.Duration) string {
	switch {
	case d < 0:
		return "future"
	case d < time.Hour:
		return fmt.Sprintf("%dm", int(d/time.Minute))
	case d < 24*time.Hour:
		return fmt.Sprintf("%dh", int(d/time.Hour))
	default:
		return fmt.Sprintf("%dd", int(d/(24*time.Hour)))
	}
}
