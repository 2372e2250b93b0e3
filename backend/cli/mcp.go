package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/memtray/memtray/backend/config"
)

// DaemonLog is the file in the data dir that a daemon started by
// `memtray mcp` writes its output to.
const DaemonLog = "daemon.log"

// daemonStartTimeout bounds the wait for a daemon `memtray mcp` started.
var daemonStartTimeout = 15 * time.Second

// startDaemon starts a headless daemon on cfg's data dir; the channel
// reports its exit. Tests replace it.
var startDaemon = spawnDaemon

// runMCP is `memtray mcp`: an MCP server on stdin/stdout for an agent. It
// bridges to the running daemon's streamable HTTP endpoint (/mcp), starting
// a headless daemon when none answers, so every agent shares one daemon and
// one store.
func runMCP(env *Env, args []string) error {
	var c common
	fs := newFlags("mcp", env, &c, false)
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usagef("mcp takes no arguments, got %q", pos[0])
	}
	cfg, err := c.load()
	if err != nil {
		return err
	}
	addr, tok, err := ensureDaemon(env.Ctx, cfg, c.configPath, env.Stderr)
	if err != nil {
		return err
	}
	return bridgeMCP(env.Ctx, env.Stdin, env.Stdout, env.Stderr, "http://"+addr+"/mcp", tok)
}

// findDaemon is remote() as an address and token.
func findDaemon(ctx context.Context, cfg config.Config) (addr, token string, ok bool) {
	cl, ok := remote(ctx, cfg)
	if !ok {
		return "", "", false
	}
	return cl.Addr(), cl.Token(), true
}

// ensureDaemon finds the running daemon, or starts one headless and waits
// until it answers.
func ensureDaemon(ctx context.Context, cfg config.Config, configPath string, stderr io.Writer) (addr, token string, err error) {
	if addr, tok, ok := findDaemon(ctx, cfg); ok {
		return addr, tok, nil
	}
	logPath := filepath.Join(cfg.DataDir, DaemonLog)
	exited, err := startDaemon(cfg, configPath)
	if err != nil {
		return "", "", fmt.Errorf("no memtray daemon runs on %s and starting one failed: %w", cfg.DataDir, err)
	}
	fmt.Fprintf(stderr, "memtray mcp: started a daemon on %s (log: %s)\n", cfg.DataDir, logPath)
	deadline := time.NewTimer(daemonStartTimeout)
	defer deadline.Stop()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return "", "", ctx.Err()
		case err := <-exited:
			// Another agent's daemon may have won the race for the port.
			if addr, tok, ok := findDaemon(ctx, cfg); ok {
				return addr, tok, nil
			}
			return "", "", fmt.Errorf("the daemon started for %s exited (%v) before answering; its log %s ends:\n%s", cfg.DataDir, err, logPath, logTail(logPath, 8))
		case <-deadline.C:
			return "", "", fmt.Errorf("the daemon started for %s did not answer within %s; its log %s ends:\n%s", cfg.DataDir, daemonStartTimeout, logPath, logTail(logPath, 8))
		case <-tick.C:
			if addr, tok, ok := findDaemon(ctx, cfg); ok {
				return addr, tok, nil
			}
		}
	}
}

// daemonCommand is the command that runs a headless daemon on cfg's data
// dir, detached from the terminal and the agent, its output in log.
func daemonCommand(exe string, cfg config.Config, configPath string, log *os.File) *exec.Cmd {
	args := []string{"serve", "--data-dir", cfg.DataDir}
	if configPath != "" {
		args = append(args, "--config", configPath)
	}
	cmd := exec.Command(exe, args...)
	cmd.Stdin = nil // /dev/null
	// Only the log (stderr) goes to the file: serve's banner on stdout
	// carries the login link with the token.
	cmd.Stdout, cmd.Stderr = nil, log
	cmd.Dir = cfg.DataDir
	detach(cmd)
	return cmd
}

// spawnDaemon starts `memtray serve` on cfg's data dir in the background.
// It outlives this process; the channel reports an early exit.
func spawnDaemon(cfg config.Config, configPath string) (<-chan error, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("find the memtray executable: %w", err)
	}
	if err := os.MkdirAll(cfg.DataDir, 0o700); err != nil {
		return nil, fmt.Errorf("create data dir: %w", err)
	}
	log, err := os.OpenFile(filepath.Join(cfg.DataDir, DaemonLog), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open daemon log: %w", err)
	}
	defer log.Close() // the child has its own copy
	fmt.Fprintf(log, "--- %s: started by `memtray mcp` (pid %d)\n", time.Now().Format(time.RFC3339), os.Getpid())
	cmd := daemonCommand(exe, cfg, configPath, log)
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s serve: %w", exe, err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }() // reaps it if it dies while we wait
	return exited, nil
}

// logTail returns the last n lines of a log file, indented.
func logTail(path string, n int) string {
	data, err := os.ReadFile(path)
	if err != nil {
		return "  (" + err.Error() + ")"
	}
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return "  " + strings.Join(lines, "\n  ")
}

// bridgeMCP relays newline-delimited JSON-RPC between stdin/stdout and
// the daemon's streamable HTTP endpoint, message by message, until stdin
// closes (then it ends the upstream session and returns nil) or the daemon
// goes away (an error). The daemon runs the MCP server; the bridge only
// carries its messages, adding the token.
func bridgeMCP(ctx context.Context, stdin io.Reader, stdout, stderr io.Writer, endpoint, token string) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	down, err := (&sdk.IOTransport{Reader: io.NopCloser(stdin), Writer: nopWriteCloser{stdout}}).Connect(ctx)
	if err != nil {
		return fmt.Errorf("stdio: %w", err)
	}
	auth := &bearer{token: token, base: http.DefaultTransport}
	up, err := (&sdk.StreamableClientTransport{
		Endpoint: endpoint, HTTPClient: &http.Client{Transport: auth},
		// The daemon's tools do not push messages outside a request.
		DisableStandaloneSSE: true,
	}).Connect(ctx)
	if err != nil {
		return fmt.Errorf("connect to %s: %w", endpoint, err)
	}
	b := &bridge{down: down, up: up, auth: auth, stderr: stderr}
	errc := make(chan error, 2)
	go func() { errc <- b.toDaemon(ctx) }()
	go func() { errc <- b.toAgent(ctx) }()
	err = <-errc
	cancel()
	<-errc
	b.calls.Wait()
	up.Close() // ends the daemon's session
	down.Close()
	return err
}

// bridge carries messages between the agent (down) and the daemon (up).
type bridge struct {
	down, up sdk.Connection
	auth     *bearer
	stderr   io.Writer
	calls    sync.WaitGroup

	mu     sync.Mutex
	initID jsonrpc.ID // the initialize call, whose answer names the protocol version
}

// toDaemon forwards what the agent writes on stdin. It returns nil when
// stdin closes or ctx ends.
func (b *bridge) toDaemon(ctx context.Context) error {
	for {
		msg, err := b.down.Read(ctx)
		if err != nil {
			if errors.Is(err, io.EOF) || ctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("read stdin: %w", err)
		}
		req, ok := msg.(*jsonrpc.Request)
		switch {
		case ok && req.Method == "initialize":
			// First and alone: its answer opens the session the rest use.
			b.mu.Lock()
			b.initID = req.ID
			b.mu.Unlock()
			b.forward(ctx, req)
		case ok && req.IsCall():
			// Calls run side by side: a slow one (a large ingest) must not
			// hold up the others.
			b.calls.Add(1)
			go func() {
				defer b.calls.Done()
				b.forward(ctx, req)
			}()
		default:
			// Notifications and answers keep their order.
			if err := b.up.Write(ctx, msg); err != nil && ctx.Err() == nil {
				fmt.Fprintf(b.stderr, "memtray mcp: forward to the daemon: %v\n", err)
			}
		}
	}
}

// forward sends a call to the daemon; if it cannot be delivered, the agent
// gets an error answer to it rather than waiting forever.
func (b *bridge) forward(ctx context.Context, req *jsonrpc.Request) {
	err := b.up.Write(ctx, req)
	if err == nil || ctx.Err() != nil {
		return
	}
	var wire *jsonrpc.Error
	if !errors.As(err, &wire) {
		wire = &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "memtray daemon: " + err.Error()}
	}
	if werr := b.down.Write(ctx, &jsonrpc.Response{ID: req.ID, Error: wire}); werr != nil && ctx.Err() == nil {
		fmt.Fprintf(b.stderr, "memtray mcp: answer on stdout: %v\n", werr)
	}
}

// toAgent forwards what the daemon sends to stdout. It returns an error
// when the daemon's session fails, nil when ctx ends.
func (b *bridge) toAgent(ctx context.Context) error {
	for {
		msg, err := b.up.Read(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("the memtray daemon closed the MCP session: %w", err)
		}
		if resp, ok := msg.(*jsonrpc.Response); ok {
			b.noteVersion(resp)
		}
		if err := b.down.Write(ctx, msg); err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("write stdout: %w", err)
		}
	}
}

// noteVersion takes the negotiated protocol version from the answer to
// initialize, for the header every later request carries.
func (b *bridge) noteVersion(resp *jsonrpc.Response) {
	b.mu.Lock()
	isInit := b.initID.IsValid() && resp.ID == b.initID
	b.mu.Unlock()
	if !isInit || resp.Error != nil {
		return
	}
	var res struct {
		ProtocolVersion string `json:"protocolVersion"`
	}
	if json.Unmarshal(resp.Result, &res) == nil && res.ProtocolVersion != "" {
		b.auth.setVersion(res.ProtocolVersion)
	}
}

// bearer adds the install token (and, once known, the negotiated protocol
// version) to every request to the daemon.
type bearer struct {
	token string
	base  http.RoundTripper

	mu      sync.Mutex
	version string
}

func (t *bearer) setVersion(v string) {
	t.mu.Lock()
	t.version = v
	t.mu.Unlock()
}

// RoundTrip implements http.RoundTripper.
func (t *bearer) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context())
	req.Header.Set("Authorization", "Bearer "+t.token)
	t.mu.Lock()
	v := t.version
	t.mu.Unlock()
	if v != "" && req.Header.Get("Mcp-Protocol-Version") == "" {
		req.Header.Set("Mcp-Protocol-Version", v)
	}
	return t.base.RoundTrip(req)
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }
