//go:build linux

package desktoptest

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/godbus/dbus/v5"

	"github.com/memtray/memtray/backend/daemon"
	"github.com/memtray/memtray/backend/httpapi"
)

// TestDesktopApp starts the built app under Xvfb on a private D-Bus session
// bus, with a temporary data dir, and checks the window and the tray:
//   - the page loads through Wails' AssetServer and reports back (title,
//     /api/health, the /api/events stream and an event on it);
//   - a screenshot of the display is saved as an artefact;
//   - the tray registers with the StatusNotifierWatcher, its menu reads
//     back with GetLayout, a click on "Capture" pauses capture (checked
//     through the API), and the API's switch shows in the tray;
//   - closing the window (WM_DELETE_WINDOW) hides it and the app keeps
//     running; "Open memtray" in the tray shows it again;
//   - a second launch on the same data dir hands over to the first (its
//     window shows) and exits; without a session bus too (through the
//     running daemon's loopback API);
//   - "Quit" stops the app and the daemon cleanly.
func TestDesktopApp(t *testing.T) {
	bin := appBinary(t)
	need(t, "Xvfb", "dbus-daemon")
	art := artefactDir(t)
	busAddr := startDBus(t)
	display := startXvfb(t)
	bus, w := startWatcher(t, busAddr)

	tmp := t.TempDir()
	dataDir := filepath.Join(tmp, "data")
	reportPath := filepath.Join(tmp, "selftest.jsonl")
	addr := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	env := appEnv(tmp, display, busAddr, "MEMTRAY_SELFTEST_REPORT="+reportPath)
	args := []string{"app", "--data-dir", dataDir, "--listen", addr,
		"--config", filepath.Join(tmp, "no-config.json"), "--embedder", "builtin"}

	logFile, err := os.Create(filepath.Join(art, "desktop-app.log"))
	if err != nil {
		t.Fatal(err)
	}
	defer logFile.Close()
	app := exec.Command(bin, args...)
	app.Env = env
	app.Stdout, app.Stderr = logFile, logFile
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
			app.Process.Signal(syscall.SIGTERM)
			select {
			case <-exited:
			case <-time.After(10 * time.Second):
				app.Process.Kill()
				<-exited
			}
		}
	}()
	alive := func() {
		t.Helper()
		select {
		case <-exited:
			log, _ := os.ReadFile(logFile.Name())
			t.Fatalf("the app exited early (%v):\n%s", exitErr, log)
		default:
		}
	}

	// The daemon listens for agents on the configured address.
	api := waitServes(t, dataDir, addr, alive)
	ctx := context.Background()

	// The window: the page loads and reports back through the AssetServer.
	eventually(t, 60*time.Second, "the page reports it loaded, /api/health and /api/events", func() (bool, string) {
		alive()
		rs := readReports(reportPath)
		_, h := stage(rs, "health")
		_, e := stage(rs, "sse-open")
		_, ee := stage(rs, "sse-error")
		return h && (e || ee), fmt.Sprintf("%+v", rs)
	})
	rs := readReports(reportPath)
	loaded, _ := stage(rs, "loaded")
	t.Logf("page: title %q at %s: %.120q", loaded.Title, loaded.URL, loaded.Body)
	if !strings.Contains(strings.ToLower(loaded.Title), "memtray") {
		t.Errorf("page title %q does not say memtray", loaded.Title)
	}
	health, _ := stage(rs, "health")
	if health.Status != 200 || !strings.Contains(health.Body, "version") {
		t.Errorf("/api/health through the AssetServer: %d %s", health.Status, health.Body)
	}
	open, _ := stage(rs, "sse-open")
	switch {
	case open.Status == 200:
		if !strings.HasPrefix(open.Type, "text/event-stream") {
			t.Errorf("/api/events answered %q, not text/event-stream", open.Type)
		}
		// Make something happen: a memory added and capture switched.
		eventually(t, 30*time.Second, "an event arrives on /api/events in the page", func() (bool, string) {
			if _, ok := hasDataFrame(readReports(reportPath)); ok {
				return true, ""
			}
			api.Add(ctx, httpapi.AddRequest{Text: "The desktop self-test adds this memory to see an event arrive in the window at " + time.Now().Format(time.RFC3339Nano)})
			return false, fmt.Sprintf("%+v", readReports(reportPath))
		})
		f, _ := hasDataFrame(readReports(reportPath))
		t.Logf("SSE event in the window: %.200q", f.Frame)
	case open.Status == 404:
		t.Logf("/api/events is not served yet (404): checked /api/health only")
	default:
		t.Errorf("/api/events through the AssetServer: %+v %+v", open, rs)
	}

	// The window title (the X window's name) says memtray.
	if _, err := exec.LookPath("xwininfo"); err == nil {
		out, _ := exec.Command("xwininfo", "-display", display, "-root", "-tree").CombinedOutput()
		if !strings.Contains(string(out), `"memtray"`) {
			t.Errorf("no X window named memtray:\n%s", out)
		}
	}

	// Screenshot, an artefact of the run.
	// Screenshot, an artefact of the run, once the page has painted (a
	// loaded machine takes its time: no fixed wait).
	shot := filepath.Join(art, "desktop-window.png")
	waitPainted(t, 60*time.Second, display, shot, alive)
	t.Logf("screenshot: %s", shot)

	// The tray: registered, menu readable, Capture click pauses capture.
	it := w.wait(t, 30*time.Second)
	t.Logf("tray item registered: %s %s", it.sender, it.path)
	sni := bus.Object(it.sender, dbus.ObjectPath(it.path))
	menuPathV, err := sni.GetProperty("org.kde.StatusNotifierItem.Menu")
	if err != nil {
		t.Fatalf("read the item's Menu property: %v", err)
	}
	menuPath := menuPathV.Value().(dbus.ObjectPath)
	if title, err := sni.GetProperty("org.kde.StatusNotifierItem.Title"); err != nil || title.Value() != "memtray" {
		t.Errorf("item Title = %v (%v), want memtray", title, err)
	}
	if px, err := sni.GetProperty("org.kde.StatusNotifierItem.IconPixmap"); err != nil || len(fmt.Sprint(px.Value())) < 100 {
		t.Errorf("item has no icon pixmap (%v)", err)
	}
	layout := func() menuItem {
		t.Helper()
		m, err := getLayout(bus, it.sender, menuPath)
		if err != nil {
			t.Fatalf("GetLayout: %v", err)
		}
		return m
	}
	m := layout()
	t.Logf("tray menu:\n%s", m)
	for _, l := range []string{"Capture", "Pause for 1 hour", "Open memtray", "Quit"} {
		if _, ok := m.find(l); !ok {
			t.Errorf("tray menu has no %q", l)
		}
	}
	if _, ok := m.findPrefix("Today: "); !ok {
		t.Errorf("tray menu has no today's counts")
	}
	st, err := api.Capture(ctx)
	if err != nil || !st.Enabled {
		t.Fatalf("capture should start enabled: %+v %v", st, err)
	}
	eventually(t, 10*time.Second, "the Capture checkbox shows capture on", func() (bool, string) {
		c, _ := layout().find("Capture")
		return c.toggle() == 1, c.String()
	})
	capture, _ := layout().find("Capture")
	call := bus.Object(it.sender, menuPath).Call("com.canonical.dbusmenu.Event", 0, capture.ID, "clicked", dbus.MakeVariant(""), uint32(time.Now().Unix()))
	if call.Err != nil {
		t.Fatalf("Event clicked: %v", call.Err)
	}
	eventually(t, 10*time.Second, "a click on Capture pauses capture (API)", func() (bool, string) {
		st, err := api.Capture(ctx)
		return err == nil && !st.Enabled, fmt.Sprintf("%+v %v", st, err)
	})
	eventually(t, 10*time.Second, "the tray shows capture paused", func() (bool, string) {
		c, _ := layout().find("Capture")
		tip, _ := sni.GetProperty("org.kde.StatusNotifierItem.ToolTip")
		return c.toggle() == 0 && strings.Contains(fmt.Sprint(tip.Value()), "paused"), fmt.Sprint(c, tip)
	})
	t.Logf("tray: Capture clicked, capture paused")
	// The window's switch (the API) and the tray are the same state.
	on := true
	if _, err := api.SetCapture(ctx, httpapi.CaptureUpdate{Enabled: &on}); err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, "capture resumed through the API shows in the tray", func() (bool, string) {
		c, _ := layout().find("Capture")
		return c.toggle() == 1, c.String()
	})
	t.Logf("tray: capture resumed through the API, checkbox follows")

	// Closing the window (as a window manager asks: WM_DELETE_WINDOW)
	// hides it and leaves the app running; "Open memtray" shows it again.
	x, err := dialX11(display)
	if err != nil {
		t.Fatal(err)
	}
	defer x.close()
	win, err := x.window("memtray")
	if err != nil {
		t.Fatal(err)
	}
	shown := func(want bool, what string) {
		t.Helper()
		eventually(t, 15*time.Second, what, func() (bool, string) {
			alive()
			v, err := x.viewable(win)
			return err == nil && v == want, fmt.Sprintf("viewable %v, %v", v, err)
		})
	}
	shown(true, "the window is shown")
	closeWindow := func() {
		t.Helper()
		if err := x.requestClose(win); err != nil {
			t.Fatalf("WM_DELETE_WINDOW: %v", err)
		}
		shown(false, "closing the window hides it")
		time.Sleep(500 * time.Millisecond)
		alive()
		if _, ok := httpapi.Probe(ctx, addr, api.Token(), time.Second); !ok {
			t.Fatal("the daemon stopped answering when the window closed")
		}
	}
	closeWindow()
	openItem, _ := layout().find("Open memtray")
	if err := bus.Object(it.sender, menuPath).Call("com.canonical.dbusmenu.Event", 0, openItem.ID, "clicked", dbus.MakeVariant(""), uint32(0)).Err; err != nil {
		t.Fatalf("Event clicked on Open memtray: %v", err)
	}
	shown(true, "Open memtray shows the window again")
	t.Logf("window: close hides it (app and daemon keep running), Open memtray shows it")
	closeWindow()

	// A second launch on the same data dir hands over (shows the hidden
	// window) and exits.
	second := exec.Command(bin, args...)
	second.Env = env
	out, err := runWithin(second, 30*time.Second)
	if err != nil || !strings.Contains(out, "already running") {
		t.Errorf("second launch: %v\n%s", err, out)
	} else {
		t.Logf("second launch: %s", strings.TrimSpace(out))
	}
	shown(true, "a second launch shows the running app's window")
	alive()

	// Without a session bus the single-instance signal cannot reach the
	// running app (outside Linux there is none): a launch hands over
	// through the running daemon's loopback API instead of failing on the
	// data dir's lock.
	closeWindow()
	third := exec.Command(bin, args...)
	third.Env = append(slices.Clone(env), "DBUS_SESSION_BUS_ADDRESS=unix:path="+filepath.Join(tmp, "no-bus"))
	out, err = runWithin(third, 30*time.Second)
	if err != nil || !strings.Contains(out, "already running") {
		t.Errorf("launch without a session bus: %v\n%s", err, out)
	} else {
		t.Logf("launch without a session bus: %s", strings.TrimSpace(out))
	}
	shown(true, "a launch without a session bus shows the running app's window (loopback API)")
	alive()

	// Quit from the tray stops everything cleanly.
	quit, _ := layout().find("Quit")
	if err := bus.Object(it.sender, menuPath).Call("com.canonical.dbusmenu.Event", 0, quit.ID, "clicked", dbus.MakeVariant(""), uint32(0)).Err; err != nil {
		t.Fatalf("Event clicked on Quit: %v", err)
	}
	select {
	case <-exited:
		if exitErr != nil {
			log, _ := os.ReadFile(logFile.Name())
			t.Fatalf("the app quit with %v:\n%s", exitErr, log)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Quit did not stop the app within 30s")
	}
	if _, err := os.Stat(filepath.Join(dataDir, daemon.RuntimeFile)); !os.IsNotExist(err) {
		t.Errorf("the daemon did not shut down cleanly: %s still there (%v)", daemon.RuntimeFile, err)
	}
	if _, ok := httpapi.Probe(ctx, addr, "", time.Second); ok {
		t.Errorf("%s still answers after Quit", addr)
	}
	t.Logf("quit from the tray: exit 0, daemon stopped")

	// SIGTERM (a logout, a shutdown, systemd) stops it cleanly too, once
	// the page has run its scripts: exit 0, the store closed, and none of
	// the Go runtime's "signal handler without SA_ONSTACK" crashes that
	// WebKit's handlers can cause.
	os.Remove(reportPath)
	termLog, err := os.Create(filepath.Join(art, "desktop-app-sigterm.log"))
	if err != nil {
		t.Fatal(err)
	}
	defer termLog.Close()
	again := exec.Command(bin, args...)
	again.Env = env
	again.Stdout, again.Stderr = termLog, termLog
	if err := again.Start(); err != nil {
		t.Fatal(err)
	}
	againDone := make(chan error, 1)
	go func() { againDone <- again.Wait() }()
	eventually(t, 60*time.Second, "the relaunched page reports it loaded", func() (bool, string) {
		select {
		case err := <-againDone:
			log, _ := os.ReadFile(termLog.Name())
			t.Fatalf("the relaunched app exited early (%v):\n%s", err, log)
		default:
		}
		_, ok := stage(readReports(reportPath), "health")
		return ok, fmt.Sprintf("%+v", readReports(reportPath))
	})
	time.Sleep(2 * time.Second) // let the page's scripts run (WebKit installs handlers lazily)
	again.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-againDone:
		log, _ := os.ReadFile(termLog.Name())
		if err != nil || bytes.Contains(log, []byte("fatal error")) {
			t.Fatalf("SIGTERM: exit %v:\n%s", err, log)
		}
	case <-time.After(30 * time.Second):
		again.Process.Kill()
		t.Fatal("SIGTERM did not stop the app within 30s")
	}
	if _, err := os.Stat(filepath.Join(dataDir, daemon.RuntimeFile)); !os.IsNotExist(err) {
		t.Errorf("SIGTERM: the daemon did not shut down cleanly: %s still there (%v)", daemon.RuntimeFile, err)
	}
	t.Logf("SIGTERM: exit 0, daemon stopped")
}

// runWithin runs cmd and returns its combined output, killing it after d.
func runWithin(cmd *exec.Cmd, d time.Duration) (string, error) {
	var buf bytes.Buffer
	cmd.Stdout, cmd.Stderr = &buf, &buf
	if err := cmd.Start(); err != nil {
		return "", err
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		return buf.String(), err
	case <-time.After(d):
		cmd.Process.Kill()
		<-done
		return buf.String(), fmt.Errorf("still running after %s", d)
	}
}
