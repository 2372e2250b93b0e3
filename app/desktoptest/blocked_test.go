//go:build linux

package desktoptest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/memtray/memtray/backend/daemon"
	"github.com/memtray/memtray/backend/httpapi"
)

// syncBuffer is an output buffer the test reads while the process writes.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

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
	env := append(os.Environ(),
		"DISPLAY="+display,
		"WAYLAND_DISPLAY=",
		"DBUS_SESSION_BUS_ADDRESS="+busAddr,
		"HOME="+tmp,
		"XDG_CONFIG_HOME="+filepath.Join(tmp, "config"),
		"XDG_DATA_HOME="+filepath.Join(tmp, "share"),
		"XDG_CACHE_HOME="+filepath.Join(tmp, "cache"),
		"XDG_RUNTIME_DIR="+tmp,
		"MEMTRAY_DATA_DIR=", "MEMTRAY_CONFIG=",
	)
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
	eventually(t, 60*time.Second, "memtray serve answers on "+addr, func() (bool, string) {
		select {
		case err := <-serveDone:
			t.Fatalf("serve exited (%v):\n%s", err, serveOut.String())
		default:
		}
		tok, err := daemon.ReadToken(dataDir)
		if err != nil {
			return false, err.Error()
		}
		_, ok := httpapi.Probe(ctx, addr, tok, time.Second)
		return ok, "no answer"
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
	eventually(t, 30*time.Second, "the window draws its page", func() (bool, string) {
		sctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		if err := screenshot(sctx, display, shot); err != nil {
			return false, err.Error()
		}
		n, err := colours(shot)
		return err == nil && n >= 8, fmt.Sprintf("%d colours, %v", n, err)
	})
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

// colours counts the distinct colours of a PNG, sampled every 4 pixels.
func colours(path string) (int, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		return 0, err
	}
	seen := map[[3]uint32]bool{}
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y += 4 {
		for x := b.Min.X; x < b.Max.X; x += 4 {
			r, g, bl, _ := img.At(x, y).RGBA()
			seen[[3]uint32{r >> 8, g >> 8, bl >> 8}] = true
		}
	}
	return len(seen), nil
}
