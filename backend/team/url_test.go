package team

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
)

func TestParseURL(t *testing.T) {
	tests := []struct {
		name, url string
		insecure  bool   // want ErrInsecure
		err       string // want an error containing this
	}{
		{name: "unix socket", url: "postgres://alice@/team?host=/run/postgresql"},
		{name: "unix socket key=value", url: "host=/tmp/pg user=alice dbname=team sslmode=disable"},
		{name: "localhost without TLS", url: "postgres://alice:pw@localhost:5432/team?sslmode=disable"},
		{name: "127.0.0.1 without TLS", url: "postgres://alice@127.0.0.1/team?sslmode=disable"},
		{name: "::1 without TLS", url: "postgres://alice@[::1]:5432/team?sslmode=disable"},
		{name: "remote verify-full", url: "postgres://alice:pw@db.example.com/team?sslmode=verify-full"},
		{name: "remote require", url: "host=db.example.com user=alice sslmode=require"},
		{name: "remote disable", url: "postgres://alice:pw@db.example.com/team?sslmode=disable", insecure: true},
		{name: "remote prefer (the default) falls back to plain text", url: "postgres://alice:pw@db.example.com/team", insecure: true},
		{name: "remote allow", url: "host=10.0.0.5 user=alice sslmode=allow", insecure: true},
		{name: "loopback first, remote fallback", url: "postgres://alice@localhost,db.example.com/team?sslmode=disable", insecure: true},
		{name: "empty", url: "  ", err: "empty"},
		{name: "no user", url: "postgres://localhost/team?user=", err: ""},
		{name: "garbage", url: "postgres://alice:s3cr3t-pw@db.example.com:notaport/team", err: "invalid connection string"},
		{name: "malformed key=value", url: "user=alice password=s3cr3t-pw host", err: "invalid connection string"},
		{name: "bad sslmode", url: "host=db.example.com user=alice sslmode=sometimes", err: "invalid connection string"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseURL(tt.url)
			switch {
			case tt.insecure:
				if !errors.Is(err, ErrInsecure) {
					t.Errorf("ParseURL: %v, want ErrInsecure", err)
				}
			case tt.err != "":
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Errorf("ParseURL: %v, want an error with %q", err, tt.err)
				}
			case tt.name == "no user":
				// pgx fills the user from the OS user when none is given:
				// fine either way, as long as it does not panic.
			default:
				if err != nil {
					t.Errorf("ParseURL: %v", err)
				}
			}
			if err != nil && (strings.Contains(err.Error(), "s3cr3t") || strings.Contains(err.Error(), ":pw@")) {
				t.Errorf("the error shows the password: %v", err)
			}
		})
	}
}

func TestReadURL(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string, mode os.FileMode) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), mode); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p, mode); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good := write("good", "postgres://alice:pw@localhost/team\n", 0o600)
	open := write("open", "postgres://alice:pw@localhost/team", 0o644)
	empty := write("empty", "\n", 0o600)
	t.Setenv("MT_TEST_TEAM_URL", "")
	tests := []struct {
		name, env, envVal, file, want, err string
	}{
		{name: "file", env: "MT_TEST_TEAM_URL", file: good, want: "postgres://alice:pw@localhost/team"},
		{name: "env wins", env: "MT_TEST_TEAM_URL", envVal: "host=/tmp user=x", file: good, want: "host=/tmp user=x"},
		{name: "file readable by others", env: "MT_TEST_TEAM_URL", file: open, err: "make it 0600"},
		{name: "empty file", env: "MT_TEST_TEAM_URL", file: empty, err: "is empty"},
		{name: "missing file", env: "MT_TEST_TEAM_URL", file: filepath.Join(dir, "nope"), err: "no such file"},
		{name: "neither", env: "MT_TEST_TEAM_URL", err: "set $MT_TEST_TEAM_URL"},
		{name: "a directory", env: "MT_TEST_TEAM_URL", file: dir, err: "not a regular file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv(tt.env, tt.envVal)
			got, err := ReadURL(tt.env, tt.file)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Errorf("ReadURL: %q, %v; want an error with %q", got, err, tt.err)
				}
				if err != nil && strings.Contains(err.Error(), "pw@") {
					t.Errorf("the error shows the password: %v", err)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Errorf("ReadURL: %q, %v; want %q", got, err, tt.want)
			}
		})
	}
}

// FuzzParseURL: any string is accepted or refused without a panic; an
// accepted one obeys the TLS rule for every host it may connect to; no
// error shows a password (a password= value or a URL's, or what pgx parses
// as the password), unless the same text is also another part of the
// string (a host named like the password is named in the error).
func FuzzParseURL(f *testing.F) {
	for _, s := range []string{
		"postgres://alice:hunter22@db.example.com/team?sslmode=verify-full",
		"postgres://alice:hunter22@localhost/team?sslmode=disable",
		"host=/tmp user=alice password=hunter22 sslmode=disable",
		"host=db.example.com,localhost user=alice password='hunter 22' sslmode=prefer",
		"postgresql://alice:hunter22@[::1]:5/x?sslmode=allow&host=/run",
		"postgres://alice:hunter22@h:99999/x",
		"user=alice password=hunter22 host=10.1.1.1 port=x",
		"user=alice password=hunter22 host",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		cfg, err := ParseURL(s)
		if err != nil {
			secrets := secretsIn(s)
			if pc, perr := pgconn.ParseConfig(s); perr == nil {
				secrets = append(secrets, pc.Password)
			}
			for _, p := range secrets {
				if len(p) >= 6 && strings.Count(s, p) == 1 && strings.Contains(err.Error(), p) {
					t.Fatalf("the error shows the password %q: %v", p, err)
				}
			}
			return
		}
		cc := cfg.ConnConfig
		if cc.TLSConfig == nil && !Local(cc.Host) {
			t.Fatalf("accepted plain text to %q", cc.Host)
		}
		for _, fb := range cc.Fallbacks {
			if fb.TLSConfig == nil && !Local(fb.Host) {
				t.Fatalf("accepted a plain-text fallback to %q", fb.Host)
			}
		}
	})
}

// A connection that fails says where it tried, never with the password.
func TestOpenErrorHidesPassword(t *testing.T) {
	for _, url := range []string{
		"postgres://alice:s3cr3t-pw@/team?host=" + t.TempDir() + "&connect_timeout=5",
		"host=" + t.TempDir() + " user=alice password=s3cr3t-pw dbname=team connect_timeout=5",
	} {
		_, err := Open(t.Context(), url)
		if err == nil {
			t.Fatal("connected to an empty directory")
		}
		if strings.Contains(err.Error(), "s3cr3t") {
			t.Errorf("the error shows the password: %v", err)
		}
	}
}
