package setup

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/memtray/memtray/backend/config"
)

// WelcomeFile, in the data dir, records that the first-run guide is done.
const WelcomeFile = "welcome.json"

type welcomeRecord struct {
	DoneAt time.Time `json:"done_at"`
}

// Welcome says whether the first-run guide is done on this data dir.
func (s *Service) Welcome(context.Context) (WelcomeState, error) {
	st := WelcomeState{DataDir: s.o.DataDir, ConfigFile: s.o.ConfigPath, Memories: s.o.Memories(), Listen: s.o.Listen()}
	data, err := os.ReadFile(filepath.Join(s.o.DataDir, WelcomeFile))
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
func (s *Service) FinishWelcome(ctx context.Context) (WelcomeState, error) {
	data, _ := json.Marshal(welcomeRecord{DoneAt: s.o.Clock.Now().UTC().Truncate(time.Second)})
	if err := config.WriteFileAtomic(filepath.Join(s.o.DataDir, WelcomeFile), append(data, '\n'), 0o600); err != nil {
		return WelcomeState{}, fmt.Errorf("save %s: %w", WelcomeFile, err)
	}
	return s.Welcome(ctx)
}
