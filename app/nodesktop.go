//go:build !desktop

package main

import (
	"fmt"
	"io"
)

// desktopBuilt says whether this build has the window and the tray.
const desktopBuilt = false

// runApp, in a build without the window, says how to get one.
func runApp(_ []string, _, stderr io.Writer) int {
	fmt.Fprintln(stderr, "memtray app: this memtray was built without the desktop window and tray.\n"+
		"Run `memtray serve` for the daemon and open the UI address it prints in a browser,\n"+
		"or build the desktop app: `make desktop` (go build -tags desktop,production,webkit2_41 ./app).")
	return 2
}
