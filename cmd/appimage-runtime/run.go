//go:build linux

package main

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
)

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

// execAppRun replaces the runtime with appDir/AppRun, as the reference
// runtime does: AppRun keeps the AppImage's process, so it gets its
// signals and its exit status is the AppImage's, with nothing in between.
// keep, when set, is inherited by AppRun (the FUSE server's keep-alive
// pipe). It returns only when AppRun could not be started.
func execAppRun(appDir string, args, env []string, keep *os.File) error {
	appRun := filepath.Join(appDir, "AppRun")
	if _, err := os.Stat(appRun); err != nil {
		return fmt.Errorf("the AppImage has no AppRun: %w", err)
	}
	if keep != nil {
		// Clear close-on-exec, so that AppRun holds the pipe open.
		if _, _, errno := syscall.Syscall(syscall.SYS_FCNTL, keep.Fd(), syscall.F_SETFD, 0); errno != 0 {
			return fmt.Errorf("pass the keep-alive pipe to AppRun: %w", errno)
		}
	}
	err := syscall.Exec(appRun, append([]string{appRun}, args...), env)
	runtime.KeepAlive(keep) // not closed by a finalizer before the exec
	return fmt.Errorf("run %s: %w", appRun, err)
}
