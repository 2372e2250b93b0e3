// Command clientcheck runs the real agent clients through memtray (issue
// 24; `make test-clients`): Claude Code and Codex, pinned versions
// installed from npm into a cache outside the repository
// (${XDG_CACHE_HOME:-~/.cache}/memtray-test-clients/<pkg>@<version>), each
// in a temporary HOME, connected with `memtray setup` and talking to
// `memtray serve`'s capture proxy in front of fake upstreams on 127.0.0.1.
//
// The fakes speak the real protocols: the Anthropic Messages API streamed
// as SSE (message_start ... message_stop, a tool_use when the prompt asks
// to read README.md) and the OpenAI Responses API as SSE over HTTP and as
// JSON text frames over a WebSocket on GET /v1/responses (what Codex opens
// first). Between the client and memtray sits a recording tap (the address
// the configs name), so what the client sent can be compared with what the
// fake received. memtray's configs run a wrapper that records each hook's
// stdin and output and each MCP session, then runs memtray.
//
// For each client, in order:
//
//  1. a direct run (straight to the fake), so the client writes its own files;
//  2. `memtray setup` then `--undo`: every file under HOME byte-identical;
//     setup again (with a non-default --data-dir): the hook and MCP commands
//     carry it;
//  3. the README prompt through memtray (Codex: over its WebSocket, then
//     again over HTTPS POSTs): request bodies byte-identical at the fake,
//     answers byte-identical at the client and streamed (first bytes before
//     the upstream's last event); Codex's WebSocket reached the fake through
//     memtray with no HTTPS fallback;
//  4. a decision, in a headless session of three prompts (memtray holds a
//     headless session's turns until it has ingest.headless_min_user_turns):
//     a memory appears, with the project (the working directory's name,
//     demo-app);
//  5. a new session asks about it: a model request carries <memtray-context>;
//     every hook memtray installed fired and exited 0 silently; the client
//     started `memtray mcp`, which answered initialize and tools/list;
//  6. Codex only: `codex exec` through memtray within 10% of straight to the
//     fake (median of -runs each, alternated; same HOME, hooks and daemon);
//  7. no store appeared in the default data dir; `setup --undo` after use
//     leaves no memtray entry in any file.
//
// It prints one table (check, client, result, timing, detail) and exits 1
// when a check failed. With -record it also writes the requests, hook
// inputs and MCP exchange the clients produced, scrubbed of the temporary
// paths and keys, into the repository's testdata/clients folders (what
// build/record-clients.sh runs). -fakes only serves both fakes until
// interrupted, for looking at a client by hand.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"
)

func main() {
	os.Exit(run())
}

func run() int {
	memtray := flag.String("memtray", "", "memtray binary to test (default: build ./app into a temporary dir)")
	cache := flag.String("cache", defaultCache(), "where the pinned clients are installed")
	only := flag.String("client", "", "run only this client (claude-code or codex)")
	record := flag.String("record", "", "also write the recorded fixtures into the repository at `DIR`")
	runs := flag.Int("runs", 5, "codex exec runs each way for the timing check")
	keep := flag.Bool("keep", false, "keep each client's temporary HOME, data dir and logs")
	fakesDir := flag.String("fakes", "", "only serve both fakes until interrupted, then write what they received into `DIR`")
	flag.Parse()
	if *fakesDir != "" {
		if err := serveFakes(*fakesDir, "README.md"); err != nil {
			fmt.Fprintln(os.Stderr, "clientcheck:", err)
			return 1
		}
		return 0
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if *memtray == "" {
		dir, err := os.MkdirTemp("", "clientcheck-bin-")
		if err != nil {
			fmt.Fprintln(os.Stderr, "clientcheck:", err)
			return 1
		}
		defer os.RemoveAll(dir)
		*memtray = filepath.Join(dir, "memtray")
		cmd := exec.CommandContext(ctx, "go", "build", "-o", *memtray, "./app")
		cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
		if err := cmd.Run(); err != nil {
			fmt.Fprintln(os.Stderr, "clientcheck: build memtray:", err)
			return 1
		}
	}
	abs, err := filepath.Abs(*memtray)
	if err != nil {
		fmt.Fprintln(os.Stderr, "clientcheck:", err)
		return 1
	}
	var rows []result
	for _, c := range clients {
		if *only != "" && c.Name != *only {
			continue
		}
		start := time.Now()
		if err := c.install(ctx, *cache); err != nil {
			rows = append(rows, result{Check: "install", Client: c.Name, Result: "FAIL", Detail: err.Error()})
			continue
		}
		rows = append(rows, result{Check: "install", Client: c.Name, Result: "ok", Timing: time.Since(start),
			Detail: c.Pkg + "@" + c.Version + " (cached in " + *cache + ")"})
		rows = append(rows, runChecks(ctx, c, abs, *record, *runs, *keep)...)
	}
	printTable(os.Stdout, rows)
	for _, r := range rows {
		if r.Result == "FAIL" {
			return 1
		}
	}
	return 0
}

func defaultCache() string {
	base := os.Getenv("XDG_CACHE_HOME")
	if base == "" {
		home, _ := os.UserHomeDir()
		base = filepath.Join(home, ".cache")
	}
	return filepath.Join(base, "memtray-test-clients")
}

// printTable prints the rows as a Markdown table (docs/development.md shows it).
func printTable(f *os.File, rows []result) {
	tw := tabwriter.NewWriter(f, 0, 0, 1, ' ', tabwriter.Debug)
	fmt.Fprintln(tw, "| check\t client\t result\t timing\t detail\t")
	fmt.Fprintln(tw, "| ---\t ---\t ---\t ---\t ---\t")
	for _, r := range rows {
		t := ""
		if r.Timing > 0 {
			t = r.Timing.Round(time.Millisecond).String()
		}
		fmt.Fprintf(tw, "| %s\t %s\t %s\t %s\t %s\t\n", r.Check, r.Client, r.Result, t, strings.ReplaceAll(r.Detail, "|", "/"))
	}
	tw.Flush()
}
