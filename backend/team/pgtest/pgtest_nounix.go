//go:build !unix

package pgtest

import "testing"

// Server is a running PostgreSQL; on this platform there is none (the
// harness needs unix sockets and process credentials), so every test that
// asks for one is skipped.
type Server struct{}

const skipMsg = "pgtest: a PostgreSQL test server needs a unix system"

// Start skips t: see the unix version.
func Start(t testing.TB) *Server { t.Skip(skipMsg); return nil }

// Shared skips t: see the unix version.
func Shared(t testing.TB) *Server { t.Skip(skipMsg); return nil }

// Main runs the tests.
func Main(m *testing.M) int { return m.Run() }

// SocketDir is empty.
func (s *Server) SocketDir() string { return "" }

// ConnString is empty.
func (s *Server) ConnString(role, db string) string { return "" }

// AdminConnString is empty.
func (s *Server) AdminConnString(db string) string { return "" }

// Restart does nothing.
func (s *Server) Restart() error { return nil }

// Stop does nothing.
func (s *Server) Stop() {}

// Kill does nothing.
func (s *Server) Kill() {}

// DB skips t.
func (s *Server) DB(t testing.TB) string { t.Skip(skipMsg); return "" }

// NewDB skips t.
func (s *Server) NewDB(t testing.TB, owner string) string { t.Skip(skipMsg); return "" }

// Role skips t.
func (s *Server) Role(t testing.TB, name string) { t.Skip(skipMsg) }

// Exec skips t.
func (s *Server) Exec(t testing.TB, db, sql string) { t.Skip(skipMsg) }
