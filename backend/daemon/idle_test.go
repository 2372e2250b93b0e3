package daemon

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/memtray/memtray/backend/config"
)

// TestIdleExit: a daemon started on demand stops serving by itself once no
// request has been in flight for idle_exit; an open stream (an agent's MCP
// bridge, the live feed) keeps it.
func TestIdleExit(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t)
	cfg.IdleExit = config.Duration(time.Second)
	d, err := Open(context.Background(), Options{Config: cfg, Version: "test", OnDemand: true})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	addrc, done := make(chan string, 1), make(chan error, 1)
	go func() { done <- d.Serve(context.Background(), func(a string) { addrc <- a }) }()
	addr := <-addrc
	req, _ := http.NewRequest("GET", "http://"+addr+"/api/events", nil)
	req.Header.Set("Authorization", "Bearer "+d.Token())
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 200 {
		t.Fatalf("events: %d", resp.StatusCode)
	}
	if d.idle.idleFor() != 0 {
		t.Error("idle while a stream is open")
	}
	select {
	case err := <-done:
		t.Fatalf("Serve returned %v while a stream was open", err)
	default:
	}
	resp.Body.Close()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Serve: %v", err)
		}
	case <-time.After(time.Minute):
		t.Fatal("the on-demand daemon still serves with no request past idle_exit")
	}
}

// TestIdleExitOnlyOnDemand: the user's own daemon, or idle_exit 0, never
// idle-exits: no watch is set up.
func TestIdleExitOnlyOnDemand(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		onDemand bool
		idle     time.Duration
	}{{"own service", false, time.Second}, {"idle_exit 0", true, 0}} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := testConfig(t)
			cfg.IdleExit = config.Duration(tc.idle)
			d := &Daemon{cfg: cfg, idle: idleWatch{onDemand: tc.onDemand}}
			ctx := context.Background()
			got, stop := d.idleContext(ctx)
			defer stop()
			if got != ctx {
				t.Error("an idle watch was set up")
			}
		})
	}
}
