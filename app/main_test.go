package main

import (
	"bytes"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestWantsApp(t *testing.T) {
	for _, c := range []struct {
		args           []string
		built, display bool
		want           bool
		rest           []string
	}{
		{nil, true, true, true, nil},
		{nil, true, false, false, nil},
		{nil, false, true, false, nil}, // the CLI's usage
		{[]string{"app"}, false, false, true, []string{}},
		{[]string{"app", "--listen", "127.0.0.1:1"}, true, true, true, []string{"--listen", "127.0.0.1:1"}},
		{[]string{"--data-dir", "/x"}, true, true, true, []string{"--data-dir", "/x"}},
		{[]string{"--data-dir", "/x"}, false, true, false, []string{"--data-dir", "/x"}},
		{[]string{"--help"}, true, true, false, []string{"--help"}},
		{[]string{"serve"}, true, true, false, []string{"serve"}},
		{[]string{"search", "x"}, true, true, false, []string{"search", "x"}},
	} {
		got, rest := wantsApp(c.args, c.built, c.display)
		if got != c.want || !slices.Equal(rest, c.rest) {
			t.Errorf("wantsApp(%q, built=%v, display=%v) = %v %q, want %v %q", c.args, c.built, c.display, got, rest, c.want, c.rest)
		}
	}
}

func TestParseAppFlags(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("MEMTRAY_DATA_DIR", "")
	t.Setenv("MEMTRAY_CONFIG", "")
	var stderr bytes.Buffer
	cfg, af, err := parseAppFlags([]string{"--data-dir", dir, "--listen", "127.0.0.1:7999",
		"--config", filepath.Join(dir, "absent.json"), "--embedder", "builtin"}, &stderr)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.DataDir != dir || cfg.Listen != "127.0.0.1:7999" || cfg.Embedder.Provider != "builtin" || af.hidden {
		t.Errorf("flags not applied: %+v %+v", cfg, af)
	}
	if cfg.File != filepath.Join(dir, "absent.json") {
		t.Errorf("config file %q not kept for the settings to save into", cfg.File)
	}
	if _, af, err := parseAppFlags([]string{"--data-dir", dir, "--hidden"}, &stderr); err != nil || !af.hidden {
		t.Errorf("--hidden: %+v, %v", af, err)
	}
	if _, _, err := parseAppFlags([]string{"--listen", "0.0.0.0:80", "--data-dir", dir}, &stderr); err == nil {
		t.Error("a non-loopback --listen was accepted")
	}
	if _, _, err := parseAppFlags([]string{"stray"}, &stderr); err == nil || !strings.Contains(err.Error(), "stray") {
		t.Errorf("a stray argument: %v", err)
	}
}

func TestAppWithoutWindow(t *testing.T) {
	if desktopBuilt {
		t.Skip("this build has the window")
	}
	var out, errb bytes.Buffer
	if code := run([]string{"app"}, nil, &out, &errb); code != 2 || !strings.Contains(errb.String(), "memtray serve") {
		t.Errorf("memtray app without the window: exit %d, %q", code, errb.String())
	}
}
