package main

import (
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/memtray/memtray/backend/config"
)

// appFlags are `memtray app`'s flags: the same as `memtray serve`'s.
type appFlags struct {
	listen, dataDir, configPath string
	provider, anthropic, openai string
}

// parseAppFlags parses args and loads the config the way `memtray serve`
// does: the config file ($MEMTRAY_CONFIG or the default path), then
// $MEMTRAY_DATA_DIR, then the flags.
func parseAppFlags(args []string, stderr io.Writer) (config.Config, error) {
	var f appFlags
	fs := flag.NewFlagSet("app", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: memtray [app] [--listen ADDR] [--data-dir DIR] [--config FILE] [--embedder P] [--anthropic-upstream URL] [--openai-upstream URL]\n\n"+
			"Opens the desktop window and the tray, with the daemon (API, capture proxy, MCP) running in-process.")
		fs.PrintDefaults()
	}
	fs.StringVar(&f.listen, "listen", "", "address to listen on (loopback only; default 127.0.0.1:7432)")
	fs.StringVar(&f.dataDir, "data-dir", "", "data directory (default $XDG_DATA_HOME/memtray)")
	fs.StringVar(&f.configPath, "config", "", "config file (default $XDG_CONFIG_HOME/memtray/config.json)")
	fs.StringVar(&f.provider, "embedder", "", "embedder for a new store: auto, builtin or ollama")
	fs.StringVar(&f.anthropic, "anthropic-upstream", "", "where the proxy sends /v1/* (default capture.anthropic_upstream)")
	fs.StringVar(&f.openai, "openai-upstream", "", "where the proxy sends /openai/v1/* (default capture.openai_upstream)")
	if err := fs.Parse(args); err != nil {
		return config.Config{}, err
	}
	if fs.NArg() > 0 {
		fs.Usage()
		return config.Config{}, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	path := f.configPath
	if path == "" {
		path = os.Getenv("MEMTRAY_CONFIG")
	}
	if path == "" {
		path = config.DefaultPath()
	}
	cfg, err := config.Load(path)
	if err != nil {
		return cfg, err
	}
	if d := os.Getenv("MEMTRAY_DATA_DIR"); d != "" {
		cfg.DataDir = d
	}
	if f.dataDir != "" {
		cfg.DataDir = f.dataDir
	}
	if f.listen != "" {
		cfg.Listen = f.listen
	}
	if f.anthropic != "" {
		cfg.Capture.AnthropicUpstream = f.anthropic
	}
	if f.openai != "" {
		cfg.Capture.OpenAIUpstream = f.openai
	}
	if f.provider != "" {
		cfg.Embedder.Provider = f.provider
	}
	return cfg, cfg.Validate()
}
