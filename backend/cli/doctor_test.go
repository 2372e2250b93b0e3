package cli

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memtray/memtray/backend/daemon"
	"github.com/memtray/memtray/backend/store"
)

// doctorStore adds n memories to a new store in a new data dir and
// returns the data dir.
func doctorStore(t *testing.T, n int) string {
	t.Helper()
	dir := isolate(t)
	for i := range n {
		if code, _, errs := run(t, context.Background(), "", "add", "--data-dir", dir,
			fmt.Sprintf("Worker %d retries a failed upload of batch-%d.bin three times, then gives up.", i, i)); code != 0 {
			t.Fatalf("add: %d %s", code, errs)
		}
	}
	return dir
}

// TestDoctor: `memtray doctor` on a store without damage, on each kind of
// damage the tests make to its files, and its repairs: what it says, its
// exit code, and what the other commands see after.
func TestDoctor(t *testing.T) {
	ctx := context.Background()
	const n = 40
	cases := []struct {
		name   string
		damage func(t *testing.T, store string)
		// what doctor says (exit 1) and the repair it names; "" : no damage
		want, repair string
		// after the repair, how many memories list shows at least
		after int
	}{
		{"no damage", func(*testing.T, string) {}, "", "", n},
		{"records file truncated to half", func(t *testing.T, dir string) {
			path := filepath.Join(dir, "memtray.db")
			fi, err := os.Stat(path)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.Truncate(path, fi.Size()/2/4096*4096); err != nil {
				t.Fatal(err)
			}
		}, "truncated", "--salvage", 1},
		{"text index deleted", func(t *testing.T, dir string) {
			if err := os.RemoveAll(filepath.Join(dir, "text.bleve")); err != nil {
				t.Fatal(err)
			}
		}, "", "", n},
		{"text index files garbled", func(t *testing.T, dir string) {
			files, _ := filepath.Glob(filepath.Join(dir, "text.bleve", "*"))
			for _, f := range files {
				if fi, err := os.Stat(f); err == nil && !fi.IsDir() {
					if err := os.WriteFile(f, []byte("garbage"), 0o600); err != nil {
						t.Fatal(err)
					}
				}
			}
		}, "text index (BM25) cannot be read", "--rebuild-index", n},
		// At 914b286 the doctor called such a record unreadable, to
		// salvage, and had no repair of its own.
		{"a memory's vector is NaN", func(t *testing.T, dir string) {
			nanVectorInFile(t, filepath.Join(dir, "memtray.db"), "Worker 0 retries")
		}, "1 records have a damaged vector", "--reembed-damaged", n},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := doctorStore(t, n)
			dd := "--data-dir=" + dir
			tc.damage(t, filepath.Join(dir, daemon.StoreDir))
			code, out, errs := run(t, ctx, "", "doctor", dd)
			t.Logf("doctor: exit %d\n%s%s", code, out, errs)
			if tc.want == "" {
				if code != 0 || !strings.Contains(out, "no damage found") {
					t.Fatalf("doctor on a store without damage: exit %d\n%s%s", code, out, errs)
				}
			} else if code != 1 || !strings.Contains(out, tc.want) || !strings.Contains(out, "memtray doctor "+tc.repair) {
				t.Fatalf("doctor: exit %d, want 1 saying %q and %q\n%s%s", code, tc.want, tc.repair, out, errs)
			}
			code, out, errs = run(t, ctx, "", "doctor", dd, "--json")
			var rep store.CheckReport
			if err := json.Unmarshal([]byte(out), &rep); err != nil || (code == 1) != (tc.want != "") || len(rep.Problems) == 0 && tc.want != "" {
				t.Fatalf("doctor --json: exit %d, %v\n%s%s", code, err, out, errs)
			}
			if tc.repair == "" {
				return
			}
			code, out, errs = run(t, ctx, "", "doctor", dd, tc.repair)
			t.Logf("doctor %s: exit %d\n%s%s", tc.repair, code, out, errs)
			if code != 0 {
				t.Fatalf("doctor %s: exit %d\n%s%s", tc.repair, code, out, errs)
			}
			if tc.repair == "--salvage" && (!strings.Contains(out, "salvaged:") || !strings.Contains(out, "lost:") || !strings.Contains(out, ".damaged-") || !strings.Contains(out, "left out: never carried over")) {
				t.Errorf("salvage does not say what it saved, lost, kept and left out:\n%s", out)
			}
			if tc.repair == "--reembed-damaged" && !strings.Contains(out, ": 1 memories whose stored vector was damaged") {
				t.Errorf("--reembed-damaged does not say how many it embedded:\n%s", out)
			}
			if code, out, errs := run(t, ctx, "", "doctor", dd); code != 0 {
				t.Errorf("doctor after %s: exit %d\n%s%s", tc.repair, code, out, errs)
			}
			code, out, errs = run(t, ctx, "", "list", dd, "--limit", "1000")
			if code != 0 {
				t.Fatalf("list after %s: exit %d %s", tc.repair, code, errs)
			}
			var shown int
			if _, err := fmt.Sscanf(out[strings.LastIndex(strings.TrimSpace(out), "\n")+1:], "%d of", &shown); err != nil || shown < tc.after || shown > n {
				t.Errorf("list after %s shows %d memories (%v), want %d..%d:\n%s", tc.repair, shown, err, tc.after, n, out)
			}
		})
	}
}

// nanVectorInFile writes NaN over the first number of the vector of the
// record whose text holds needle, in the records file at path: in every
// copy of the record the file holds (freed pages keep older ones), each
// found as its JSON (which the vector follows) around needle.
func nanVectorInFile(t *testing.T, path, needle string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for at := 0; ; {
		i := bytes.Index(b[at:], []byte(needle))
		if i < 0 {
			break
		}
		i += at
		at = i + len(needle)
		start := bytes.LastIndex(b[:i], []byte(`{"id":"`))
		if start < 0 {
			continue
		}
		dec := json.NewDecoder(bytes.NewReader(b[start:]))
		var raw json.RawMessage
		if dec.Decode(&raw) != nil {
			continue
		}
		end := start + int(dec.InputOffset())
		binary.LittleEndian.PutUint32(b[end:], math.Float32bits(float32(math.NaN())))
		n++
	}
	if n == 0 {
		t.Fatalf("no record holding %q in %s", needle, path)
	}
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestDoctorUsage: the repairs are one at a time, and the doctor takes no
// arguments.
func TestDoctorUsage(t *testing.T) {
	dir := isolate(t)
	for _, args := range [][]string{{"doctor", "--salvage", "--rebuild-index"}, {"doctor", "--reembed-damaged", "--salvage"}, {"doctor", "now"}} {
		if code, _, errs := run(t, context.Background(), "", append(args, "--data-dir", dir)...); code != 2 {
			t.Errorf("%v: exit %d, want 2\n%s", args, code, errs)
		}
	}
}
