package cli

import (
	"bufio"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/memtray/memtray/backend/agentsetup"
	"github.com/memtray/memtray/backend/config"
	"github.com/memtray/memtray/backend/daemon"
	"github.com/memtray/memtray/backend/embed"
	"github.com/memtray/memtray/backend/httpapi"
	"github.com/memtray/memtray/backend/memory"
	"github.com/memtray/memtray/backend/store"
)

// ServeConfig parses the flags `memtray serve` and the desktop app share
// (--listen, --data-dir, --config, --embedder, --anthropic-upstream,
// --openai-upstream) and returns the config they select — the config file,
// then $MEMTRAY_DATA_DIR, then the flags — and the positional arguments
// left over. usage, if not empty, replaces the flag set's usage header.
func ServeConfig(name string, args []string, stderr io.Writer, usage string) (config.Config, []string, error) {
	var c common
	fs := newFlags(name, &Env{Stderr: stderr}, &c, false)
	if usage != "" {
		fs.Usage = func() {
			fmt.Fprintln(stderr, usage)
			fs.PrintDefaults()
		}
	}
	listen := fs.String("listen", "", "address to listen on (loopback only; default 127.0.0.1:7432)")
	insecure := fs.Bool("insecure-non-loopback", false, "DANGEROUS: allow --listen on a non-loopback address (e.g. 0.0.0.0 inside a container); "+
		"anyone who reaches it can use the capture proxy, which takes no token")
	provider := fs.String("embedder", "", "embedder for a new store: auto, builtin, ollama or openai")
	anthropic := fs.String("anthropic-upstream", "", "where the proxy sends /v1/* (default capture.anthropic_upstream)")
	openai := fs.String("openai-upstream", "", "where the proxy sends /openai/v1/* (default capture.openai_upstream)")
	pos, err := parse(fs, args)
	if err != nil {
		return config.Config{}, nil, err
	}
	cfg, err := c.load(func(cfg *config.Config) {
		if *listen != "" {
			cfg.Listen = *listen
		}
		cfg.InsecureNonLoopback = *insecure
		if *anthropic != "" {
			cfg.Capture.AnthropicUpstream = *anthropic
		}
		if *openai != "" {
			cfg.Capture.OpenAIUpstream = *openai
		}
		if *provider != "" {
			cfg.Embedder.Provider = *provider
		}
	})
	return cfg, pos, err
}

func runServe(env *Env, args []string) error {
	cfg, _, err := ServeConfig("serve", args, env.Stderr, "")
	if err != nil {
		return err
	}
	log := newLogger(env.Stderr, cfg.LogLevel)
	if cfg.InsecureNonLoopback && config.CheckLoopback(cfg.Listen) != nil {
		fmt.Fprintf(env.Stderr, "WARNING: --insecure-non-loopback: memtray will listen on %s, beyond loopback.\n"+
			"Anyone who can reach that address can send traffic through the capture proxy (no token) and have it remembered.\n"+
			"Use it only behind a port forward you control (a container or VM), never on a shared network.\n", cfg.Listen)
	}
	d, err := daemon.Open(env.Ctx, daemon.Options{Config: cfg, Version: Version, Build: Build(), Logger: log, OnDemand: StartedOnDemand()}) // mcp.go
	if err != nil {
		return explainLocked(err)
	}
	defer d.Close()
	ch := d.EmbedderChoice()
	info := d.Store().Info()
	log.Info("store open", "dir", info.Dir, "memories", info.Count, "embedder", ch.Model, "why", ch.Reason,
		"repaired", info.RepairedOnOpen)
	// The hint carries this daemon's data dir and config: without them
	// setup would point the agent's hooks and MCP at the default ones.
	// (An error here leaves them out: setup itself reports it.)
	flags, _ := agentsetup.Flags(cfg.DataDir, cfg.File)
	err = d.Serve(env.Ctx, func(addr string) {
		log.Info("memtray listening", "addr", addr, "pid", os.Getpid())
		fmt.Fprintf(env.Stdout, "memtray %s is serving on http://%s\nOpen the UI: http://%s/login?token=%s\n"+
			"Agents: ANTHROPIC_BASE_URL=http://%s (proxy), MCP at http://%s/mcp or `memtray mcp`; `%s` wires both.\nStop with Ctrl-C.\n",
			Version, addr, addr, d.Token(), addr, addr, agentsetup.SetupCommand("claude-code", flags))
	})
	if err != nil {
		return err
	}
	log.Info("memtray stopped")
	return nil
}

func runAdd(env *Env, args []string) error {
	var c common
	fs := newFlags("add", env, &c, true)
	var req httpapi.AddRequest
	fs.StringVar(&req.Kind, "kind", "", "kind: "+kindList())
	fs.StringVar(&req.Type, "type", "", "type: user, feedback, project (default) or reference")
	fs.StringVar(&req.Project, "project", "", "project the memory belongs to")
	fs.Float64Var(&req.Importance, "importance", 0, "importance within 0..1 (default 0.5)")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	switch {
	case len(pos) == 1 && pos[0] == "-":
		data, err := io.ReadAll(io.LimitReader(env.Stdin, memory.MaxTextBytes+1))
		if err != nil {
			return fmt.Errorf("read stdin: %w", err)
		}
		req.Text = string(data)
	case len(pos) > 0:
		req.Text = strings.Join(pos, " ")
	default:
		return usagef("no text: give it as arguments, or - to read stdin")
	}
	req.Source = memory.SourceCLI
	return c.with(env, func(svc httpapi.Services) error {
		m, err := svc.Memories.Add(env.Ctx, req)
		if err != nil {
			return err
		}
		if c.json {
			m.Embedding = nil
			return printJSON(env.Stdout, m)
		}
		fmt.Fprintf(env.Stdout, "stored %s (%s, %s)\n", m.ID, m.Kind, m.Type)
		return nil
	})
}

func kindList() string {
	s := make([]string, len(memory.Kinds))
	for i, k := range memory.Kinds {
		s[i] = string(k)
	}
	return strings.Join(s, ", ")
}

func runSearch(env *Env, args []string) error {
	var c common
	fs := newFlags("search", env, &c, true)
	var req httpapi.SearchRequest
	fs.StringVar(&req.Project, "project", "", "current project (its memories are boosted)")
	fs.IntVar(&req.K, "k", 0, "how many results at most (default from config)")
	fs.StringVar(&req.Mode, "mode", "hybrid", "hybrid, bm25 or vector")
	why := fs.Bool("why", false, "show every score factor")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	req.Query = strings.Join(pos, " ")
	if strings.TrimSpace(req.Query) == "" {
		return usagef("no query")
	}
	return c.with(env, func(svc httpapi.Services) error {
		hits, err := svc.Memories.Search(env.Ctx, req)
		if err != nil {
			return err
		}
		if c.json {
			if hits == nil {
				hits = []memory.Hit{}
			}
			for i := range hits {
				hits[i].Memory.Embedding = nil
			}
			return printJSON(env.Stdout, hits)
		}
		if len(hits) == 0 {
			fmt.Fprintln(env.Stdout, "no memory clears the relevance floor")
			return nil
		}
		tw := tabwriter.NewWriter(env.Stdout, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "SCORE\tID\tKIND\tPROJECT\tTEXT")
		for _, h := range hits {
			// The whole id: get, pin, snooze, delete... take no prefix.
			fmt.Fprintf(tw, "%.3f\t%s\t%s\t%s\t%s\n", h.Score, h.Memory.ID, h.Memory.Kind, h.Memory.Project, oneLine(h.Memory.Text, 80))
			if *why {
				b := h.Breakdown
				// The factors are the last cell of their line (no tab after
				// it), under TEXT: they neither widen a column nor break the
				// columns of the rows above and below.
				fmt.Fprintf(tw, "\t\t\t\trelevance %.3f (vector #%d, bm25 #%d) x importance %.2f x recency %.3f x access %.2f x anti-sticky %.2f x kind %.1f x surface %.1f x project %.1f x feedback %.2f x keywords %.1f\n",
					b.Relevance, b.VectorRank, b.TextRank, b.Importance, b.Recency, b.Access, b.AntiSticky, b.KindBoost, b.Surface, b.ProjectBoost, b.Feedback, b.Keyword)
				if b.Diversity > 0 {
					fmt.Fprintf(tw, "\t\t\t\t= composite %.3f - diversity %.3f (resembles %s, ranked above)\n", b.Composite, b.Diversity, b.SimilarTo)
				}
			}
		}
		return tw.Flush()
	})
}

// parseID parses the flags of a command that takes exactly one memory id.
func parseID(env *Env, name string, args []string, withJSON bool) (common, string, error) {
	var c common
	fs := newFlags(name, env, &c, withJSON)
	pos, err := parse(fs, args)
	if err != nil {
		return c, "", err
	}
	if len(pos) != 1 {
		return c, "", usagef("want exactly one ID")
	}
	return c, pos[0], nil
}

func runGet(env *Env, args []string) error {
	c, id, err := parseID(env, "get", args, true)
	if err != nil {
		return err
	}
	return c.with(env, func(svc httpapi.Services) error {
		m, err := svc.Memories.Get(env.Ctx, id)
		if err != nil {
			return err
		}
		m.Embedding = nil
		if c.json {
			return printJSON(env.Stdout, m)
		}
		st, err := svc.Team.TeamStatus(env.Ctx)
		if err != nil {
			return fmt.Errorf("team status, for the memory's scope: %w", err)
		}
		fmt.Fprintf(env.Stdout, "id:          %s\nkind:        %s\ntype:        %s\nproject:     %s\nscope:       %s\nsource:      %s\nimportance:  %.2f\naccesses:    %d (reinforced %d)\ncreated:     %s\nupdated:     %s\n\n%s\n",
			m.ID, m.Kind, m.Type, m.Project, scopeShown(m, st), m.Source, m.Importance, m.AccessCount, m.ReinforcedCount,
			m.CreatedAt.Format("2006-01-02 15:04:05"), m.UpdatedAt.Format("2006-01-02 15:04:05"), m.Text)
		return nil
	})
}

// runDelete moves a memory to the trash, or deletes it for good with
// --purge: a live memory, or one already in the trash (its trash entry).
func runDelete(env *Env, args []string) error {
	var c common
	fs := newFlags("delete", env, &c, false)
	purge := fs.Bool("purge", false, "delete for good, without the trash (no restore)")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("want exactly one ID")
	}
	id := pos[0]
	return c.with(env, func(svc httpapi.Services) error {
		if *purge {
			err := svc.Memories.Purge(env.Ctx, id)
			if errors.Is(err, memory.ErrNotFound) {
				// Not live: deleted earlier, it may wait in the trash.
				if _, terr := svc.Steward.PurgeTrash(env.Ctx, httpapi.TrashPurgeRequest{IDs: []string{id}}); terr == nil {
					fmt.Fprintf(env.Stdout, "deleted %s for good from the trash\n", id)
					return nil
				} else if !errors.Is(terr, memory.ErrNotFound) {
					return terr
				}
			}
			if err != nil {
				return err
			}
			fmt.Fprintf(env.Stdout, "deleted %s for good\n", id)
			return nil
		}
		if err := svc.Memories.Delete(env.Ctx, id); err != nil {
			return err
		}
		fmt.Fprintf(env.Stdout, "moved %s to the trash; `memtray trash restore%s %s` brings it back\n", id, c.flagsForHint(), id)
		return nil
	})
}

func runList(env *Env, args []string) error {
	var c common
	fs := newFlags("list", env, &c, true)
	var req httpapi.ListRequest
	fs.StringVar(&req.Project, "project", "", "only this project")
	fs.StringVar(&req.Kind, "kind", "", "only this kind")
	fs.IntVar(&req.Limit, "limit", 50, "how many")
	fs.IntVar(&req.Offset, "offset", 0, "skip this many")
	superseded := fs.Bool("superseded", false, "also list the old versions newer ones superseded (marked \"superseded by ID\"), as the window's \"superseded too\" does")
	if _, err := parse(fs, args); err != nil {
		return err
	}
	req.Superseded = listSuperseded(*superseded)
	// Else a daemon and the local store each read them their own way
	// (through a daemon a negative one was dropped silently).
	if req.Limit < 1 || req.Limit > 1000 {
		return usagef("--limit must be within 1..1000")
	}
	if req.Offset < 0 {
		return usagef("--offset must not be negative")
	}
	return c.with(env, func(svc httpapi.Services) error {
		res, err := svc.Memories.List(env.Ctx, req)
		if err != nil {
			return err
		}
		if c.json {
			return printJSON(env.Stdout, res)
		}
		tw := tabwriter.NewWriter(env.Stdout, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "ID\tCREATED\tKIND\tPROJECT\tTEXT")
		for _, m := range res.Memories {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s%s\n", m.ID, m.CreatedAt.Format("2006-01-02"), m.Kind, m.Project, supersededMark(m.Memory), oneLine(m.Text, 80))
		}
		tw.Flush()
		fmt.Fprintf(env.Stdout, "%d of %d\n", len(res.Memories), res.Total)
		if res.Total == 0 && req.Project != "" {
			return writeProjects(env, svc, req.Project)
		}
		return nil
	})
}

// writeProjects follows an empty `memtray list --project P`: the projects
// the store does hold, so that a name spelt otherwise (the folder, not the
// repository) can be corrected from the output.
func writeProjects(env *Env, svc httpapi.Services, asked string) error {
	st, err := svc.Status.Stats(env.Ctx)
	if err != nil {
		return err
	}
	names := sortedKeys(st.ByProject)
	parts := make([]string, 0, len(names))
	for _, p := range names {
		label := p
		if p == "" {
			label = "(no project)"
		}
		parts = append(parts, fmt.Sprintf("%s (%d)", label, st.ByProject[p]))
	}
	if len(parts) == 0 {
		fmt.Fprintf(env.Stdout, "no memories in project %q: the store is empty\n", asked)
		return nil
	}
	fmt.Fprintf(env.Stdout, "no memories in project %q; the store's projects: %s\n", asked, strings.Join(parts, ", "))
	return nil
}

// listSuperseded is the ListRequest.Superseded of `memtray list`: only
// the current versions (what recall reads) unless --superseded asks for
// the old ones too.
func listSuperseded(show bool) string {
	if show {
		return "include"
	}
	return "exclude"
}

// supersededMark prefixes the text of an old version in `memtray list
// --superseded`: "[superseded by ID] "; "" for a current memory.
func supersededMark(m memory.Memory) string {
	if !m.Superseded() {
		return ""
	}
	return "[superseded by " + m.SupersededBy + "] "
}

func runStats(env *Env, args []string) error {
	var c common
	fs := newFlags("stats", env, &c, true)
	if _, err := parse(fs, args); err != nil {
		return err
	}
	return c.with(env, func(svc httpapi.Services) error {
		s, err := svc.Status.Stats(env.Ctx)
		if err != nil {
			return err
		}
		if c.json {
			return printJSON(env.Stdout, s)
		}
		where := "not running (store opened by this command)"
		if _, ok := svc.Status.(*httpapi.Client); ok {
			where = fmt.Sprintf("running, pid %d, on http://%s", s.PID, s.Listen)
		}
		unreadable := ""
		if s.Store.Unreadable > 0 {
			unreadable = fmt.Sprintf(", %d unreadable and skipped: `memtray doctor`", s.Store.Unreadable)
		}
		fmt.Fprintf(env.Stdout, "daemon:     %s\nstore:      %s\nmemories:   %d (%d snoozed, %d superseded%s)\nembedder:   %s (%s)\n",
			where, s.Store.Dir, s.Store.Count, s.Snoozed, s.Superseded, unreadable, s.Embedder, s.EmbedderReason)
		for _, w := range s.Warnings {
			fmt.Fprintf(env.Stdout, "warning:    %s\n", w.Message)
		}
		p := s.Pipeline
		gate := "off (no embedder at start)"
		if p.ContentGate {
			gate = fmt.Sprintf("on, %d learned noise examples", p.NoiseBuffer)
		}
		judgeLine := "off"
		if p.Judge != "" {
			judgeLine = fmt.Sprintf("%s, %d/%d calls this hour, %d/%d today, %d tokens", p.Judge,
				p.JudgeCallsHr, p.JudgeMaxHr, p.JudgeCallsDay, p.JudgeMaxDay, p.JudgeTokens)
		}
		fmt.Fprintf(env.Stdout, "content gate: %s\njudge:      %s\n", gate, judgeLine)
		printThresholds(env.Stdout, s)
		if s.Capture != nil {
			printCapture(env.Stdout, *s.Capture)
		}
		if s.Transcripts != nil {
			printTranscripts(env.Stdout, *s.Transcripts) // hook.go
		}
		if r := s.Recall; r.Requests > 0 {
			fmt.Fprintf(env.Stdout, "recall:     %d requests, %d searches, %d memories given, %d empty, %d tool-loop and %d repeated turns skipped, %d sessions\n",
				r.Requests, r.Searches, r.Given, r.Empty, r.SkippedToolLoop, r.SkippedRepeat, r.Sessions)
		}
		if len(p.Decisions) > 0 {
			fmt.Fprint(env.Stdout, "decisions: ")
			for _, k := range sortedKeys(p.Decisions) {
				fmt.Fprintf(env.Stdout, " %s %d", k, p.Decisions[k])
			}
			fmt.Fprintln(env.Stdout)
		}
		if len(s.ByKind) > 0 {
			fmt.Fprint(env.Stdout, "by kind:   ")
			for _, k := range sortedKeys(s.ByKind) {
				fmt.Fprintf(env.Stdout, " %s %d", k, s.ByKind[k])
			}
			fmt.Fprintln(env.Stdout)
		}
		if len(s.ByProject) > 0 {
			fmt.Fprint(env.Stdout, "by project:")
			for i, p := range sortedKeys(s.ByProject) {
				if i == 20 {
					fmt.Fprintf(env.Stdout, " (+%d more)", len(s.ByProject)-20)
					break
				}
				name := p
				if name == "" {
					name = "(none)"
				}
				fmt.Fprintf(env.Stdout, " %s %d", name, s.ByProject[p])
			}
			fmt.Fprintln(env.Stdout)
		}
		return nil
	})
}

func runExport(env *Env, args []string) error {
	var c common
	fs := newFlags("export", env, &c, false)
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 1 {
		return usagef("at most one FILE")
	}
	if len(pos) == 1 {
		if fi, err := os.Stat(pos[0]); err == nil && fi.IsDir() {
			return fmt.Errorf("%s is a directory: name the file to write (memtray export %s)", pos[0], filepath.Join(pos[0], "memtray-export.jsonl"))
		}
	}
	return c.with(env, func(svc httpapi.Services) error {
		if len(pos) == 0 || pos[0] == "-" {
			tap := &store.ExportHeaderTap{W: env.Stdout}
			bw := bufio.NewWriter(tap)
			if err := svc.Memories.Export(env.Ctx, bw); err != nil {
				return err
			}
			if err := bw.Flush(); err != nil {
				return err
			}
			if h, ok := tap.Header(); ok && h.WithoutVector > 0 {
				fmt.Fprintln(env.Stderr, withoutVectorNote(h.WithoutVector))
			}
			return nil
		}
		// Write beside the target and rename, so a failed export never leaves a
		// half file under the name the user asked for.
		path := pos[0]
		tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
		if err != nil {
			return fmt.Errorf("create %s: %w", path, err)
		}
		defer os.Remove(tmp.Name())
		tap := &store.ExportHeaderTap{W: tmp}
		bw := bufio.NewWriter(tap)
		if err := svc.Memories.Export(env.Ctx, bw); err != nil {
			tmp.Close()
			return err
		}
		if err := errors.Join(bw.Flush(), tmp.Sync(), tmp.Close()); err != nil {
			return fmt.Errorf("write %s: %w", path, err)
		}
		// An empty store's export never replaces an export of memories:
		// that is `memtray export` typed for `memtray import` on a new
		// machine, and it would leave the user with no backup at all.
		n, _ := exportCount(tmp.Name())
		if old, ok := exportCount(path); ok && old > 0 && n == 0 {
			return fmt.Errorf("%s holds an export of %d memories and this store has none: it was left as it is "+
				"(to restore it: memtray import %s; to replace it, delete it first)", path, old, path)
		}
		if err := os.Rename(tmp.Name(), path); err != nil {
			return fmt.Errorf("write %s: %w", path, err)
		}
		fmt.Fprintf(env.Stderr, "exported %d memories to %s\n", n, path)
		if h, ok := tap.Header(); ok && h.WithoutVector > 0 {
			fmt.Fprintln(env.Stderr, withoutVectorNote(h.WithoutVector))
		}
		return nil
	})
}

// withoutVectorNote says that an export holds n memories without their
// vector, why, and what makes them whole.
func withoutVectorNote(n int) string {
	noun, its := "memories were", "their"
	if n == 1 {
		noun, its = "memory was", "its"
	}
	return fmt.Sprintf("%d %s written without %s vector, damaged in this store: `memtray import` embeds %s text anew, or keeps it without a vector until its embedder answers "+
		"(here, memtray's daemon does at its next start, or `memtray doctor --reembed-damaged` with memtray quit)", n, noun, its, its)
}

// exportCount reads the memory count in the header of the memtray export
// at path; false when path is no readable export.
func exportCount(path string) (int, bool) {
	f, err := os.Open(path)
	if err != nil {
		return 0, false
	}
	defer f.Close()
	line, err := bufio.NewReader(io.LimitReader(f, 64<<10)).ReadBytes('\n')
	if err != nil && len(line) == 0 {
		return 0, false
	}
	var h struct {
		Format string `json:"format"`
		Count  int    `json:"count"`
	}
	if json.Unmarshal(line, &h) != nil || h.Format != store.ExportFormat {
		return 0, false
	}
	return h.Count, true
}

func runImport(env *Env, args []string) error {
	var c common
	fs := newFlags("import", env, &c, true)
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("want exactly one FILE (or - for stdin)")
	}
	var r io.Reader = env.Stdin
	if pos[0] != "-" {
		f, err := os.Open(pos[0])
		if err != nil {
			return fmt.Errorf("open %s: %w", pos[0], err)
		}
		defer f.Close()
		r = f
		if fi, err := f.Stat(); err == nil && fi.IsDir() {
			// Else the read fails inside the request, reported as the daemon's.
			return fmt.Errorf("%s is a directory: give the export file (one `memtray export FILE` wrote)", pos[0])
		}
		// The bar redraws itself with carriage returns: into a log or a
		// pipe it would be a hundred copies on one line.
		if fi, err := f.Stat(); err == nil && fi.Size() > 0 && !c.json && isTerminal(env.Stderr) {
			r = &progressReader{r: f, total: fi.Size(), w: env.Stderr}
			defer fmt.Fprintln(env.Stderr)
		}
	}
	return c.with(env, func(svc httpapi.Services) error {
		rep, err := svc.Memories.Import(env.Ctx, r)
		if err != nil {
			return err
		}
		if c.json {
			return printJSON(env.Stdout, rep)
		}
		fmt.Fprint(env.Stdout, importSummary(rep))
		return nil
	})
}

// importSummary is what `memtray import` prints of rep: the counts, and
// for the memories kept without their vector (the file held none and the
// embedder did not answer) how many, what that means and how they are
// made whole.
func importSummary(rep store.ImportReport) string {
	masked := ""
	if rep.Rewritten > 0 {
		masked = fmt.Sprintf(", %d with secrets masked", rep.Rewritten)
	}
	if n := rep.WithoutVector - rep.KeptWithoutVector; n > 0 {
		masked += fmt.Sprintf(", %d exported without their damaged vector and embedded anew", n)
	}
	if rep.KeptWithoutVector > 0 {
		masked += fmt.Sprintf(", %d without a vector", rep.KeptWithoutVector)
	}
	out := fmt.Sprintf("imported %d of %d memories (%d duplicates skipped, %d re-embedded%s)\n",
		rep.Imported, rep.Total, rep.Duplicates, rep.Reembedded, masked)
	if n := rep.KeptWithoutVector; n > 0 {
		noun, its := "memories were", "their"
		if n == 1 {
			noun, its = "memory was", "its"
		}
		out += fmt.Sprintf("note: %d %s imported without %s vector: the file held none (damaged where it was exported) and the embedder did not answer. "+
			"They are found by their words, not by meaning, until embedded: memtray's daemon embeds them once its embedder answers (it retries every 30 s while it runs, and at its next start), "+
			"or run `memtray reindex`\n", n, noun, its)
	}
	return out
}

func runReindex(env *Env, args []string) error {
	var c common
	fs := newFlags("reindex", env, &c, false)
	provider := fs.String("embedder", "", "auto, builtin, ollama or openai (default from config)")
	model := fs.String("ollama-model", "", "Ollama embedding model (default from config)")
	oaModel := fs.String("openai-model", "", "model of the OpenAI-compatible server (default embedder.openai_model)")
	oaURL := fs.String("openai-url", "", "base URL of the OpenAI-compatible server (default embedder.openai_url)")
	if _, err := parse(fs, args); err != nil {
		return err
	}
	if *provider == "openai" && *oaModel == "" {
		// Without a model in the config either, the flag is what is missing
		// (the config's check would blame embedder.openai_model).
		base, err := c.load()
		if err != nil {
			return err
		}
		if base.Embedder.OpenAIModel == "" {
			return usagef("--embedder openai needs --openai-model NAME, the embedding model the server at %s serves (or embedder.openai_model in the config)",
				cmp.Or(*oaURL, base.Embedder.OpenAIURL, config.DefaultOpenAIURL))
		}
	}
	cfg, err := c.load(func(cfg *config.Config) {
		if *provider != "" {
			cfg.Embedder.Provider = *provider
		}
		if *model != "" {
			cfg.Embedder.OllamaModel = *model
		}
		if *oaModel != "" {
			cfg.Embedder.OpenAIModel = *oaModel
		}
		if *oaURL != "" {
			cfg.Embedder.OpenAIURL = *oaURL
		}
	})
	if err != nil {
		return err
	}
	if cl, ok := remote(env.Ctx, cfg); ok {
		return reindexRemote(env, cl, cfg.Embedder)
	}
	emb, choice, err := embed.Select(env.Ctx, cfg.Embedder)
	if err != nil {
		return err
	}
	fmt.Fprintf(env.Stderr, "re-embedding with %s (%s)\n", choice.Model, choice.Reason)
	st, err := store.Open(env.Ctx, store.Options{Dir: filepath.Join(cfg.DataDir, daemon.StoreDir),
		Model: emb.Model(), Dim: emb.Dim(), AllowModelChange: true})
	if err != nil {
		return err
	}
	defer st.Close()
	bar := isTerminal(env.Stderr) // it redraws itself: not into a log or pipe
	err = st.Reembed(env.Ctx, emb, func(done, total int) {
		if bar {
			embed.RenderBar(env.Stderr, "reindex", int64(done), int64(total))
		}
	})
	if bar {
		fmt.Fprintln(env.Stderr)
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(env.Stdout, "reindexed %d memories with %s\n", st.Count(), emb.Model())
	return nil
}

func runToken(env *Env, args []string) error {
	var c common
	fs := newFlags("token", env, &c, false)
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	cfg, err := c.load()
	if err != nil {
		return err
	}
	if err := os.MkdirAll(cfg.DataDir, 0o700); err != nil {
		return fmt.Errorf("create data dir: %w", err)
	}
	var tok string
	switch {
	case len(pos) == 0:
		tok, err = daemon.LoadOrCreateToken(cfg.DataDir)
	case len(pos) == 1 && pos[0] == "rotate":
		// A running daemon rotates it itself, so the old token stops
		// working at once; with none, the file is all there is.
		if cl, ok := remote(env.Ctx, cfg); ok {
			if tok, err = cl.RotateToken(env.Ctx); err != nil {
				return fmt.Errorf("rotate the running daemon's token: %w", err)
			}
			fmt.Fprintf(env.Stderr, "token rotated: the daemon at %s refuses the old one from now on (browser windows sign in again with the new link)\n", cl.Addr())
		} else {
			tok, err = daemon.RotateToken(cfg.DataDir)
			if err == nil {
				fmt.Fprintln(env.Stderr, "new token written (no daemon is running; the next one uses it)")
			}
		}
	default:
		return usagef("unknown argument %q", pos[0])
	}
	if err != nil {
		return err
	}
	fmt.Fprintln(env.Stdout, tok)
	return nil
}

func printJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

func runPull(env *Env, args []string) error {
	var c common
	fs := newFlags("pull", env, &c, false)
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	cfg, err := c.load()
	if err != nil {
		return err
	}
	switch len(pos) {
	case 0:
	case 1:
		cfg.Embedder.OllamaModel = pos[0]
	default:
		return usagef("at most one MODEL")
	}
	if cl, ok := remote(env.Ctx, cfg); ok {
		return pullRemote(env, cl, cfg.Embedder.OllamaModel)
	}
	o, err := embed.NewOllama(embed.OllamaOptions{Host: cfg.Embedder.OllamaHost, Model: cfg.Embedder.OllamaModel,
		Timeout: time.Duration(cfg.Embedder.Timeout)})
	if err != nil {
		return err
	}
	fmt.Fprintf(env.Stderr, "pulling %s from Ollama at %s\n", o.ModelName(), o.Host())
	if err := o.Pull(env.Ctx, pullProgress(env.Stderr)); err != nil {
		return err
	}
	fmt.Fprintf(env.Stdout, "%s is ready; `memtray reindex --embedder ollama` switches an existing store to it\n", o.ModelName())
	return nil
}

// pullProgress draws a model pull's progress on w: bars on a terminal;
// into a log or a pipe, where a bar redrawn with carriage returns piles up
// on one line, each status once, a line each.
func pullProgress(w io.Writer) func(embed.PullProgress) {
	if isTerminal(w) {
		return embed.ProgressBar(w)
	}
	var last string
	return func(p embed.PullProgress) {
		if p.Status != "" && p.Status != last {
			last = p.Status
			fmt.Fprintln(w, p.Status)
		}
	}
}

// terminalWriter is a writer that says whether it is a terminal (a test's
// stand-in for one).
type terminalWriter interface{ IsTerminal() bool }

// isTerminal reports whether w is a terminal (a character device).
func isTerminal(w io.Writer) bool {
	if t, ok := w.(terminalWriter); ok {
		return t.IsTerminal()
	}
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// progressReader draws a bar of the bytes read so far: import validates the
// whole stream before it writes, so the bar tracks the slow part.
type progressReader struct {
	r           io.Reader
	w           io.Writer
	total, done int64
	shown       int64
}

func (p *progressReader) Read(b []byte) (int, error) {
	n, err := p.r.Read(b)
	p.done += int64(n)
	if p.done > p.shown && (p.done-p.shown >= p.total/100 || p.done == p.total) {
		p.shown = p.done
		embed.RenderBar(p.w, "import", p.done, p.total)
	}
	return n, err
}
