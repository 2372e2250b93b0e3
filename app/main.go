// Command memtray is long-term memory for AI coding agents: a tray app, and
// the same program headless (`memtray serve`) with a command line.
package main

import (
	"os"

	"github.com/memtray/memtray/backend/cli"
)

func main() {
	os.Exit(cli.Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}
