package daemon

import (
	"fmt"
	"os"
	"testing"
)

// TestMain gives the package's tests (and the processes they start) a
// home of their own: a daemon captures from the agents' session folders
// under $HOME (~/.claude/projects, ~/.codex/sessions) by default, and a
// live agent session on this machine must not reach a test's store.
func TestMain(m *testing.M) {
	home, err := os.MkdirTemp("", "memtray-daemon-test-home-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Setenv("HOME", home)
	code := m.Run()
	os.RemoveAll(home)
	os.Exit(code)
}
