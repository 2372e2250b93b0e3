//go:build linux

package main

import (
	"bufio"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// result is what the test AppRun wrote, and how the runtime ended.
type result struct {
	vars    map[string]string
	args    []string
	lines   []string
	code    int
	pid     int
	signal  syscall.Signal
	stderr  string
	outPath string
}

// runAppImage runs the AppImage (as path, from dir) with args and extra
// environment (over a minimal one with its own HOME), and reads what the
// test AppRun reported.
func runAppImage(t *testing.T, ai, dir string, env []string, args ...string) result {
	t.Helper()
	out := filepath.Join(t.TempDir(), "out")
	cmd := exec.Command(ai, args...)
	cmd.Dir = dir
	home := t.TempDir()
	t.Cleanup(func() { makeWritable(home) })
	cmd.Env = append([]string{"PATH=/usr/bin:/bin", "HOME=" + home, "OUT=" + out}, env...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	err := cmd.Run()
	r := result{vars: map[string]string{}, stderr: stderr.String(), outPath: out}
	var exitErr *exec.ExitError
	if err != nil && !errors.As(err, &exitErr) {
		t.Fatalf("run %s: %v", ai, err)
	}
	ws := cmd.ProcessState.Sys().(syscall.WaitStatus)
	if ws.Signaled() {
		r.signal = ws.Signal()
	}
	r.code = cmd.ProcessState.ExitCode()
	r.pid = cmd.ProcessState.Pid()
	readOut(out, &r)
	return r
}

func readOut(path string, r *result) {
	f, err := os.Open(path)
	if err != nil {
		return
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		r.lines = append(r.lines, line)
		if k, v, ok := strings.Cut(line, "="); ok {
			if k == "ARG" {
				r.args = append(r.args, v)
			} else {
				r.vars[k] = v
			}
		}
	}
}

// TestRunModes runs AppRun through each way the runtime offers and checks
// what AppRun sees: APPIMAGE, APPDIR, ARGV0, OWD, its arguments (the
// runtime's option removed), the working directory, the AppDir's files;
// and the exit code coming back.
func TestRunModes(t *testing.T) {
	ai := makeAppImage(t, fixtureTree())
	owd := t.TempDir()
	for _, tc := range []struct {
		name string
		env  []string
		args []string
		fuse bool
	}{
		{name: "FUSE", fuse: true, args: []string{"a", "b c"}},
		{name: "APPIMAGE_EXTRACT_AND_RUN=1", env: []string{"APPIMAGE_EXTRACT_AND_RUN=1"}, args: []string{"a", "b c"}},
		{name: "--appimage-extract-and-run", args: []string{"a", "--appimage-extract-and-run", "b c"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := append([]string{"CODE=7"}, tc.env...)
			r := runAppImage(t, ai, owd, env, tc.args...)
			if tc.fuse && strings.Contains(r.stderr, "cannot mount with FUSE") {
				t.Skipf("skipped: FUSE unavailable here: %s", r.stderr)
			}
			if r.code != 7 {
				t.Fatalf("exit code %d, want AppRun's 7; stderr: %s; AppRun wrote %q", r.code, r.stderr, r.lines)
			}
			appDir := r.vars["APPDIR"]
			if tc.fuse {
				if !strings.HasPrefix(filepath.Base(appDir), ".mount_test.A") {
					t.Errorf("APPDIR %q is not a FUSE mount point .mount_test.A*", appDir)
				}
				waitGone(t, appDir)
			} else if !strings.Contains(appDir, "/.cache/memtray-appimage/") {
				t.Errorf("APPDIR %q is not in ~/.cache/memtray-appimage", appDir)
			}
			if r.vars["PID"] != strconv.Itoa(r.pid) {
				t.Errorf("AppRun ran as process %s, not as the AppImage's %d", r.vars["PID"], r.pid)
			}
			want := map[string]string{"APPIMAGE": ai, "ARGV0": ai, "OWD": owd, "PWD": owd, "ARGC": "2", "DATA": "payload"}
			for k, v := range want {
				if r.vars[k] != v {
					t.Errorf("%s=%q, want %q", k, r.vars[k], v)
				}
			}
			if strings.Join(r.args, "|") != "a|b c" {
				t.Errorf("AppRun got arguments %q, want [a, b c]", r.args)
			}
		})
	}
}

// TestExtractAndRunCache: a second run reuses the extracted AppDir; a
// changed image gets a directory of its own.
func TestExtractAndRunCache(t *testing.T) {
	ai := makeAppImage(t, fixtureTree())
	cache := t.TempDir()
	t.Cleanup(func() { makeWritable(cache) })
	env := []string{"APPIMAGE_EXTRACT_AND_RUN=1", "XDG_CACHE_HOME=" + cache}
	first := runAppImage(t, ai, t.TempDir(), env)
	second := runAppImage(t, ai, t.TempDir(), env)
	dir := first.vars["APPDIR"]
	if first.code != 0 || second.code != 0 || dir == "" || second.vars["APPDIR"] != dir {
		t.Fatalf("runs: %d %q, %d %q; stderr %s %s", first.code, dir, second.code, second.vars["APPDIR"], first.stderr, second.stderr)
	}
	if filepath.Dir(dir) != filepath.Join(cache, extractCacheName) {
		t.Errorf("APPDIR %s is not under $XDG_CACHE_HOME/%s", dir, extractCacheName)
	}

	files := fixtureTree()
	files["usr/share/data.txt"] = fixtureFile{data: []byte("changed"), mode: 0o644}
	other := makeAppImage(t, files)
	third := runAppImage(t, other, t.TempDir(), env)
	if third.code != 0 || third.vars["DATA"] != "changed" || third.vars["APPDIR"] == dir {
		t.Errorf("a changed image ran from %s with DATA=%q (the first from %s)", third.vars["APPDIR"], third.vars["DATA"], dir)
	}
	if des, _ := os.ReadDir(filepath.Join(cache, extractCacheName)); len(des) != 2 {
		t.Errorf("the cache holds %d entries for two images", len(des))
	}
}

// TestSignals: AppRun is the AppImage's process, so SIGTERM sent to the
// AppImage is AppRun's (its trap exits 42), and an AppRun killed by a signal
// is an AppImage killed by it. With FUSE, the mount goes after.
func TestSignals(t *testing.T) {
	ai := makeAppImage(t, fixtureTree())
	for _, mode := range []string{"FUSE", "extract-and-run"} {
		t.Run(mode+" SIGTERM", func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out")
			cmd := exec.Command(ai)
			cmd.Env = []string{"PATH=/usr/bin:/bin", "HOME=" + t.TempDir(), "OUT=" + out, "WAIT=1"}
			if mode != "FUSE" {
				cmd.Env = append(cmd.Env, "APPIMAGE_EXTRACT_AND_RUN=1")
			}
			var stderr strings.Builder
			cmd.Stderr = &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			defer cmd.Process.Kill()
			deadline := time.Now().Add(20 * time.Second)
			for {
				b, _ := os.ReadFile(out)
				if strings.Contains(string(b), "waiting") {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("AppRun did not start; stderr: %s", stderr.String())
				}
				time.Sleep(20 * time.Millisecond)
			}
			if mode == "FUSE" && strings.Contains(stderr.String(), "cannot mount with FUSE") {
				t.Skipf("skipped: FUSE unavailable here: %s", stderr.String())
			}
			cmd.Process.Signal(syscall.SIGTERM)
			err := cmd.Wait()
			r := result{vars: map[string]string{}}
			readOut(out, &r)
			if cmd.ProcessState.ExitCode() != 42 || r.lines[len(r.lines)-1] != "term" {
				t.Errorf("after SIGTERM: %v, AppRun wrote %q; want exit 42 after its trap; stderr %s", err, r.lines, stderr.String())
			}
			if mode == "FUSE" {
				waitGone(t, r.vars["APPDIR"])
			}
		})
	}
	t.Run("killed by a signal", func(t *testing.T) {
		r := runAppImage(t, ai, t.TempDir(), []string{"SUICIDE=USR2"})
		if r.signal != syscall.SIGUSR2 {
			t.Errorf("the AppImage ended with code %d, signal %v; want killed by SIGUSR2 as AppRun was; stderr %s", r.code, r.signal, r.stderr)
		}
	})
}

// TestMountOutlivesAppRun: a job AppRun leaves behind in the mounted AppDir
// (without AppRun's file descriptors, as a daemon) can still read from it
// after AppRun has exited; the mount goes once the job is done.
func TestMountOutlivesAppRun(t *testing.T) {
	if _, err := exec.LookPath("perl"); err != nil {
		t.Skip("perl (Debian's perl-base) is needed to close the job's descriptors")
	}
	ai := makeAppImage(t, fixtureTree())
	r := runAppImage(t, ai, t.TempDir(), []string{"LINGER=1"})
	if strings.Contains(r.stderr, "cannot mount with FUSE") {
		t.Skipf("skipped: FUSE unavailable here: %s", r.stderr)
	}
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	late := r.vars["DATA"] // AppRun's own read, for comparison
	out := ""
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if b, err := os.ReadFile(r.outPath + ".late"); err == nil && len(b) > 0 {
			out = strings.TrimSpace(string(b))
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if out != late {
		t.Fatalf("the job read %q from the AppDir a second after AppRun exited, want %q", out, late)
	}
	waitGone(t, r.vars["APPDIR"])
}

// waitGone waits for the FUSE server to unmount and remove dir.
func waitGone(t *testing.T, dir string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		_, err := os.Stat(dir)
		if errors.Is(err, os.ErrNotExist) {
			return
		}
		if time.Now().After(deadline) {
			t.Errorf("the mount point %s is still there 10 s after the run (%v)", dir, err)
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func TestOptions(t *testing.T) {
	ai := makeAppImage(t, fixtureTree())
	st, _ := os.Stat(builtRuntime(t))
	for _, tc := range []struct {
		args []string
		env  []string
		code int
		out  string // in stdout
		err  string // in stderr
	}{
		{args: []string{"--appimage-version"}, out: "memtray AppImage runtime test-1.2.3 (type 2"},
		{args: []string{"--appimage-help"}, out: "--appimage-extract-and-run"},
		{args: []string{"--appimage-offset"}, out: itoa(st.Size()) + "\n"},
		{args: []string{"--appimage-bogus"}, code: 1, err: "--appimage-bogus is not supported"},
		// Only the first argument starting with -- is the runtime's.
		{args: []string{"--help", "--appimage-version"}, env: []string{"APPIMAGE_EXTRACT_AND_RUN=1"}},
		// The runtime run on another AppImage.
		{args: []string{"--appimage-offset"}, env: []string{"TARGET_APPIMAGE=" + ai}, out: itoa(st.Size())},
	} {
		t.Run(strings.Join(append(tc.env, tc.args...), " "), func(t *testing.T) {
			bin := ai
			if strings.HasPrefix(strings.Join(tc.env, " "), "TARGET_APPIMAGE") {
				bin = builtRuntime(t) // no image of its own
			}
			cmd := exec.Command(bin, tc.args...)
			cmd.Env = append([]string{"PATH=/usr/bin:/bin", "HOME=" + t.TempDir(), "OUT=" + filepath.Join(t.TempDir(), "out")}, tc.env...)
			var stdout, stderr strings.Builder
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			cmd.Run()
			if code := cmd.ProcessState.ExitCode(); code != tc.code {
				t.Errorf("exit %d, want %d; stderr %s", code, tc.code, stderr.String())
			}
			if !strings.Contains(stdout.String(), tc.out) || !strings.Contains(stderr.String(), tc.err) {
				t.Errorf("stdout %q, stderr %q; want %q and %q", stdout.String(), stderr.String(), tc.out, tc.err)
			}
		})
	}

	// --appimage-extract writes squashfs-root/ in the working directory.
	dir := t.TempDir()
	t.Cleanup(func() { makeWritable(dir) })
	cmd := exec.Command(ai, "--appimage-extract")
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil || !strings.Contains(string(out), "squashfs-root/AppRun\n") {
		t.Fatalf("--appimage-extract: %v: %s", err, out)
	}
	checkTree(t, filepath.Join(dir, "squashfs-root"), fixtureTree(), true)
	cmd = exec.Command(ai, "--appimage-extract", "usr/lib/a/*")
	cmd.Dir = t.TempDir()
	if out, err := cmd.CombinedOutput(); err != nil || strings.TrimSpace(string(out)) != "squashfs-root/usr/lib/a/b\nsquashfs-root/usr/lib/a/b/deep.txt" {
		t.Errorf("--appimage-extract 'usr/lib/a/*': %v: %q", err, out)
	}
}

// TestNoAppRun: an image without AppRun fails with a clear message.
func TestNoAppRun(t *testing.T) {
	files := fixtureTree()
	delete(files, "AppRun")
	r := runAppImage(t, makeAppImage(t, files), t.TempDir(), []string{"APPIMAGE_EXTRACT_AND_RUN=1"})
	if r.code != 1 || !strings.Contains(r.stderr, "has no AppRun") {
		t.Errorf("exit %d, stderr %q; want 1 and \"has no AppRun\"", r.code, r.stderr)
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// TestFUSEDescriptorCloseOnExec: the mounting process's /dev/fuse
// descriptors are close-on-exec, so that no child of it can keep a mount
// alive (and hanging) after it is gone.
func TestFUSEDescriptorCloseOnExec(t *testing.T) {
	ai := makeAppImage(t, fixtureTree())
	cmd := exec.Command(ai, "--appimage-mount")
	cmd.Env = []string{"PATH=/usr/bin:/bin", "HOME=" + t.TempDir()}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		cmd.Process.Signal(syscall.SIGTERM)
		cmd.Wait()
	}()
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		cmd.Process.Signal(syscall.SIGTERM)
		cmd.Wait()
		t.Skipf("skipped: FUSE unavailable here: %s", stderr.String())
	}
	dir := strings.TrimSpace(line)
	proc := "/proc/" + strconv.Itoa(cmd.Process.Pid)
	des, err := os.ReadDir(proc + "/fd")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, de := range des {
		if target, _ := os.Readlink(proc + "/fd/" + de.Name()); target != "/dev/fuse" {
			continue
		}
		n++
		info, err := os.ReadFile(proc + "/fdinfo/" + de.Name())
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range strings.Split(string(info), "\n") {
			if v, ok := strings.CutPrefix(l, "flags:"); ok {
				flags, _ := strconv.ParseUint(strings.TrimSpace(v), 8, 64)
				if flags&syscall.O_CLOEXEC == 0 {
					t.Errorf("/dev/fuse descriptor %s is not close-on-exec (flags %s)", de.Name(), strings.TrimSpace(v))
				}
			}
		}
	}
	if n == 0 {
		t.Errorf("no /dev/fuse descriptor in the process that mounted %s", dir)
	}
}
