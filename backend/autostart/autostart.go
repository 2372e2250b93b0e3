// Package autostart starts memtray at login: an XDG autostart entry on
// Linux and the BSDs (~/.config/autostart/memtray.desktop), a LaunchAgent
// on macOS (~/Library/LaunchAgents/io.memtray.app.plist). It only ever
// touches the one file it writes, and recognises it by a marker, so a
// user's own entry of the same name is never overwritten or removed.
package autostart

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf8"
)

// ErrUnsupported: this platform has no autostart memtray knows how to set.
var ErrUnsupported = errors.New("autostart is not supported on this platform")

// ErrNotOurs: a file of the name autostart uses exists and memtray did not
// write it; it is left alone.
var ErrNotOurs = errors.New("an autostart entry memtray did not write is in the way")

// marker is in every file autostart writes.
const marker = "X-Memtray-Autostart"

// Label is the LaunchAgent's label on macOS.
const Label = "io.memtray.app"

// Options says where and what.
type Options struct {
	// GOOS is the platform ("linux", "darwin", …); empty: runtime.GOOS.
	GOOS string
	// Home is the user's home directory.
	Home string
	// ConfigHome is $XDG_CONFIG_HOME; empty: Home/.config.
	ConfigHome string
	// Command is what runs at login: the program (absolute path) and its
	// arguments.
	Command []string
}

// State is whether memtray starts at login.
type State struct {
	// Supported is false where autostart cannot be set (Windows for now).
	Supported bool `json:"supported"`
	// Enabled: memtray's entry is there.
	Enabled bool `json:"enabled"`
	// Path is the entry's file.
	Path string `json:"path,omitempty"`
	// Command is what the entry runs (when Enabled).
	Command []string `json:"command,omitempty"`
	// Stale: the entry runs a program that is not there any more (moved
	// or uninstalled): enable again to point it at this one.
	Stale bool `json:"stale,omitempty"`
	// Foreign: a file memtray did not write has the entry's name.
	Foreign bool `json:"foreign,omitempty"`
	// Headless: the daemon that answered runs without a tray or window
	// (`memtray serve`), so starting the tray app at login does not apply
	// to it: the app could not open the data dir while serve holds it.
	// The UI offers the switch only to turn an existing entry off.
	Headless bool `json:"headless,omitempty"`
}

// Path is the entry's file for o.
func Path(o Options) (string, error) {
	if o.Home == "" || !filepath.IsAbs(o.Home) {
		return "", fmt.Errorf("autostart: home directory %q is not an absolute path", o.Home)
	}
	switch o.GOOS {
	case "linux", "freebsd", "openbsd", "netbsd", "dragonfly":
		ch := o.ConfigHome
		if ch == "" || !filepath.IsAbs(ch) {
			ch = filepath.Join(o.Home, ".config")
		}
		return filepath.Join(ch, "autostart", "memtray.desktop"), nil
	case "darwin":
		return filepath.Join(o.Home, "Library", "LaunchAgents", Label+".plist"), nil
	}
	return "", fmt.Errorf("%w (%s)", ErrUnsupported, o.GOOS)
}

// Status reads the entry.
func Status(o Options) (State, error) {
	p, err := Path(o)
	if errors.Is(err, ErrUnsupported) {
		return State{}, nil
	}
	if err != nil {
		return State{}, err
	}
	st := State{Supported: true, Path: p}
	data, err := os.ReadFile(p)
	if errors.Is(err, fs.ErrNotExist) {
		return st, nil
	}
	if err != nil {
		return st, fmt.Errorf("autostart: read %s: %w", p, err)
	}
	if !bytes.Contains(data, []byte(marker)) {
		st.Foreign = true
		return st, nil
	}
	st.Enabled = true
	if o.GOOS == "darwin" {
		st.Command = plistArgs(data)
	} else {
		st.Command = desktopExec(data)
	}
	if len(st.Command) > 0 {
		if _, err := os.Stat(st.Command[0]); err != nil {
			st.Stale = true
		}
	}
	return st, nil
}

// Enable writes the entry (replacing memtray's own, never another's).
func Enable(o Options) (State, error) {
	p, err := Path(o)
	if err != nil {
		return State{}, err
	}
	if len(o.Command) == 0 || !filepath.IsAbs(o.Command[0]) {
		return State{}, fmt.Errorf("autostart: the program to start must be an absolute path, not %q", strings.Join(o.Command, " "))
	}
	for _, a := range o.Command {
		if strings.ContainsAny(a, "\x00\n\r") || !utf8.ValidString(a) {
			return State{}, fmt.Errorf("autostart: argument %q has a control character or is not UTF-8", a)
		}
	}
	if cur, err := Status(o); err != nil {
		return cur, err
	} else if cur.Foreign {
		return cur, fmt.Errorf("%w: %s", ErrNotOurs, p)
	}
	var data []byte
	if o.GOOS == "darwin" {
		data = plist(o.Command)
	} else {
		data = desktopEntry(o.Command)
	}
	if err := writeAtomic(p, data); err != nil {
		return State{}, err
	}
	return Status(o)
}

// Disable removes memtray's entry; no entry is not an error.
func Disable(o Options) (State, error) {
	cur, err := Status(o)
	if err != nil || !cur.Supported {
		return cur, err
	}
	if cur.Foreign {
		return cur, fmt.Errorf("%w: %s (not removed)", ErrNotOurs, cur.Path)
	}
	if !cur.Enabled {
		return cur, nil
	}
	if err := os.Remove(cur.Path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return cur, fmt.Errorf("autostart: remove %s: %w", cur.Path, err)
	}
	return Status(o)
}

func writeAtomic(path string, data []byte) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("autostart: create %s: %w", dir, err)
	}
	tmp, err := os.CreateTemp(dir, ".memtray-autostart-*")
	if err != nil {
		return fmt.Errorf("autostart: write %s: %w", path, err)
	}
	defer os.Remove(tmp.Name())
	_, err = tmp.Write(data)
	if err == nil {
		err = tmp.Chmod(0o644)
	}
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		return fmt.Errorf("autostart: write %s: %w", path, err)
	}
	return nil
}
