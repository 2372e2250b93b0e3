package cli

import (
	"context"
	"strings"
	"testing"
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
	t.Cleanup(cancel) // stops serve when the wait below fails
	waitFor(t, `forced serve to print "serving on"`, func() bool {
		select {
		case code := <-done:
			t.Fatalf("forced serve exited %d: %s", code, errb.String())
		default:
		}
		return strings.Contains(out.String(), "serving on")
	}, errb.String)
	cancel()
	if code := waitRecv(t, "forced serve to stop on cancel", done); code != 0 {
		t.Fatalf("forced serve exited %d", code)
	}
	if e := errb.String(); !strings.Contains(e, "WARNING: --insecure-non-loopback") || !strings.Contains(e, "INSECURE") {
		t.Errorf("no warning on stderr and in the log: %s", e)
	}
}
