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
	var out, errb syncBuffer
	srv := startServe(t, &out, &errb, "--data-dir", dir, "--listen", "0.0.0.0:0", "--insecure-non-loopback")
	srv.waitServing(t)
	if code := srv.stop(t); code != 0 {
		t.Fatalf("forced serve exited %d: %s", code, errb.String())
	}
	if e := errb.String(); !strings.Contains(e, "WARNING: --insecure-non-loopback") || !strings.Contains(e, "INSECURE") {
		t.Errorf("no warning on stderr and in the log: %s", e)
	}
}
