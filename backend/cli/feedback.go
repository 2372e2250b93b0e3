package cli

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/memtray/memtray/backend/httpapi"
	"github.com/memtray/memtray/backend/memory"
)

// memoryChange runs one change to one memory and prints the result.
func memoryChange(env *Env, c common, id string, change func(svc httpapi.Services) (memory.Memory, error), say func(m memory.Memory) string) error {
	return c.with(env, func(svc httpapi.Services) error {
		m, err := change(svc)
		if err != nil {
			return err
		}
		m.Embedding = nil
		if c.json {
			return printJSON(env.Stdout, m)
		}
		fmt.Fprintf(env.Stdout, "%s: %s\n", id, say(m))
		return nil
	})
}

func runPin(env *Env, args []string) error   { return pin(env, "pin", args, true) }
func runUnpin(env *Env, args []string) error { return pin(env, "unpin", args, false) }

func pin(env *Env, name string, args []string, on bool) error {
	c, id, err := parseID(env, name, args, true)
	if err != nil {
		return err
	}
	return memoryChange(env, c, id, func(svc httpapi.Services) (memory.Memory, error) { return svc.Feedback.Pin(env.Ctx, id, on) },
		func(m memory.Memory) string {
			if m.Pinned {
				return "pinned: the steward never prunes, decays or merges it"
			}
			return "unpinned"
		})
}

func runReinforce(env *Env, args []string) error {
	c, id, err := parseID(env, "reinforce", args, true)
	if err != nil {
		return err
	}
	return memoryChange(env, c, id, func(svc httpapi.Services) (memory.Memory, error) { return svc.Feedback.Reinforce(env.Ctx, id) },
		func(m memory.Memory) string {
			return fmt.Sprintf("reinforced (%d times, %d accesses)", m.ReinforcedCount, m.AccessCount)
		})
}

func runUnsnooze(env *Env, args []string) error {
	c, id, err := parseID(env, "unsnooze", args, true)
	if err != nil {
		return err
	}
	return memoryChange(env, c, id, func(svc httpapi.Services) (memory.Memory, error) { return svc.Feedback.Snooze(env.Ctx, id, 0) },
		func(memory.Memory) string { return "awake: recall may give it again" })
}

func runSnooze(env *Env, args []string) error {
	var c common
	fs := newFlags("snooze", env, &c, true)
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 2 {
		return usagef("want ID DAYS")
	}
	days, err := strconv.ParseFloat(pos[1], 64)
	if err != nil || days <= 0 {
		return usagef("DAYS must be a positive number, not %q", pos[1])
	}
	id := pos[0]
	return memoryChange(env, c, id, func(svc httpapi.Services) (memory.Memory, error) { return svc.Feedback.Snooze(env.Ctx, id, days) },
		func(m memory.Memory) string {
			return "snoozed until " + m.CooldownUntil.Local().Format(time.DateTime)
		})
}

func runRate(env *Env, args []string) error {
	var c common
	fs := newFlags("rate", env, &c, true)
	reason := fs.String("reason", "", "why (kept in the log)")
	args = slices.Clone(args)
	for i, a := range args {
		if a == "-1" { // a score, not a flag
			args[i] = "down"
		}
	}
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) < 2 {
		return usagef("want +1|-1 ID...")
	}
	score := 0
	switch pos[0] {
	case "+1", "1", "up":
		score = 1
	case "-1", "down":
		score = -1
	default:
		return usagef("the score is +1 or -1, not %q", pos[0])
	}
	ids := pos[1:]
	return c.with(env, func(svc httpapi.Services) error {
		ms, err := svc.Feedback.Rate(env.Ctx, ids, score, *reason)
		if err != nil {
			return err
		}
		if c.json {
			for i := range ms {
				ms[i].Embedding = nil
			}
			return printJSON(env.Stdout, ms)
		}
		var parts []string
		for _, m := range ms {
			parts = append(parts, fmt.Sprintf("%s (feedback %+.2f over %d)", m.ID, m.FeedbackAvg(), m.FeedbackN))
		}
		fmt.Fprintf(env.Stdout, "rated %+d: %s\n", score, strings.Join(parts, ", "))
		return nil
	})
}
