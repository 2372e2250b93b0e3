package setup

import (
	"context"
	"path/filepath"
	"reflect"
	"testing"
)

// TestSetupClientsCLIFlags: the list says which flags a terminal's
// `memtray setup` needs to reach this daemon's data dir and config (the
// window showed plain `memtray setup claude-code`, which points the
// agent at the default data dir); none for the defaults.
func TestSetupClientsCLIFlags(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, ".config"))
	t.Setenv("XDG_DATA_HOME", filepath.Join(home, ".local", "share"))
	t.Setenv("MEMTRAY_CONFIG", "")
	t.Setenv("MEMTRAY_DATA_DIR", "")
	other := filepath.Join(t.TempDir(), "my data")
	for _, tc := range []struct {
		name, dataDir string
		want          []string
	}{
		{"default data dir", filepath.Join(home, ".local", "share", "memtray"), []string{}},
		{"another data dir", other, []string{"--data-dir", "'" + other + "'"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := New(Options{DataDir: tc.dataDir, Listen: func() string { return "127.0.0.1:7432" },
				Binary: func() (string, []string, error) { return "/usr/bin/memtray", nil, nil }})
			l, err := s.SetupClients(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(l.CLIFlags, tc.want) {
				t.Errorf("CLIFlags = %q, want %q", l.CLIFlags, tc.want)
			}
		})
	}
}
