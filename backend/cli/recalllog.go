package cli

import (
	"fmt"
	"text/tabwriter"
	"time"

	"github.com/memtray/memtray/backend/httpapi"
	"github.com/memtray/memtray/backend/store"
)

// runRecallLog lists the recall log's newest entries (what each recall
// gave an agent), or clears the log.
func runRecallLog(env *Env, args []string) error {
	var c common
	fs := newFlags("recall-log", env, &c, true)
	limit := fs.Int("limit", 20, fmt.Sprintf("at most this many recalls (1..%d)", store.MaxRecallLogLimit))
	session := fs.String("session", "", "only this agent session's recalls")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	clear := len(pos) == 1 && pos[0] == "clear"
	if len(pos) > 0 && !clear {
		return usagef("want no argument, or clear")
	}
	if *limit < 1 || *limit > store.MaxRecallLogLimit {
		return usagef("--limit must be within 1..%d", store.MaxRecallLogLimit)
	}
	return c.with(env, func(svc httpapi.Services) error {
		if clear {
			n, err := svc.RecallLog.ClearRecallLog(env.Ctx)
			if err != nil {
				return err
			}
			if c.json {
				return printJSON(env.Stdout, httpapi.RecallLogCleared{Cleared: n})
			}
			fmt.Fprintf(env.Stdout, "cleared %d recalls from the log\n", n)
			return nil
		}
		log, err := svc.RecallLog.RecallLog(env.Ctx, store.RecallLogQuery{SessionID: *session, Limit: *limit})
		if err != nil {
			return err
		}
		if c.json {
			return printJSON(env.Stdout, log)
		}
		tw := tabwriter.NewWriter(env.Stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "at\tsession\tgiven\twithheld\tprompt")
		for _, e := range log {
			fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%s\n", e.At.Local().Format(time.DateTime), oneLine(e.SessionID, 20), len(e.Given), len(e.Withheld), oneLine(e.Prompt, 60))
		}
		tw.Flush()
		fmt.Fprintf(env.Stdout, "%d recalls\n", len(log))
		return nil
	})
}
