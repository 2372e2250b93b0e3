//go:build linux

package desktoptest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/memtray/memtray/backend/daemon"
	"github.com/memtray/memtray/backend/httpapi"
)

// TestDesktopAppWhileServeRuns launches the app while `memtray serve`
// holds its data dir (issue 21 bug 14: it exited 1 with the reason on
// stderr only): a window titled "memtray is already running" says why and
// where the running one's UI is, the reason goes to stderr too, serve is
// untouched, and closing the window ends the launch with exit 1.
func TestDesktopAppWhileServeRuns(t *testing.T) {
	bin := appBinary(t)
	need(t, "Xvfb", "dbus-daemon")
	art := artefactDir(t)
	busAddr := startDBus(t)
	display := startXvfb(t)

	tmp := t.TempDir()
	dataDir := filepath.Join(tmp, "data")
	addr := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	env := appEnv(tmp, display, busAddr)
	common := []string{"--data-dir", dataDir, "--listen", addr,
		"--config", filepath.Join(tmp, "no-config.json"), "--embedder", "builtin"}

	// memtray serve, headless, holds the data dir.
	var serveOut syncBuffer
	serve := exec.Command(bin, append([]string{"serve"}, common...)...)
	serve.Env = env
	serve.Stdout, serve.Stderr = &serveOut, &serveOut
	if err := serve.Start(); err != nil {
		t.Fatal(err)
	}
	serveDone := make(chan error, 1)
	go func() { serveDone <- serve.Wait() }()
	t.Cleanup(func() {
		serve.Process.Signal(syscall.SIGTERM)
		select {
		case <-serveDone:
		case <-time.After(10 * time.Second):
			serve.Process.Kill()
		}
		os.WriteFile(filepath.Join(art, "desktop-blocked-serve.log"), []byte(serveOut.String()), 0o644)
	})
	ctx := context.Background()
	waitServes(t, dataDir, addr, func() {
		t.Helper()
		select {
		case err := <-serveDone:
			t.Fatalf("serve exited (%v):\n%s", err, serveOut.String())
		default:
		}
	})

	// The app, launched on the same data dir, says why in a window.
	var appOut syncBuffer
	app := exec.Command(bin, append([]string{"app"}, common...)...)
	app.Env = env
	app.Stdout, app.Stderr = &appOut, &appOut
	if err := app.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{}) // closed when the app has exited; then exitErr is set
	var exitErr error
	go func() { exitErr = app.Wait(); close(exited) }()
	defer func() {
		select {
		case <-exited:
		default:
			app.Process.Kill()
			<-exited
		}
		os.WriteFile(filepath.Join(art, "desktop-blocked-app.log"), []byte(appOut.String()), 0o644)
	}()
	x, err := dialX11(display)
	if err != nil {
		t.Fatal(err)
	}
	defer x.close()
	const title = "memtray is already running"
	eventually(t, 60*time.Second, "a window titled "+title, func() (bool, string) {
		select {
		case <-exited:
			t.Fatalf("the app exited (%v) without a window saying why:\n%s", exitErr, appOut.String())
		default:
		}
		w, err := x.window(title)
		if err != nil {
			return false, err.Error()
		}
		v, err := x.viewable(w)
		return err == nil && v, fmt.Sprintf("viewable %v, %v", v, err)
	})
	out := appOut.String()
	for _, want := range []string{title, addr, "memtray serve"} {
		if !strings.Contains(out, want) {
			t.Errorf("stderr lacks %q:\n%s", want, out)
		}
	}
	shot := filepath.Join(art, "desktop-blocked.png")
	waitPainted(t, 30*time.Second, display, shot, func() {})
	t.Logf("screenshot: %s", shot)

	// serve kept its data dir and keeps answering.
	tok, _ := daemon.ReadToken(dataDir)
	if _, ok := httpapi.Probe(ctx, addr, tok, time.Second); !ok {
		t.Fatal("memtray serve stopped answering while the app showed why it could not start")
	}

	// Closing the window ends the launch: exit 1, nothing else started.
	w, err := x.window(title)
	if err != nil {
		t.Fatal(err)
	}
	if err := x.requestClose(w); err != nil {
		t.Fatal(err)
	}
	select {
	case <-exited:
		var ee *exec.ExitError
		if !errors.As(exitErr, &ee) || ee.ExitCode() != 1 {
			t.Errorf("the app exited with %v, want exit status 1:\n%s", exitErr, appOut.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatal("closing the window did not end the launch within 30s")
	}
	if _, ok := httpapi.Probe(ctx, addr, tok, time.Second); !ok {
		t.Fatal("memtray serve stopped answering after the app's window closed")
	}
	t.Logf("app while serve runs: a window says why; exit 1 on close; serve untouched")
}
