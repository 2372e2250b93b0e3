package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"

	"github.com/memtray/memtray/backend/daemon"
	"github.com/memtray/memtray/backend/embed"
	"github.com/memtray/memtray/backend/httpapi"
	"github.com/memtray/memtray/backend/memory"
	"github.com/memtray/memtray/backend/store"
)

// runDoctor is `memtray doctor`: it checks the store (store.Check) and
// says what it found, exiting 1 on damage; --rebuild-index, --salvage and
// --reembed-damaged are the repairs, each run only when asked. While a
// daemon holds the store, the check is the daemon's (GET /api/doctor: a
// read of its open store, no stop), --rebuild-index is the daemon's job
// (POST /api/doctor/rebuild-index: it keeps serving) and the other repairs
// wait until it is stopped.
func runDoctor(env *Env, args []string) error {
	var c common
	fs := newFlags("doctor", env, &c, true)
	salvage := fs.Bool("salvage", false, "copy every record that can still be read into a new store; the damaged records file is kept beside it, renamed")
	rebuild := fs.Bool("rebuild-index", false, "rebuild the text (BM25) index from the records (by the running daemon, which keeps serving, when one runs)")
	reembed := fs.Bool("reembed-damaged", false, "embed anew, with the configured embedder, the memories whose stored vector is damaged (NaN or Inf, or the wrong length)")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usagef("doctor takes no arguments")
	}
	if *salvage && *rebuild {
		return usagef("--salvage rebuilds the text index too: give one of them")
	}
	if *reembed && (*salvage || *rebuild) {
		return usagef("--reembed-damaged is a repair of its own (a salvage embeds damaged vectors anew too): give one repair at a time")
	}
	cfg, err := c.load()
	if err != nil {
		return err
	}
	if cl, ok := remote(env.Ctx, cfg); ok {
		if *rebuild {
			return rebuildThroughDaemon(env, cl, c.json, time.Duration(cfg.IdleExit))
		}
		if *salvage || *reembed {
			h, _ := httpapi.Probe(env.Ctx, cl.Addr(), cl.Token(), 2*time.Second)
			return repairWhileRunning(cl.Addr(), h, time.Duration(cfg.IdleExit), repairName(*salvage, *rebuild))
		}
		rep, err := cl.Check(env.Ctx)
		if err != nil {
			return fmt.Errorf("check the store through the daemon at %s: %w", cl.Addr(), err)
		}
		return reportCheck(env, c.json, rep, cl.Addr())
	}
	dir := filepath.Join(cfg.DataDir, daemon.StoreDir)
	switch {
	case *salvage:
		rep, err := store.Salvage(env.Ctx, dir, func(ctx context.Context, model string) (memory.Embedder, error) {
			return embed.ForModel(ctx, cfg.Embedder, model)
		})
		if err != nil {
			return err
		}
		if c.json {
			return printJSON(env.Stdout, rep)
		}
		printSalvage(env.Stdout, rep)
		return nil
	case *reembed:
		n, model, err := store.RepairDamagedVectors(env.Ctx, dir, func(ctx context.Context, model string) (memory.Embedder, error) {
			return embed.ForModel(ctx, cfg.Embedder, model)
		})
		if err != nil {
			return err
		}
		if c.json {
			return printJSON(env.Stdout, map[string]any{"reembedded": n, "model": model})
		}
		if n == 0 {
			fmt.Fprintln(env.Stdout, "no memory has a damaged vector: nothing to embed")
			return nil
		}
		fmt.Fprintf(env.Stdout, "embedded anew with %s: %d memories whose stored vector was damaged (found by vector again)\n", model, n)
		return nil
	case *rebuild:
		n, err := store.RebuildTextIndex(env.Ctx, dir)
		if err != nil {
			return err
		}
		if c.json {
			return printJSON(env.Stdout, map[string]int{"indexed": n})
		}
		fmt.Fprintf(env.Stdout, "text index rebuilt from the records: %d documents\n", n)
		return nil
	}
	rep, err := store.Check(env.Ctx, dir)
	if err != nil {
		return err
	}
	return reportCheck(env, c.json, rep, "")
}

// reportCheck prints a check's report (as JSON with asJSON) and makes the
// doctor exit 1 when it found damage; daemon is the address of the daemon
// that made the check on its open store ("": the doctor read the files).
func reportCheck(env *Env, asJSON bool, rep *store.CheckReport, daemon string) error {
	var err error
	if asJSON {
		err = printJSON(env.Stdout, rep)
	} else {
		if daemon != "" {
			fmt.Fprintf(env.Stdout, "checked by the running daemon (%s) on its open store, which it keeps serving; nothing is changed\n", daemon)
		}
		printCheck(env.Stdout, rep)
	}
	if err == nil && rep.Damaged() {
		return errReported
	}
	return err
}

// rebuildThroughDaemon is `memtray doctor --rebuild-index` while a daemon
// (cl) holds the store: the daemon rebuilds its text index from the
// records as a job (POST /api/doctor/rebuild-index) and keeps serving,
// searches on the old index until the new one is swapped in, writes made
// meanwhile brought into it. Its progress is drawn on stderr (a terminal
// only); Ctrl-C cancels it, leaving the old index. A daemon that cannot
// (an older version) gets repairWhileRunning's answer: stop it first.
func rebuildThroughDaemon(env *Env, cl *httpapi.Client, asJSON bool, idleExit time.Duration) error {
	job, err := cl.RebuildIndex(env.Ctx)
	if err != nil {
		if errors.Is(err, httpapi.ErrJobRunning) {
			return err
		}
		h, _ := httpapi.Probe(env.Ctx, cl.Addr(), cl.Token(), 2*time.Second)
		return fmt.Errorf("the running daemon could not rebuild its text index (%v); %w", err,
			repairWhileRunning(cl.Addr(), h, idleExit, "--rebuild-index"))
	}
	fmt.Fprintf(env.Stderr, "the running daemon (%s) rebuilds the text index from the records and keeps serving (job %s; Ctrl-C cancels it and keeps the old index)\n", cl.Addr(), job.ID)
	ended := true
	bar := isTerminal(env.Stderr)
	final, err := cl.WaitJob(env.Ctx, job.ID, jobPoll, func(j httpapi.Job) {
		if bar && j.Total > 0 {
			embed.RenderBar(env.Stderr, "index", j.Done, j.Total)
			ended = j.Done >= j.Total
		}
	})
	if !ended {
		fmt.Fprintln(env.Stderr)
	}
	if asJSON && err == nil && final.State == httpapi.JobDone {
		return printJSON(env.Stdout, final)
	}
	return jobOutcome(env, final, err)
}

// repairName is the flag of the repair asked: --salvage, --rebuild-index
// or --reembed-damaged.
func repairName(salvage, rebuild bool) string {
	switch {
	case salvage:
		return "--salvage"
	case rebuild:
		return "--rebuild-index"
	}
	return "--reembed-damaged"
}

// repairWhileRunning is the doctor's answer to a repair (its flag) asked
// while a daemon (at addr, h its health) holds the store: a salvage or a
// rebuild replaces files the daemon holds open (the records file, the
// text index), and the daemon reads and writes its text index without a
// lock around it, so the repair waits until it is stopped; the error says
// how to stop the daemon that runs (the app, one `memtray mcp` started,
// `memtray serve`) and that nothing is lost. A damaged vector is the
// daemon's own to embed anew. idleExit is the config's idle_exit.
func repairWhileRunning(addr string, h httpapi.Health, idleExit time.Duration, repair string) error {
	if repair == "--reembed-damaged" {
		return fmt.Errorf("memtray is running on this data dir (%s): it embeds damaged vectors anew itself, at start and every 30 s "+
			"while its embedder does not answer (`memtray doctor` says whether any are left); to run --reembed-damaged yourself, "+
			"quit it (the app, or `memtray serve`) first", addr)
	}
	pid := "its process"
	if h.PID > 0 {
		pid = fmt.Sprintf("pid %d", h.PID)
	}
	var stop string
	switch {
	case h.Window:
		stop = "quit the memtray app (Quit in its tray menu)"
	case h.OnDemand:
		stop = fmt.Sprintf("it was started by `memtray mcp` for an agent (%s) and exits by itself %s after the last agent leaves; to repair now, end it (`kill %d`; an agent's next memtray tool call starts it again, once the repair is done)",
			pid, idleExit, h.PID)
	default:
		stop = fmt.Sprintf("stop `memtray serve` (%s): Ctrl-C in its terminal, `kill %d`, or stop the service that runs it", pid, h.PID)
	}
	return fmt.Errorf("memtray is running on this data dir (%s), and %s replaces store files it holds open: %s, then run `memtray doctor %s` again. "+
		"Nothing is lost: what it stored is in the records file, and the repair works from it "+
		"(a start alone also rebuilds a text index that cannot be opened; `memtray doctor` checks the store through the daemon without stopping it)",
		addr, repair, stop, repair)
}

// printCheck says what store.Check found, in plain words.
func printCheck(w io.Writer, r *store.CheckReport) {
	fmt.Fprintf(w, "store:       %s (%d bytes)\n", r.File, r.Bytes)
	if r.Opened {
		fmt.Fprintf(w, "records:     %d readable, %d unreadable (model %s, %d dims)\n", r.Records, r.Unreadable, r.Model, r.Dim)
		fmt.Fprintf(w, "vectors:     %d records in the vector index (built from the records at every start)\n", r.Vectors)
		if r.TextIndexed >= 0 {
			fmt.Fprintf(w, "text index:  %d documents\n", r.TextIndexed)
		}
		fmt.Fprintf(w, "trash:       %d, team outbox: %d waiting\n", r.Trash, r.Outbox)
	} else {
		fmt.Fprintln(w, "records:     the records file cannot be opened")
	}
	if r.Readable >= 0 {
		fmt.Fprintf(w, "salvage:     %d records can still be read\n", r.Readable)
	}
	for _, n := range r.Notes {
		fmt.Fprintf(w, "note:        %s\n", n)
	}
	if !r.Damaged() {
		fmt.Fprintln(w, "no damage found")
		return
	}
	fmt.Fprintf(w, "\n%d problem(s):\n", len(r.Problems))
	fixes := map[string]bool{}
	for _, p := range r.Problems {
		fmt.Fprintf(w, "  [%s] %s\n", p.Area, p.What)
		fixes[p.Fix] = true
	}
	var todo []string
	for _, f := range []string{"memtray doctor --salvage", "memtray doctor --rebuild-index", "memtray doctor --reembed-damaged"} {
		if fixes[f] {
			todo = append(todo, "`"+f+"`")
		}
	}
	if len(todo) > 0 {
		note := "quit memtray first"
		if len(todo) == 1 && fixes["memtray doctor --rebuild-index"] {
			note = "a running memtray rebuilds it itself and keeps serving"
		}
		if fixes["memtray doctor --salvage"] {
			note += "; nothing is deleted: a damaged records file is kept beside the new one"
		}
		fmt.Fprintf(w, "\nto repair: %s (%s)\n", strings.Join(todo, ", then "), note)
	}
}

// printSalvage says what a salvage saved and lost, and where the
// damaged file is.
func printSalvage(w io.Writer, r store.SalvageReport) {
	fmt.Fprintf(w, "salvaged: %d records saved into a new store (model %s, %d dims)\n", r.Saved, r.Model, r.Dim)
	fmt.Fprintf(w, "lost:     %d records that could not be read", r.Lost)
	if len(r.Pages) > 0 {
		fmt.Fprintf(w, ", and whatever the %d unreadable page(s) held", len(r.Pages))
	}
	fmt.Fprintln(w)
	if r.Counted > r.Saved+r.Duplicates+r.Lost {
		fmt.Fprintf(w, "          (the damaged file counted %d records: %d were on pages that could not be read)\n", r.Counted, r.Counted-r.Saved-r.Duplicates-r.Lost)
	}
	if r.Scanned > 0 {
		fmt.Fprintf(w, "scanned:  %d of the saved were found by reading every page (the pages above them were lost): "+
			"each is the newest version found, which may be older than the lost page's\n", r.Scanned)
	}
	if r.Reembedded > 0 {
		fmt.Fprintf(w, "embedded: %d saved records whose vector was damaged got a new one\n", r.Reembedded)
	}
	if r.NoVector > 0 {
		fmt.Fprintf(w, "          %d of the saved have a damaged vector and no embedder of model %s answered: they are found by their words until memtray's daemon (or `memtray doctor --reembed-damaged`) embeds them with it\n", r.NoVector, r.Model)
	}
	if r.Duplicates > 0 {
		fmt.Fprintf(w, "merged:   %d records with the same text as a saved one\n", r.Duplicates)
	}
	printKept(w, r.Kept)
	fmt.Fprintf(w, "kept:     the damaged records file is %s\n", r.KeptAs)
}

// printKept says what a salvage carried over besides the records, and
// what it left out and why.
func printKept(w io.Writer, k store.SalvageKept) {
	var kept []string
	add := func(n int, what string) {
		if n > 0 {
			kept = append(kept, fmt.Sprintf("%d %s", n, what))
		}
	}
	add(k.Trash, "trashed memories")
	add(k.Outbox, "team writes to push")
	add(k.OutboxDeltas, "team counter changes")
	add(k.TeamBases, "team bases")
	add(k.Recalls, "recall log entries")
	add(k.Calibrations, "calibrations")
	add(k.Decisions, "decisions")
	add(k.TurnMarks, "turn marks")
	for _, f := range []struct {
		on   bool
		what string
	}{{k.TeamCursor, "the team sync cursor"}, {k.TeamMachine, "the team machine name"}} {
		if f.on {
			kept = append(kept, f.what)
		}
	}
	if len(kept) > 0 {
		fmt.Fprintf(w, "carried:  %s\n", strings.Join(kept, ", "))
	}
	for _, d := range k.Dropped {
		fmt.Fprintf(w, "left out: %s\n", d)
	}
}
