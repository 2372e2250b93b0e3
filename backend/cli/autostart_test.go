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
	t.Setenv("APPIMAGE", "/opt/memtray/memtray-1.0-x86_64.AppImage")
	ctx := context.Background()
	entry := filepath.Join(home, "cfg", "autostart", "memtray.desktop")
	steps := []struct {
		args []string
		want string
		file bool
	}{
		{[]string{"autostart", "--data-dir", dir}, "autostart: off", false},
		{[]string{"autostart", "--data-dir", dir, "on"}, "autostart: on (" + entry + " runs /opt/memtray/memtray-1.0-x86_64.AppImage app --hidden --data-dir " + dir, true},
		{[]string{"autostart", "--data-dir", dir, "status"}, "the program it runs is gone", true},
		{[]string{"autostart", "--data-dir", dir, "off"}, "autostart: off", false},
	}
	for _, s := range steps {
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
