package cli

import (
	"context"
	"strings"
	"testing"
	"time"
)

// TestServeNonLoopbackNeedsForce: serve refuses a non-loopback --listen
// unless --insecure-non-loopback forces it, and then warns.
func TestServeNonLoopbackNeedsForce(t *testing.T) {
	dir := isolate(t)
	code, _, errs := run(t, context.Background(), "", "serve", "--data-dir", dir, "--listen", "0.0.0.0:0")
	if code == 0 || !strings.Contains(errs, "--insecure-non-loopback") {
		t.Fatalf("serve on 0.0.0.0 without the force: exit %d: %s", code, errs)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var out, errb syncBuffer
	done := make(chan int, 1)
	go func() {
		done <- Run(&Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb, Ctx: ctx},
			[]string{"serve", "--data-dir", dir, "--listen", "0.0.0.0:0", "--insecure-non-loopback"})
	}()
	deadline := time.Now().Add(20 * time.Second)
	for !strings.Contains(out.String(), "serving on") {
		select {
		case code := <-done:
			t.Fatalf("forced serve exited %d: %s", code, errb.String())
		default:
		}
		if time.Now().After(deadline) {
			cancel()
			t.Fatalf("forced serve did not start: %s", errb.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	cancel()
	if code := <-done; code != 0 {
		t.Fatalf("forced serve exited %d", code)
	}
	if e := errb.String(); !strings.Contains(e, "WARNING: --insecure-non-loopback") || !strings.Contains(e, "INSECURE") {
		t.Errorf("no warning on stderr and in the log: %s", e)
	}
}
