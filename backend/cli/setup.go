package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/memtray/memtray/backend/agentsetup"
)

// runSetup is `memtray setup`: the flags and the config, then
// agentsetup.Run.
func runSetup(env *Env, args []string) error {
	var c common
	fsf := newFlags("setup", env, &c, false)
	printOnly := fsf.Bool("print", false, "only show the change (a diff per file); change nothing")
	undo := fsf.Bool("undo", false, "take memtray out again: a file unchanged since setup is restored from its backup; from a file changed since (the agent's own state, your edits), only memtray's entries are removed and the backup is kept")
	force := fsf.Bool("force", false, "with --undo: restore the backups even of files changed since setup, losing those changes; else: replace a base URL that points elsewhere")
	noProxy := fsf.Bool("no-proxy", false, "do not route the agent's API traffic through memtray's proxy")
	noHooks := fsf.Bool("no-hooks", false, "do not install hooks")
	home := fsf.String("home", "", "home directory whose configs to change (default $HOME)")
	binary := fsf.String("binary", "", "memtray binary path written into the configs (default: this program)")
	pos, err := parse(fsf, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("name one client: %s", strings.Join(agentsetup.Names(), ", "))
	}
	client := pos[0]
	if _, err := agentsetup.Lookup(client); err != nil {
		return usageError{err}
	}
	cfg, fileDataDir, err := c.loadFile()
	if err != nil {
		return err
	}
	e := agentsetup.Env{Home: *home, Listen: cfg.Listen, DataDir: cfg.DataDir,
		HookTimeout: agentsetup.HookTimeout(time.Duration(cfg.Recall.HookTimeout))}
	if e.Home == "" {
		if e.Home, err = os.UserHomeDir(); err != nil {
			return fmt.Errorf("find the home directory: %w (pass --home)", err)
		}
	}
	if e.Home, err = filepath.Abs(e.Home); err != nil {
		return fmt.Errorf("home: %w", err)
	}
	// The agents run memtray without this command's flags and environment:
	// what chose another data dir or config goes into what setup writes.
	if e.Flags, err = agentsetup.FlagsFor(cfg.DataDir, cfg.File, fileDataDir); err != nil {
		return err
	}
	if !*undo {
		if e.Binary, e.Notes, err = agentsetup.Binary(*binary); err != nil {
			return err
		}
		// The proxy's base URL names where the daemon on this data dir runs
		// (`serve --listen` elsewhere than the config says): the configured
		// address would leave the agent with no API at all.
		if cl, ok := remote(env.Ctx, cfg); ok && cl.Addr() != cfg.Listen {
			e.Listen = cl.Addr()
			e.Notes = append(e.Notes, fmt.Sprintf("memtray runs on %s, not on the configured %s: the agent is pointed at %s; "+
				"set \"listen\": %q in the config (or always start it with --listen %s), or run setup again when it runs elsewhere", cl.Addr(), cfg.Listen, cl.Addr(), cl.Addr(), cl.Addr()))
		}
	}
	return agentsetup.Run(env.Stdout, e, client, agentsetup.Options{NoProxy: *noProxy, NoHooks: *noHooks, Force: *force}, *undo, *printOnly)
}
