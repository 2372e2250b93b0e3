//go:build unix

package refuse

import (
	"errors"
	"net"
	"syscall"
	"testing"
	"time"
)

// TestAddr: a held address refuses connections and cannot be listened on;
// released, it can.
func TestAddr(t *testing.T) {
	a := New(t)
	if _, err := net.DialTimeout("tcp", a.HostPort, 2*time.Second); !errors.Is(err, syscall.ECONNREFUSED) {
		t.Fatalf("dial %s while held: %v, want connection refused", a.HostPort, err)
	}
	if ln, err := net.Listen("tcp", a.HostPort); err == nil {
		ln.Close()
		t.Fatalf("listen on %s while held: no error, want address in use", a.HostPort)
	}
	a.Release()
	a.Release()
	ln, err := net.Listen("tcp", a.HostPort)
	if err != nil {
		t.Fatalf("listen on %s once released: %v", a.HostPort, err)
	}
	ln.Close()
}
