package cli

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/memtray/memtray/backend/httpapi"
	"github.com/memtray/memtray/backend/steward"
	"github.com/memtray/memtray/backend/store"
)

// maxPlanRows bounds the actions the table shows (--json shows all).
const maxPlanRows = 60

// runDream plans the steward's consolidation, shows it, and applies it
// with --apply; --undo restores the state before the last applied run (or
// before the run --run names), --runs lists the runs that can be undone.
func runDream(env *Env, args []string) error {
	var c common
	fs := newFlags("dream", env, &c, true)
	all := fs.Bool("all", false, "the whole store, merging across projects too")
	project := fs.String("project", "", "only this project's memories")
	ops := fs.String("ops", "", "comma-separated operations (default all six): merge, decay_stale, boost_active, prune, decay_unreinforced, snooze_sticky")
	apply := fs.Bool("apply", false, "apply the plan after showing it")
	undo := fs.Bool("undo", false, "restore the state before the last applied run (or --run)")
	runID := fs.String("run", "", "with --undo: the run to undo (see --runs), keeping what later runs changed")
	runs := fs.Bool("runs", false, "list the applied runs that can be undone, newest first")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usagef("dream takes no arguments")
	}
	if *undo && (*apply || *all || *project != "" || *ops != "" || *runs) {
		return usagef("--undo takes no other flag but --run")
	}
	if *runID != "" && !*undo {
		return usagef("--run goes with --undo")
	}
	if *runs && (*apply || *all || *project != "" || *ops != "") {
		return usagef("--runs takes no other flag")
	}
	var opList []string
	if *ops != "" {
		opList = strings.Split(*ops, ",")
	}
	return c.with(env, func(svc httpapi.Services) error {
		if *runs {
			list, err := svc.Steward.StewardRuns(env.Ctx)
			if err != nil {
				return err
			}
			if c.json {
				return printJSON(env.Stdout, list)
			}
			printRuns(env.Stdout, list)
			return nil
		}
		if *undo {
			res, err := svc.Steward.StewardUndo(env.Ctx, httpapi.UndoRequest{RunID: *runID})
			if err != nil {
				return err
			}
			if c.json {
				return printJSON(env.Stdout, res)
			}
			fmt.Fprintf(env.Stdout, "undid run %s: %s\n", res.RunID, countsLine(res.Counts))
			printSkips(env.Stdout, res.Skipped)
			return nil
		}
		plan, err := svc.Steward.StewardPlan(env.Ctx, steward.PlanOptions{Project: *project, All: *all, Ops: opList})
		if err != nil {
			return err
		}
		var res *steward.Result
		if *apply && len(plan.Actions) > 0 {
			r, err := svc.Steward.StewardApply(env.Ctx, httpapi.ApplyRequest{PlanID: plan.ID})
			if err != nil {
				return err
			}
			res = &r
		}
		if c.json {
			return printJSON(env.Stdout, struct {
				Plan   *steward.Plan   `json:"plan"`
				Result *steward.Result `json:"result,omitempty"`
			}{plan, res})
		}
		printPlan(env.Stdout, plan)
		switch {
		case res != nil:
			fmt.Fprintf(env.Stdout, "\napplied: %s; %d to the trash (restorable: `memtray trash`). Undo with `memtray dream --undo`.\n",
				countsLine(res.Counts), res.Trashed)
			printSkips(env.Stdout, res.Skipped)
		case len(plan.Actions) == 0:
			fmt.Fprintln(env.Stdout, "\nnothing to do.")
		default:
			fmt.Fprintln(env.Stdout, "\nthis was a dry run: `memtray dream --apply` (same flags) carries it out.")
		}
		return nil
	})
}

// printRuns writes the undoable runs as a table, newest first.
func printRuns(w io.Writer, runs []steward.Run) {
	if len(runs) == 0 {
		fmt.Fprintln(w, "no applied steward run can be undone.")
		return
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "run\tapplied\tby\tmemories\tactions")
	for _, r := range runs {
		by := "you"
		if r.Scheduled {
			by = "schedule"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\n", r.RunID, r.At.Local().Format("2006-01-02 15:04"), by, r.Memories, countsLine(r.Counts))
	}
	tw.Flush()
	fmt.Fprintln(w, "\n`memtray dream --undo` undoes the newest; `memtray dream --undo --run RUN` any of them (later changes stay).")
}

// printPlan writes a plan as a summary line and a table of actions.
func printPlan(w io.Writer, p *steward.Plan) {
	fmt.Fprintf(w, "steward plan %s (%s): %d memories scanned in %s; %s\n", p.ID, p.Scope, p.Scanned,
		p.Duration.Round(time.Millisecond), countsLine(p.Counts))
	if len(p.Actions) == 0 {
		return
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "\nop\tmemory\tproject\tchange\treason")
	for i, a := range p.Actions {
		if i == maxPlanRows {
			fmt.Fprintf(tw, "…\t%d more\t\t(--json lists them all)\t\n", len(p.Actions)-maxPlanRows)
			break
		}
		fmt.Fprintf(tw, "%s\t%s %s\t%s\t%s\t%s\n", a.Op, a.ID, oneLine(a.Preview, 40), a.Project, change(a), oneLine(a.Reason, 70))
	}
	tw.Flush()
	for _, a := range p.Refused {
		fmt.Fprintf(w, "not merged: %s and %s: %s\n", a.ID, strings.Join(a.MergedIDs, ", "), oneLine(a.Reason, 100))
	}
}

// change describes an action's before and after.
func change(a steward.Action) string {
	switch {
	case a.Op == steward.OpMerge:
		return fmt.Sprintf("keeps %q, absorbs %s (cos %.2f)", oneLine(a.KeptText, 50), strings.Join(a.MergedIDs, ", "), a.Similarity)
	case a.After.Trashed:
		return fmt.Sprintf("to the trash (importance %.3f)", a.Before.Importance)
	case !a.After.CooldownUntil.Equal(a.Before.CooldownUntil):
		return "snoozed until " + a.After.CooldownUntil.Local().Format(time.DateOnly)
	}
	return fmt.Sprintf("importance %.3f -> %.3f", a.Before.Importance, a.After.Importance)
}

func countsLine(counts map[string]int) string {
	if len(counts) == 0 {
		return "no changes"
	}
	var parts []string
	for _, k := range sortedKeys(counts) {
		parts = append(parts, fmt.Sprintf("%s %d", k, counts[k]))
	}
	return strings.Join(parts, ", ")
}

func printSkips(w io.Writer, skips []steward.Skip) {
	for _, s := range skips {
		fmt.Fprintf(w, "skipped %s %s: %s\n", s.Op, s.ID, s.Reason)
	}
}

// runTrash lists the trash, restores memories from it, or deletes them
// from it for good (trash purge ID... | --all).
func runTrash(env *Env, args []string) error {
	var c common
	fs := newFlags("trash", env, &c, true)
	all := fs.Bool("all", false, "with purge: empty the whole trash for good")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	verb := ""
	if len(pos) > 0 {
		verb = pos[0]
	}
	switch {
	case verb == "" && !*all:
	case verb == "restore" && len(pos) > 1 && !*all:
	case verb == "purge" && (len(pos) > 1) != *all:
	default:
		return usagef("want no argument, restore ID..., or purge ID... | purge --all")
	}
	return c.with(env, func(svc httpapi.Services) error {
		switch verb {
		case "restore":
			if err := svc.Steward.Restore(env.Ctx, pos[1:]); err != nil {
				return err
			}
			fmt.Fprintf(env.Stdout, "restored %d\n", len(pos)-1)
			return nil
		case "purge":
			res, err := svc.Steward.PurgeTrash(env.Ctx, httpapi.TrashPurgeRequest{IDs: pos[1:], All: *all})
			if err != nil {
				return err
			}
			fmt.Fprintf(env.Stdout, "deleted %d from the trash for good\n", res.Purged)
			return nil
		}
		items, err := svc.Steward.Trash(env.Ctx)
		if err != nil {
			return err
		}
		if c.json {
			return printJSON(env.Stdout, items)
		}
		unreadable, err := unreadableTrash(env, svc)
		if err != nil {
			return err
		}
		tw := tabwriter.NewWriter(env.Stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "id\ttrashed\treason\ttext")
		for _, t := range items {
			reason := t.Reason
			if t.Conflict != nil {
				// Both sides, as the team's refusal left them.
				reason = fmt.Sprintf("conflict copy of %s, whose team version says %q", t.Conflict.Of, oneLine(t.Conflict.Theirs, 40))
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", t.Memory.ID, t.TrashedAt.Local().Format(time.DateOnly), oneLineWholeIDs(reason, 50), oneLine(t.Memory.Text, 60))
		}
		tw.Flush()
		fmt.Fprintf(env.Stdout, "%d in the trash\n", len(items))
		if unreadable != "" {
			fmt.Fprintf(env.Stdout, "warning: %s\n", unreadable)
		}
		return nil
	})
}

// unreadableTrash says which trash entries cannot be read
// (store.Info.TrashUnreadable and TrashUnreadableIDs, from the stats):
// the trash's list leaves them out, and `memtray trash` names them after
// it. "" when there are none.
func unreadableTrash(env *Env, svc httpapi.Services) (string, error) {
	st, err := svc.Status.Stats(env.Ctx)
	if err != nil {
		return "", err
	}
	return unreadableTrashLine(st.Store), nil
}

// unreadableTrashLine is what `memtray trash` says of info's unreadable
// trash entries, named by their ids (the data, not the warnings' text,
// which is for a person to read). "" when there are none.
func unreadableTrashLine(info store.Info) string {
	n := info.TrashUnreadable
	if n == 0 {
		return ""
	}
	named := ""
	if len(info.TrashUnreadableIDs) > 0 {
		named = " (" + strings.Join(info.TrashUnreadableIDs, ", ") + ")"
	}
	return fmt.Sprintf("%d more cannot be read and are not listed%s: they cannot be restored; `memtray trash purge ID` or `memtray trash purge --all` deletes them, `memtray stats` says why", n, named)
}
