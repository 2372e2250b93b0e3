//go:build linux

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestUnescapeMountPath(t *testing.T) {
	for in, want := range map[string]string{
		"/tmp/.mount_memtra123":       "/tmp/.mount_memtra123",
		`/tmp/.mount_my\040ap123`:     "/tmp/.mount_my ap123",
		`/a\011b\012c\134d`:           "/a\tb\nc\\d",
		`/trailing\04`:                `/trailing\04`,
		`/not\999octal`:               `/not\999octal`,
		`/tmp/.mount_x\040\040y\040z`: "/tmp/.mount_x  y z",
	} {
		if got := unescapeMountPath(in); got != want {
			t.Errorf("unescapeMountPath(%q) = %q, want %q", in, got, want)
		}
	}
	if !isMountPoint("/") {
		t.Error("isMountPoint(/) = false")
	}
	if isMountPoint(t.TempDir()) {
		t.Error("isMountPoint(a new temporary directory) = true")
	}
}

// TestNameWithSpace: an AppImage whose name has a space mounts at
// .mount_<first 6 characters> and unmounts.
func TestNameWithSpace(t *testing.T) {
	ai := makeAppImage(t, fixtureTree())
	spaced := filepath.Join(t.TempDir(), "my app.AppImage")
	if err := os.Rename(ai, spaced); err != nil {
		t.Fatal(err)
	}
	r := runAppImage(t, spaced, t.TempDir(), nil)
	if strings.Contains(r.stderr, "cannot mount with FUSE") {
		t.Skipf("skipped: FUSE unavailable here: %s", r.stderr)
	}
	if r.code != 0 || !strings.HasPrefix(filepath.Base(r.vars["APPDIR"]), ".mount_my app") || r.vars["APPIMAGE"] != spaced {
		t.Fatalf("exit %d, APPDIR %q, APPIMAGE %q; stderr %s", r.code, r.vars["APPDIR"], r.vars["APPIMAGE"], r.stderr)
	}
	waitGone(t, r.vars["APPDIR"])
}
