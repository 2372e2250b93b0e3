package autostart

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestEnableStatusDisable(t *testing.T) {
	for _, goos := range []string{"linux", "darwin"} {
		t.Run(goos, func(t *testing.T) {
			home := t.TempDir()
			bin := filepath.Join(home, "My Apps", "memtray $1 100%")
			if err := os.MkdirAll(filepath.Dir(bin), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(bin, []byte("#!/bin/sh\n"), 0o755); err != nil {
				t.Fatal(err)
			}
			o := Options{GOOS: goos, Home: home, Command: []string{bin, "app", "--hidden", `--data-dir=C:\odd "dir"`}}
			st, err := Status(o)
			if err != nil || !st.Supported || st.Enabled || st.Foreign {
				t.Fatalf("before: %+v, %v", st, err)
			}
			st, err = Enable(o)
			if err != nil || !st.Enabled || st.Stale || !reflect.DeepEqual(st.Command, o.Command) {
				t.Fatalf("enable: %+v, %v", st, err)
			}
			want := filepath.Join(home, ".config", "autostart", "memtray.desktop")
			if goos == "darwin" {
				want = filepath.Join(home, "Library", "LaunchAgents", "io.memtray.app.plist")
			}
			if st.Path != want {
				t.Errorf("path %s, want %s", st.Path, want)
			}
			// Enabling again replaces memtray's own entry.
			o2 := o
			o2.Command = []string{bin, "app", "--hidden"}
			if st, err = Enable(o2); err != nil || !reflect.DeepEqual(st.Command, o2.Command) {
				t.Fatalf("enable again: %+v, %v", st, err)
			}
			// The program moved: stale.
			os.Remove(bin)
			if st, _ = Status(o); !st.Stale {
				t.Errorf("no stale flag after the program went: %+v", st)
			}
			if st, err = Disable(o); err != nil || st.Enabled {
				t.Fatalf("disable: %+v, %v", st, err)
			}
			if _, err := os.Stat(want); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("entry still there: %v", err)
			}
			if st, err = Disable(o); err != nil || st.Enabled {
				t.Fatalf("disable twice: %+v, %v", st, err)
			}
			// A user's own file of that name is never touched.
			os.WriteFile(want, []byte("mine\n"), 0o644)
			if st, _ := Status(o); !st.Foreign || st.Enabled {
				t.Errorf("foreign file: %+v", st)
			}
			if _, err := Enable(o); !errors.Is(err, ErrNotOurs) {
				t.Errorf("enable over a foreign file: %v", err)
			}
			if _, err := Disable(o); !errors.Is(err, ErrNotOurs) {
				t.Errorf("disable of a foreign file: %v", err)
			}
			if data, _ := os.ReadFile(want); string(data) != "mine\n" {
				t.Errorf("foreign file changed: %q", data)
			}
		})
	}
}

func TestBadOptions(t *testing.T) {
	home := t.TempDir()
	tests := []struct {
		name string
		o    Options
	}{
		{"relative home", Options{GOOS: "linux", Home: "home", Command: []string{"/bin/memtray"}}},
		{"relative program", Options{GOOS: "linux", Home: home, Command: []string{"memtray"}}},
		{"no command", Options{GOOS: "linux", Home: home}},
		{"newline", Options{GOOS: "linux", Home: home, Command: []string{"/bin/memtray", "a\nExec=evil"}}},
		{"not UTF-8", Options{GOOS: "linux", Home: home, Command: []string{"/bin/memtray", "\xff"}}},
	}
	for _, tt := range tests {
		if _, err := Enable(tt.o); err == nil {
			t.Errorf("%s: no error", tt.name)
		}
	}
	if st, err := Status(Options{GOOS: "windows", Home: home}); err != nil || st.Supported {
		t.Errorf("windows: %+v, %v", st, err)
	}
	if _, err := Enable(Options{GOOS: "windows", Home: home, Command: []string{`C:\memtray.exe`}}); !errors.Is(err, ErrUnsupported) {
		t.Errorf("windows enable: %v", err)
	}
}

// TestDesktopFileValid runs desktop-file-validate (desktop-file-utils) on
// an entry when it is installed.
func TestDesktopFileValid(t *testing.T) {
	tool, err := exec.LookPath("desktop-file-validate")
	if err != nil {
		t.Skip("desktop-file-validate not installed")
	}
	p := filepath.Join(t.TempDir(), "memtray.desktop")
	os.WriteFile(p, desktopEntry([]string{"/opt/my apps/memtray", "app", "--hidden"}), 0o644)
	if out, err := exec.Command(tool, p).CombinedOutput(); err != nil || strings.TrimSpace(string(out)) != "" {
		t.Errorf("desktop-file-validate: %v\n%s", err, out)
	}
}

func FuzzExecRoundTrip(f *testing.F) {
	for _, s := range []string{"/usr/bin/memtray", "a b", `x"y`, `c:\d`, "100%", "$HOME", "`id`", "", "  "} {
		f.Add(s, "app")
	}
	f.Fuzz(func(t *testing.T, a, b string) {
		if strings.ContainsAny(a+b, "\x00\n\r") || !utf8.ValidString(a) || !utf8.ValidString(b) {
			return // Enable refuses these
		}
		cmd := []string{"/bin/memtray", a, b}
		got := desktopExec(desktopEntry(cmd))
		if !reflect.DeepEqual(got, cmd) {
			t.Fatalf("Exec round trip: %q -> %q", cmd, got)
		}
		if got := plistArgs(plist(cmd)); !reflect.DeepEqual(got, cmd) && validXMLText(a+b) {
			t.Fatalf("plist round trip: %q -> %q", cmd, got)
		}
	})
}

// validXMLText: XML 1.0 cannot carry every code point (control
// characters, invalid UTF-8); those arguments are not expected back.
func validXMLText(s string) bool {
	for _, r := range s {
		if r == 0xFFFD || (r < 0x20 && r != '\t') {
			return false
		}
	}
	return true
}
