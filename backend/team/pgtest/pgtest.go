//go:build unix

// Package pgtest runs a real PostgreSQL server for tests: initdb in a
// temporary directory, listening only on a unix socket in that directory
// (no TCP), as an unprivileged user when the test runs as root (initdb and
// postgres refuse root), stopped and removed when the tests end.
//
// Two ways to use it:
//
//   - Start(t) starts a private server for one test and stops it at the
//     test's cleanup. Tests that stop, restart or kill the server (fault
//     tests) want their own.
//
//   - Shared(t) returns the package's one server, started on first use and
//     stopped by Main, which the package's TestMain must call:
//
//     func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }
//
// On either, DB(t) creates a fresh database for one test (dropped at its
// cleanup) and returns its connection string; Role(t, name) creates a login
// role. Authentication on the socket is trust: any role name connects, which
// is what a test of roles and row-level security needs.
//
// The PostgreSQL binaries are looked up in $MEMTRAY_PG_BIN, then the highest
// version under /usr/lib/postgresql/*/bin (Debian's `postgresql` package),
// then $PATH. When none is found the test is skipped with a message saying
// so; build/deps.sh test installs them.
package pgtest

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// port is the number in the socket's name (.s.PGSQL.<port>); each server
// has its own directory, so every server can use the same one.
const port = 5432

// Server is one running PostgreSQL.
type Server struct {
	dir  string // the temporary directory: data/ and the socket
	bin  string // the directory of initdb and postgres
	cred *syscall.Credential

	mu   sync.Mutex
	cmd  *exec.Cmd
	done chan struct{} // closed when cmd has exited
	log  *os.File

	seq atomic.Int64 // names of databases
}

// SocketDir is the directory of the server's unix socket (the host of a
// connection string).
func (s *Server) SocketDir() string { return s.dir }

// ConnString is a connection string (URL form) for database db as role.
func (s *Server) ConnString(role, db string) string {
	q := url.Values{}
	q.Set("host", s.dir)
	q.Set("port", strconv.Itoa(port))
	q.Set("sslmode", "disable")
	return (&url.URL{Scheme: "postgres", User: url.User(role), Path: "/" + db, RawQuery: q.Encode()}).String()
}

// AdminConnString connects to database db as the superuser "postgres".
func (s *Server) AdminConnString(db string) string { return s.ConnString("postgres", db) }

// findBin returns the directory holding initdb and postgres, or "".
func findBin() string {
	if d := os.Getenv("MEMTRAY_PG_BIN"); d != "" {
		if isExec(filepath.Join(d, "initdb")) && isExec(filepath.Join(d, "postgres")) {
			return d
		}
		return ""
	}
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(dirs, func(i, j int) bool {
		vi, _ := strconv.Atoi(filepath.Base(filepath.Dir(dirs[i])))
		vj, _ := strconv.Atoi(filepath.Base(filepath.Dir(dirs[j])))
		return vi > vj
	})
	for _, d := range dirs {
		if isExec(filepath.Join(d, "initdb")) && isExec(filepath.Join(d, "postgres")) {
			return d
		}
	}
	if p, err := exec.LookPath("initdb"); err == nil {
		return filepath.Dir(p)
	}
	return ""
}

func isExec(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0
}

// Start starts a private server for t, stopped and removed at t's cleanup.
// It skips t when the PostgreSQL binaries are absent.
func Start(t testing.TB) *Server {
	t.Helper()
	s, err := start()
	if errors.Is(err, errNoBinaries) {
		t.Skip(err.Error())
	}
	if err != nil {
		t.Fatalf("pgtest: %v", err)
	}
	t.Cleanup(s.remove)
	return s
}

var errNoBinaries = errors.New("pgtest: PostgreSQL binaries (initdb, postgres) not found in $MEMTRAY_PG_BIN, /usr/lib/postgresql/*/bin or $PATH; install Debian's postgresql package (build/deps.sh test)")

var shared struct {
	sync.Mutex
	main bool // Main is running the tests
	srv  *Server
	err  error
}

// Main runs the package's tests (m.Run) and then stops the shared server,
// returning the exit code for os.Exit.
func Main(m *testing.M) int {
	shared.Lock()
	shared.main = true
	shared.Unlock()
	code := m.Run()
	shared.Lock()
	if shared.srv != nil {
		shared.srv.remove()
		shared.srv = nil
	}
	shared.Unlock()
	return code
}

// Shared returns the package's server, starting it on first use. The
// package's TestMain must call Main, which stops it. It skips t when the
// PostgreSQL binaries are absent.
func Shared(t testing.TB) *Server {
	t.Helper()
	shared.Lock()
	defer shared.Unlock()
	if !shared.main {
		t.Fatal("pgtest.Shared: the package's TestMain must run pgtest.Main(m), which stops the server")
	}
	if shared.srv == nil && shared.err == nil {
		shared.srv, shared.err = start()
	}
	if errors.Is(shared.err, errNoBinaries) {
		t.Skip(shared.err.Error())
	}
	if shared.err != nil {
		t.Fatalf("pgtest: %v", shared.err)
	}
	return shared.srv
}

// start makes the directory, runs initdb and starts postgres.
func start() (*Server, error) {
	bin := findBin()
	if bin == "" {
		return nil, errNoBinaries
	}
	// A unix socket's path is limited to about 107 bytes: keep the
	// directory short, whatever $TMPDIR is.
	base := os.TempDir()
	if len(base) > 60 {
		base = "/tmp"
	}
	dir, err := os.MkdirTemp(base, "mtpg-")
	if err != nil {
		return nil, err
	}
	s := &Server{dir: dir, bin: bin}
	if os.Geteuid() == 0 {
		cred, err := unprivileged()
		if err != nil {
			os.RemoveAll(dir)
			return nil, err
		}
		s.cred = cred
		if err := os.Chown(dir, int(cred.Uid), int(cred.Gid)); err != nil {
			os.RemoveAll(dir)
			return nil, err
		}
	}
	if err := os.Chmod(dir, 0o700); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	initdb := s.command("initdb", "-D", s.dataDir(), "-U", "postgres", "--auth=trust",
		"-E", "UTF8", "--locale=C", "--no-sync", "--no-instructions")
	if out, err := initdb.CombinedOutput(); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("initdb: %w: %s", err, out)
	}
	if err := s.Restart(); err != nil {
		s.remove()
		return nil, err
	}
	return s, nil
}

// unprivileged returns the credentials of the user the server runs as
// when the tests run as root: $MEMTRAY_PG_USER, else nobody.
func unprivileged() (*syscall.Credential, error) {
	name := os.Getenv("MEMTRAY_PG_USER")
	if name == "" {
		name = "nobody"
	}
	u, err := user.Lookup(name)
	if err != nil {
		return nil, fmt.Errorf("running as root, the server needs an unprivileged user: %w", err)
	}
	uid, err := strconv.ParseUint(u.Uid, 10, 32)
	if err != nil {
		return nil, fmt.Errorf("user %s: uid %q: %w", name, u.Uid, err)
	}
	gid, err := strconv.ParseUint(u.Gid, 10, 32)
	if err != nil {
		return nil, fmt.Errorf("user %s: gid %q: %w", name, u.Gid, err)
	}
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid), NoSetGroups: true}, nil
}

func (s *Server) dataDir() string { return filepath.Join(s.dir, "data") }

// command is the binary name of the installation, run as the server's user.
func (s *Server) command(name string, args ...string) *exec.Cmd {
	cmd := exec.Command(filepath.Join(s.bin, name), args...)
	cmd.Dir = s.dir
	cmd.Env = append(os.Environ(), "LC_ALL=C", "TZ=UTC")
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: s.cred, Setpgid: true}
	return cmd
}

// Restart starts postgres again after Stop or Kill (Start does it the first
// time) and waits until it accepts connections. Clients connected before
// keep failing until they reconnect.
func (s *Server) Restart() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd != nil {
		return errors.New("pgtest: the server is running")
	}
	for attempt := 0; ; attempt++ {
		err := s.startLocked()
		if errors.Is(err, errShmemBusy) && attempt < 100 {
			// Backends of a killed server are still exiting.
			time.Sleep(100 * time.Millisecond)
			continue
		}
		return err
	}
}

var errShmemBusy = errors.New("the shared memory of a killed server is still in use")

// startLocked runs postgres once and waits until it accepts connections.
func (s *Server) startLocked() error {
	logPath := filepath.Join(s.dir, "postgres.log")
	logf, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	var from int64
	if fi, err := logf.Stat(); err == nil {
		from = fi.Size()
	}
	// fsync off: a test's data need not survive the machine, only the
	// process (the kernel keeps what was written). Commits stay
	// synchronous: a kill -9 of the server loses nothing acknowledged,
	// which fault tests rely on.
	cmd := s.command("postgres", "-D", s.dataDir(),
		"-k", s.dir, "-p", strconv.Itoa(port),
		"-c", "listen_addresses=",
		"-c", "fsync=off", "-c", "full_page_writes=off",
		"-c", "max_connections=200", "-c", "shared_buffers=32MB",
		"-c", "unix_socket_permissions=0777")
	cmd.Stdout, cmd.Stderr = logf, logf
	// If the test process dies (a panic, a timeout, kill -9) the server
	// must not outlive it: the parent-death signal asks for an immediate
	// shutdown. It fires when the thread that started the process exits,
	// so that thread stays locked to the goroutine waiting for it.
	setDeathSignal(cmd.SysProcAttr)
	started := make(chan error)
	done := make(chan struct{})
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		if err := cmd.Start(); err != nil {
			started <- err
			return
		}
		started <- nil
		cmd.Wait()
		close(done)
	}()
	if err := <-started; err != nil {
		logf.Close()
		return fmt.Errorf("postgres: %w", err)
	}
	s.cmd, s.done, s.log = cmd, done, logf
	// Wait for the socket to accept connections, or the process to exit.
	for i := 0; ; i++ {
		select {
		case <-done:
			s.cmd = nil
			logf.Close()
			out := s.tail(from)
			if strings.Contains(out, "pre-existing shared memory block") {
				return errShmemBusy
			}
			return fmt.Errorf("postgres exited at start: %s", out)
		default:
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		conn, err := pgx.Connect(ctx, s.AdminConnString("postgres"))
		cancel()
		if err == nil {
			conn.Close(context.Background())
			return nil
		}
		if i > 600 { // about a minute
			cmd.Process.Kill()
			<-done
			s.cmd = nil
			logf.Close()
			return fmt.Errorf("postgres did not accept connections: %v; %s", err, s.tail(from))
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// tail is the end of the server's log, for errors.
func (s *Server) tail(from int64) string {
	b, _ := os.ReadFile(filepath.Join(s.dir, "postgres.log"))
	if from <= int64(len(b)) {
		b = b[from:]
	}
	if len(b) > 2000 {
		b = b[len(b)-2000:]
	}
	return strings.TrimSpace(string(b))
}

// Stop shuts the server down (fast shutdown: clients are disconnected,
// in-flight transactions roll back) and waits for it to exit.
func (s *Server) Stop() { s.signal(syscall.SIGINT) }

// Kill stops the server the way a crash would (SIGKILL to postgres and its
// processes); Restart recovers from the write-ahead log.
func (s *Server) Kill() { s.signal(syscall.SIGKILL) }

func (s *Server) signal(sig syscall.Signal) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd == nil {
		return
	}
	pid := s.cmd.Process.Pid
	var children []int
	if sig == syscall.SIGKILL {
		// The postmaster's children are in sessions of their own: kill
		// them too, or they hold the shared memory a restart needs.
		children = childrenOf(pid)
	}
	s.cmd.Process.Signal(sig)
	for _, c := range children {
		syscall.Kill(c, syscall.SIGKILL)
	}
	select {
	case <-s.done:
	case <-time.After(time.Minute):
		s.cmd.Process.Kill()
		<-s.done
	}
	s.log.Close()
	s.cmd = nil
}

// childrenOf lists the processes whose parent is pid (Linux /proc).
func childrenOf(pid int) []int {
	var out []int
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	for _, p := range stats {
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...; comm may hold spaces and parens.
		i := strings.LastIndexByte(string(b), ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(string(b[i+1:]))
		if len(f) < 2 {
			continue
		}
		if ppid, _ := strconv.Atoi(f[1]); ppid == pid {
			if c, err := strconv.Atoi(filepath.Base(filepath.Dir(p))); err == nil {
				out = append(out, c)
			}
		}
	}
	return out
}

// remove stops the server and deletes its directory.
func (s *Server) remove() {
	s.Stop()
	os.RemoveAll(s.dir)
}

// DB creates an empty database for t, dropped at t's cleanup, and returns
// its connection string as the superuser "postgres". The databases of one
// server are independent: tests using them can run in parallel.
func (s *Server) DB(t testing.TB) string {
	t.Helper()
	return s.AdminConnString(s.NewDB(t, ""))
}

// NewDB creates an empty database for t owned by role (created if needed;
// "" for the superuser), dropped at t's cleanup, and returns its name for
// ConnString. A superuser bypasses row-level security: tests of access
// rules connect as roles that are not.
func (s *Server) NewDB(t testing.TB, owner string) string {
	t.Helper()
	name := fmt.Sprintf("t%d_%d", os.Getpid(), s.seq.Add(1))
	sql := "CREATE DATABASE " + pgx.Identifier{name}.Sanitize()
	if owner != "" {
		s.Role(t, owner)
		sql += " OWNER " + pgx.Identifier{owner}.Sanitize()
	}
	s.exec(t, "postgres", sql)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		conn, err := pgx.Connect(ctx, s.AdminConnString("postgres"))
		if err != nil {
			return // the server is gone: nothing to drop
		}
		defer conn.Close(ctx)
		conn.Exec(ctx, "DROP DATABASE IF EXISTS "+pgx.Identifier{name}.Sanitize()+" WITH (FORCE)")
	})
	return name
}

// Role creates a login role (no superuser, no special rights) if it does
// not exist. Roles belong to the server, not to a database.
func (s *Server) Role(t testing.TB, name string) {
	t.Helper()
	s.exec(t, "postgres", `DO $$ BEGIN
		IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = `+quoteLiteral(name)+`) THEN
			CREATE ROLE `+pgx.Identifier{name}.Sanitize()+` LOGIN;
		END IF;
	EXCEPTION WHEN duplicate_object OR unique_violation THEN
		NULL; -- created concurrently by another test
	END $$`)
}

// Exec runs sql as the superuser in database db.
func (s *Server) Exec(t testing.TB, db, sql string) {
	t.Helper()
	s.exec(t, db, sql)
}

func (s *Server) exec(t testing.TB, db, sql string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, s.AdminConnString(db))
	if err != nil {
		t.Fatalf("pgtest: connect: %v", err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, sql); err != nil {
		t.Fatalf("pgtest: %s: %v", sql, err)
	}
}

func quoteLiteral(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }
