package main

import (
	"fmt"
	"io"

	"github.com/memtray/memtray/backend/cli"
	"github.com/memtray/memtray/backend/config"
)

// appUsage heads `memtray app -h`.
const appUsage = "usage: memtray [app] [--listen ADDR] [--data-dir DIR] [--config FILE] [--embedder P] [--anthropic-upstream URL] [--openai-upstream URL]\n\n" +
	"Opens the desktop window and the tray, with the daemon (API, capture proxy, MCP) running in-process."

// parseAppFlags parses `memtray app`'s flags, the same as `memtray serve`'s,
// and loads the config the same way (cli.ServeConfig).
func parseAppFlags(args []string, stderr io.Writer) (config.Config, error) {
	cfg, pos, err := cli.ServeConfig("app", args, stderr, appUsage)
	if err != nil {
		return config.Config{}, err
	}
	if len(pos) > 0 {
		fmt.Fprintln(stderr, appUsage)
		return config.Config{}, fmt.Errorf("unexpected argument %q", pos[0])
	}
	return cfg, nil
}
