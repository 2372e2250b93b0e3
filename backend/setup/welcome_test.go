package setup

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"
)

type fixedClock struct{ t time.Time }

func (c fixedClock) Now() time.Time { return c.t }

func TestWelcomeRecord(t *testing.T) {
	at := time.Date(2026, 3, 4, 5, 6, 7, 800, time.UTC)
	tests := []struct {
		name   string
		record *string // the file's content; nil: no file
		done   bool
		doneAt time.Time
	}{
		{name: "new data dir", record: nil, done: false},
		{name: "finished", record: ptr(`{"done_at":"2026-03-04T05:06:07Z"}` + "\n"), done: true, doneAt: at.Truncate(time.Second)},
		{name: "damaged record still means done", record: ptr("{garbage"), done: true, doneAt: time.Unix(0, 0).UTC()},
		{name: "no date still means done", record: ptr("{}"), done: true, doneAt: time.Unix(0, 0).UTC()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			s := New(Options{DataDir: dir, ConfigPath: "/c.json", Listen: func() string { return "127.0.0.1:7" },
				Memories: func() int { return 3 }, Clock: fixedClock{at}})
			if tt.record != nil {
				if err := os.WriteFile(filepath.Join(dir, WelcomeFile), []byte(*tt.record), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			st, err := s.Welcome(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if st.Done != tt.done || st.DataDir != dir || st.ConfigFile != "/c.json" || st.Listen != "127.0.0.1:7" || st.Memories != 3 {
				t.Errorf("Welcome: %+v", st)
			}
			if tt.done && (st.DoneAt == nil || !st.DoneAt.Equal(tt.doneAt)) {
				t.Errorf("DoneAt %v, want %v", st.DoneAt, tt.doneAt)
			}
		})
	}
}

func TestFinishWelcome(t *testing.T) {
	dir := t.TempDir()
	at := time.Date(2026, 3, 4, 5, 6, 7, 800, time.UTC)
	s := New(Options{DataDir: dir, Clock: fixedClock{at}})
	st, err := s.FinishWelcome(context.Background())
	if err != nil || !st.Done || st.DoneAt == nil || !st.DoneAt.Equal(at.Truncate(time.Second)) {
		t.Fatalf("FinishWelcome: %+v, %v", st, err)
	}
	fi, err := os.Stat(filepath.Join(dir, WelcomeFile))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("welcome file: %v %v", fi, err)
	}
}

func ptr(s string) *string { return &s }
