//go:build linux

package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// fuseServerOption starts the FUSE server (startServer's child); not for
// users, so not in the help.
const fuseServerOption = "--appimage-internal-fuse-server"

// mountTimeout bounds how long the runtime waits for the server to mount.
const mountTimeout = 15 * time.Second

// startServer mounts the AppImage at path with FUSE in a child process,
// this program again in a session of its own (so that a terminal's Ctrl-C
// does not reach it), as the reference runtime forks one. It returns the
// mount point and the write end of the keep-alive pipe: the server
// unmounts once every copy of it is closed, that is when AppRun and
// whatever inherited it have exited, and then only when the mount is no
// longer in use (a daemon that AppRun started from the mount keeps it).
func startServer(path string) (string, *os.File, error) {
	keepR, keepW, err := os.Pipe()
	if err != nil {
		return "", nil, fmt.Errorf("create the keep-alive pipe: %w", err)
	}
	statusR, statusW, err := os.Pipe()
	if err != nil {
		keepR.Close()
		keepW.Close()
		return "", nil, fmt.Errorf("create the status pipe: %w", err)
	}
	cmd := exec.Command("/proc/self/exe", fuseServerOption, path)
	cmd.ExtraFiles = []*os.File{keepR, statusW} // fds 3 and 4
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	// Its standard streams are /dev/null: a server that outlives AppRun
	// must not hold the caller's pipes open.
	err = cmd.Start()
	keepR.Close()
	statusW.Close()
	if err != nil {
		keepW.Close()
		statusR.Close()
		return "", nil, fmt.Errorf("start the FUSE server: %w", err)
	}
	type answer struct {
		line string
		err  error
	}
	ch := make(chan answer, 1)
	go func() {
		line, err := bufio.NewReader(statusR).ReadString('\n')
		ch <- answer{strings.TrimSpace(line), err}
	}()
	var a answer
	select {
	case a = <-ch:
	case <-time.After(mountTimeout):
		a.err = fmt.Errorf("no answer within %s", mountTimeout)
	}
	statusR.Close()
	if dir, ok := strings.CutPrefix(a.line, "ok "); ok {
		cmd.Process.Release()
		return dir, keepW, nil
	}
	keepW.Close()
	cmd.Process.Kill()
	cmd.Wait()
	switch {
	case strings.HasPrefix(a.line, "error: "):
		return "", nil, errors.New(strings.TrimPrefix(a.line, "error: "))
	case a.err != nil:
		return "", nil, fmt.Errorf("the FUSE server: %w", a.err)
	}
	return "", nil, fmt.Errorf("the FUSE server answered %q", a.line)
}

// serveFUSE is the FUSE server's side: it mounts the image at path, reports
// "ok DIR" (or "error: ...") on fd 4, serves until the keep-alive pipe on
// fd 3 reaches end of file, then unmounts as soon as the mount is not in
// use, retrying every second; SIGTERM, SIGINT or SIGHUP detach it lazily
// at once. It returns the exit code.
func serveFUSE(path string) int {
	keep, status := os.NewFile(3, "keep-alive"), os.NewFile(4, "status")
	for _, f := range []*os.File{keep, status} {
		if st, err := f.Stat(); err != nil || st.Mode()&os.ModeNamedPipe == 0 {
			fmt.Fprintln(os.Stderr, "appimage: "+fuseServerOption+" is started by the runtime itself")
			return 2
		}
	}
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	img, err := openImage(path)
	if err != nil {
		fmt.Fprintf(status, "error: %v\n", err)
		return 1
	}
	defer img.Close()
	m, err := mountImage(img)
	if err != nil {
		fmt.Fprintf(status, "error: %v\n", err)
		return 1
	}
	fmt.Fprintf(status, "ok %s\n", m.dir)
	status.Close()

	released := make(chan struct{})
	go func() {
		io.Copy(io.Discard, keep)
		close(released)
	}()
	select {
	case <-released:
	case <-sigs:
		return m.detach()
	}
	for {
		if err := m.server.Unmount(); err == nil {
			m.server.Wait()
			os.Remove(m.dir)
			return 0
		}
		if !isMountPoint(m.dir) { // unmounted by someone else
			os.Remove(m.dir)
			return 0
		}
		select {
		case <-time.After(time.Second):
		case <-sigs:
			return m.detach()
		}
	}
}

// isMountPoint reports whether dir is a mount point in this process's
// mount namespace (true when that cannot be read: keep trying).
func isMountPoint(dir string) bool {
	data, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return true
	}
	for _, line := range strings.Split(string(data), "\n") {
		if f := strings.Fields(line); len(f) > 4 && unescapeMountPath(f[4]) == dir {
			return true
		}
	}
	return false
}

// unescapeMountPath undoes mountinfo's octal escapes (\040 for a space,
// \011, \012, \134).
func unescapeMountPath(s string) string {
	if !strings.Contains(s, "\\") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}
