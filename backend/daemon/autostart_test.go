package daemon

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"testing"

	"github.com/memtray/memtray/backend/httpapi"
)

// TestAutostartAPI switches starting at login through the API: the entry
// runs this program in the tray with the daemon's data dir and config.
func TestAutostartAPI(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("checks the XDG autostart entry")
	}
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, ".config"))
	t.Setenv("APPIMAGE", "")
	ctx := context.Background()
	cfg := testConfig(t)
	cfg.File = filepath.Join(t.TempDir(), "config.json")
	d, addr := serve(t, cfg)
	c := httpapi.NewClient(addr, d.Token())
	st, err := c.Autostart(ctx)
	if err != nil || !st.Supported || st.Enabled {
		t.Fatalf("GET = %+v, %v", st, err)
	}
	st, err = c.SetAutostart(ctx, httpapi.AutostartRequest{Enabled: true})
	exe, _ := os.Executable()
	exe, _ = filepath.EvalSymlinks(exe)
	want := []string{exe, "app", "--hidden", "--data-dir", cfg.DataDir, "--config", cfg.File}
	if err != nil || !st.Enabled || !slices.Equal(st.Command, want) || st.Path != filepath.Join(home, ".config", "autostart", "memtray.desktop") {
		t.Fatalf("PUT on = %+v, %v; want command %q", st, err, want)
	}
	if st, err = c.SetAutostart(ctx, httpapi.AutostartRequest{Enabled: false}); err != nil || st.Enabled {
		t.Fatalf("PUT off = %+v, %v", st, err)
	}
	// Someone else's file of that name: 409, and it stays.
	os.WriteFile(st.Path, []byte("[Desktop Entry]\nName=mine\n"), 0o644)
	if _, err := c.SetAutostart(ctx, httpapi.AutostartRequest{Enabled: true}); err == nil {
		t.Fatal("overwrote a foreign entry")
	}
	if data, _ := os.ReadFile(st.Path); string(data) != "[Desktop Entry]\nName=mine\n" {
		t.Fatalf("foreign entry changed: %q", data)
	}
}
