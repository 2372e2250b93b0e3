package crashtest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/memtray/memtray/backend/cli"
	"github.com/memtray/memtray/backend/daemon"
	"github.com/memtray/memtray/backend/httpapi"
)

// childEnv, when set, makes the test binary be `memtray` with the
// arguments it holds (a JSON array): the harness's daemons are this binary
// re-executed, so they run exactly the code `memtray serve` runs (with the
// race detector when the tests have it).
const childEnv = "MEMTRAY_CRASHTEST_ARGS"

func TestMain(m *testing.M) {
	if raw := os.Getenv(childEnv); raw != "" {
		var args []string
		if err := json.Unmarshal([]byte(raw), &args); err != nil {
			fmt.Fprintln(os.Stderr, "crashtest child:", err)
			os.Exit(2)
		}
		os.Exit(cli.Main(args, os.Stdin, os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

// install is one memtray installation: a data dir, a config file and a
// home, all in the test's temporary directory.
type install struct {
	root, dataDir, cfgPath, home string
}

// newInstall writes a config that uses the fake Ollama's model first and
// turns the steward's schedule off (the harness runs the steward itself,
// on its own projects, so that what it changes stays checkable).
func newInstall(t *testing.T, ollamaURL, model string) *install {
	t.Helper()
	root := t.TempDir()
	in := &install{root: root, dataDir: filepath.Join(root, "data"), cfgPath: filepath.Join(root, "config.json"), home: filepath.Join(root, "home")}
	if err := os.MkdirAll(in.home, 0o700); err != nil {
		t.Fatal(err)
	}
	cfg := map[string]any{
		"embedder": map[string]any{"provider": "ollama", "ollama_host": ollamaURL, "ollama_model": model},
		"steward":  map[string]any{"every": "0s"},
		"recall":   map[string]any{"skills": false},
		// The fake vectors mean nothing to the content score gate.
		"ingest": map[string]any{"content_threshold": 0.01},
	}
	b, _ := json.MarshalIndent(cfg, "", "  ")
	if err := os.WriteFile(in.cfgPath, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return in
}

// proc is one running daemon.
type proc struct {
	cmd     *exec.Cmd
	addr    string
	client  *httpapi.Client
	stderr  *syncBuffer
	started time.Duration // from exec to the listening line
	begin   time.Time
	addrc   chan string   // the address, once it listens
	exited  chan struct{} // closed when the process has been waited for
	waitErr error
}

// start runs `memtray serve` on the install and waits until it listens.
func (in *install) start() (*proc, error) {
	p, err := in.startNoWait()
	if err != nil {
		return nil, err
	}
	select {
	case p.addr = <-p.addrc:
	case <-p.exited:
		return nil, fmt.Errorf("memtray serve exited before it listened (%v): %s", p.waitErr, p.stderr.String())
	case <-time.After(90 * time.Second):
		p.kill()
		return nil, fmt.Errorf("memtray serve did not listen within 90 s: %s", p.stderr.String())
	}
	p.started = time.Since(p.begin)
	tok, err := daemon.ReadToken(in.dataDir)
	if err != nil {
		p.kill()
		return nil, err
	}
	p.client = httpapi.NewClient(p.addr, tok)
	return p, nil
}

// startNoWait runs `memtray serve` on the install.
func (in *install) startNoWait() (*proc, error) {
	args, _ := json.Marshal([]string{"serve", "--data-dir", in.dataDir, "--config", in.cfgPath, "--listen", "127.0.0.1:0"})
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"="+string(args), "HOME="+in.home, "XDG_CONFIG_HOME="+filepath.Join(in.home, ".config"),
		"XDG_DATA_HOME="+filepath.Join(in.home, ".local", "share"), "MEMTRAY_DATA_DIR=", "MEMTRAY_CONFIG=")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	p := &proc{cmd: cmd, stderr: &syncBuffer{}, exited: make(chan struct{}), addrc: make(chan string, 1)}
	cmd.Stderr = p.stderr
	p.begin = time.Now()
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if _, rest, ok := strings.Cut(sc.Text(), "is serving on http://"); ok {
				p.addrc <- strings.TrimSpace(rest)
			}
		}
		io.Copy(io.Discard, stdout)
		p.waitErr = cmd.Wait()
		close(p.exited)
	}()
	return p, nil
}

// kill sends SIGKILL and waits for the process to be gone.
func (p *proc) kill() {
	_ = p.cmd.Process.Signal(syscall.SIGKILL)
	<-p.exited
}

// stop asks the daemon to shut down (SIGTERM, as a service manager does)
// and waits for it.
func (p *proc) stop() error {
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.exited:
		return p.waitErr
	case <-time.After(30 * time.Second):
		p.kill()
		return fmt.Errorf("memtray serve did not stop within 30 s of SIGTERM")
	}
}

// raced reports a data race the race detector printed.
func (p *proc) raced() string {
	s := p.stderr.String()
	if i := strings.Index(s, "WARNING: DATA RACE"); i >= 0 {
		return s[i:min(len(s), i+4000)]
	}
	return ""
}

// syncBuffer is a bytes.Buffer safe for a writer and readers at once.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
