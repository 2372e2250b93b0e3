//go:build unix && !linux

package pgtest

import "syscall"

// setDeathSignal does nothing where there is no parent-death signal: a
// test process that dies leaves its server running until the machine
// restarts or someone stops it.
func setDeathSignal(*syscall.SysProcAttr) {}
