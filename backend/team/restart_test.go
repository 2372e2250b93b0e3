package team

import (
	"context"
	"errors"
	"testing"

	"github.com/memtray/memtray/backend/team/pgtest"
)

func TestTryLock(t *testing.T) {
	tm := newTeam(t)
	ctx := context.Background()
	a := tm.open(t, tm.owner)
	b := tm.member(t, a, "bob", false)
	l, err := a.TryLock(ctx, "steward")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.TryLock(ctx, "steward"); !errors.Is(err, ErrLocked) {
		t.Fatalf("a second TryLock: %v, want ErrLocked", err)
	}
	other, err := b.TryLock(ctx, "another")
	if err != nil {
		t.Fatalf("another lock's name: %v", err)
	}
	other.Release(ctx)
	if err := l.Held(ctx); err != nil {
		t.Fatal(err)
	}
	if err := l.Release(ctx); err != nil {
		t.Fatal(err)
	}
	l2, err := b.TryLock(ctx, "steward")
	if err != nil {
		t.Fatalf("TryLock after the release: %v", err)
	}
	l2.Release(ctx)
}

// The server restarts with clients connected: the store's pool and the
// watcher reconnect, a lock's holder learns it lost the lock, and nothing
// committed is lost.
func TestServerRestart(t *testing.T) {
	srv := pgtest.Start(t)
	owner := "owner"
	db := srv.NewDB(t, owner)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s, err := Open(ctx, srv.ConnString(owner, db))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	wake := s.Watch(ctx)
	<-wake // connected
	lock, err := s.TryLock(ctx, "steward")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Push(ctx, []Memory{mem("before", "written before the restart")}); err != nil {
		t.Fatal(err)
	}
	<-wake
	srv.Kill()
	if err := srv.Restart(); err != nil {
		t.Fatal(err)
	}
	if err := lock.Held(ctx); err == nil {
		t.Error("the lock survived its connection")
	}
	<-wake // reconnected: pull in case a notification was missed
	// Uses of the pool's connections from before the restart fail, once
	// each; new ones connect.
	var res []PushResult
	for range 10 {
		if res, err = s.Push(ctx, []Memory{mem("after", "written after the restart")}); err == nil {
			break
		}
	}
	if err != nil || res[0].Status != PushInserted {
		t.Fatalf("push after the restart: %+v, %v", res, err)
	}
	<-wake
	page, err := s.Pull(ctx, Cursor{}, PullOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Changes) != 2 {
		t.Errorf("%d changes after the restart, want 2", len(page.Changes))
	}
	l2, err := s.TryLock(ctx, "steward")
	if err != nil {
		t.Fatalf("the lock after the restart: %v", err)
	}
	l2.Release(ctx)
}
