package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"
	"unsafe"
)

// forwarded are the signals the runtime passes on to AppRun. SIGINT from a
// terminal reaches both (same process group); AppRun then sees it twice,
// which a program that handles SIGINT tolerates.
var forwarded = []os.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT, syscall.SIGUSR1, syscall.SIGUSR2}

// appEnv returns env with the variables the reference runtime sets for
// AppRun: APPIMAGE (the AppImage's path), APPDIR (where its AppDir is),
// ARGV0 (the name the AppImage was started by) and OWD (the working
// directory it was started in).
func appEnv(env []string, appImage, appDir, argv0, owd string) []string {
	set := map[string]string{"APPIMAGE": appImage, "APPDIR": appDir, "ARGV0": argv0, "OWD": owd}
	out := make([]string, 0, len(env)+len(set))
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		if _, ok := set[k]; !ok {
			out = append(out, kv)
		}
	}
	for _, k := range []string{"APPIMAGE", "APPDIR", "ARGV0", "OWD"} {
		out = append(out, k+"="+set[k])
	}
	return out
}

// exitStatus is how AppRun ended: its exit code, or the signal that killed it.
type exitStatus struct {
	code   int
	signal syscall.Signal // non-zero when AppRun was killed by a signal
}

// runAppRun runs appDir/AppRun with args and env, its standard streams the
// runtime's, forwards the signals the runtime receives to it, and returns
// how it ended.
func runAppRun(appDir string, args, env []string) (exitStatus, error) {
	appRun := filepath.Join(appDir, "AppRun")
	if _, err := os.Stat(appRun); err != nil {
		return exitStatus{}, fmt.Errorf("the AppImage has no AppRun: %w", err)
	}
	cmd := exec.Command(appRun, args...)
	cmd.Env = env
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	// If the runtime dies (kill -9), AppRun is told to stop: without the
	// runtime its mounted AppDir is gone.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}

	sigs := make(chan os.Signal, 8)
	signal.Notify(sigs, forwarded...)
	defer signal.Stop(sigs)
	if err := cmd.Start(); err != nil {
		return exitStatus{}, fmt.Errorf("start AppRun: %w", err)
	}
	done := make(chan struct{})
	go func() {
		for {
			select {
			case s := <-sigs:
				cmd.Process.Signal(s)
			case <-done:
				return
			}
		}
	}()
	err := cmd.Wait()
	close(done)
	var exitErr *exec.ExitError
	if err != nil && !errors.As(err, &exitErr) {
		return exitStatus{}, fmt.Errorf("wait for AppRun: %w", err)
	}
	ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus)
	if ok && ws.Signaled() {
		return exitStatus{code: 128 + int(ws.Signal()), signal: ws.Signal()}, nil
	}
	return exitStatus{code: cmd.ProcessState.ExitCode()}, nil
}

// exitLike ends the runtime the way AppRun ended: with its exit code, or,
// when a signal killed it, by the same signal (so that a shell or a parent
// sees the same), falling back to 128+signal. Go's own handling of signals
// (for SIGUSR1, ignoring them) is replaced by the default action first.
func exitLike(st exitStatus) {
	if st.signal != 0 {
		signal.Reset(st.signal)
		// An all-zero struct sigaction: SIG_DFL, no flags, an empty mask
		// (the same bytes on every Linux architecture).
		var act [4]uint64
		syscall.RawSyscall6(syscall.SYS_RT_SIGACTION, uintptr(st.signal), uintptr(unsafe.Pointer(&act)), 0, 8, 0, 0)
		syscall.Tgkill(os.Getpid(), syscall.Gettid(), st.signal)
		time.Sleep(100 * time.Millisecond) // a signal that does not kill by default: exit below
	}
	os.Exit(st.code)
}
