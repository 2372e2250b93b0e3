package daemon

import (
	"net"
	"time"

	"github.com/memtray/memtray/backend/agentsetup"
	"github.com/memtray/memtray/backend/setup"
)

// WelcomeFile, in the data dir, records that the first-run guide is done.
const WelcomeFile = setup.WelcomeFile

// setupBinary is the memtray the agents' configs are to run: this program,
// by the CLI's rule (agentsetup.Binary). Tests put a binary with memtray's
// name in its place (setup recognises its hooks by that name).
var setupBinary = func() (string, []string, error) { return agentsetup.Binary("") }

// openSetup builds the setup service: connecting agents, autostart and
// the first-run guide, for this daemon's data dir, config and address.
func (d *Daemon) openSetup() {
	d.setup = setup.New(setup.Options{
		DataDir:     d.cfg.DataDir,
		ConfigPath:  d.configPath,
		Listen:      d.setupListen,
		HookTimeout: func() time.Duration { return time.Duration(d.settings.Live().Recall.HookTimeout) },
		Binary:      func() (string, []string, error) { return setupBinary() },
		Memories:    d.store.Count,
		Clock:       d.clock,
		Logger:      d.log,
		Desktop:     d.desktop,
	})
}

// setupListen is the address agents are to reach: the configured one the
// daemon was started with (as `memtray setup` writes it), or the bound one
// when the port was left to the system.
func (d *Daemon) setupListen() string {
	if _, port, err := net.SplitHostPort(d.cfg.Listen); (err != nil || port == "0") && d.listen != "" {
		return d.listen
	}
	return d.cfg.Listen
}
