package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"
)

// result is one row of the table.
type result struct {
	Check  string
	Client string
	// Result is "ok", "FAIL" or "skip".
	Result string
	Timing time.Duration
	Detail string
}

// The prompts of a run. readPrompt makes Claude Code read README.md (a
// tool loop: the second request carries the tool result); storePrompt
// states a decision the write pipeline keeps; recallPrompt asks about it
// in a new session, so the UserPromptSubmit hook must bring it back.
const (
	readPrompt  = "Read README.md and tell me what the service is called."
	storePrompt = "Decision for the orders service: it stays on PostgreSQL 16 because it needs logical replication into the analytics cluster; never suggest MySQL for it."
	// recallPrompt is close in words to the decision: the check is about
	// the hook's plumbing, not recall quality (with the built-in embedder
	// "Which database does the orders service use, and why?" clears no
	// relevance floor).
	recallPrompt = "Why does the orders service stay on PostgreSQL 16?"
	quickPrompt  = "Say done."
	// The follow-ups of the decision's session.
	followPrompt  = "Also for the orders service: the migrations in db/migrations are the only way to change its schema."
	followPrompt2 = "Thanks, that is all for the orders service today."
)

// checker runs the checks of one client and collects the rows.
type checker struct {
	c      *client
	w      *world
	rows   []result
	record string // fixture root (the repository) in -record mode, else ""
	runs   int    // timing runs each way
}

func (k *checker) add(check string, ok bool, took time.Duration, format string, a ...any) {
	r := "ok"
	if !ok {
		r = "FAIL"
	}
	k.rows = append(k.rows, result{Check: check, Client: k.c.Name, Result: r, Timing: took, Detail: fmt.Sprintf(format, a...)})
}

func (k *checker) skip(check, why string) {
	k.rows = append(k.rows, result{Check: check, Client: k.c.Name, Result: "skip", Detail: why})
}

// runChecks is the whole sequence for one client (see the package doc).
func runChecks(ctx context.Context, c *client, memtray, record string, runs int, keep bool) []result {
	k := &checker{c: c, record: record, runs: runs}
	w, err := newWorld(c, memtray)
	if err != nil {
		k.add("world", false, 0, "%v", err)
		return k.rows
	}
	k.w = w
	w.pinData = record != ""
	defer func() {
		if keep {
			fmt.Fprintf(os.Stderr, "clientcheck: %s kept in %s\n", c.Name, w.root)
		}
		w.Close(keep)
	}()
	if err := k.sequence(ctx); err != nil {
		k.add("run", false, 0, "%v (files kept in %s)", err, w.root)
		if !keep {
			keep = true
		}
	}
	return k.rows
}

func (k *checker) sequence(ctx context.Context) error {
	c, w := k.c, k.w
	if err := c.prepare(w); err != nil {
		return err
	}
	// A direct run first: the client creates its own files in HOME, as on
	// a machine where it was used before memtray.
	if _, took, err := c.run(ctx, w, runOpts{prompt: quickPrompt, direct: true}); err != nil {
		return fmt.Errorf("direct run: %w", err)
	} else {
		k.add("direct run", true, took, "%s %s straight to the fake", c.Name, c.Version)
	}

	// setup, then undo at once: every file back byte for byte.
	before, err := w.snapshot()
	if err != nil {
		return err
	}
	setupArgs := []string{"setup", c.Name, "--binary", w.wrapper, "--data-dir", w.dataDir, "--config", w.config}
	start := time.Now()
	if _, err := w.memtrayCmd(ctx, setupArgs...); err != nil {
		return err
	}
	setupTook := time.Since(start)
	afterSetup, _ := w.snapshot()
	changed := diffSnapshots(before, afterSetup)
	if _, err := w.memtrayCmd(ctx, "setup", c.Name, "--undo", "--data-dir", w.dataDir, "--config", w.config); err != nil {
		k.add("setup --undo restores files", false, 0, "%v", err)
	} else {
		after, _ := w.snapshot()
		d := diffSnapshots(before, after)
		k.add("setup --undo restores files", len(d) == 0, 0, "setup changed %s; after undo differ: %s", list(changed), list(d))
	}
	if _, err := w.memtrayCmd(ctx, setupArgs...); err != nil {
		return err
	}
	k.checkDataDirInConfigs(changed, setupTook)
	if k.record != "" {
		if err := k.addRecordHooks(); err != nil {
			return err
		}
	}
	if err := w.startServe(ctx); err != nil {
		return err
	}

	// 1. The tool-loop prompt through memtray: bodies, streaming.
	w.anth.reset()
	w.oai.reset()
	w.tap.reset()
	if _, took, err := c.run(ctx, w, runOpts{prompt: readPrompt}); err != nil {
		k.add("run through memtray", false, took, "%v", err)
		return nil
	} else {
		k.add("run through memtray", true, took, "%q", readPrompt)
	}
	k.checkBodies("")
	if c.Name == "codex" {
		// The same over HTTPS POSTs (WebSockets off), for the bodies.
		w.oai.reset()
		w.tap.reset()
		if _, took, err := c.run(ctx, w, runOpts{prompt: readPrompt, http: true}); err != nil {
			k.add("run through memtray (HTTPS)", false, took, "%v", err)
		} else {
			k.checkBodies(" (HTTPS)")
		}
	}
	if k.record != "" {
		if c.Name == "codex" {
			// The WebSocket is recorded from a direct run: it does not
			// depend on whether memtray passes it.
			w.oai.reset()
			if _, _, err := c.run(ctx, w, runOpts{prompt: readPrompt, direct: true}); err != nil {
				return fmt.Errorf("codex direct: %w", err)
			}
		}
		if err := k.recordRequests(); err != nil {
			return err
		}
		if c.Name == "codex" {
			// The same prompt over HTTPS POSTs only, to record that body too.
			w.oai.reset()
			if _, _, err := c.run(ctx, w, runOpts{prompt: readPrompt, http: true}); err != nil {
				return fmt.Errorf("codex over HTTP: %w", err)
			}
			if err := k.recordCodexHTTP(); err != nil {
				return err
			}
		}
	}

	// 2. A decision, in a headless session of three prompts (memtray
	// keeps a headless session's turns until it has
	// ingest.headless_min_user_turns, 3): stored with the project.
	var err2 error
	for i, p := range []string{storePrompt, followPrompt, followPrompt2} {
		if _, _, err2 = c.run(ctx, w, runOpts{prompt: p, resume: i > 0}); err2 != nil {
			break
		}
	}
	if err2 != nil {
		k.add("memory stored with project", false, 0, "%v", err2)
	} else {
		k.checkStored(ctx)
	}

	// 3. A new session asks about it: the hook brings it back.
	w.anth.reset()
	w.oai.reset()
	if _, took, err := c.run(ctx, w, runOpts{prompt: recallPrompt}); err != nil {
		k.add("<memtray-context> on a later turn", false, took, "%v", err)
	} else {
		k.checkContext(took)
	}
	k.checkHooks()
	k.checkMCP()
	if k.record != "" {
		if err := k.recordHooksAndMCP(); err != nil {
			return err
		}
	}
	if c.Name == "codex" {
		k.checkTiming(ctx)
	}
	k.checkDefaultDataDir()

	// Last, undo after use: memtray's entries are gone from every file.
	w.stopServe()
	if out, err := w.memtrayCmd(ctx, "setup", c.Name, "--undo", "--data-dir", w.dataDir, "--config", w.config); err != nil {
		k.add("setup --undo after use", false, 0, "%v", err)
	} else {
		left := k.filesMentioning(w.wrapper, changed)
		k.add("setup --undo after use", len(left) == 0, 0, "memtray entries left in: %s (%s)", list(left), firstLine(out))
	}
	return nil
}

// checkDataDirInConfigs: the hook and MCP commands setup wrote name the
// non-default data dir (else they would use another store).
func (k *checker) checkDataDirInConfigs(changed []string, took time.Duration) {
	var missing []string
	cmds := 0
	for _, rel := range changed {
		b, err := os.ReadFile(filepath.Join(k.w.home, strings.TrimSuffix(rel, " (new)")))
		if err != nil {
			continue
		}
		// A command may span lines (JSON or TOML args arrays): each
		// mention of the binary needs a mention of the data dir.
		n := strings.Count(string(b), k.w.wrapper)
		cmds += n
		if n > 0 && strings.Count(string(b), k.w.dataDir) < n {
			missing = append(missing, rel)
		}
	}
	k.add("setup --data-dir in hook/MCP commands", cmds > 0 && len(missing) == 0, took,
		"%d commands; without --data-dir in: %s", cmds, list(missing))
}

// checkBodies compares, request by request, the body the client sent (at
// the tap) with the body the fake received through memtray, and the
// answer the fake streamed with the one the client got.
func (k *checker) checkBodies(suffix string) {
	tapped := k.w.tap.requests()
	var got []*exchange
	for _, f := range []*fake{k.w.anth, k.w.oai} {
		for _, ex := range f.requests() {
			if ex.Body != nil || ex.Frames != nil {
				got = append(got, ex)
			}
		}
	}
	same, streamed, n := 0, 0, 0
	var bad []string
	var size int
	for _, tp := range tapped {
		if !strings.HasSuffix(tp.Path, "/messages") && !strings.HasSuffix(tp.Path, "/responses") {
			continue
		}
		n++
		i := slices.IndexFunc(got, func(ex *exchange) bool { return bytes.Equal(ex.Body, tp.Body) })
		if i < 0 {
			bad = append(bad, fmt.Sprintf("%s (%d bytes) not received as sent", tp.Path, len(tp.Body)))
			continue
		}
		same++
		size = max(size, len(tp.Body))
		ex := got[i]
		got = slices.Delete(got, i, i+1)
		if bytes.Equal(ex.Answer, tp.Answer) && !tp.FirstByteAt.IsZero() && tp.FirstByteAt.Before(ex.LastEventAt) {
			streamed++
		} else {
			bad = append(bad, fmt.Sprintf("%s answer: %d bytes sent, %d received, first byte before the last event: %v",
				tp.Path, len(ex.Answer), len(tp.Answer), tp.FirstByteAt.Before(ex.LastEventAt)))
		}
	}
	// Codex's WebSocket passes the tap and memtray as raw bytes: what
	// counts is that it reached the fake through memtray and that Codex
	// did not fall back to HTTPS.
	if k.c.Name == "codex" && suffix == "" {
		ws, posts := 0, 0
		for _, ex := range k.w.oai.requests() {
			if ex.Frames != nil {
				ws++
			} else if ex.Method == "POST" {
				posts++
			}
		}
		k.add("WebSocket through memtray", ws > 0 && posts == 0, 0, "%d WebSocket sessions with frames at the fake, %d HTTPS fallbacks", ws, posts)
		if n == 0 {
			return // the HTTPS run compares bodies
		}
	}
	k.add("bodies byte-identical"+suffix, n > 0 && same == n, 0, "%d/%d requests (largest %d bytes) %s", same, n, size, list(bad))
	k.add("streaming intact"+suffix, n > 0 && streamed == n, 0, "%d/%d answers byte-identical, first bytes before the upstream's last event", streamed, n)
}

// memoryRow is the part of `memtray list --json` the checks read.
type memoryRow struct {
	ID      string `json:"id"`
	Project string `json:"project"`
	Text    string `json:"text"`
}

// checkStored waits (up to 30 s) for a memory of the decision and checks
// its project.
func (k *checker) checkStored(ctx context.Context) {
	start := time.Now()
	var rows []memoryRow
	for time.Since(start) < 30*time.Second {
		out, err := k.w.memtrayCmd(ctx, "list", "--json", "--data-dir", k.w.dataDir, "--config", k.w.config)
		if err == nil {
			var res struct {
				Memories []memoryRow `json:"memories"`
			}
			if json.Unmarshal(out, &res) == nil {
				rows = res.Memories
			}
		}
		if slices.ContainsFunc(rows, func(m memoryRow) bool { return strings.Contains(m.Text, "PostgreSQL") }) {
			break
		}
		time.Sleep(500 * time.Millisecond)
	}
	var projects []string
	ok := false
	for _, m := range rows {
		projects = append(projects, fmt.Sprintf("%q", m.Project))
		if strings.Contains(m.Text, "PostgreSQL") && m.Project == projectName {
			ok = true
		}
	}
	k.add("memory stored with project", ok, time.Since(start), "%d memories, projects %s (want %q)", len(rows), list(projects), projectName)
}

// checkContext: a request of the new session carried <memtray-context>.
func (k *checker) checkContext(took time.Duration) {
	n, with := 0, 0
	for _, f := range []*fake{k.w.anth, k.w.oai} {
		for _, ex := range f.requests() {
			body := ex.Body
			for _, fr := range ex.Frames {
				body = append(append([]byte{}, body...), fr...)
			}
			if len(body) == 0 {
				continue
			}
			n++
			if bytes.Contains(body, []byte("<memtray-context>")) {
				with++
			}
		}
	}
	k.add("<memtray-context> on a later turn", with > 0, took, "%d of %d model requests of the new session carry it", with, n)
}

// hookCall is one recorded hook run.
type hookCall struct {
	event, in, out, errOut string
	rc                     string
}

func (k *checker) hookCalls() []hookCall {
	ins, _ := filepath.Glob(filepath.Join(k.w.recDir, "hook-*.in"))
	sort.Strings(ins)
	var calls []hookCall
	for _, in := range ins {
		base := strings.TrimSuffix(in, ".in")
		read := func(ext string) string { b, _ := os.ReadFile(base + ext); return string(b) }
		parts := strings.SplitN(filepath.Base(base), "-", 3)
		ev := ""
		if len(parts) == 3 {
			ev = parts[2]
		}
		var hin struct {
			Event string `json:"hook_event_name"`
		}
		json.Unmarshal([]byte(read(".in")), &hin) //nolint:errcheck // no name: the wrapper's
		if hin.Event != "" {
			ev = hin.Event
		}
		calls = append(calls, hookCall{event: ev, in: read(".in"), out: read(".out"), errOut: read(".err"), rc: strings.TrimSpace(read(".rc"))})
	}
	return calls
}

// checkHooks: each hook memtray installs fired, exited 0, and said nothing
// on stderr (a hook that cannot reach its daemon says so there).
func (k *checker) checkHooks() {
	fired := map[string]int{}
	var problems []string
	for _, h := range k.hookCalls() {
		if strings.HasPrefix(h.event, "record-only") {
			continue
		}
		fired[h.event]++
		if h.rc != "0" || strings.TrimSpace(h.errOut) != "" {
			problems = append(problems, fmt.Sprintf("%s rc %s: %s", h.event, h.rc, oneLine(h.errOut)))
		}
	}
	var missing, seen []string
	for _, ev := range k.c.Hooks {
		if fired[ev] == 0 {
			missing = append(missing, ev)
		} else {
			seen = append(seen, fmt.Sprintf("%s×%d", ev, fired[ev]))
		}
	}
	k.add("hooks fire", len(missing) == 0 && len(problems) == 0, 0, "fired %s; not fired %s; %s", list(seen), list(missing), list(uniq(problems)))
}

// checkMCP: the client started `memtray mcp`, which answered initialize and
// listed memtray's tools.
func (k *checker) checkMCP() {
	outs, _ := filepath.Glob(filepath.Join(k.w.recDir, "mcp-*.out"))
	ok := false
	for _, o := range outs {
		b, _ := os.ReadFile(o)
		if bytes.Contains(b, []byte(`"serverInfo"`)) && bytes.Contains(b, []byte(`memory_search`)) {
			ok = true
		}
	}
	k.add("MCP initialize + tools/list", ok, 0, "%d MCP sessions started", len(outs))
}

// checkTiming: codex exec through memtray within 10% of straight to the
// fake (same HOME, hooks and daemon; only the base URL differs), median of
// k.runs each, alternated.
func (k *checker) checkTiming(ctx context.Context) {
	var direct, through []time.Duration
	for range k.runs {
		for _, d := range []bool{true, false} {
			_, took, err := k.c.run(ctx, k.w, runOpts{prompt: quickPrompt, direct: d})
			if err != nil {
				k.add("codex exec time vs direct", false, 0, "%v", err)
				return
			}
			if d {
				direct = append(direct, took)
			} else {
				through = append(through, took)
			}
		}
	}
	md, mt := median(direct), median(through)
	k.add("codex exec time vs direct", float64(mt) <= 1.1*float64(md), mt,
		"median of %d: through %s, direct %s (%+.1f%%)", k.runs, mt.Round(time.Millisecond), md.Round(time.Millisecond), 100*(float64(mt)/float64(md)-1))
}

// checkDefaultDataDir: nothing created a store in the default data dir.
func (k *checker) checkDefaultDataDir() {
	def := filepath.Join(k.w.home, ".local", "share", "memtray")
	_, err := os.Stat(def)
	k.add("non-default --data-dir only", os.IsNotExist(err), 0, "default %s exists: %v", "~/.local/share/memtray", err == nil)
}

// filesMentioning lists the files of rels (under HOME) holding s.
func (k *checker) filesMentioning(s string, rels []string) []string {
	var hits []string
	for _, rel := range rels {
		rel = strings.TrimSuffix(rel, " (new)")
		b, err := os.ReadFile(filepath.Join(k.w.home, rel))
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(b), "\n") {
			// -record's own Stop hooks are not memtray's to remove.
			if strings.Contains(line, s) && !strings.Contains(line, "record-only") {
				hits = append(hits, rel)
				break
			}
		}
	}
	sort.Strings(hits)
	return hits
}

func median(d []time.Duration) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[len(s)/2]
}

func list(s []string) string {
	if len(s) == 0 {
		return "none"
	}
	return strings.Join(s, ", ")
}

func uniq(s []string) []string {
	slices.Sort(s)
	return slices.Compact(s)
}

func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 120 {
		s = s[:120] + "…"
	}
	return s
}

func firstLine(b []byte) string {
	s, _, _ := strings.Cut(strings.TrimSpace(string(b)), "\n")
	return s
}
