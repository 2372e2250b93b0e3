package daemon

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/memtray/memtray/backend/config"
	"github.com/memtray/memtray/backend/httpapi"
)

// WelcomeFile, in the data dir, records that the first-run guide is done.
const WelcomeFile = "welcome.json"

type welcomeRecord struct {
	DoneAt time.Time `json:"done_at"`
}

// Welcome says whether the first-run guide is done on this data dir.
func (d *Daemon) Welcome(context.Context) (httpapi.WelcomeState, error) {
	st := httpapi.WelcomeState{DataDir: d.cfg.DataDir, ConfigFile: d.configPath, Memories: d.store.Count(), Listen: d.setupListen()}
	data, err := os.ReadFile(filepath.Join(d.cfg.DataDir, WelcomeFile))
	switch {
	case errors.Is(err, os.ErrNotExist):
		return st, nil
	case err != nil:
		return st, fmt.Errorf("read %s: %w", WelcomeFile, err)
	}
	var rec welcomeRecord
	if json.Unmarshal(data, &rec) != nil || rec.DoneAt.IsZero() {
		// Unreadable: it was written, so the guide was done once.
		rec.DoneAt = time.Unix(0, 0).UTC()
	}
	st.Done, st.DoneAt = true, &rec.DoneAt
	return st, nil
}

// FinishWelcome records that the first-run guide is done.
func (d *Daemon) FinishWelcome(ctx context.Context) (httpapi.WelcomeState, error) {
	data, _ := json.Marshal(welcomeRecord{DoneAt: d.clock.Now().UTC().Truncate(time.Second)})
	if err := config.WriteFileAtomic(filepath.Join(d.cfg.DataDir, WelcomeFile), append(data, '\n'), 0o600); err != nil {
		return httpapi.WelcomeState{}, fmt.Errorf("save %s: %w", WelcomeFile, err)
	}
	return d.Welcome(ctx)
}
