package setup

import (
	"context"
	"path/filepath"
	"runtime"
	"testing"
)

// TestAutostartHeadless: starting the tray app at login applies to the
// desktop app's daemon only; a headless `memtray serve` says so, so the UI
// does not offer it (issue 21 item 9), and still reports an entry that is
// there, so it can be turned off.
func TestAutostartHeadless(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("writes the XDG autostart entry")
	}
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, ".config"))
	t.Setenv("APPIMAGE", "")
	ctx := context.Background()
	for _, tc := range []struct {
		name         string
		desktop      bool
		wantHeadless bool
	}{
		{"memtray serve", false, true},
		{"the desktop app", true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := New(Options{DataDir: t.TempDir(), Desktop: tc.desktop})
			st, err := s.Autostart(ctx)
			if err != nil || st.Headless != tc.wantHeadless || !st.Supported {
				t.Fatalf("Autostart = %+v, %v; want headless %v", st, err, tc.wantHeadless)
			}
			if st, err = s.SetAutostart(ctx, AutostartRequest{Enabled: true}); err != nil || !st.Enabled || st.Headless != tc.wantHeadless {
				t.Fatalf("SetAutostart on = %+v, %v", st, err)
			}
			if st, err = s.SetAutostart(ctx, AutostartRequest{Enabled: false}); err != nil || st.Enabled || st.Headless != tc.wantHeadless {
				t.Fatalf("SetAutostart off = %+v, %v", st, err)
			}
		})
	}
}
