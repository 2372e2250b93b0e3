package daemon

import (
	"context"
	"net"
	"net/http"
	"testing"
)

// TestShutdownEndsStreams: a live stream (the UI's /api/events, an MCP
// client's GET stream) must not hold the shutdown until its deadline: Serve
// returns cleanly while the stream is still open (issue 21 bug 15, where a
// UI tab made shutdown take 5 s and end with "context deadline exceeded",
// and an immediate restart found the store locked).
func TestShutdownEndsStreams(t *testing.T) {
	t.Parallel()
	for _, accept := range []string{"", "text/event-stream"} {
		t.Run("accept="+accept, func(t *testing.T) {
			d, err := Open(context.Background(), Options{Config: testConfig(t), Version: "test"})
			if err != nil {
				t.Fatal(err)
			}
			defer d.Close()
			ctx, cancel := context.WithCancel(context.Background())
			addrc, done := make(chan string, 1), make(chan error, 1)
			go func() { done <- d.Serve(ctx, func(a string) { addrc <- a }) }()
			addr := <-addrc
			req, _ := http.NewRequest("GET", "http://"+addr+"/api/events", nil)
			req.Header.Set("Authorization", "Bearer "+d.Token())
			if accept != "" {
				req.Header.Set("Accept", accept)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			if resp.StatusCode != 200 {
				t.Fatalf("events: %d", resp.StatusCode)
			}
			cancel()
			if err := <-done; err != nil {
				t.Fatalf("Serve with a stream open: %v", err)
			}
		})
	}
}

// TestShutdownWithASpareConnection: a connection on which no request has
// arrived (the spare an HTTP client dials when two requests race) must not
// hold the shutdown: net/http counts it busy until it is 5 s old, the
// shutdown deadline, so Serve ended with "context deadline exceeded" (a
// flake of TestEveryEntranceWritesOneMemory under load).
func TestShutdownWithASpareConnection(t *testing.T) {
	t.Parallel()
	d, err := Open(context.Background(), Options{Config: testConfig(t), Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	ctx, cancel := context.WithCancel(context.Background())
	addrc, done := make(chan string, 1), make(chan error, 1)
	go func() { done <- d.Serve(ctx, func(a string) { addrc <- a }) }()
	addr := <-addrc
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	// A request on another connection, so the spare one is surely accepted
	// before the shutdown begins.
	resp, err := http.Get("http://" + addr + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Serve with a spare connection open: %v", err)
	}
}
