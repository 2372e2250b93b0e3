package cli

import (
	"errors"
	"fmt"
	"strings"

	"github.com/memtray/memtray/backend/autostart"
	"github.com/memtray/memtray/backend/setup"
)

func runAutostart(env *Env, args []string) error {
	var c common
	fs := newFlags("autostart", env, &c, false)
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	cfg, err := c.load()
	if err != nil {
		return err
	}
	o, err := setup.AutostartOptions(cfg.DataDir, cfg.File)
	if err != nil {
		return err
	}
	var st autostart.State
	switch {
	case len(pos) == 0 || pos[0] == "status":
		st, err = autostart.Status(o)
	case pos[0] == "on" && NoDesktop:
		// The entry would run `memtray app --hidden`, which exits at once
		// in this build: memtray would silently not start at login.
		return errors.New("this memtray was built without the desktop window and tray, which start at login runs; " +
			"for the headless daemon at login use the systemd user unit (`systemctl --user enable --now memtray`, docs/install.md), " +
			"or build the desktop app (`make desktop`)")
	case pos[0] == "on":
		st, err = autostart.Enable(o)
	case pos[0] == "off":
		st, err = autostart.Disable(o)
	default:
		return usagef("want on, off or status, not %q", pos[0])
	}
	if err != nil {
		return err
	}
	if len(pos) > 1 {
		return usagef("unexpected argument %q", pos[1])
	}
	switch {
	case !st.Supported:
		fmt.Fprintln(env.Stdout, "autostart: not supported on this platform")
	case st.Foreign:
		fmt.Fprintf(env.Stdout, "autostart: %s is not memtray's; left alone\n", st.Path)
	case st.Enabled:
		fmt.Fprintf(env.Stdout, "autostart: on (%s runs %s)\n", st.Path, strings.Join(st.Command, " "))
		if st.Stale {
			fmt.Fprintln(env.Stdout, "  the program it runs is gone: `memtray autostart on` points it at this one")
		}
	default:
		fmt.Fprintln(env.Stdout, "autostart: off")
	}
	return nil
}
