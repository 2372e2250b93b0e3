//go:build !darwin || cgo

// Package tray is memtray's tray icon and menu (fyne.io/systray: a D-Bus
// StatusNotifierItem on Linux, with no GUI loop of its own, so it runs
// beside the Wails window). Its state is the daemon's: the Capture checkbox
// and the icon follow the daemon's capture switch (polled), so the window's
// switch and the tray always agree.
package tray

import (
	"context"
	"fmt"
	"log/slog"
	"runtime"
	"sync"
	"time"

	"fyne.io/systray"

	"github.com/memtray/memtray/assets"
	"github.com/memtray/memtray/backend/config"
	"github.com/memtray/memtray/backend/httpapi"
	"github.com/memtray/memtray/backend/memory"
)

// Backend is the part of the daemon the tray uses (the in-process
// *daemon.Daemon, or an *httpapi.Client).
type Backend interface {
	Capture(ctx context.Context) (httpapi.CaptureState, error)
	SetCapture(ctx context.Context, u httpapi.CaptureUpdate) (httpapi.CaptureState, error)
	Decisions(ctx context.Context, limit int) ([]httpapi.DecisionEntry, error)
}

// Options configures Start.
type Options struct {
	Backend Backend
	// Open shows the window ("Open memtray", or a click on the icon).
	Open func()
	// Quit stops the app ("Quit").
	Quit func()
	// Health, if set, reports a failed daemon (error icon).
	Health func() error
	// Poll is how often the tray reads the daemon's state (default 2s).
	Poll time.Duration
	// PauseFor is how long "Pause for 1 hour" pauses (default 1h).
	PauseFor time.Duration
	Logger   *slog.Logger
	Now      func() time.Time
}

// Labels of the menu items (tests find the items by them).
const (
	LabelCapture = "Capture"
	LabelPause   = "Pause for 1 hour"
	LabelOpen    = "Open memtray"
	LabelQuit    = "Quit"
)

// State is what the icon shows.
type State int

const (
	Capturing State = iota
	Paused
	Failed
)

func (s State) String() string {
	return [...]string{"capturing", "paused", "error"}[s]
}

// Tray is a running tray icon.
type Tray struct {
	o      Options
	cancel context.CancelFunc
	done   chan struct{}
	end    func()
	once   sync.Once

	capture, pause, open, today, quit *systray.MenuItem

	// What the menu shows, so unchanged state sends nothing over D-Bus.
	showMu                      sync.Mutex
	checkKnown, checked         bool
	pauseTitle, todayTitle, tip string

	mu      sync.Mutex
	state   State
	shown   State
	iconSet bool
}

// Start shows the tray icon and starts following the daemon's state. Call
// it once per process (systray is a singleton); Stop removes the icon.
func Start(o Options) *Tray {
	if o.Poll <= 0 {
		o.Poll = 2 * time.Second
	}
	if o.PauseFor <= 0 {
		o.PauseFor = time.Hour
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	ctx, cancel := context.WithCancel(context.Background())
	t := &Tray{o: o, cancel: cancel, done: make(chan struct{}), shown: -1}
	ready := make(chan struct{})
	start, end := systray.RunWithExternalLoop(func() {
		t.build()
		close(ready)
	}, nil)
	t.end = end
	start()
	go func() {
		defer close(t.done)
		select {
		case <-ready:
		case <-ctx.Done():
			return
		}
		t.run(ctx)
	}()
	return t
}

// Stop removes the icon and stops following the daemon.
func (t *Tray) Stop() {
	t.once.Do(func() {
		t.cancel()
		<-t.done
		func() {
			// systray's end closes the D-Bus connection, which is nil when
			// no session bus was found: nothing to remove then.
			defer func() {
				if r := recover(); r != nil {
					t.o.Logger.Debug("tray: no D-Bus connection to close", "panic", r)
				}
			}()
			t.end()
		}()
	})
}

func (t *Tray) build() {
	if runtime.GOOS != "darwin" { // on macOS the title is text beside the icon
		systray.SetTitle("memtray")
	}
	systray.SetTooltip("memtray")
	t.setIcon(Capturing)
	t.capture = systray.AddMenuItemCheckbox(LabelCapture, "Capture what your agents learn", false)
	t.pause = systray.AddMenuItem(LabelPause, "Stop capturing for an hour, then resume")
	systray.AddSeparator()
	t.open = systray.AddMenuItem(LabelOpen, "Show the memtray window")
	t.pauseTitle, t.todayTitle = LabelPause, todayLabel(0, 0)
	t.today = systray.AddMenuItem(t.todayTitle, "Exchanges decided today")
	t.today.Disable()
	systray.AddSeparator()
	t.quit = systray.AddMenuItem(LabelQuit, "Stop memtray (the proxy, MCP and the API stop too)")
	systray.SetOnTapped(func() { t.call(t.o.Open) })
}

func todayLabel(stored, rejected int) string {
	return fmt.Sprintf("Today: %d stored · %d rejected", stored, rejected)
}

func (t *Tray) call(f func()) {
	if f != nil {
		f()
	}
}

// run handles clicks and polls the daemon until ctx ends. systray drops a
// click nobody is waiting for, so each item has its own receiver.
func (t *Tray) run(ctx context.Context) {
	clicks := make(chan *systray.MenuItem, 16)
	var wg sync.WaitGroup
	for _, it := range []*systray.MenuItem{t.capture, t.pause, t.open, t.quit} {
		wg.Go(func() {
			for {
				select {
				case <-it.ClickedCh:
					select {
					case clicks <- it:
					case <-ctx.Done():
						return
					}
				case <-ctx.Done():
					return
				}
			}
		})
	}
	defer wg.Wait()
	t.refresh(ctx)
	tick := time.NewTicker(t.o.Poll)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			t.refresh(ctx)
		case it := <-clicks:
			switch it {
			case t.capture:
				// The checkbox shows the daemon's state; a click asks for the other one.
				t.setCapture(ctx, !it.Checked(), false)
			case t.pause:
				t.setCapture(ctx, false, true)
			case t.open:
				t.call(t.o.Open)
			case t.quit:
				t.call(t.o.Quit)
			}
		}
	}
}

// setCapture switches capture; a timed pause is the daemon's, which ends
// it by itself (also when the app quits meanwhile and starts again).
func (t *Tray) setCapture(ctx context.Context, on, timed bool) {
	if ctx.Err() != nil {
		return
	}
	u := httpapi.CaptureUpdate{Enabled: &on}
	if timed {
		d := config.Duration(t.o.PauseFor)
		u = httpapi.CaptureUpdate{PauseFor: &d}
	}
	st, err := t.o.Backend.SetCapture(ctx, u)
	if err != nil {
		t.o.Logger.Warn("tray: could not switch capture", "on", on, "err", err)
		t.refresh(ctx)
		return
	}
	t.o.Logger.Info("tray: capture switched", "on", st.Enabled, "timed", timed)
	t.show(st, nil)
}

// refresh reads the daemon's capture state and today's decisions.
func (t *Tray) refresh(ctx context.Context) {
	st, err := t.o.Backend.Capture(ctx)
	if err == nil && t.o.Health != nil {
		err = t.o.Health()
	}
	if ctx.Err() != nil {
		return
	}
	t.show(st, err)
	if decs, err := t.o.Backend.Decisions(ctx, 100000); err == nil {
		stored, rejected := countToday(decs, t.o.Now())
		t.showMu.Lock()
		setTitle(t.today, &t.todayTitle, todayLabel(stored, rejected))
		t.showMu.Unlock()
	}
}

// countToday counts today's (local time) decisions: kept (stored, updated,
// merged, duplicate) and rejected.
func countToday(decs []httpapi.DecisionEntry, now time.Time) (stored, rejected int) {
	y, m, d := now.Date()
	midnight := time.Date(y, m, d, 0, 0, 0, 0, now.Location())
	for _, e := range decs {
		if e.At.Before(midnight) {
			continue
		}
		if e.Verdict == memory.VerdictRejected {
			rejected++
		} else {
			stored++
		}
	}
	return stored, rejected
}

func (t *Tray) show(st httpapi.CaptureState, err error) {
	t.showMu.Lock()
	defer t.showMu.Unlock()
	var until time.Time
	if st.PausedUntil != nil {
		until = st.PausedUntil.Local()
	}
	state, tip := Capturing, "memtray: capturing"
	switch {
	case err != nil:
		state, tip = Failed, "memtray: "+err.Error()
	case !st.Enabled:
		state, tip = Paused, "memtray: capture paused"
		if !until.IsZero() {
			tip += " until " + until.Format("15:04")
		}
	}
	if err == nil && (!t.checkKnown || t.checked != st.Enabled) {
		t.checkKnown, t.checked = true, st.Enabled
		if st.Enabled {
			t.capture.Check()
		} else {
			t.capture.Uncheck()
		}
	}
	pause := LabelPause
	if !until.IsZero() && !st.Enabled {
		pause = "Paused until " + until.Format("15:04")
	}
	setTitle(t.pause, &t.pauseTitle, pause)
	t.mu.Lock()
	t.state = state
	t.mu.Unlock()
	t.setIcon(state)
	if tip != t.tip {
		t.tip = tip
		systray.SetTooltip(tip)
	}
}

// setTitle changes an item's title when it differs from *last (each change
// is a D-Bus signal to the panel).
func setTitle(it *systray.MenuItem, last *string, title string) {
	if *last != title {
		*last = title
		it.SetTitle(title)
	}
}

// State is what the icon shows now.
func (t *Tray) State() State {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.state
}

func (t *Tray) setIcon(s State) {
	t.mu.Lock()
	same := t.shown == s
	t.shown = s
	t.mu.Unlock()
	if same {
		return
	}
	icons := map[State][]byte{Capturing: assets.TrayCapturing, Paused: assets.TrayPaused, Failed: assets.TrayError}
	if runtime.GOOS == "windows" {
		icons = map[State][]byte{Capturing: assets.TrayCapturingICO, Paused: assets.TrayPausedICO, Failed: assets.TrayErrorICO}
	}
	systray.SetIcon(icons[s])
}
