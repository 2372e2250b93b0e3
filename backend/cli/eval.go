package cli

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/memtray/memtray/backend/config"
	"github.com/memtray/memtray/backend/embed"
	"github.com/memtray/memtray/backend/eval"
)

// report is what every evaluation returns.
type report interface {
	WriteTable(w io.Writer) error
}

func runEval(env *Env, args []string) error {
	if len(args) == 0 {
		return usagef("eval needs a kind: recall, filter, redact, stickiness, merge or sessions")
	}
	switch args[0] {
	case "recall":
	case "filter":
		return runEvalFilter(env, args[1:])
	case "redact":
		return runEvalRedact(env, args[1:])
	case "stickiness":
		return runEvalStickiness(env, args[1:])
	case "merge":
		return runEvalMerge(env, args[1:])
	case "sessions":
		return runEvalSessions(env, args[1:])
	default:
		return usagef("unknown evaluation %q: recall, filter, redact, stickiness, merge or sessions", args[0])
	}
	var c common
	fs := newFlags("eval recall", env, &c, true)
	locomo := fs.String("locomo", "", "run the LoCoMo retrieval protocol on this locomo10.json")
	lme := fs.String("longmemeval", "", "run the LongMemEval session-level protocol on this file (.json or .json.gz)")
	limit := fs.Int("limit", 0, "evaluate only the first N conversations or questions (quick runs)")
	pos, err := parse(fs, args[1:])
	if err != nil {
		return err
	}
	if err := c.storeless("eval recall"); err != nil {
		return err
	}
	cfg, err := c.load()
	if err != nil {
		return err
	}
	bar := !c.json && isTerminal(env.Stderr) // it redraws itself: not into a log or pipe
	opts := eval.Options{Limit: *limit, Search: &cfg.Search, Progress: func(done, total int) {
		if bar {
			embed.RenderBar(env.Stderr, "eval", int64(done), int64(total))
		}
	}}
	var rep report
	switch {
	case *locomo != "" && *lme == "" && len(pos) == 0:
		rep, err = eval.RunLoCoMo(env.Ctx, *locomo, opts)
	case *lme != "" && *locomo == "" && len(pos) == 0:
		rep, err = eval.RunLongMemEval(env.Ctx, *lme, opts)
	case *locomo == "" && *lme == "" && len(pos) == 1:
		rep, err = eval.RunRecall(env.Ctx, pos[0], opts)
	default:
		return usagef("give one recall FILE, or --locomo FILE, or --longmemeval FILE")
	}
	if bar {
		io.WriteString(env.Stderr, "\n")
	}
	if err != nil {
		return err
	}
	if c.json {
		return printJSON(env.Stdout, rep)
	}
	return rep.WriteTable(env.Stdout)
}

// runEvalFilter is `memtray eval filter FILE.jsonl [--passes N] [--details] [--json]`.
func runEvalFilter(env *Env, args []string) error {
	var c common
	fs := newFlags("eval filter", env, &c, true)
	passes := fs.Int("passes", 1, "repeat the run N times (store wiped between passes, rejection buffer kept)")
	details := fs.Bool("details", false, "list every item's decision (JSON) and the misclassified ones (table)")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if err := c.storeless("eval filter"); err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("give one filter FILE.jsonl")
	}
	if *passes < 1 || *passes > 10 {
		return usagef("--passes must be within 1..10")
	}
	cfg, err := c.load()
	if err != nil {
		return err
	}
	rep, err := eval.RunFilter(env.Ctx, pos[0], eval.FilterOptions{Passes: *passes, Ingest: &cfg.Ingest, Details: *details})
	if err != nil {
		return err
	}
	if c.json {
		return printJSON(env.Stdout, rep)
	}
	return rep.WriteTable(env.Stdout)
}

// runEvalRedact is `memtray eval redact FILE.jsonl [--json]` and
// `memtray eval redact --gitleaks DIR [--json]`.
func runEvalRedact(env *Env, args []string) error {
	var c common
	fs := newFlags("eval redact", env, &c, true)
	gitleaks := fs.String("gitleaks", "", "score the gitleaks rule cases in DIR instead (recall on true positives of the covered rules, false positives)")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if err := c.storeless("eval redact"); err != nil {
		return err
	}
	var rep report
	switch {
	case *gitleaks != "" && len(pos) == 0:
		rep, err = eval.RunGitleaks(env.Ctx, *gitleaks)
	case *gitleaks == "" && len(pos) == 1:
		rep, err = eval.RunRedact(env.Ctx, pos[0])
	default:
		return usagef("give one secrets FILE.jsonl, or --gitleaks DIR")
	}
	if err != nil {
		return err
	}
	if c.json {
		return printJSON(env.Stdout, rep)
	}
	return rep.WriteTable(env.Stdout)
}

// runEvalStickiness runs the stickiness simulation: naive recall against
// recall with the anti-stickiness factor and the steward.
func runEvalStickiness(env *Env, args []string) error {
	var c common
	fs := newFlags("eval stickiness", env, &c, true)
	o := eval.DefaultStickiness
	fs.IntVar(&o.Queries, "queries", o.Queries, "recall queries per arm")
	fs.IntVar(&o.Topics, "topics", o.Topics, "topics in the generated store")
	fs.IntVar(&o.Broad, "broad", o.Broad, "broad (overview) memories relevant to no query")
	seed := fs.Uint64("seed", o.Seed, "random seed")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if err := c.storeless("eval stickiness"); err != nil {
		return err
	}
	if len(pos) > 0 {
		return usagef("eval stickiness takes no arguments")
	}
	cfg, err := c.load()
	if err != nil {
		return err
	}
	o.Seed = *seed
	o.Sweep = eval.StewardSweep(cfg.Steward)
	rep, err := eval.RunStickiness(env.Ctx, o)
	if err != nil {
		return err
	}
	if c.json {
		return printJSON(env.Stdout, rep)
	}
	return rep.WriteTable(env.Stdout)
}

// runEvalMerge scores the steward's merge on a recall file and its meta.
func runEvalMerge(env *Env, args []string) error {
	var c common
	fs := newFlags("eval merge", env, &c, true)
	threshold := fs.Float64("threshold", 0, "merge similarity (default steward.merge_similarity)")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if err := c.storeless("eval merge"); err != nil {
		return err
	}
	if len(pos) != 2 {
		return usagef("want RECALL_FILE META_FILE (e.g. recall-dev.json recall-dev.meta.json)")
	}
	rep, err := eval.RunMerge(env.Ctx, pos[0], pos[1], *threshold, eval.Options{})
	if err != nil {
		return err
	}
	if c.json {
		return printJSON(env.Stdout, rep)
	}
	return rep.WriteTable(env.Stdout)
}

// runEvalSessions is `memtray eval sessions SET.json [--live] [--json]`: the
// labelled real sessions of SET ingested into a temporary daemon with the
// default config (not the user's: --config and --data-dir are refused) and
// scored. A set that is absent is skipped with a message, not an error.
func runEvalSessions(env *Env, args []string) error {
	var c common
	fs := newFlags("eval sessions", env, &c, true)
	dumpPath := fs.String("dump", "", "write each session's memories with the facts they cover, the uncovered facts (each with where its text went: the statements that held its keys and what the decisions did with them), each recall miss and where its memory went, and what unrelated prompts got, each with the evidence test it passed or failed, to `FILE`")
	evidencePath := fs.String("evidence", "", "write a JSON line per recall asked (each relevant query, each unrelated prompt with no project and in each project) with whether it was answered and the query-level evidence test's numbers to `FILE`; --dump ends with their distributions side by side")
	probeIdents := fs.Bool("probe-identifiers", false, "also ask, for every live memory, prompts naming one rare identifier it holds (written as an identifier, unknown to general language, held by no other memory) in its project, and count how many get it, other memories or nothing (--dump: each prompt not answered with its memory, with the evidence test)")
	live := fs.Bool("live", false, "compare, per Claude Code and Codex session, the memories `memtray ingest` stores with those live capture stores from the session file written a turn at a time with its hooks (--dump: the differing texts)")
	sweepDays := fs.Int("sweep-days", 0, "then let `N` days pass with the steward sweeping every hour as the daemon does (its plan and apply, the default config) and print every row again on the store it leaves (--dump: every merge with both texts, every other action)")
	sweepApply := fs.String("sweep-apply", "auto", "the operations the sweeps of --sweep-days apply: auto (the config's auto_apply, what the scheduled sweep applies by itself), all, none (plans only: the control), or a comma-separated `LIST` of "+strings.Join(config.StewardOps, ", "))
	sweepUse := fs.String("sweep-use", "none", "before the sweeps of --sweep-days, simulate the implicit feedback of the turns after the recalls (the sets hold no memtray recall): none (the lower bound), gold (every given memory in the first 5 that covers the query's fact counts as used: the upper bound), tokens (those of them with a path, name, flag or setting the query does not hold)")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if !slices.Contains([]string{eval.UseNone, eval.UseGold, eval.UseTokens}, *sweepUse) {
		return usagef("--sweep-use %q: want none, gold or tokens", *sweepUse)
	}
	if *sweepUse != eval.UseNone && *sweepDays == 0 {
		return usagef("--sweep-use goes with --sweep-days")
	}
	if *sweepDays < 0 || *sweepDays > 365 {
		return usagef("--sweep-days %d: want 0..365", *sweepDays)
	}
	var sweepOps []string
	switch *sweepApply {
	case "auto":
	case "none":
		sweepOps = []string{}
	case "all":
		sweepOps = slices.Clone(config.StewardOps)
	default:
		for _, op := range strings.Split(*sweepApply, ",") {
			if !slices.Contains(config.StewardOps, op) {
				return usagef("--sweep-apply: unknown operation %q (want auto, all or some of %s)", op, strings.Join(config.StewardOps, ", "))
			}
			sweepOps = append(sweepOps, op)
		}
	}
	if err := c.storeless("eval sessions"); err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("give one session set FILE (e.g. sessions-dev.json)")
	}
	opts := eval.SessionsOptions{Progress: func(msg string) {
		if !c.json {
			fmt.Fprintf(env.Stderr, "eval sessions: %s\n", msg)
		}
	}, ProbeIdentifiers: *probeIdents, SweepDays: *sweepDays, SweepApply: sweepOps, SweepUse: *sweepUse}
	if *dumpPath != "" {
		f, err := os.Create(*dumpPath)
		if err != nil {
			return fmt.Errorf("eval sessions: dump: %w", err)
		}
		defer f.Close()
		bw := bufio.NewWriter(f)
		defer bw.Flush()
		opts.Dump = bw
	}
	if *evidencePath != "" {
		f, err := os.Create(*evidencePath)
		if err != nil {
			return fmt.Errorf("eval sessions: evidence: %w", err)
		}
		defer f.Close()
		bw := bufio.NewWriter(f)
		defer bw.Flush()
		opts.Evidence = bw
	}
	var rep report
	if *live && *sweepDays > 0 {
		return usagef("--sweep-days goes without --live")
	}
	if *live {
		rep, err = eval.RunSessionsLive(env.Ctx, pos[0], opts)
	} else {
		rep, err = eval.RunSessions(env.Ctx, pos[0], opts)
	}
	if err != nil {
		return err
	}
	if c.json {
		return printJSON(env.Stdout, rep)
	}
	return rep.WriteTable(env.Stdout)
}
