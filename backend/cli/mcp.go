package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/memtray/memtray/backend/config"
	"github.com/memtray/memtray/backend/daemon"
	"github.com/memtray/memtray/backend/mcp"
)

// DaemonLog is the file in the data dir that a daemon started by
// `memtray mcp` writes its output to.
const DaemonLog = "daemon.log"

// daemonStartTimeout bounds the wait for a daemon `memtray mcp` started.
var daemonStartTimeout = 15 * time.Second

// startDaemon starts a headless daemon on cfg's data dir; the channel
// reports its exit. Tests replace it.
var startDaemon = spawnDaemon

// OnDemandEnv, set to 1 in the environment of the daemon `memtray mcp`
// starts, marks it as started on demand: it exits by itself after
// idle_exit with no agent (daemon.Options.OnDemand). The user's own
// `memtray serve` (by hand, the app, the systemd unit) runs without it and
// never idle-exits.
const OnDemandEnv = "MEMTRAY_ON_DEMAND"

// StartedOnDemand reports whether this process is a daemon `memtray mcp`
// started (OnDemandEnv).
func StartedOnDemand() bool { return os.Getenv(OnDemandEnv) == "1" }

// runMCP is `memtray mcp`: an MCP server on stdin/stdout for an agent. It
// bridges to the running daemon's streamable HTTP endpoint (/mcp), starting
// a headless daemon when none answers, so every agent shares one daemon and
// one store. The daemon it starts reads the same config file and data dir
// as this command (--config, else $MEMTRAY_CONFIG, else the default path:
// the file the user's `memtray serve` reads), given to it as absolute
// paths, and exits after idle_exit without an agent.
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
	cfgPath, err := daemonPaths(&cfg, c.path())
	if err != nil {
		return err
	}
	loc := daemonLocator{
		find: func(ctx context.Context) (string, string, bool) {
			addr, tok, ok := findDaemon(ctx, cfg)
			return mcpEndpoint(addr), tok, ok
		},
		ensure: func(ctx context.Context) (string, string, error) {
			addr, tok, err := ensureDaemon(ctx, cfg, cfgPath, env.Stderr)
			return mcpEndpoint(addr), tok, err
		},
		dataDir: cfg.DataDir,
		stamp:   func() string { return storeStamp(cfg.DataDir, cfgPath) },
	}
	err = bridgeMCP(env.Ctx, env.Stdin, env.Stdout, env.Stderr, loc)
	var down *daemonDown
	if errors.As(err, &down) && env.Ctx.Err() == nil {
		// No daemon to the end: said on stderr as it came, when the agent
		// could still read it.
		return errReported
	}
	return err
}

// daemonDown is bridgeMCP's error when it ended with no daemon found or
// started since the agent came: err says why the last attempt failed.
type daemonDown struct{ err error }

func (d *daemonDown) Error() string { return d.err.Error() }
func (d *daemonDown) Unwrap() error { return d.err }

// unavailableProblem is what every tool of the stand-in server answers:
// why no daemon could be had on dataDir, and what to do.
func unavailableProblem(dataDir string, why error) error {
	return fmt.Errorf("memtray's daemon could not start on %s: %w; "+
		"run `memtray doctor` in a terminal to check the store and see the repair: the next tool call after it reaches memtray, with no restart of this MCP server or the agent", dataDir, why)
}

// whyDown is the error the stand-in server's tools answer with; the
// bridge replaces it with each failed attempt's, so a tool says why the
// last one failed.
type whyDown struct {
	mu  sync.Mutex
	err error
}

func (w *whyDown) set(err error) {
	w.mu.Lock()
	w.err = err
	w.mu.Unlock()
}

func (w *whyDown) Error() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.err.Error()
}

func (w *whyDown) Unwrap() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.err
}

// standIn opens a session with a server in this process over
// mcp.Unavailable: memtray's tools, each answering with a tool error
// (why); initialize's instructions say the same. The bridge talks to it
// as to a daemon while none can be had.
func standIn(ctx context.Context, why *whyDown) (*upstream, error) {
	srv := mcp.NewServer(standInBackend(why), mcp.Options{Version: Version, Instructions: mcp.UnavailableInstructions(why),
		ProtocolVersions: daemonProtocolVersions()})
	client, server := sdk.NewInMemoryTransports()
	if _, err := srv.Connect(ctx, server, nil); err != nil {
		return nil, fmt.Errorf("stand-in MCP server: %w", err)
	}
	conn, err := client.Connect(ctx)
	if err != nil {
		return nil, fmt.Errorf("stand-in MCP server: %w", err)
	}
	return &upstream{conn: conn, why: why, calls: map[jsonrpc.ID]*pending{}}, nil
}

// standInBackend is what the stand-in's tools run on: mcp.Unavailable,
// answering why. Tests replace it (to hold its answers).
var standInBackend = func(why error) mcp.Backend { return mcp.Unavailable{Err: why} }

// daemonProtocolVersions are the MCP protocol versions the daemon's /mcp
// negotiates (a stateful streamable HTTP server's), which the stand-in
// negotiates too: the agent keeps the version it got from the stand-in
// when the bridge moves it to a daemon, and a newer one (a stateless
// server's only) would be refused there.
func daemonProtocolVersions() []string {
	daemonSide := &sdk.StreamableServerTransport{}
	return slices.DeleteFunc(sdk.SupportedProtocolVersions(), func(v string) bool {
		return !daemonSide.SupportsProtocolVersion(v)
	})
}

// storeStamp sums up, cheaply (one directory read and two stats), the
// state of the files a daemon on dataDir opens: the store's files (names,
// sizes, times; not the pid file a daemon writes) and the config file. A
// repair (salvage, rebuild, a restored backup) or a config edit changes
// it, and the bridge tries a daemon again at once.
func storeStamp(dataDir, configPath string) string {
	var b strings.Builder
	stat := func(path string) {
		if fi, err := os.Stat(path); err == nil {
			fmt.Fprintf(&b, "%s %d %d;", fi.Name(), fi.Size(), fi.ModTime().UnixNano())
		}
	}
	dir := filepath.Join(dataDir, daemon.StoreDir)
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if e.Name() != "memtray.pid" {
			stat(filepath.Join(dir, e.Name()))
		}
	}
	if configPath != "" {
		stat(configPath)
	}
	return b.String()
}

// daemonPaths makes cfg's data dir and the config file path absolute: the
// daemon runs in another directory (its data dir), where a relative path
// would name another file — a config file that is not there gives the
// defaults without a word.
func daemonPaths(cfg *config.Config, configPath string) (string, error) {
	dir, err := filepath.Abs(cfg.DataDir)
	if err != nil {
		return "", fmt.Errorf("data dir: %w", err)
	}
	cfg.DataDir = dir
	if configPath == "" {
		return "", nil
	}
	p, err := filepath.Abs(configPath)
	if err != nil {
		return "", fmt.Errorf("config file: %w", err)
	}
	return p, nil
}

// mcpEndpoint is the MCP endpoint of the daemon at addr.
func mcpEndpoint(addr string) string { return "http://" + addr + "/mcp" }

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
// dir with the config file configPath, detached from the terminal and the
// agent, its output in log, marked as started on demand (OnDemandEnv).
func daemonCommand(exe string, cfg config.Config, configPath string, log *os.File) *exec.Cmd {
	args := []string{"serve", "--data-dir", cfg.DataDir}
	if configPath != "" {
		args = append(args, "--config", configPath)
	}
	cmd := exec.Command(exe, args...)
	cmd.Env = append(os.Environ(), OnDemandEnv+"=1")
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
	exe, err := config.Executable()
	if err != nil {
		return nil, err
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

// recoverEvery and recoverAtMost bound the wait between two attempts to
// have a daemon while none could be: the first retry is due recoverEvery
// after the failure, each failure doubles the wait, up to recoverAtMost.
// A daemon that answers, or a change to the store's files (storeStamp),
// makes the next tool call try at once.
var (
	recoverEvery  = 5 * time.Second
	recoverAtMost = 2 * time.Minute
)

// bridgeMCP relays newline-delimited JSON-RPC between stdin/stdout and
// the daemon's streamable HTTP endpoint (/mcp), message by message, until
// stdin closes (then it ends the upstream session and returns nil) or
// stdout fails (an error). The daemon runs the MCP server; the bridge only
// carries its messages, adding the token.
//
// When the daemon's session is lost (the daemon restarted, moved or forgot
// the session), the next call reconnects: loc finds the daemon (or starts
// one), the bridge replays the agent's initialize and initialized on a new
// session, then retries the call once. The agent notices nothing, or gets
// an error answer to that call when no daemon can be reached.
//
// When no daemon can be had at the start (the store is damaged, the daemon
// does not start), the agent still gets a server: a stand-in in this
// process whose every tool answers why (standIn). A tool call re-checks,
// at once when a daemon answers or the store's files changed (a repair),
// else after a back-off (recoverEvery); once a daemon answers, the bridge
// replays the agent's initialize on it and serves through it from that
// call on. It returns a *daemonDown when it ends still on the stand-in.
func bridgeMCP(ctx context.Context, stdin io.Reader, stdout, stderr io.Writer, loc daemonLocator) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	b := &bridge{loc: loc, stderr: stderr, cancel: cancel}
	up, err := b.firstUpstream(ctx)
	if err != nil {
		return err
	}
	down, err := (&sdk.IOTransport{Reader: io.NopCloser(stdin), Writer: nopWriteCloser{stdout}}).Connect(ctx)
	if err != nil {
		up.conn.Close()
		return fmt.Errorf("stdio: %w", err)
	}
	b.down, b.up = down, up
	b.bg.Add(1)
	go b.relay(ctx, up)
	err = b.toDaemon(ctx)
	cancel()
	b.mu.Lock()
	b.closing = true
	b.mu.Unlock()
	b.calls.Wait() // no reconnect runs after this
	last := b.current()
	last.conn.Close() // ends the daemon's session
	b.bg.Wait()
	down.Close()
	if ferr := b.failure(); ferr != nil {
		return ferr
	}
	if last.why != nil && err == nil {
		return &daemonDown{last.why.Unwrap()}
	}
	return err
}

// firstUpstream finds (or starts) the daemon and opens a session with it;
// when none can be had, it says why on stderr and returns the stand-in.
func (b *bridge) firstUpstream(ctx context.Context) (*upstream, error) {
	endpoint, token, err := b.loc.ensure(ctx)
	if err == nil {
		return dialDaemon(ctx, endpoint, token)
	}
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	why := &whyDown{err: unavailableProblem(b.loc.dataDir, err)}
	up, serr := standIn(ctx, why)
	if serr != nil {
		return nil, errors.Join(&daemonDown{err}, serr)
	}
	b.lastTry, b.backoff = time.Now(), recoverEvery
	if b.loc.stamp != nil {
		b.stamp = b.loc.stamp()
	}
	b.logf("%v", err)
	b.logf("serving the tools with this error; each tool call checks again, at once when the store's files change or a daemon answers, else after a back-off, and serves through the daemon once one answers")
	return up, nil
}

// reconnectEvery is the least time between two attempts to reach a daemon
// again, so that a daemon that cannot start costs no busy loop.
var reconnectEvery = 2 * time.Second

// replayTimeout bounds the wait for a daemon's answer to a replayed
// initialize.
var replayTimeout = 10 * time.Second

// codeDaemonUnavailable is the JSON-RPC error code (in the range left to
// servers) of a call the bridge could not deliver to any daemon.
const codeDaemonUnavailable = -32000

// daemonLocator tells the bridge where the daemon is.
type daemonLocator struct {
	// find returns the endpoint and token of the daemon answering now.
	find func(ctx context.Context) (endpoint, token string, ok bool)
	// ensure is find, starting a daemon when none answers.
	ensure func(ctx context.Context) (endpoint, token string, err error)
	// dataDir names the data dir in what the agent is told while no
	// daemon can be had.
	dataDir string
	// stamp sums up the files a daemon opens (storeStamp): when it
	// changes, a tool call tries a daemon again without waiting. nil:
	// only the back-off and a daemon answering make it try.
	stamp func() string
}

// fixedDaemon is a daemon that is always at endpoint.
func fixedDaemon(endpoint, token string) daemonLocator {
	return daemonLocator{
		find: func(context.Context) (string, string, bool) { return endpoint, token, true },
		ensure: func(context.Context) (string, string, error) {
			return endpoint, token, nil
		},
	}
}

// upstream is one MCP session with a daemon.
type upstream struct {
	conn            sdk.Connection
	endpoint, token string
	auth            *bearer

	// why is set on the stand-in (standIn), a server in this process
	// that answers every tool with it, while no daemon can be had.
	why *whyDown

	mu    sync.Mutex
	calls map[jsonrpc.ID]*pending // calls awaiting the daemon's answer
	lost  error                   // why the session broke, once it did
	// retired: another session replaced this one (switchTo); it takes no
	// new call, and drained is closed once it owes no answer.
	retired bool
	drained chan struct{}
}

// pending is a call sent on an upstream and not answered yet.
type pending struct {
	req       *jsonrpc.Request
	delivered bool // the write returned: the relay answers it
	tries     int  // how many times it was sent before, on other sessions
}

// retire marks u as replaced and returns a channel closed once every call
// sent on it is answered (or the session broke).
func (u *upstream) retire() <-chan struct{} {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.retired, u.drained = true, make(chan struct{})
	u.settleLocked()
	return u.drained
}

// isRetired reports whether another session replaced u.
func (u *upstream) isRetired() bool {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.retired
}

// settleLocked closes drained when u is retired and owes nothing. Called
// with u.mu held, after each change to u.calls.
func (u *upstream) settleLocked() {
	if u.retired && len(u.calls) == 0 && u.drained != nil {
		select {
		case <-u.drained:
		default:
			close(u.drained)
		}
	}
}

// take removes call id from u and returns it (nil: not awaited here).
func (u *upstream) take(id jsonrpc.ID) *pending {
	u.mu.Lock()
	defer u.mu.Unlock()
	p := u.calls[id]
	delete(u.calls, id)
	u.settleLocked()
	return p
}

// dialDaemon opens (lazily: the first message does) a session with the
// daemon at endpoint.
func dialDaemon(ctx context.Context, endpoint, token string) (*upstream, error) {
	auth := &bearer{token: token, base: http.DefaultTransport}
	conn, err := (&sdk.StreamableClientTransport{
		Endpoint: endpoint, HTTPClient: &http.Client{Transport: auth},
		// The daemon's tools do not push messages outside a request.
		DisableStandaloneSSE: true,
	}).Connect(ctx)
	if err != nil {
		return nil, fmt.Errorf("connect to %s: %w", endpoint, err)
	}
	return &upstream{conn: conn, endpoint: endpoint, token: token, auth: auth, calls: map[jsonrpc.ID]*pending{}}, nil
}

func (u *upstream) lostErr() error {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.lost
}

// noteVersion takes the negotiated protocol version from an answer to
// initialize, for the header every later request carries.
func (u *upstream) noteVersion(result json.RawMessage) {
	var res struct {
		ProtocolVersion string `json:"protocolVersion"`
	}
	if u.auth != nil && json.Unmarshal(result, &res) == nil && res.ProtocolVersion != "" {
		u.auth.setVersion(res.ProtocolVersion)
	}
}

// errBroke: the call reached the daemon, but the session broke before its
// answer came. It is not sent again unless repeating it is harmless
// (mayRepeat): the daemon may have carried it out.
var errBroke = errors.New("the connection to the daemon broke while the call ran")

// errReplaced: the session was replaced (switchTo) before the call went
// out on it; the session that replaced it takes the call.
var errReplaced = errors.New("the session was replaced")

// maxSends bounds how many sessions one call is sent on: a call repeated
// after a break (mayRepeat) is not repeated without end while daemons
// keep breaking.
const maxSends = 3

// send delivers a call on u, which then awaits its answer; tries is how
// many times it was sent before.
func (u *upstream) send(ctx context.Context, req *jsonrpc.Request, tries int) error {
	u.mu.Lock()
	if u.lost != nil {
		defer u.mu.Unlock()
		return fmt.Errorf("the daemon's session ended: %w", u.lost)
	}
	if u.retired {
		u.mu.Unlock()
		return errReplaced
	}
	p := &pending{req: req, tries: tries}
	u.calls[req.ID] = p
	u.mu.Unlock()
	err := u.conn.Write(ctx, req)
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.calls[req.ID] != p {
		return nil // answered already
	}
	switch {
	case err != nil:
		delete(u.calls, req.ID)
		u.settleLocked()
		return err
	case u.lost != nil:
		// The relay ended before it knew of this call: nobody answers it.
		delete(u.calls, req.ID)
		u.settleLocked()
		return fmt.Errorf("%w: %v", errBroke, u.lost)
	}
	p.delivered = true
	return nil
}

// mayRepeat reports whether req, sent on up and left unanswered when up
// broke or was replaced, may be sent again on another session: always
// from the stand-in, which carries nothing out, and from a daemon only
// when the call changes nothing there (repeatable).
func mayRepeat(up *upstream, req *jsonrpc.Request) bool {
	return up.why != nil || repeatable(req)
}

// repeatable reports whether carrying req out twice is the same as once.
// Of memtray's tools only memory_status only reads: memory_search records
// an access to every memory it returns (their ranking uses it), and
// store, delete, ingest, reinforce, rate and snooze write. A request
// other than a tool call (tools/list, ping, ...) reads the server's
// description; initialize opens the session anew.
func repeatable(req *jsonrpc.Request) bool {
	if req.Method != "tools/call" {
		return true
	}
	var call struct {
		Name string `json:"name"`
	}
	return json.Unmarshal(req.Params, &call) == nil && call.Name == mcp.ToolStatus
}

// bridge carries messages between the agent (down) and the daemon (up).
type bridge struct {
	down   sdk.Connection
	loc    daemonLocator
	stderr io.Writer
	cancel context.CancelFunc
	calls  sync.WaitGroup // forwarded calls
	bg     sync.WaitGroup // relays, and old sessions being closed

	mu       sync.Mutex
	up       *upstream        // the current daemon session
	initReq  *jsonrpc.Request // the agent's initialize, replayed on a new session
	initDone bool             // the daemon accepted initReq
	initNote *jsonrpc.Request // the agent's notifications/initialized
	fatal    error            // why the bridge must end (stdout failed)
	closing  bool             // calls.Wait has begun: no call starts
	logMu    sync.Mutex

	reconnecting sync.Mutex // held by the one reconnect (or recovery) that runs
	lastTry      time.Time  // the last reconnect attempt (under reconnecting)
	lastErr      error      // and how it failed
	// On the stand-in (under reconnecting): the wait before the next
	// attempt to have a daemon, and the store's stamp after the last.
	backoff time.Duration
	stamp   string
}

func (b *bridge) logf(format string, args ...any) {
	b.logMu.Lock()
	defer b.logMu.Unlock()
	fmt.Fprintf(b.stderr, "memtray mcp: "+format+"\n", args...)
}

func (b *bridge) current() *upstream {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.up
}

// fail ends the bridge with err.
func (b *bridge) fail(err error) {
	b.mu.Lock()
	if b.fatal == nil {
		b.fatal = err
	}
	b.mu.Unlock()
	b.cancel()
}

func (b *bridge) failure() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.fatal
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
			b.initReq, b.initDone = req, false
			b.mu.Unlock()
			b.forward(ctx, req, 0)
		case ok && req.IsCall():
			// Calls run side by side: a slow one (a large ingest) must not
			// hold up the others.
			b.goCall(ctx, req, 0)
		default:
			if ok && req.Method == "notifications/initialized" {
				b.mu.Lock()
				b.initNote = req
				b.mu.Unlock()
			}
			// Notifications and answers keep their order. One that cannot
			// be delivered is dropped: the next call reconnects.
			if err := b.current().conn.Write(ctx, msg); err != nil && ctx.Err() == nil {
				b.logf("dropped %s for the daemon: %v", describe(msg), err)
			}
		}
	}
}

// goCall forwards a call in a goroutine of its own, counted in b.calls,
// unless the bridge is closing; tries is how many times it was sent
// before.
func (b *bridge) goCall(ctx context.Context, req *jsonrpc.Request, tries int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closing {
		return
	}
	b.calls.Add(1)
	go func() {
		defer b.calls.Done()
		b.forward(ctx, req, tries)
	}()
}

// describe names a message for the log.
func describe(msg jsonrpc.Message) string {
	switch m := msg.(type) {
	case *jsonrpc.Request:
		return m.Method
	case *jsonrpc.Response:
		return fmt.Sprintf("the answer to request %v", m.ID.Raw())
	}
	return "a message"
}

// forward sends a call to the daemon, reconnecting once if the daemon's
// session is lost; tries is how many times it was sent before (on
// sessions that broke or were replaced before answering). The agent gets
// exactly one answer: the daemon's, or an error when the call cannot be
// delivered.
func (b *bridge) forward(ctx context.Context, req *jsonrpc.Request, tries int) {
	up := b.current()
	if up.why != nil && req.Method == "tools/call" {
		up = b.recover(ctx, up)
	}
	err := up.send(ctx, req, tries)
	for errors.Is(err, errReplaced) {
		up = b.current() // the session that replaced it, never retired
		err = up.send(ctx, req, tries)
	}
	if err == nil || ctx.Err() != nil {
		return
	}
	failedAt := time.Now()
	var wire *jsonrpc.Error
	switch {
	case errors.Is(err, errBroke) && !(mayRepeat(up, req) && tries+1 < maxSends):
		// It reached the daemon: sending it again might do it twice.
		wire = daemonError(err, true)
	case !b.sessionLost(ctx, up, err):
		wire = daemonError(err, false)
	default:
		b.logf("%s: lost the daemon's session (%v); reconnecting", req.Method, err)
		if up, err = b.reconnect(ctx, up, failedAt); err == nil {
			if err = up.send(ctx, req, tries+1); err == nil {
				return
			}
		}
		if ctx.Err() != nil {
			return
		}
		// The new daemon's own error answer, or why none could be had.
		if wire = daemonError(err, true); wire.Code == codeDaemonUnavailable {
			b.logf("%s: %s", req.Method, wire.Message)
		}
	}
	if req.Method == "tools/call" && wire.Code == codeDaemonUnavailable {
		// A tool error, which the model reads, as the tools' own are.
		b.answerResult(ctx, req.ID, &sdk.CallToolResult{IsError: true, Content: []sdk.Content{&sdk.TextContent{Text: wire.Message}}})
		return
	}
	b.answer(ctx, req.ID, wire)
}

// daemonError is err as the agent's answer: the daemon's own JSON-RPC
// error when it gave one, else why the call could not be delivered
// (unavailable: because no daemon session could be had).
func daemonError(err error, unavailable bool) *jsonrpc.Error {
	if wire, ok := daemonAnswer(err); ok {
		return wire
	}
	if unavailable {
		return &jsonrpc.Error{Code: codeDaemonUnavailable, Message: "memtray daemon unavailable: " + err.Error()}
	}
	return &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "memtray daemon: " + err.Error()}
}

// codeRejected is the code of the SDK's "rejected by transport" error,
// which marks a request that did not get through. It is a JSON-RPC error
// too, but not one the daemon gave.
const codeRejected = -32005

// daemonAnswer finds in err the JSON-RPC error the daemon answered with.
func daemonAnswer(err error) (*jsonrpc.Error, bool) {
	if wire, ok := err.(*jsonrpc.Error); ok && wire.Code != codeRejected {
		return wire, true
	}
	switch e := err.(type) {
	case interface{ Unwrap() error }:
		if next := e.Unwrap(); next != nil {
			return daemonAnswer(next)
		}
	case interface{ Unwrap() []error }:
		for _, next := range e.Unwrap() {
			if wire, ok := daemonAnswer(next); ok {
				return wire, true
			}
		}
	}
	return nil, false
}

// answer gives the agent an error answer to call id.
func (b *bridge) answer(ctx context.Context, id jsonrpc.ID, wire *jsonrpc.Error) {
	if err := b.down.Write(ctx, &jsonrpc.Response{ID: id, Error: wire}); err != nil && ctx.Err() == nil {
		b.fail(fmt.Errorf("write stdout: %w", err))
	}
}

// answerResult gives the agent res as the answer to call id.
func (b *bridge) answerResult(ctx context.Context, id jsonrpc.ID, res any) {
	js, err := json.Marshal(res)
	if err != nil {
		b.answer(ctx, id, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: err.Error()})
		return
	}
	if err := b.down.Write(ctx, &jsonrpc.Response{ID: id, Result: js}); err != nil && ctx.Err() == nil {
		b.fail(fmt.Errorf("write stdout: %w", err))
	}
}

// sessionLost reports whether err, from sending on up, means the daemon's
// session is gone: the daemon forgot it (404), nothing answers at its
// address any more, the session broke, or the daemon now runs elsewhere
// (another process may hold its old address).
func (b *bridge) sessionLost(ctx context.Context, up *upstream, err error) bool {
	var uerr *url.Error
	if errors.Is(err, sdk.ErrSessionMissing) || errors.Is(err, errBroke) || errors.As(err, &uerr) || up.lostErr() != nil {
		return true
	}
	if _, ok := daemonAnswer(err); ok {
		return false // the daemon answered
	}
	endpoint, token, ok := b.loc.find(ctx)
	return !ok || endpoint != up.endpoint || token != up.token || up.lostErr() != nil
}

// reconnect replaces the session failed, lost at failedAt, with a new one
// and returns it. One reconnect runs at a time, at most one per
// reconnectEvery; the calls that lost the session meanwhile share its
// outcome.
func (b *bridge) reconnect(ctx context.Context, failed *upstream, failedAt time.Time) (*upstream, error) {
	b.reconnecting.Lock()
	defer b.reconnecting.Unlock()
	if cur := b.current(); cur != failed && cur.lostErr() == nil {
		return cur, nil // reconnected since
	}
	if b.lastTry.After(failedAt) && b.lastErr != nil {
		return nil, b.lastErr // tried since, in vain
	}
	if wait := time.Until(b.lastTry.Add(reconnectEvery)); wait > 0 {
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, ctx.Err()
		case <-t.C:
		}
	}
	b.lastTry = time.Now()
	up, err := b.open(ctx)
	b.lastErr = err
	if err != nil {
		return nil, err
	}
	b.switchTo(ctx, up)
	b.logf("reconnected to the daemon at %s", up.endpoint)
	return up, nil
}

// switchTo makes up the session tool calls go to, relays what it sends,
// and closes the session it replaces once that one owes no answer: a
// call in flight there at the switch finishes there (a daemon's answer is
// relayed) or is sent again on up (the stand-in's answer, its why, is
// not: see relay). Called with b.reconnecting held.
func (b *bridge) switchTo(ctx context.Context, up *upstream) {
	b.mu.Lock()
	old := b.up
	b.up = up
	drained := old.retire() // under b.mu: no call takes old from current() and sends on it after this
	b.mu.Unlock()
	b.bg.Add(2)
	go b.relay(ctx, up)
	go func() {
		defer b.bg.Done()
		select {
		case <-drained:
		case <-ctx.Done():
		}
		old.conn.Close()
	}()
}

// recover is a tool call's check, on the stand-in (standIn), whether a
// daemon can be had now: it tries when one answers, when the store's
// files changed since the last attempt (a repair), or when the back-off
// has passed, and returns the daemon's session once one is open, else
// the stand-in, whose tools now say why the attempt failed. The back-off
// doubles with each failure, up to recoverAtMost.
func (b *bridge) recover(ctx context.Context, standIn *upstream) *upstream {
	b.reconnecting.Lock()
	defer b.reconnecting.Unlock()
	if cur := b.current(); cur != standIn {
		return cur // recovered since
	}
	stamp := ""
	if b.loc.stamp != nil {
		stamp = b.loc.stamp()
	}
	_, _, answers := b.loc.find(ctx)
	if !answers && stamp == b.stamp && time.Since(b.lastTry) < b.backoff {
		return standIn
	}
	b.lastTry = time.Now()
	up, err := b.open(ctx)
	if err != nil {
		if ctx.Err() == nil {
			standIn.why.set(unavailableProblem(b.loc.dataDir, err))
			b.backoff = min(2*b.backoff, recoverAtMost)
			b.logf("still no daemon (%v); the next tool call tries again after %s, or at once when the store's files change", err, b.backoff)
		}
		if b.loc.stamp != nil {
			b.stamp = b.loc.stamp() // what the attempt itself changed is no repair
		}
		return standIn
	}
	b.switchTo(ctx, up) // replaces standIn, the current session (checked above)
	b.logf("the daemon at %s answers: serving memtray's tools through it", up.endpoint)
	return up
}

// open finds (or starts) the daemon and opens a session with it, replaying
// the agent's initialize and initialized when the agent is past them. The
// answer to the replayed initialize stays here: the agent has its own.
func (b *bridge) open(ctx context.Context) (*upstream, error) {
	endpoint, token, err := b.loc.ensure(ctx)
	if err != nil {
		return nil, err
	}
	up, err := dialDaemon(ctx, endpoint, token)
	if err != nil {
		return nil, err
	}
	b.mu.Lock()
	init, note := b.initReq, b.initNote
	if !b.initDone {
		init, note = nil, nil // the agent's initialize goes as a call
	}
	b.mu.Unlock()
	if init == nil {
		return up, nil
	}
	if err := replayInit(ctx, up, init, note); err != nil {
		up.conn.Close()
		return nil, fmt.Errorf("reopen the MCP session at %s: %w", endpoint, err)
	}
	return up, nil
}

// replayInit sends init on up, waits for its answer, then sends note.
func replayInit(ctx context.Context, up *upstream, init, note *jsonrpc.Request) error {
	if err := up.conn.Write(ctx, init); err != nil {
		return err
	}
	rctx, cancel := context.WithTimeout(ctx, replayTimeout)
	defer cancel()
	for {
		msg, err := up.conn.Read(rctx)
		if err != nil {
			return fmt.Errorf("initialize: %w", err)
		}
		// Nothing else is due before the answer.
		if resp, ok := msg.(*jsonrpc.Response); ok && resp.ID == init.ID {
			if resp.Error != nil {
				return fmt.Errorf("initialize: %w", resp.Error)
			}
			up.noteVersion(resp.Result)
			break
		}
	}
	if note != nil {
		return up.conn.Write(ctx, note)
	}
	return nil
}

// relay forwards what the daemon sends on up to stdout, until the session
// breaks or ctx ends. When it breaks, the calls it still owed get an error
// answer.
func (b *bridge) relay(ctx context.Context, up *upstream) {
	defer b.bg.Done()
	for {
		msg, err := up.conn.Read(ctx)
		if err != nil {
			if ctx.Err() == nil {
				b.lose(ctx, up, err)
			}
			return
		}
		if resp, ok := msg.(*jsonrpc.Response); ok {
			p := up.take(resp.ID)
			if p != nil && up.why != nil && up.isRetired() {
				// The stand-in's answer (why no daemon could be had) to a
				// call in flight when a daemon came: the daemon answers it.
				b.goCall(ctx, p.req, p.tries+1)
				continue
			}
			b.noteInit(up, resp)
		}
		if err := b.down.Write(ctx, msg); err != nil {
			if ctx.Err() == nil {
				b.fail(fmt.Errorf("write stdout: %w", err))
			}
			return
		}
	}
}

// lose marks up as broken by err and settles the calls it delivered: one
// that may be repeated (mayRepeat) is sent again, on the session that
// replaced up or a new one; the others get an error answer.
func (b *bridge) lose(ctx context.Context, up *upstream, err error) {
	up.mu.Lock()
	if up.lost == nil {
		up.lost = err
	}
	var owed []*pending
	for id, p := range up.calls {
		if p.delivered {
			owed = append(owed, p)
			delete(up.calls, id)
		}
	}
	up.settleLocked()
	up.mu.Unlock()
	if b.current() == up {
		b.logf("the daemon's MCP session ended (%v); the next call reconnects", err)
	}
	for _, p := range owed {
		if mayRepeat(up, p.req) && p.tries+1 < maxSends {
			b.goCall(ctx, p.req, p.tries+1)
			continue
		}
		b.answer(ctx, p.req.ID, daemonError(fmt.Errorf("%w: %v", errBroke, err), true))
	}
}

// noteInit notes the daemon's answer to the agent's initialize.
func (b *bridge) noteInit(up *upstream, resp *jsonrpc.Response) {
	b.mu.Lock()
	isInit := b.initReq != nil && !b.initDone && resp.ID == b.initReq.ID
	if isInit && resp.Error == nil {
		b.initDone = true
	}
	b.mu.Unlock()
	if isInit && resp.Error == nil {
		up.noteVersion(resp.Result)
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
