package transfer

import (
	"os"
	"path/filepath"
	"testing"
)

func TestDownloadDir(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_DOWNLOAD_DIR", "")
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, "cfg"))
	if got := downloadDir(); got != home {
		t.Errorf("no Downloads: %s, want home", got)
	}
	os.Mkdir(filepath.Join(home, "Downloads"), 0o700)
	if got := downloadDir(); got != filepath.Join(home, "Downloads") {
		t.Errorf("~/Downloads: %s", got)
	}
	os.MkdirAll(filepath.Join(home, "cfg"), 0o700)
	os.Mkdir(filepath.Join(home, "Téléchargements"), 0o700)
	os.WriteFile(filepath.Join(home, "cfg", "user-dirs.dirs"), []byte("# comment\nXDG_DOWNLOAD_DIR=\"$HOME/Téléchargements\"\n"), 0o600)
	if got := downloadDir(); got != filepath.Join(home, "Téléchargements") {
		t.Errorf("user-dirs.dirs: %s", got)
	}
}
