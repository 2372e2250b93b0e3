//go:build linux && !race

// Not under -race: fyne.io/systray v1.12.2 answers the first GetLayout and
// bumps the menu version from a goroutine it starts there, without a lock
// (systray_menu_unix.go, GetLayout and refresh): the race detector reports
// it in any process that serves the menu. build/test-desktop.sh runs this
// test without -race.

package tray_test

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/godbus/dbus/v5"

	"github.com/memtray/memtray/app/tray"
	"github.com/memtray/memtray/backend/config"
	"github.com/memtray/memtray/backend/daemon"
	"github.com/memtray/memtray/backend/httpapi"
)

type watcher struct {
	mu     sync.Mutex
	sender string
}

func (w *watcher) RegisterStatusNotifierItem(sender dbus.Sender, _ string) *dbus.Error {
	w.mu.Lock()
	w.sender = string(sender)
	w.mu.Unlock()
	return nil
}

// TestTrayOnDBus runs the tray against a real daemon on a private session
// bus with a minimal StatusNotifierWatcher: the item registers, its menu
// reads back with GetLayout, a click on Capture pauses capture (seen through
// the daemon's API) and a switch through the API shows in the menu.
func TestTrayOnDBus(t *testing.T) {
	if _, err := exec.LookPath("dbus-daemon"); err != nil {
		if os.Getenv("MEMTRAY_DESKTOP_TESTS") == "1" {
			t.Fatal("dbus-daemon is not installed")
		}
		t.Skip("dbus-daemon is not installed")
	}
	bus := exec.Command("dbus-daemon", "--session", "--nofork", "--nopidfile", "--print-address=1")
	out, _ := bus.StdoutPipe()
	if err := bus.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { bus.Process.Kill(); bus.Wait() })
	addr, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	addr = strings.TrimSpace(addr)
	t.Setenv("DBUS_SESSION_BUS_ADDRESS", addr)

	conn, err := dbus.Connect(addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	w := &watcher{}
	conn.Export(w, "/StatusNotifierWatcher", "org.kde.StatusNotifierWatcher")
	if _, err := conn.RequestName("org.kde.StatusNotifierWatcher", dbus.NameFlagDoNotQueue); err != nil {
		t.Fatal(err)
	}

	cfg := config.Default()
	cfg.DataDir, cfg.Listen, cfg.Embedder.Provider = t.TempDir(), "127.0.0.1:0", "builtin"
	ctx := context.Background()
	d, err := daemon.Open(ctx, daemon.Options{Config: cfg})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	serveCtx, stop := context.WithCancel(ctx)
	ready, served := make(chan string, 1), make(chan error, 1)
	go func() { served <- d.Serve(serveCtx, func(a string) { ready <- a }) }()
	api := httpapi.NewClient(<-ready, d.Token())
	defer func() { stop(); <-served }()

	opened := make(chan struct{}, 1)
	tr := tray.Start(tray.Options{Backend: d.Tray(), Poll: 100 * time.Millisecond,
		Open: func() { opened <- struct{}{} }})
	defer tr.Stop()

	var sender string
	wait(t, "the item registers", func() bool {
		w.mu.Lock()
		defer w.mu.Unlock()
		sender = w.sender
		return sender != ""
	})
	sni := conn.Object(sender, "/StatusNotifierItem")
	mp, err := sni.GetProperty("org.kde.StatusNotifierItem.Menu")
	if err != nil {
		t.Fatal(err)
	}
	menu := conn.Object(sender, mp.Value().(dbus.ObjectPath))
	items := func() map[string]map[string]dbus.Variant {
		var rev uint32
		var root struct {
			ID       int32
			Props    map[string]dbus.Variant
			Children []dbus.Variant
		}
		if err := menu.Call("com.canonical.dbusmenu.GetLayout", 0, int32(0), int32(-1), []string{}).Store(&rev, &root); err != nil {
			t.Fatalf("GetLayout: %v", err)
		}
		byLabel := map[string]map[string]dbus.Variant{}
		for _, c := range root.Children {
			f := c.Value().([]any)
			props := f[1].(map[string]dbus.Variant)
			props["id"] = dbus.MakeVariant(f[0].(int32))
			label, _ := props["label"].Value().(string)
			if strings.HasPrefix(label, "Today: ") {
				label = "Today"
			}
			byLabel[label] = props
		}
		return byLabel
	}
	toggle := func() int32 { v, _ := items()[tray.LabelCapture]["toggle-state"].Value().(int32); return v }
	click := func(label string) {
		id := items()[label]["id"].Value().(int32)
		if err := menu.Call("com.canonical.dbusmenu.Event", 0, id, "clicked", dbus.MakeVariant(""), uint32(0)).Err; err != nil {
			t.Fatal(err)
		}
	}
	for _, l := range []string{tray.LabelCapture, tray.LabelPause, tray.LabelOpen, "Today", tray.LabelQuit} {
		if _, ok := items()[l]; !ok {
			t.Errorf("no %q in the menu: %v", l, items())
		}
	}
	wait(t, "the checkbox shows capture on", func() bool { return toggle() == 1 })

	click(tray.LabelCapture)
	wait(t, "a click on Capture pauses capture", func() bool {
		st, err := api.Capture(ctx)
		return err == nil && !st.Enabled
	})
	wait(t, "the icon and checkbox show paused", func() bool { return toggle() == 0 && tr.State() == tray.Paused })

	on := true
	if _, err := api.SetCapture(ctx, httpapi.CaptureUpdate{Enabled: &on}); err != nil {
		t.Fatal(err)
	}
	wait(t, "the API's switch shows in the tray", func() bool { return toggle() == 1 && tr.State() == tray.Capturing })

	click(tray.LabelPause)
	wait(t, "Pause for 1 hour pauses capture, in the daemon, for an hour", func() bool {
		st, _ := api.Capture(ctx)
		_, relabelled := items()[tray.LabelPause]
		return !st.Enabled && !relabelled && st.PausedUntil != nil &&
			time.Until(*st.PausedUntil) > 59*time.Minute && time.Until(*st.PausedUntil) <= time.Hour+time.Second
	})

	click(tray.LabelOpen)
	select {
	case <-opened:
	case <-time.After(5 * time.Second):
		t.Error("Open memtray did not call Open")
	}
}

func wait(t *testing.T, what string, f func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !f() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within 10s", what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
