//go:build linux

package desktoptest

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"image/png"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/godbus/dbus/v5"

	"github.com/memtray/memtray/backend/daemon"
	"github.com/memtray/memtray/backend/httpapi"
)

// required fails the test when MEMTRAY_DESKTOP_TESTS=1 (the desktop test
// script) and skips it otherwise.
func required(t *testing.T, format string, args ...any) {
	t.Helper()
	if os.Getenv("MEMTRAY_DESKTOP_TESTS") == "1" {
		t.Fatalf(format, args...)
	}
	t.Skipf(format, args...)
}

func appBinary(t *testing.T) string {
	t.Helper()
	bin := os.Getenv("MEMTRAY_DESKTOP_BIN")
	if bin == "" {
		required(t, "MEMTRAY_DESKTOP_BIN is unset: build/test-desktop.sh builds the desktop app and runs this test")
	}
	abs, err := filepath.Abs(bin)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(abs); err != nil {
		t.Fatalf("MEMTRAY_DESKTOP_BIN: %v", err)
	}
	return abs
}

func artefactDir(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("MEMTRAY_ARTEFACTS")
	if dir == "" {
		dir = filepath.Join(os.TempDir(), "memtray-desktop-artefacts")
	}
	dir, _ = filepath.Abs(dir)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

func need(t *testing.T, tools ...string) {
	t.Helper()
	for _, tool := range tools {
		if _, err := exec.LookPath(tool); err != nil {
			required(t, "%s is not installed (build/test-desktop.sh installs it)", tool)
		}
	}
}

// startDBus starts a private session bus and returns its address.
func startDBus(t *testing.T) string {
	t.Helper()
	need(t, "dbus-daemon")
	cmd := exec.Command("dbus-daemon", "--session", "--nofork", "--nopidfile", "--print-address=1")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatalf("dbus-daemon: %v", err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("dbus-daemon printed no address: %v", err)
	}
	return strings.TrimSpace(line)
}

// startXvfb starts a virtual X server on a free display and returns it (":N").
func startXvfb(t *testing.T) string {
	t.Helper()
	need(t, "Xvfb")
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("Xvfb", "-displayfd", "3", "-screen", "0", "1280x800x24", "-nolisten", "tcp", "-noreset")
	cmd.ExtraFiles = []*os.File{w}
	if err := cmd.Start(); err != nil {
		t.Fatalf("Xvfb: %v", err)
	}
	w.Close()
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	line, err := bufio.NewReader(r).ReadString('\n')
	r.Close()
	if err != nil {
		t.Fatalf("Xvfb printed no display: %v", err)
	}
	return ":" + strings.TrimSpace(line)
}

// watcher is a minimal org.kde.StatusNotifierWatcher: it records the items
// that register.
type watcher struct {
	mu    sync.Mutex
	items []item
	added chan struct{}
}

type item struct{ sender, path string }

func (w *watcher) RegisterStatusNotifierItem(sender dbus.Sender, service string) *dbus.Error {
	path := service
	if !strings.HasPrefix(path, "/") { // a bus name: the item is at the usual path
		path = "/StatusNotifierItem"
	}
	w.mu.Lock()
	w.items = append(w.items, item{string(sender), path})
	w.mu.Unlock()
	select {
	case w.added <- struct{}{}:
	default:
	}
	return nil
}

func (w *watcher) RegisterStatusNotifierHost(string) *dbus.Error { return nil }

// startWatcher owns org.kde.StatusNotifierWatcher on the bus at addr.
func startWatcher(t *testing.T, addr string) (*dbus.Conn, *watcher) {
	t.Helper()
	conn, err := dbus.Connect(addr)
	if err != nil {
		t.Fatalf("connect to the test bus: %v", err)
	}
	t.Cleanup(func() { conn.Close() })
	w := &watcher{added: make(chan struct{}, 8)}
	if err := conn.Export(w, "/StatusNotifierWatcher", "org.kde.StatusNotifierWatcher"); err != nil {
		t.Fatal(err)
	}
	reply, err := conn.RequestName("org.kde.StatusNotifierWatcher", dbus.NameFlagDoNotQueue)
	if err != nil || reply != dbus.RequestNameReplyPrimaryOwner {
		t.Fatalf("own org.kde.StatusNotifierWatcher: %v (reply %d)", err, reply)
	}
	return conn, w
}

func (w *watcher) wait(t *testing.T, d time.Duration) item {
	t.Helper()
	deadline := time.After(d)
	for {
		w.mu.Lock()
		if len(w.items) > 0 {
			it := w.items[len(w.items)-1]
			w.mu.Unlock()
			return it
		}
		w.mu.Unlock()
		select {
		case <-w.added:
		case <-deadline:
			t.Fatalf("no tray item registered with the StatusNotifierWatcher within %s", d)
		}
	}
}

// menuItem is one entry of a dbusmenu layout.
type menuItem struct {
	ID       int32
	Props    map[string]dbus.Variant
	Children []menuItem
}

func (m menuItem) label() string {
	s, _ := m.Props["label"].Value().(string)
	return s
}

func (m menuItem) toggle() int32 {
	v, _ := m.Props["toggle-state"].Value().(int32)
	return v
}

func (m menuItem) find(label string) (menuItem, bool) {
	if m.label() == label {
		return m, true
	}
	for _, c := range m.Children {
		if f, ok := c.find(label); ok {
			return f, true
		}
	}
	return menuItem{}, false
}

func (m menuItem) findPrefix(prefix string) (menuItem, bool) {
	if strings.HasPrefix(m.label(), prefix) {
		return m, true
	}
	for _, c := range m.Children {
		if f, ok := c.findPrefix(prefix); ok {
			return f, true
		}
	}
	return menuItem{}, false
}

func (m menuItem) String() string {
	var b strings.Builder
	var walk func(m menuItem, depth int)
	walk = func(m menuItem, depth int) {
		fmt.Fprintf(&b, "%s%d %q", strings.Repeat("  ", depth), m.ID, m.label())
		if tt, ok := m.Props["toggle-type"]; ok {
			fmt.Fprintf(&b, " %v=%d", tt.Value(), m.toggle())
		}
		if e, ok := m.Props["enabled"]; ok {
			fmt.Fprintf(&b, " enabled=%v", e.Value())
		}
		b.WriteString("\n")
		for _, c := range m.Children {
			walk(c, depth+1)
		}
	}
	walk(m, 0)
	return b.String()
}

// parseLayout turns GetLayout's (ia{sv}av) into a menuItem.
func parseLayout(v any) (menuItem, error) {
	fields, ok := v.([]any)
	if !ok || len(fields) != 3 {
		return menuItem{}, fmt.Errorf("layout node is %T, not (ia{sv}av)", v)
	}
	var m menuItem
	m.ID, _ = fields[0].(int32)
	m.Props, _ = fields[1].(map[string]dbus.Variant)
	kids, _ := fields[2].([]dbus.Variant)
	for _, k := range kids {
		c, err := parseLayout(k.Value())
		if err != nil {
			return m, err
		}
		m.Children = append(m.Children, c)
	}
	return m, nil
}

// getLayout reads the whole menu of the item's dbusmenu object.
func getLayout(conn *dbus.Conn, dest string, path dbus.ObjectPath) (menuItem, error) {
	var rev uint32
	var root struct {
		ID       int32
		Props    map[string]dbus.Variant
		Children []dbus.Variant
	}
	err := conn.Object(dest, path).Call("com.canonical.dbusmenu.GetLayout", 0, int32(0), int32(-1), []string{}).Store(&rev, &root)
	if err != nil {
		return menuItem{}, err
	}
	m := menuItem{ID: root.ID, Props: root.Props}
	for _, k := range root.Children {
		c, err := parseLayout(k.Value())
		if err != nil {
			return m, err
		}
		m.Children = append(m.Children, c)
	}
	return m, nil
}

// appEnv is the environment of a memtray the tests launch: this process's,
// on the X display and the session bus at busAddr, with its home and XDG
// directories under tmp and no data dir or config from outside; extra
// ("KEY=value") come last.
func appEnv(tmp, display, busAddr string, extra ...string) []string {
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
	return append(env, extra...)
}

// waitServes waits until the daemon on dataDir answers on addr and returns
// a client of its API; alive, called on each try, fails the test when the
// process that should serve has exited.
func waitServes(t *testing.T, dataDir, addr string, alive func()) *httpapi.Client {
	t.Helper()
	var api *httpapi.Client
	eventually(t, 60*time.Second, "the daemon serves "+addr, func() (bool, string) {
		alive()
		tok, err := daemon.ReadToken(dataDir)
		if err != nil {
			return false, err.Error()
		}
		if _, ok := httpapi.Probe(context.Background(), addr, tok, time.Second); !ok {
			return false, "no answer"
		}
		api = httpapi.NewClient(addr, tok)
		return true, ""
	})
	return api
}

// waitPainted waits, up to d, until a screenshot of display (saved as shot)
// shows a painted page (8 colours or more); alive, called on each try,
// fails the test when the app has exited.
func waitPainted(t *testing.T, d time.Duration, display, shot string, alive func()) {
	t.Helper()
	eventually(t, d, "the window draws its page", func() (bool, string) {
		alive()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := screenshot(ctx, display, shot); err != nil {
			return false, err.Error()
		}
		n, err := colours(shot)
		return err == nil && n >= 8, fmt.Sprintf("%d colours, %v", n, err)
	})
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

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

func eventually(t *testing.T, d time.Duration, what string, f func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(d)
	last := ""
	for {
		ok, info := f()
		if ok {
			return
		}
		last = info
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %s (last: %s)", what, d, last)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// report is one line the page wrote to the self-test report.
type report struct {
	Stage  string `json:"stage"`
	Title  string `json:"title"`
	URL    string `json:"url"`
	Body   string `json:"body"`
	Status int    `json:"status"`
	Type   string `json:"type"`
	Frame  string `json:"frame"`
	Error  string `json:"error"`
	T      int64  `json:"t"`
}

func readReports(path string) []report {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	var out []report
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var r report
		if json.Unmarshal([]byte(line), &r) == nil {
			out = append(out, r)
		}
	}
	return out
}

func stage(rs []report, s string) (report, bool) {
	for _, r := range rs {
		if r.Stage == s {
			return r, true
		}
	}
	return report{}, false
}

// hasDataFrame says whether an SSE frame carries an event (not only a comment).
func hasDataFrame(rs []report) (report, bool) {
	for _, r := range rs {
		if r.Stage != "sse-frame" {
			continue
		}
		for _, l := range strings.Split(r.Frame, "\n") {
			if strings.HasPrefix(l, "data:") || strings.HasPrefix(l, "event:") {
				return r, true
			}
		}
	}
	return report{}, false
}

// screenshot saves the X display's root window as PNG.
func screenshot(ctx context.Context, display, out string) error {
	if _, err := exec.LookPath("import"); err == nil {
		b, err := exec.CommandContext(ctx, "import", "-display", display, "-window", "root", out).CombinedOutput()
		if err != nil {
			return fmt.Errorf("import: %v: %s", err, b)
		}
		return nil
	}
	if _, err := exec.LookPath("xwd"); err == nil {
		xwd := strings.TrimSuffix(out, ".png") + ".xwd"
		b, err := exec.CommandContext(ctx, "xwd", "-root", "-silent", "-display", display, "-out", xwd).CombinedOutput()
		if err != nil {
			return fmt.Errorf("xwd: %v: %s", err, b)
		}
		return fmt.Errorf("saved %s (xwd format; install imagemagick for PNG)", xwd)
	}
	return fmt.Errorf("neither import (imagemagick) nor xwd (x11-apps) is installed")
}
