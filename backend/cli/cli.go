// Package cli is memtray's command line: `memtray serve`, `add`, `search`,
// `export` and the rest. Commands that read or change memories talk to the
// running daemon when there is one, and open the store themselves when not.
package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/memtray/memtray/backend/config"
	"github.com/memtray/memtray/backend/daemon"
	"github.com/memtray/memtray/backend/httpapi"
	"github.com/memtray/memtray/backend/memory"
)

// Version is set at build time with -ldflags "-X github.com/memtray/memtray/backend/cli.Version=…".
var Version = "dev"

// NoDesktop says this program was built without the desktop window and
// tray (the main package sets it): it cannot run `memtray app`, which
// starting at login would run.
var NoDesktop bool

// Env is what a command runs with; tests pass their own.
type Env struct {
	Stdin          io.Reader
	Stdout, Stderr io.Writer
	// Ctx ends when the command should stop (signals, in Main).
	Ctx context.Context
}

type command struct {
	name, args, help string
	run              func(env *Env, args []string) error
}

var commands []command

func init() {
	commands = []command{
		{"serve", "[--listen ADDR] [--embedder P] [--anthropic-upstream URL] [--openai-upstream URL]", "run the daemon headless: API and UI, capture proxy, MCP", runServe},
		{"add", "[--kind K] [--type T] [--project P] [--importance X] TEXT|-", "store a memory", runAdd},
		{"search", "[--project P] [--k N] [--mode hybrid|bm25|vector] QUERY", "search memories, with each score factor", runSearch},
		{"get", "ID", "show one memory", runGet},
		{"delete", "ID [--purge]", "move one memory to the trash (`memtray trash restore ID` brings it back; --purge deletes it, or its trash entry, for good)", runDelete},
		{"list", "[--project P] [--kind K] [--limit N]", "list memories, newest first", runList},
		{"stats", "", "describe the store, the embedder and the daemon", runStats},
		{"export", "[FILE]", "write every memory as versioned JSONL (stdout without FILE)", runExport},
		{"ingest", "[--as auto|transcript|exchanges|document] [--project P] FILE...|-", "run transcripts, exchanges or documents through the write pipeline", runIngest},
		{"decisions", "[--limit N]", "the running daemon's recent write-pipeline decisions", runDecisions},
		{"keep", "DECISION_ID", "store an exchange the write pipeline rejected (trains the noise model)", runKeep},
		{"mark-noise", "ID", "move a memory that is noise to the trash (trains the noise model)", runMarkNoise},
		{"import", "FILE|-", "validate, then add the memories of an export", runImport},
		{"import-claude", "[--home DIR] [--project-dir DIR]... [--dry-run]", "import Claude Code's memory files and CLAUDE.md files (idempotent: re-run to sync)", runImportClaude},
		{"reindex", "[--embedder P] [--ollama-model M]", "re-embed every memory with another model (a running daemon does it while it serves)", runReindex},
		{"pull", "[MODEL]", "pull the Ollama embedding model, with a progress bar (through a running daemon)", runPull},
		{"eval", "recall FILE | filter FILE [--passes N] | redact FILE | stickiness | merge RECALL META | sessions SET.json", "measure retrieval, the write filter or redaction on a labelled set", runEval},
		{"token", "[rotate]", "print (or replace) the install's API token", runToken},
		{"mcp", "", "MCP server on stdin/stdout for an agent (bridges to the daemon, starting one if none runs)", runMCP},
		{"hook", "user-prompt-submit|session-start|pre-compact|session-end", "answer a Claude Code hook (stdin JSON) within a hard deadline", runHook},
		{"setup", "claude-code|cursor|codex|windsurf [--print] [--undo]", "connect an agent: MCP server, hooks and proxy in its own config, with a backup", runSetup},
		{"tidy", "PLANS_DIR [--apply] [--undo] [--json] [--now TIME] [--stale-days 7] [--stale-bytes 2048] [--dormant-days 14] [--current FILE]", "classify agent plan files; archive completed ones, move stale stubs to .trash/ (dry run by default)", runTidy},
		{"capture", "[on|off|status] [--for 1h] [--exclude P] [--include P]", "pause or resume capture, exclude projects, show the proxy's counters", runCapture},
		{"recall", "[--session S] [--project P] PROMPT", "show what an agent would be given for a prompt", runRecall},
		{"recall-log", "[--session S] [--limit N] | clear", "what recalls gave agents, newest first; clear empties the log", runRecallLog},
		{"reinforce", "ID", "a memory proved useful: count it and restart its decay", runReinforce},
		{"rate", "[--reason R] +1|-1 ID...", "feedback on memories an agent was given (feeds the composite score)", runRate},
		{"pin", "ID", "never let the steward prune, decay or merge this memory", runPin},
		{"unpin", "ID", "undo pin", runUnpin},
		{"snooze", "ID DAYS", "keep a memory out of recall for a while", runSnooze},
		{"unsnooze", "ID", "let recall give a snoozed memory again", runUnsnooze},
		{"dream", "[--all] [--project P] [--ops LIST] [--apply] [--undo]", "the steward: plan consolidation (merge, decay, boost, prune, snooze), apply it, undo it", runDream},
		{"trash", "[restore ID... | purge ID... | purge --all]", "list what was deleted, or pruned or merged away by the steward; restore it, or delete it for good", runTrash},
		{"team", "init|status|push [--all]|pull|member add [--admin] ROLE|member remove ROLE|member list [--json]|settings [--conflict-retention-days N]", "team memory on PostgreSQL: connect and migrate, show the sync state, push or pull now, change the members and the team's settings (admins)", runTeam},
		{"scope", "ID team|personal", "share a memory with the team, or keep it on this machine", runScope},
		{"doctor", "[--json] [--salvage | --rebuild-index | --reembed-damaged]", "check the store for damage without changing it (exit 1 on damage); --salvage copies every readable record into a new store, --rebuild-index rebuilds the text index, --reembed-damaged embeds anew the memories whose vector is damaged", runDoctor},
		{"autostart", "[on|off|status]", "start memtray (in the tray) at login", runAutostart},
		{"version", "[--json]", "print the version, commit, build date, Go version and platform", runVersion},
	}
}

// Main runs memtray with args (without the program name) and returns the exit code.
func Main(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	env := &Env{Stdin: stdin, Stdout: stdout, Stderr: stderr, Ctx: ctx}
	return Run(env, args)
}

// Run dispatches one command.
func Run(env *Env, args []string) int {
	if len(args) == 0 || args[0] == "help" || args[0] == "-h" || args[0] == "--help" {
		usage(env.Stdout)
		return 0
	}
	for _, c := range commands {
		if c.name == args[0] {
			err := c.run(env, args[1:])
			if err == nil {
				return 0
			}
			if errors.Is(err, flag.ErrHelp) {
				return 0
			}
			if errors.Is(err, errReported) {
				return 1 // the command said why on its output
			}
			var ue usageError
			if errors.As(err, &ue) && len(args) > 1 && isHelpFlag(args[1]) {
				// A command that reads its arguments before its flags
				// (eval, team) took -h for one: show its usage.
				fmt.Fprintf(env.Stdout, "usage: memtray %s %s\n  %s\n", c.name, c.args, c.help)
				return 0
			}
			if errors.As(err, &ue) {
				fmt.Fprintf(env.Stderr, "memtray %s: %v\nusage: memtray %s %s\n", c.name, err, c.name, c.args)
				return 2
			}
			fmt.Fprintf(env.Stderr, "memtray %s: %v\n", c.name, err)
			return 1
		}
	}
	if near := nearCommand(args[0]); near != "" {
		fmt.Fprintf(env.Stderr, "memtray: unknown command %q; did you mean %q? (`memtray %s -h`)\n", args[0], near, near)
		return 2
	}
	fmt.Fprintf(env.Stderr, "memtray: unknown command %q\n", args[0])
	usage(env.Stderr)
	return 2
}

func isHelpFlag(a string) bool { return a == "-h" || a == "-help" || a == "--help" || a == "help" }

// nearCommand is the command name closest to a mistyped one (status for
// stats, serach for search), or "" when none is within two edits.
func nearCommand(name string) string {
	best, bestD := "", 3
	for _, c := range commands {
		if d := editDistance(name, c.name); d < bestD {
			best, bestD = c.name, d
		}
	}
	return best
}

// editDistance is the Levenshtein distance of a and b, in bytes.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "memtray: long-term memory for AI coding agents\n\nusage: memtray COMMAND [flags]\n\ncommands:")
	for _, c := range commands {
		fmt.Fprintf(w, "  %-10s %s\n", c.name, c.help)
	}
	fmt.Fprintf(w, "  %-10s %s\n", "app", "open the desktop window and tray (builds made with `make desktop`; the default with no command)")
	fmt.Fprintln(w, "\ncommon flags: --data-dir DIR, --config FILE, --json (where output is data)\n`memtray COMMAND -h` lists a command's flags.")
}

// commandUsage is what `memtray NAME -h` prints: the command's synopsis
// and what it does (from the commands table, so that the positional
// arguments, `snooze ID DAYS`, are shown and not only the flags), then its
// flags. A subcommand's flag set (name "eval sessions") has no row of its
// own and gets the bare synopsis.
func commandUsage(w io.Writer, name string, fs *flag.FlagSet) {
	synopsis, help := "[flags]", ""
	for _, c := range commands {
		if c.name == name {
			synopsis, help = c.args, c.help
		}
	}
	fmt.Fprintf(w, "usage: memtray %s %s\n", name, synopsis)
	if help != "" {
		fmt.Fprintf(w, "  %s\n", help)
	}
	if note := commandNotes[name]; note != "" {
		fmt.Fprintf(w, "\n  %s\n", note)
	}
	fmt.Fprintln(w, "\nflags:")
	fs.PrintDefaults()
}

// commandNotes are what `memtray NAME -h` says after a command's one
// line, for the commands whose words need explaining where the user
// meets them (the scope "default").
var commandNotes = map[string]string{"scope": scopeNote}

type usageError struct{ error }

// errReported makes a command exit 1 after it printed why itself (the
// doctor finding damage).
var errReported = errors.New("reported")

func usagef(format string, a ...any) error { return usageError{fmt.Errorf(format, a...)} }

// common holds the flags every command takes.
type common struct {
	dataDir, configPath string
	json                bool
}

// storeless refuses --data-dir and --config for a command that reads
// neither (an evaluation runs on a temporary store with the default
// config): taken silently, they would suggest the user's store or settings
// were measured.
func (c common) storeless(cmd string) error {
	if c.dataDir != "" || c.configPath != "" {
		return usagef("%s runs on a temporary store with the default config: --data-dir and --config are not read", cmd)
	}
	return nil
}

func newFlags(name string, env *Env, c *common, withJSON bool) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(env.Stderr)
	fs.Usage = func() { commandUsage(fs.Output(), name, fs) }
	fs.StringVar(&c.dataDir, "data-dir", "", "data directory (default $XDG_DATA_HOME/memtray)")
	fs.StringVar(&c.configPath, "config", "", "config file (default $XDG_CONFIG_HOME/memtray/config.json)")
	if withJSON {
		fs.BoolVar(&c.json, "json", false, "print data as JSON")
	}
	return fs
}

// parse parses flags that may come before or after positional arguments.
func parse(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		args = fs.Args()
		if len(args) == 0 {
			return pos, nil
		}
		if args[0] == "--" {
			return append(pos, args[1:]...), nil
		}
		pos = append(pos, args[0])
		args = args[1:]
	}
}

// load reads the config, applies the common flags and then each of set
// (a command's own flags), and validates the result.
func (c *common) load(set ...func(*config.Config)) (config.Config, error) {
	cfg, _, err := c.loadFile(set...)
	return cfg, err
}

// loadFile is load that also returns the data dir the config file gives by
// itself, before $MEMTRAY_DATA_DIR and --data-dir: what
// agentsetup.FlagsFor compares the data dir with, so that the file is
// read once.
func (c *common) loadFile(set ...func(*config.Config)) (config.Config, string, error) {
	path := c.path()
	cfg, err := config.Load(path)
	if err != nil {
		return cfg, "", err
	}
	cfg.File = path
	fileDataDir := cfg.DataDir
	if d := os.Getenv("MEMTRAY_DATA_DIR"); d != "" {
		cfg.DataDir = d
	}
	if c.dataDir != "" {
		cfg.DataDir = c.dataDir
	}
	for _, f := range set {
		f(&cfg)
	}
	return cfg, fileDataDir, cfg.Validate()
}

// path is the config file: --config, else $MEMTRAY_CONFIG, else
// config.DefaultPath(). It need not exist.
func (c *common) path() string {
	if c.configPath != "" {
		return c.configPath
	}
	if p := os.Getenv("MEMTRAY_CONFIG"); p != "" {
		return p
	}
	return config.DefaultPath()
}

// with runs fn against the running daemon's API, or against the store
// opened in this process when no daemon runs (and closes it after).
func (c *common) with(env *Env, fn func(httpapi.Services) error) error {
	cfg, err := c.load()
	if err != nil {
		return err
	}
	if cl, ok := remote(env.Ctx, cfg); ok {
		return fn(cl.Services())
	}
	d, err := daemon.Open(env.Ctx, daemon.Options{Config: cfg, Version: Version})
	if err != nil {
		return explainLocked(err)
	}
	return errors.Join(fn(d.Services()), d.Close())
}

// explainLocked adds to a store-locked error what the user can do about
// it: the pid alone does not say that it is another memtray, nor that a
// daemon this command could not reach (another address, another token)
// holds it too.
func explainLocked(err error) error {
	if !errors.Is(err, memory.ErrLocked) {
		return err
	}
	return fmt.Errorf("%w: another memtray has this data dir open (a daemon or window this command could not reach, or a command still running): stop it, or pass --data-dir for another store", err)
}

// remote finds a daemon on the data dir's runtime address or the configured one.
func remote(ctx context.Context, cfg config.Config) (*httpapi.Client, bool) {
	addrs := []string{}
	if rt, err := daemon.ReadRuntime(cfg.DataDir); err == nil && rt.Listen != "" {
		addrs = append(addrs, rt.Listen)
	}
	addrs = append(addrs, cfg.Listen)
	tok, err := daemon.ReadToken(cfg.DataDir)
	if err != nil {
		return nil, false // no token yet: no daemon has run on this data dir
	}
	for _, a := range addrs {
		// The daemon must prove it holds the token before the token goes there.
		if _, ok := httpapi.Probe(ctx, a, tok, 500*time.Millisecond); ok {
			return httpapi.NewClient(a, tok), true
		}
	}
	return nil, false
}

func newLogger(w io.Writer, level string) *slog.Logger {
	var l slog.Level
	l.UnmarshalText([]byte(level))
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: l}))
}

func sortedKeys(m map[string]int) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if m[keys[i]] != m[keys[j]] {
			return m[keys[i]] > m[keys[j]]
		}
		return keys[i] < keys[j]
	})
	return keys
}

// oneLine is s on one line (its white space runs one space), cut to n
// runes with "…" when longer.
func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

// oneLineWholeIDs is oneLine for text that names memories by id (a
// write-pipeline decision's reason: "near duplicate of ID (similarity
// 0.93)"): a cut that would fall inside a word that is a memory id the
// store made (32 hex digits) falls after it, so every id printed is one
// `memtray get` takes.
func oneLineWholeIDs(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	cut := n - 1
	start := cut
	for start > 0 && r[start-1] != ' ' {
		start--
	}
	end := cut
	for end < len(r) && r[end] != ' ' {
		end++
	}
	if word := strings.TrimRight(string(r[start:end]), ",;:)"); isStoreID(word) {
		cut = start + len(word)
		if cut >= len(r) {
			return s
		}
	}
	return string(r[:cut]) + "…"
}

// isStoreID reports whether w is a memory id as the store makes them: 32
// lowercase hex digits.
func isStoreID(w string) bool {
	if len(w) != 32 {
		return false
	}
	for _, c := range w {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}
