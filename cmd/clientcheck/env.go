package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// world is one client's temporary machine: a HOME, a project directory to
// run the client in, memtray's config and non-default data dir, the fake
// upstreams, the tap, and `memtray serve` once started.
type world struct {
	client  *client
	memtray string // the memtray binary
	root    string // temporary root; everything below it
	home    string // $HOME
	project string // the working directory the client runs in
	dataDir string // memtray's data dir (not the default, on purpose)
	config  string // memtray's config file
	recDir  string // where the wrapper records hook and MCP calls
	wrapper string // the memtray the configs run: records, then runs memtray

	anth, oai *fake
	tap       *tap
	serve     *exec.Cmd
	serveLog  *os.File
	serveAddr string
	// pinData, in -record mode, gives the client's hooks and MCP server
	// the data dir by MEMTRAY_DATA_DIR, so they reach the daemon and the
	// recordings are complete even where setup does not carry --data-dir
	// yet (issue 24 item 1); the checks run without it.
	pinData bool
}

// projectName is the last element of the directory the clients run in:
// the project memtray must give their memories.
const projectName = "demo-app"

// newWorld makes the directories, the fakes and the tap for one client.
func newWorld(c *client, memtray string) (*world, error) {
	root, err := os.MkdirTemp("", "clientcheck-")
	if err != nil {
		return nil, fmt.Errorf("temp root: %w", err)
	}
	w := &world{client: c, memtray: memtray, root: root, home: filepath.Join(root, "home")}
	w.project = filepath.Join(w.home, "src", projectName)
	w.dataDir = filepath.Join(root, "memtray-data")
	w.config = filepath.Join(w.home, ".config", "memtray", "config.json")
	w.recDir = filepath.Join(root, "rec")
	w.wrapper = filepath.Join(root, "bin", "memtray")
	for _, d := range []string{w.project, filepath.Dir(w.config), w.recDir, filepath.Dir(w.wrapper)} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return nil, fmt.Errorf("world: %w", err)
		}
	}
	readme := filepath.Join(w.project, "README.md")
	if err := os.WriteFile(readme, []byte("# demo-app\n\nThe orders service. Run the tests with `make test`.\n"), 0o644); err != nil {
		return nil, fmt.Errorf("world: %w", err)
	}
	// The recording wrapper: hooks' stdin and stdout, MCP's both ways.
	script := fmt.Sprintf(`#!/bin/sh
# clientcheck: records what the client hands memtray, then runs it.
rec=%q real=%q
n=$(date +%%s%%N)
case "$1" in
hook)
  f="$rec/hook-$n-$2"
  cat > "$f.in"
  case "$2" in record-only-*) echo 0 > "$f.rc"; exit 0 ;; esac
  "$real" "$@" < "$f.in" > "$f.out" 2> "$f.err"
  rc=$?
  echo $rc > "$f.rc"
  cat "$f.out"
  exit $rc ;;
mcp)
  f="$rec/mcp-$n"
  tee "$f.in" | "$real" "$@" | tee "$f.out"
  exit 0 ;;
esac
exec "$real" "$@"
`, w.recDir, memtray)
	if err := os.WriteFile(w.wrapper, []byte(script), 0o755); err != nil {
		return nil, fmt.Errorf("world: %w", err)
	}
	if w.anth, err = newFake("anthropic", readme); err != nil {
		return nil, err
	}
	if w.oai, err = newFake("openai", readme); err != nil {
		return nil, err
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("world: %w", err)
	}
	w.serveAddr = l.Addr().String()
	l.Close()
	if w.tap, err = newTap("http://" + w.serveAddr); err != nil {
		return nil, err
	}
	cfg := fmt.Sprintf(`{
  "listen": %q,
  "embedder": {"provider": "builtin"},
  "capture": {"anthropic_upstream": %q, "openai_upstream": %q}
}
`, strings.TrimPrefix(w.tap.url, "http://"), w.anth.url, w.oai.url)
	if err := os.WriteFile(w.config, []byte(cfg), 0o644); err != nil {
		return nil, fmt.Errorf("world: %w", err)
	}
	return w, nil
}

// Close stops memtray, the fakes and the tap, and removes the root unless
// keep is set.
func (w *world) Close(keep bool) {
	w.stopServe()
	w.anth.Close()
	w.oai.Close()
	w.tap.Close()
	if !keep {
		os.RemoveAll(w.root)
	}
}

// env is the environment the client and memtray run with: only this
// world's HOME, dummy keys, and no traffic beyond the fakes.
func (w *world) env(extra ...string) []string {
	e := []string{
		"HOME=" + w.home,
		"PATH=" + filepath.Dir(w.wrapper) + ":" + os.Getenv("PATH"),
		"LANG=C.UTF-8",
		"TERM=dumb",
		"TMPDIR=" + w.root,
		"ANTHROPIC_API_KEY=sk-ant-clientcheck-dummy",
		"OPENAI_API_KEY=sk-clientcheck-dummy",
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
		"DISABLE_AUTOUPDATER=1",
		"DISABLE_TELEMETRY=1",
		"NO_PROXY=127.0.0.1,localhost",
	}
	if w.pinData {
		e = append(e, "MEMTRAY_DATA_DIR="+w.dataDir)
	}
	return append(e, extra...)
}

// memtrayCmd runs a memtray command in this world (its config, its data dir).
func (w *world) memtrayCmd(ctx context.Context, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, w.memtray, args...)
	cmd.Env = w.env()
	cmd.Dir = w.project
	out, err := cmd.CombinedOutput()
	if err != nil {
		return out, fmt.Errorf("memtray %s: %w: %s", strings.Join(args, " "), err, bytes.TrimSpace(out))
	}
	return out, nil
}

// startServe starts `memtray serve` on serveAddr with the world's data dir
// and waits until it answers.
func (w *world) startServe(ctx context.Context) error {
	f, err := os.Create(filepath.Join(w.root, "serve.log"))
	if err != nil {
		return fmt.Errorf("serve log: %w", err)
	}
	w.serveLog = f
	w.serve = exec.Command(w.memtray, "serve", "--listen", w.serveAddr, "--data-dir", w.dataDir, "--config", w.config)
	w.serve.Env = w.env()
	w.serve.Stdout, w.serve.Stderr = f, f
	if err := w.serve.Start(); err != nil {
		return fmt.Errorf("memtray serve: %w", err)
	}
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		resp, err := http.Get("http://" + w.serveAddr + "/api/health")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode < 500 {
				return nil
			}
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		time.Sleep(100 * time.Millisecond)
	}
	return errors.New("memtray serve did not answer within 60 s (see serve.log)")
}

func (w *world) stopServe() {
	if w.serve == nil || w.serve.Process == nil {
		return
	}
	w.serve.Process.Signal(os.Interrupt) //nolint:errcheck // it may have ended
	done := make(chan struct{})
	go func() { w.serve.Wait(); close(done) }() //nolint:errcheck // ending it
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		w.serve.Process.Kill() //nolint:errcheck // best effort
		<-done
	}
	w.serve = nil
	w.serveLog.Close()
}

// snapshot hashes every regular file under HOME (but the project and the
// clients' logs and caches, which the clients write as they run), for the
// undo check.
func (w *world) snapshot() (map[string]string, error) {
	out := map[string]string{}
	err := filepath.WalkDir(w.home, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(w.home, p)
		if d.IsDir() {
			if rel == "src" {
				return filepath.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() || strings.HasSuffix(p, ".memtray-backup") {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		s := sha256.Sum256(b)
		out[rel] = hex.EncodeToString(s[:8])
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("snapshot: %w", err)
	}
	return out, nil
}

// diffSnapshots names the files that differ between a and b.
func diffSnapshots(a, b map[string]string) []string {
	var d []string
	for k, v := range a {
		if b[k] != v {
			d = append(d, k)
		}
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			d = append(d, k+" (new)")
		}
	}
	return d
}
