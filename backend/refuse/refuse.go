//go:build unix

// Package refuse is test support: a loopback address where nothing
// listens, held so that no other socket takes it while a test counts on
// connections to it being refused. No program imports it.
//
// The usual way, listening on 127.0.0.1:0 and closing the listener,
// frees the port at once: the test's own servers (or any other process
// on the machine) may be given it before the test dials it, and then the
// "dead" address answers (a fresh clone's make test met it: a proxy test
// got 200 where it wanted 502).
package refuse

import (
	"fmt"
	"net"
	"syscall"
	"testing"
)

// Addr is a loopback address that refuses connections while it is held:
// a TCP socket is bound to it and never listens, so the kernel answers a
// connection to it with a reset, and no other socket can bind it.
type Addr struct {
	// HostPort is the address, "127.0.0.1:PORT".
	HostPort string
	fd       int
}

// New binds a TCP socket to a free loopback port without listening on it;
// the port is released at the end of the test (t.Cleanup) or by Release.
func New(t testing.TB) *Addr {
	t.Helper()
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM, 0)
	if err != nil {
		t.Fatalf("refuse: socket: %v", err)
	}
	if err := syscall.Bind(fd, &syscall.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		syscall.Close(fd)
		t.Fatalf("refuse: bind: %v", err)
	}
	sa, err := syscall.Getsockname(fd)
	if err != nil {
		syscall.Close(fd)
		t.Fatalf("refuse: getsockname: %v", err)
	}
	in, ok := sa.(*syscall.SockaddrInet4)
	if !ok {
		syscall.Close(fd)
		t.Fatalf("refuse: bound to %T, want an IPv4 address", sa)
	}
	a := &Addr{HostPort: net.JoinHostPort("127.0.0.1", fmt.Sprint(in.Port)), fd: fd}
	t.Cleanup(a.Release)
	return a
}

// Release frees the port, so that a test can start a server on it ("the
// upstream comes back"); a second call does nothing.
func (a *Addr) Release() {
	if a.fd >= 0 {
		syscall.Close(a.fd)
		a.fd = -1
	}
}
