package pgtest_test

import (
	"context"
	"os"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/memtray/memtray/backend/team/pgtest"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

func query(t *testing.T, conn string, sql string) string {
	t.Helper()
	ctx := context.Background()
	c, err := pgx.Connect(ctx, conn)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	defer c.Close(ctx)
	var out string
	if err := c.QueryRow(ctx, sql).Scan(&out); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	return out
}

func TestSharedServer(t *testing.T) {
	srv := pgtest.Shared(t)
	a, b := srv.DB(t), srv.DB(t)
	if a == b {
		t.Fatalf("two databases share a connection string: %s", a)
	}
	if v := query(t, a, "SHOW server_version_num"); v < "150000" {
		t.Errorf("server version %s, want 15 or later", v)
	}
	// No TCP: the server listens on its socket only.
	if v := query(t, a, "SHOW listen_addresses"); v != "" {
		t.Errorf("listen_addresses = %q, want none", v)
	}
	srv.Role(t, "alice")
	srv.Role(t, "alice") // idempotent
	if who := query(t, srv.ConnString("alice", "postgres"), "SELECT current_user::text"); who != "alice" {
		t.Errorf("connected as %q, want alice", who)
	}
	if su := query(t, srv.ConnString("alice", "postgres"), "SELECT rolsuper::text FROM pg_roles WHERE rolname = current_user"); su != "false" {
		t.Errorf("alice is a superuser")
	}
}

func TestPrivateServerRestart(t *testing.T) {
	srv := pgtest.Start(t)
	db := srv.DB(t)
	srv.Exec(t, "postgres", "SELECT 1")
	query(t, db, "SELECT 'x'")
	srv.Stop()
	ctx := context.Background()
	if c, err := pgx.Connect(ctx, db); err == nil {
		c.Close(ctx)
		t.Fatal("connected to a stopped server")
	}
	if err := srv.Restart(); err != nil {
		t.Fatal(err)
	}
	query(t, db, "SELECT 'x'")
	srv.Kill()
	if err := srv.Restart(); err != nil {
		t.Fatalf("restart after kill: %v", err)
	}
	query(t, db, "SELECT 'x'")
}

func TestSkipWithoutBinaries(t *testing.T) {
	t.Setenv("MEMTRAY_PG_BIN", t.TempDir())
	var skipped bool
	t.Run("start", func(t *testing.T) {
		defer func() { skipped = t.Skipped() }()
		pgtest.Start(t)
	})
	if !skipped {
		t.Error("Start did not skip without the binaries")
	}
}
