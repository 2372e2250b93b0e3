package cli

import (
	"os/exec"
	"syscall"
)

// detachedProcess is Windows' DETACHED_PROCESS creation flag: no console.
const detachedProcess = 0x00000008

// detach runs cmd without a console, in a process group of its own, so it
// outlives the agent that started `memtray mcp`.
func detach(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{CreationFlags: syscall.CREATE_NEW_PROCESS_GROUP | detachedProcess}
}
