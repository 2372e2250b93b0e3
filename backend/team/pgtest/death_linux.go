package pgtest

import "syscall"

// setDeathSignal asks for an immediate shutdown of the server when the
// thread that started it (the test process) dies.
func setDeathSignal(a *syscall.SysProcAttr) { a.Pdeathsig = syscall.SIGQUIT }
