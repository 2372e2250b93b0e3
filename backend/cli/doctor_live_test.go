package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memtray/memtray/backend/daemon"
	"github.com/memtray/memtray/backend/store"
)

// garbleRecordInFile breaks the JSON of every copy of the record whose
// text holds needle, in the records file at path (a quote where the
// text's first byte was): the record cannot be decoded, every page of
// bbolt's is intact.
func garbleRecordInFile(t *testing.T, path, needle string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	n := bytes.Count(b, []byte(needle))
	if n == 0 {
		t.Fatalf("no record holding %q in %s", needle, path)
	}
	b = bytes.ReplaceAll(b, []byte(needle), append([]byte(`"`), needle[1:]...))
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestDoctorWhileDaemonRuns: with a daemon serving the store on loopback
// (it holds the store's lock), `memtray doctor` checks the store through
// the daemon's API instead of refusing: the same report, on a healthy
// store and on one whose record the test garbled before the daemon
// started (the daemon starts, skipping the record), the daemon still
// serving after; the repairs are refused until it is quit, and the route
// wants the token.
func TestDoctorWhileDaemonRuns(t *testing.T) {
	ctx := context.Background()
	const n = 12
	cases := []struct {
		name    string
		damage  func(t *testing.T, path string)
		want    string // what the report says ("" : no damage)
		records int
	}{
		{"healthy", func(*testing.T, string) {}, "", n},
		{"a record garbled", func(t *testing.T, path string) {
			garbleRecordInFile(t, path, "Worker 3 retries")
		}, "cannot be read", n - 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg := mcpIsolate(t)
			dd := "--data-dir=" + cfg.DataDir
			for i := range n {
				if code, _, errs := run(t, ctx, "", "add", dd, fmt.Sprintf("Worker %d retries a failed upload of batch-%d.bin three times, then gives up.", i, i)); code != 0 {
					t.Fatalf("add: %d %s", code, errs)
				}
			}
			tc.damage(t, filepath.Join(cfg.DataDir, daemon.StoreDir, "memtray.db"))
			d := serveDaemon(t, cfg)

			code, out, errs := run(t, ctx, "", "doctor", dd)
			t.Logf("doctor: exit %d\n%s%s", code, out, errs)
			if !strings.Contains(out, "checked by the running daemon") || !strings.Contains(out, fmt.Sprintf("records:     %d readable", tc.records)) {
				t.Errorf("doctor did not check through the daemon:\n%s%s", out, errs)
			}
			if tc.want == "" && (code != 0 || !strings.Contains(out, "no damage found")) {
				t.Errorf("healthy store: exit %d\n%s%s", code, out, errs)
			}
			if tc.want != "" && (code != 1 || !strings.Contains(out, tc.want) || !strings.Contains(out, "memtray doctor --salvage")) {
				t.Errorf("damaged store: exit %d, want 1 saying %q and the salvage\n%s%s", code, tc.want, out, errs)
			}
			code, out, _ = run(t, ctx, "", "doctor", dd, "--json")
			var rep store.CheckReport
			if err := json.Unmarshal([]byte(out), &rep); err != nil || rep.Records != tc.records || rep.Damaged() != (tc.want != "") || (code == 1) != rep.Damaged() {
				t.Errorf("doctor --json: exit %d, %v: %s", code, err, out)
			}
			for _, repair := range []string{"--salvage", "--reembed-damaged"} { // --rebuild-index runs through it: TestRebuildIndexBesideDaemon
				if code, _, errs := run(t, ctx, "", "doctor", dd, repair); code != 1 || !strings.Contains(errs, "memtray is running on this data dir") {
					t.Errorf("doctor %s while the daemon runs: exit %d %s", repair, code, errs)
				}
			}
			if code, out, errs := run(t, ctx, "", "add", dd, "The nightly job rotates logs/app.log at 02:00."); code != 0 {
				t.Errorf("the daemon does not serve after the check: exit %d %s%s", code, out, errs)
			}
			rt, err := daemon.ReadRuntime(cfg.DataDir)
			if err != nil {
				t.Fatal(err)
			}
			resp, err := http.Get("http://" + rt.Listen + "/api/doctor")
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusUnauthorized {
				t.Errorf("GET /api/doctor without the token: %s", resp.Status)
			}
			_ = d
		})
	}
}
