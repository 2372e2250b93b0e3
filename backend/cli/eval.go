package cli

import (
	"io"

	"github.com/memtray/memtray/backend/embed"
	"github.com/memtray/memtray/backend/eval"
)

// report is what every evaluation returns.
type report interface {
	WriteTable(w io.Writer) error
}

func runEval(env *Env, args []string) error {
	if len(args) == 0 || args[0] != "recall" {
		return usagef("the only evaluation so far is `recall`")
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
	cfg, err := c.load()
	if err != nil {
		return err
	}
	opts := eval.Options{Limit: *limit, Search: &cfg.Search, Progress: func(done, total int) {
		if !c.json {
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
	if !c.json {
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
