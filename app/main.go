// Command memtray is long-term memory for AI coding agents: a tray app, and
// the same program headless (`memtray serve`) with a command line.
//
// Built with `-tags desktop,production,webkit2_41` (see `make desktop`),
// `memtray` with no command, or `memtray app`, opens the desktop window and
// the tray with the daemon running in-process; every other command is the
// CLI. Built without the tags, it is the CLI alone.
package main

import (
	"io"
	"os"
	"runtime"
	"strings"

	"github.com/memtray/memtray/backend/cli"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	cli.NoDesktop = !desktopBuilt
	if ok, rest := wantsApp(args, desktopBuilt, hasDisplay()); ok {
		return runApp(rest, stdout, stderr)
	}
	return cli.Main(args, stdin, stdout, stderr)
}

// wantsApp says whether args ask for the desktop app, and the app's own
// arguments: `memtray app [flags]` always (a build without the window
// explains itself); `memtray` alone or `memtray --data-dir …` when this build
// has the window and there is a display to put it on.
func wantsApp(args []string, built, display bool) (bool, []string) {
	if len(args) > 0 && args[0] == "app" {
		return true, args[1:]
	}
	if !built || !display {
		return false, args
	}
	if len(args) == 0 {
		return true, nil
	}
	switch args[0] {
	case "-h", "-help", "--help", "help":
		return false, args
	}
	return strings.HasPrefix(args[0], "-"), args
}

// hasDisplay reports whether a window can be shown: on Linux and the BSDs,
// an X11 or Wayland display; elsewhere always.
func hasDisplay() bool {
	switch runtime.GOOS {
	case "windows", "darwin":
		return true
	}
	return os.Getenv("DISPLAY") != "" || os.Getenv("WAYLAND_DISPLAY") != ""
}
