package cli

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memtray/memtray/backend/daemon"
	"github.com/memtray/memtray/backend/refuse"
)

// TestFaultStatsShowsWarnings: `memtray stats` prints what the overview
// warns about, here a provider that cannot be reached, and stops printing
// it once the provider answers again.
func TestFaultStatsShowsWarnings(t *testing.T) {
	dir := isolate(t)
	down := refuse.New(t)
	dead := down.HostPort
	var out, errb syncBuffer
	startServe(t, &out, &errb, "--data-dir", dir, "--listen", "127.0.0.1:0", "--anthropic-upstream", "http://"+dead).waitServing(t)
	_, sout, _ := run(t, context.Background(), "", "stats", "--data-dir", dir)
	if strings.Contains(sout, "warning:") {
		t.Fatalf("warnings before any fault:\n%s", sout)
	}
	addr := strings.TrimSpace(out.String()[strings.Index(out.String(), "serving on")+len("serving on"):])
	addr = strings.TrimPrefix(strings.Fields(addr)[0], "http://")
	post := func() int {
		resp, err := http.Post("http://"+addr+"/v1/messages", "application/json", strings.NewReader(`{"model":"m","max_tokens":5,"messages":[{"role":"user","content":"hi"}]}`))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if status := post(); status != http.StatusBadGateway {
		t.Fatalf("proxy with the provider down: %d", status)
	}
	code, sout, errs := run(t, context.Background(), "", "stats", "--data-dir", dir)
	if code != 0 || !strings.Contains(sout, "warning:    The provider at "+dead+" cannot be reached") {
		t.Fatalf("stats does not show the fault: %d\n%s%s", code, sout, errs)
	}
	// The provider comes back.
	down.Release()
	ln, err := net.Listen("tcp", dead)
	if err != nil {
		t.Skipf("address taken meanwhile: %v", err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(200) })}
	go srv.Serve(ln)
	defer srv.Close()
	if status := post(); status != 200 {
		t.Fatalf("proxy with the provider back: %d", status)
	}
	if _, sout, _ := run(t, context.Background(), "", "stats", "--data-dir", dir); strings.Contains(sout, "warning:") {
		t.Fatalf("stats still warns after recovery:\n%s", sout)
	}
}

// TestFaultDamagedRecordsFile: a records file cut to half its size (the
// pages past the cut are gone; bbolt panicked reading the pages its meta
// still names) makes the commands that open the store (stats without a
// daemon, serve) exit with the store's clear error: the file, that it is
// damaged, and what to do. The file is left as it was.
func TestFaultDamagedRecordsFile(t *testing.T) {
	dir, path, before := halvedStore(t)
	ctx := context.Background()
	for _, args := range [][]string{
		{"stats", "--data-dir", dir},
		{"serve", "--data-dir", dir, "--listen", "127.0.0.1:0"},
	} {
		code, _, errs := run(t, ctx, "", args...)
		if code == 0 || !strings.Contains(errs, path+" is damaged") || !strings.Contains(errs, "memtray doctor") {
			t.Errorf("%s on a damaged records file: exit %d\n%s", args[0], code, errs)
		}
	}
	if after, _ := os.ReadFile(path); !bytes.Equal(before, after) {
		t.Error("the damaged records file was changed")
	}
}

// halvedStore returns an isolated data directory whose store holds 30
// memories and whose records file is then cut to half its size (whole
// pages), the file's path, and its bytes after the cut.
func halvedStore(t *testing.T) (dir, path string, before []byte) {
	t.Helper()
	dir = isolate(t)
	for i := range 30 {
		if code, _, errs := run(t, context.Background(), "", "add", "--data-dir", dir, fmt.Sprintf("Service %d reads its settings from conf/service-%d.toml at start.", i, i)); code != 0 {
			t.Fatalf("add: %d %s", code, errs)
		}
	}
	path = filepath.Join(dir, daemon.StoreDir, "memtray.db")
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(path, fi.Size()/2/4096*4096); err != nil {
		t.Fatal(err)
	}
	before, _ = os.ReadFile(path)
	return dir, path, before
}
