//go:build !windows

package cli

import (
	"os/exec"
	"syscall"
)

// detach runs cmd in a session of its own: no controlling terminal, and
// no signal meant for the agent's process group reaches it.
func detach(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
}
