package daemon

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/memtray/memtray/backend/httpapi"
)

func TestWelcome(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cfg := testConfig(t)
	d, addr := serve(t, cfg)
	c := httpapi.NewClient(addr, d.Token())
	st, err := c.Welcome(ctx)
	if err != nil || st.Done || st.DataDir != cfg.DataDir || st.Listen == "" || st.Memories != 0 {
		t.Fatalf("new data dir: %+v, %v", st, err)
	}
	st, err = c.FinishWelcome(ctx)
	if err != nil || !st.Done || st.DoneAt == nil {
		t.Fatalf("finish: %+v, %v", st, err)
	}
	if fi, err := os.Stat(filepath.Join(cfg.DataDir, WelcomeFile)); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("welcome file: %v %v", fi, err)
	}
	// A damaged record still means done: the guide never comes back uninvited.
	os.WriteFile(filepath.Join(cfg.DataDir, WelcomeFile), []byte("{garbage"), 0o600)
	if st, err = c.Welcome(ctx); err != nil || !st.Done {
		t.Fatalf("damaged record: %+v, %v", st, err)
	}
}
