package main

import (
	"fmt"
	"io"

	"github.com/memtray/memtray/backend/cli"
	"github.com/memtray/memtray/backend/config"
)

// appUsage heads `memtray app -h`.
const appUsage = "usage: memtray [app] [--hidden] [--listen ADDR] [--data-dir DIR] [--config FILE] [--embedder P] [--anthropic-upstream URL] [--openai-upstream URL]\n\n" +
	"Opens the desktop window and the tray, with the daemon (API, capture proxy, MCP) running in-process.\n" +
	"--hidden starts in the tray with the window closed (how memtray starts at login)."

// appFlags are `memtray app`'s own flags, besides serve's.
type appFlags struct {
	// hidden starts with the window hidden: only the tray shows.
	hidden bool
}

// parseAppFlags parses `memtray app`'s flags: --hidden, and the same as
// `memtray serve`'s, loading the config the same way (cli.ServeConfig).
func parseAppFlags(args []string, stderr io.Writer) (config.Config, appFlags, error) {
	var af appFlags
	rest := make([]string, 0, len(args))
	for i, a := range args {
		if a == "--" {
			rest = append(rest, args[i:]...)
			break
		}
		if a == "--hidden" || a == "-hidden" {
			af.hidden = true
			continue
		}
		rest = append(rest, a)
	}
	cfg, pos, err := cli.ServeConfig("app", rest, stderr, appUsage)
	if err != nil {
		return config.Config{}, af, err
	}
	if len(pos) > 0 {
		fmt.Fprintln(stderr, appUsage)
		return config.Config{}, af, fmt.Errorf("unexpected argument %q", pos[0])
	}
	return cfg, af, nil
}
