package setup

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"

	"github.com/memtray/memtray/backend/autostart"
	"github.com/memtray/memtray/backend/config"
)

// AutostartOptions says where the login entry goes and what it runs: this
// program (the AppImage file itself when memtray runs from one, since the
// path it runs from inside is a temporary mount), as `app --hidden`, so
// memtray starts in the tray, with dataDir and configPath when they are
// not the defaults.
func AutostartOptions(dataDir, configPath string) (autostart.Options, error) {
	home, err := os.UserHomeDir()
	if err != nil {
		return autostart.Options{}, fmt.Errorf("autostart: %w", err)
	}
	prog, err := config.Executable()
	if err != nil {
		return autostart.Options{}, fmt.Errorf("autostart: %w", err)
	}
	cmd := []string{prog, "app", "--hidden"}
	if dir, err := filepath.Abs(dataDir); err == nil && dir != config.DefaultDataDir() {
		cmd = append(cmd, "--data-dir", dir)
	}
	if configPath != "" && configPath != config.DefaultPath() {
		if p, err := filepath.Abs(configPath); err == nil {
			cmd = append(cmd, "--config", p)
		}
	}
	return autostart.Options{GOOS: runtime.GOOS, Home: home, ConfigHome: os.Getenv("XDG_CONFIG_HOME"), Command: cmd}, nil
}

// Autostart says whether memtray starts at login.
func (s *Service) Autostart(context.Context) (autostart.State, error) {
	o, err := AutostartOptions(s.o.DataDir, s.o.ConfigPath)
	if err != nil {
		return autostart.State{}, err
	}
	st, err := autostart.Status(o)
	st.Headless = !s.o.Desktop
	return st, err
}

// SetAutostart writes or removes the login entry.
func (s *Service) SetAutostart(_ context.Context, req AutostartRequest) (autostart.State, error) {
	o, err := AutostartOptions(s.o.DataDir, s.o.ConfigPath)
	if err != nil {
		return autostart.State{}, err
	}
	if req.Enabled {
		st, err := autostart.Enable(o)
		if err == nil {
			s.o.Logger.Info("autostart on", "entry", st.Path)
		}
		st.Headless = !s.o.Desktop
		return st, err
	}
	st, err := autostart.Disable(o)
	if err == nil {
		s.o.Logger.Info("autostart off", "entry", st.Path)
	}
	st.Headless = !s.o.Desktop
	return st, err
}
