package cli

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

func TestAutostartCommand(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("checks the XDG autostart entry")
	}
	dir := isolate(t)
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, "cfg"))
	appimage := filepath.Join(t.TempDir(), "memtray-1.0-x86_64.AppImage")
	if err := os.WriteFile(appimage, []byte("\x7fELF"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("APPIMAGE", appimage)
	ctx := context.Background()
	entry := filepath.Join(home, "cfg", "autostart", "memtray.desktop")
	steps := []struct {
		args []string
		want string
		file bool
	}{
		{[]string{"autostart", "--data-dir", dir}, "autostart: off", false},
		{[]string{"autostart", "--data-dir", dir, "on"}, "autostart: on (" + entry + " runs " + appimage + " app --hidden --data-dir " + dir, true},
		{[]string{"autostart", "--data-dir", dir, "status"}, "autostart: on", true},
		{[]string{"autostart", "--data-dir", dir, "off"}, "autostart: off", false},
	}
	for i, s := range steps {
		if i == 3 {
			// The AppImage moved away: the entry is stale.
			os.Remove(appimage)
			if code, out, _ := run(t, ctx, "", "autostart", "--data-dir", dir); code != 0 || !strings.Contains(out, "the program it runs is gone") {
				t.Fatalf("stale entry: %d %q", code, out)
			}
		}
		code, out, errs := run(t, ctx, "", s.args...)
		if code != 0 || !strings.Contains(out, s.want) {
			t.Fatalf("%v: %d %q %q, want %q", s.args, code, out, errs, s.want)
		}
		if _, err := os.Stat(entry); (err == nil) != s.file {
			t.Fatalf("%v: entry there = %v", s.args, err == nil)
		}
	}
	if code, _, errs := run(t, ctx, "", "autostart", "--data-dir", dir, "sideways"); code != 2 || !strings.Contains(errs, "sideways") {
		t.Errorf("bad argument: %d %q", code, errs)
	}
}

// TestAutostartNeedsDesktop: a build without the desktop window refuses
// `autostart on` and names the systemd user unit; it wrote an entry that
// ran `memtray app --hidden`, which exits at once in such a build, so
// memtray silently never started at login. off and status still work.
func TestAutostartNeedsDesktop(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("checks the XDG autostart entry")
	}
	dir := isolate(t)
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, "cfg"))
	NoDesktop = true
	t.Cleanup(func() { NoDesktop = false })
	ctx := context.Background()
	code, out, errs := run(t, ctx, "", "autostart", "--data-dir", dir, "on")
	if code == 0 || !strings.Contains(errs, "built without the desktop window") || !strings.Contains(errs, "systemctl --user enable --now memtray") {
		t.Errorf("on: exit %d %q %q", code, out, errs)
	}
	if _, err := os.Stat(filepath.Join(home, "cfg", "autostart", "memtray.desktop")); err == nil {
		t.Errorf("on wrote the entry")
	}
	for _, arg := range []string{"status", "off"} {
		if code, out, errs := run(t, ctx, "", "autostart", "--data-dir", dir, arg); code != 0 || !strings.Contains(out, "autostart: off") {
			t.Errorf("%s: exit %d %q %q", arg, code, out, errs)
		}
	}
}
