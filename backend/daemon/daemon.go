// Package daemon wires memtray together: the store, the embedder, search and
// the HTTP API. It is what `memtray serve` runs headless and what the desktop
// app runs in-process. Open and Close bring the parts up and down in order.
package daemon

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/memtray/memtray/backend/capture"
	"github.com/memtray/memtray/backend/config"
	"github.com/memtray/memtray/backend/embed"
	"github.com/memtray/memtray/backend/embedders"
	"github.com/memtray/memtray/backend/events"
	"github.com/memtray/memtray/backend/feed"
	"github.com/memtray/memtray/backend/feedback"
	"github.com/memtray/memtray/backend/httpapi"
	"github.com/memtray/memtray/backend/importer"
	"github.com/memtray/memtray/backend/ingest"
	"github.com/memtray/memtray/backend/jobs"
	"github.com/memtray/memtray/backend/memories"
	"github.com/memtray/memtray/backend/memory"
	"github.com/memtray/memtray/backend/recall"
	"github.com/memtray/memtray/backend/search"
	"github.com/memtray/memtray/backend/settings"
	"github.com/memtray/memtray/backend/setup"
	"github.com/memtray/memtray/backend/status"
	"github.com/memtray/memtray/backend/steward"
	"github.com/memtray/memtray/backend/store"
	"github.com/memtray/memtray/backend/tail"
	"github.com/memtray/memtray/backend/teamsync"
	"github.com/memtray/memtray/backend/transfer"
	"github.com/memtray/memtray/frontend"
)

// StoreDir is the store's folder inside the data dir.
const StoreDir = "store"

// RuntimeFile, in the data dir, tells CLI commands where a running daemon listens.
const RuntimeFile = "daemon.json"

// Options configures Open.
type Options struct {
	Config  config.Config
	Version string
	// Build describes the binary for /api/health; its Version defaults
	// to Version.
	Build  httpapi.Build
	Logger *slog.Logger
	// Embedder, if set, is used instead of the configured one.
	Embedder memory.Embedder
	// Clock, if set, replaces the wall clock.
	Clock memory.Clock
	// NewID, if set, names new memories instead of crypto/rand
	// (store.Options.NewID): the evaluations' seeded ids, for runs that
	// compare byte for byte. Production daemons leave it nil.
	NewID func() string
	// ConfigPath is the config file the daemon was started with: PUT
	// /api/config saves there (creating it). Empty: Config.File; both
	// empty: changes are runtime-only.
	ConfigPath string
	// Heartbeat, CaptureTick and StatsTick time the live feed (zero:
	// httpapi.DefaultHeartbeat, DefaultCaptureTick, DefaultStatsTick).
	Heartbeat, CaptureTick, StatsTick time.Duration
	// OnDemand marks a daemon that `memtray mcp` started because none
	// answered: it exits by itself after Config.IdleExit with no request
	// (idle.go). The user's own daemon (serve, the app, the systemd unit)
	// leaves it false and never idle-exits.
	OnDemand bool
	// Desktop marks the daemon of the desktop app (tray and window); a
	// headless one (`memtray serve`) leaves it false, and the API says
	// starting at login does not apply to it (autostart.State.Headless).
	Desktop bool
	// ShowWindow, in the desktop app, brings its window forward: a second
	// launch asks for it through POST /api/window/show, and /api/health
	// says the daemon has a window. Nil for a headless daemon.
	ShowWindow func()
}

// Daemon is an open memtray: store, embedder and search, ready to serve.
type Daemon struct {
	desktop    bool   // Options.Desktop
	showWindow func() // Options.ShowWindow
	cfg        config.Config
	version    string
	build      httpapi.Build
	log        *slog.Logger
	clock      memory.Clock
	store      *store.Store
	emb        *embed.Swappable // switched by a re-embedding (embedder.go)
	choice     atomic.Pointer[embed.Choice]
	jobs       *jobs.Runner
	search     *search.Engine
	recaller   *search.Recaller
	proxy      *capture.Proxy // the settings service's (capture switch, exclusions, pause)
	tail       *tail.Tailer   // capture from session files; nil when off (transcripts.go)
	mcp        http.Handler
	steward    *steward.Steward
	stewardSvc *steward.Service     // plans kept for apply, runs, undo, trash (steward.go)
	cred       *httpapi.Credentials // the install token, shared by every handler; rotated in place
	startedAt  time.Time
	listen     string
	pipeline   *ingest.Pipeline
	judge      memory.Judge
	decisions  *feed.DecisionLog // the recent decisions (ingest.go), shared with the feed service
	// The live feed and the settings (uifeed.go, uiconfig.go).
	bus                    *events.Bus
	heartbeat              time.Duration
	captureTick, statsTick time.Duration
	configPath             string
	initial                config.Config // the config as given to Open (the settings' live config starts as it)
	cal                    calibState    // the similarity thresholds' calibration (calib.go)
	vecRepair              bool          // the start's repair of damaged vectors failed: retried (vecrepair.go)
	vecRetrying            atomic.Bool   // a retry of the vector repair runs (vecrepair.go)
	lastSweep              atomic.Pointer[sweepOutcome]
	indexLagAt             atomic.Int64 // unix ns of the last lagging text index write
	// invalidExchanges counts the exchanges of session files left out
	// because they failed validation (ingestTurn).
	invalidExchanges atomic.Int64
	faults           faults     // what fails now (health.go)
	clockCheck       clockCheck // clock jumps seen by the steward's sweeps (clock.go)

	// hold keeps the turns of headless sessions under the count
	// (headless.go); idle notes requests for a daemon started on demand
	// (idle.go).
	hold *headlessHold
	idle idleWatch
	turn *liveTurns // the proxy's turns being assembled (liveturns.go)

	feed      *feed.Service      // ingest, the decision log, keep, mark noise, the noise model (backend/feed)
	memories  *memories.Service  // add, search, list, edit, delete, history, export and import (backend/memories)
	setup     *setup.Service     // connecting agents, autostart, the first-run guide (setup.go)
	feedback  *feedback.Service  // reinforce, rate, snooze, pin (recall.go)
	transfer  *transfer.Service  // exports to files and imports of uploads, as jobs
	importer  *importer.Service  // Claude Code's memories, through the write pipeline
	recall    *recall.Service    // the recaller under the live limits, across model switches
	settings  *settings.Service  // the live config, the capture switch, the token (capture.go)
	embedders *embedders.Service // the embedder's information, pulls, re-embeddings, thresholds (embedder.go)
	status    *status.Service    // stats, the overview and its warnings, the live feed's subscriptions, MCP's status (backend/status)
	team      *teamsync.Syncer   // the team sync loop; nil when team memory is off (team.go)

	// closers release what Open acquired, run in reverse order by Close
	// and by Open when a later step fails (closers.go).
	closers closers
}

// Services are the areas of the API this daemon serves in-process: the
// HTTP handler's and, when no daemon runs, the CLI's.
func (d *Daemon) Services() httpapi.Services {
	return httpapi.Services{Memories: d.memories, Feedback: d.feedback, Feed: d.feed, Status: d.status, Recaller: d.recall, RecallLog: d.recall, Settings: d.settings, Transfer: d.transfer, Importer: d.importer,
		Steward: d.stewardSvc, Setup: d.setup, Autostarter: d.setup, Welcome: d.setup, Tokens: d.settings, Embedders: d.embedders, Jobs: d.jobs, Team: teamService{d}, Doctor: doctorService{d}}
}

// Open opens the data dir's store with the embedder the store was built with
// (or, for a new store, the configured one).
func Open(ctx context.Context, opts Options) (*Daemon, error) {
	cfg := opts.Config
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	d := &Daemon{cfg: cfg, version: opts.Version, build: opts.Build, log: opts.Logger, clock: opts.Clock, startedAt: time.Now(),
		bus: events.New(events.Options{}), heartbeat: opts.Heartbeat, captureTick: opts.CaptureTick,
		statsTick: opts.StatsTick, configPath: opts.ConfigPath, idle: idleWatch{onDemand: opts.OnDemand}, desktop: opts.Desktop, showWindow: opts.ShowWindow}
	if d.configPath == "" {
		d.configPath = cfg.File
	}
	if d.build.Version == "" {
		d.build.Version = d.version
	}
	d.initial = cfg
	if d.log == nil {
		d.log = slog.New(slog.DiscardHandler)
	}
	if d.clock == nil {
		d.clock = memory.SystemClock{}
	}
	if err := d.open(ctx, opts); err != nil {
		return nil, errors.Join(err, d.closers.close())
	}
	return d, nil
}

// open brings the parts up in order; each part that holds something
// (a goroutine's context, a file lock) pushes its release onto d.closers,
// so an error at any step, and Close, release the same things in reverse.
func (d *Daemon) open(ctx context.Context, opts Options) error {
	cfg := d.cfg
	if err := os.MkdirAll(cfg.DataDir, 0o700); err != nil {
		return fmt.Errorf("create data dir: %w", err)
	}
	if err := d.privateDataDir(); err != nil {
		return err
	}
	tok, err := LoadOrCreateToken(cfg.DataDir)
	if err != nil {
		return err
	}
	d.cred = httpapi.NewCredentials(tok)
	if err := d.openEmbedder(ctx, opts.Embedder); err != nil {
		return err
	}
	st, err := store.Open(ctx, store.Options{Dir: d.StorePath(), Model: d.emb.Model(), Dim: d.emb.Dim(), Clock: d.clock, Shared: d.teamShared(), NewID: opts.NewID, Logger: d.log})
	if err != nil {
		return err // store's errors name the store
	}
	d.store = st
	d.closers.push(st.Close)
	// The jobs (re-embedding, import, export) use the store: they stop
	// before it closes.
	d.jobs = jobs.New(d.publishJob)
	d.closers.push(func() error { d.jobs.Close(); return nil })
	if err := d.openEmbedders(); err != nil {
		return err
	}
	d.repairVectors(ctx)
	for _, w := range st.Info().Warnings {
		d.log.Warn("store repaired at open", "what", w)
	}
	// The store's lock keeps other daemons out of the data dir: temporary
	// files of atomic writes there (runtime file, token, state) and the
	// upload spools of import jobs are what a kill cut short.
	if n := config.RemoveTemps(cfg.DataDir) + transfer.RemoveSpools(cfg.DataDir); n > 0 {
		d.log.Info("removed the temporary files of interrupted writes", "dir", cfg.DataDir, "files", n)
	}
	// Other processes may write the config file: only old temporaries.
	if d.configPath != "" {
		if n := config.RemoveFileTemps(d.configPath, time.Minute); n > 0 {
			d.log.Info("removed the temporary files of interrupted writes", "file", d.configPath, "files", n)
		}
	}
	d.migrateProjectsAtOpen(ctx) // labels of older versions: projects are repositories now (projects.go)
	d.calibrate(ctx)             // the similarity thresholds the config leaves unset follow the model (calib.go)
	cfg = d.cfg
	d.search = search.New(st, d.emb, cfg.Search, d.clock)
	d.recaller = search.NewRecaller(d.search, st, cfg.Recall, d.clock)
	if cfg.Recall.Skills {
		var dirs []string
		if home, err := os.UserHomeDir(); err == nil {
			dirs = append(dirs, filepath.Join(home, ".claude", "skills"))
		}
		d.recaller.WithSkills(search.NewSkillCatalog(d.emb, cfg.Recall.SkillFloor), append(dirs, cfg.Recall.SkillDirs...))
	}
	if d.recall, err = recall.New(recall.Options{Recaller: d.recaller, Built: cfg.Recall, Generation: d.emb.Generation,
		Live: func() config.Recall { return d.settings.Live().Recall }, Log: st, Clock: d.clock, Logger: d.log}); err != nil {
		return err
	}
	d.closers.push(d.recall.Close) // writes the recalls waiting for the log, before the store closes
	if err := d.openPipeline(ctx); err != nil {
		return err
	}
	if d.memories, err = memories.New(memories.Options{Store: st, Pipeline: d.pipeline, Search: d.search, Embedder: d.emb,
		Steward: cfg.Steward, Clock: d.clock, Logger: d.log, Publish: d.publishMemory, IndexLag: d.indexLag,
		EmbedderFailed:    func(err error) { d.faults.set(faultEmbedder, err, d.clock.Now()) },
		EmbedderRecovered: func() { d.recovered(faultEmbedder) }, Decided: d.decisions.Add, VectorsKept: d.vectorsKept}); err != nil {
		return err
	}
	if d.feed, err = feed.New(feed.Options{Store: st, Pipeline: d.pipeline, Judge: d.judge, Embedder: d.emb, Log: d.decisions,
		LogSize: cfg.Ingest.DecisionLog, Threshold: func() float64 { return d.settings.Live().Ingest.ContentThreshold },
		IndexLag: d.indexLag, Trash: d.memories.Trash}); err != nil {
		return err
	}
	d.transfer = transfer.New(transfer.Options{DataDir: cfg.DataDir, Stream: d.memories, Count: st.Count, Jobs: d.jobs, Clock: d.clock, Logger: d.log})
	if d.hold, err = openHold(cfg.DataDir); err != nil {
		d.log.Warn("headless hold partly unreadable; the rest is kept", "err", err)
	}
	if err := d.openCapture(); err != nil {
		return err
	}
	if err := d.openTranscripts(); err != nil {
		return err
	}
	d.openSteward()
	d.openSetup()
	d.openFeedback()
	d.importer = importer.NewService(importer.Options{Store: d.store, Pipeline: d.pipeline}, d.log)
	if err := d.openStatus(); err != nil {
		return err
	}
	if err := d.openTeam(); err != nil {
		return err
	}
	d.mcp = d.MCPHandler()
	d.retryCalibration()  // a model whose server did not answer yet (calib.go)
	d.retryVectorRepair() // damaged vectors the embedder could not repair at start (vecrepair.go)
	return nil
}

// privateDataDir makes the data dir 0700 when it exists with access for
// group or others (made by hand, or by a tool with a loose umask): it holds
// every prompt and answer memtray keeps. Every file memtray writes in it
// is 0600 and every folder 0700 by itself.
func (d *Daemon) privateDataDir() error {
	fi, err := os.Stat(d.cfg.DataDir)
	if err != nil {
		return fmt.Errorf("data dir: %w", err)
	}
	if !fi.IsDir() {
		return fmt.Errorf("data dir %s is not a folder", d.cfg.DataDir)
	}
	if runtime.GOOS == "windows" || fi.Mode().Perm()&0o077 == 0 {
		return nil
	}
	if err := os.Chmod(d.cfg.DataDir, 0o700); err != nil {
		return fmt.Errorf("make the data dir private (0700): %w", err)
	}
	d.log.Warn("the data dir was open to other users; it is now 0700", "dir", d.cfg.DataDir, "was", fi.Mode().Perm().String())
	return nil
}

// openEmbedder keeps the model an existing store was built with: switching
// models is an explicit `memtray reindex`, never a side effect of Ollama
// starting or stopping.
func (d *Daemon) openEmbedder(ctx context.Context, override memory.Embedder) error {
	if override != nil {
		d.setEmbedder(override, embed.Choice{Provider: "given", Model: override.Model(), Reason: "set by the caller"})
		return nil
	}
	info, ok, err := store.Peek(d.StorePath())
	if err != nil {
		return fmt.Errorf("open store: %w", err)
	}
	if ok && info.Model != "" {
		emb, err := embed.ForModel(ctx, d.cfg.Embedder, info.Model)
		remote := strings.HasPrefix(info.Model, embed.OllamaPrefix) || strings.HasPrefix(info.Model, embed.OpenAIPrefix)
		if err != nil && remote && info.Dim > 0 && !errors.Is(err, memory.ErrModelMismatch) {
			// Start without the embedder rather than not at all: search runs
			// on BM25 alone and the embedder comes back by itself.
			d.log.Warn("embedder unavailable; searching text only until it answers", "model", info.Model, "err", err)
			d.setEmbedder(embed.NewReconnecting(d.cfg.Embedder, info.Model, info.Dim, err), embed.Choice{Provider: "store", Model: info.Model,
				Reason: fmt.Sprintf("the model this store was built with; unavailable at start (%v), retried every %s", err, embed.RetryEvery)})
			return nil
		}
		if err != nil {
			return fmt.Errorf("the store was built with %s: %w (start it, or switch with `memtray reindex --embedder builtin`)", info.Model, err)
		}
		d.setEmbedder(emb, embed.Choice{Provider: "store", Model: emb.Model(), Reason: "the model this store was built with"})
		return nil
	}
	emb, choice, err := embed.Select(ctx, d.cfg.Embedder)
	if err != nil {
		return fmt.Errorf("choose embedder: %w", err)
	}
	d.setEmbedder(emb, choice)
	return nil
}

// StorePath is the store's folder.
func (d *Daemon) StorePath() string { return filepath.Join(d.cfg.DataDir, StoreDir) }

// Token is the install's API token.
func (d *Daemon) Token() string { return d.cred.Token() }

// Store is the open store, for commands that work on it directly.
func (d *Daemon) Store() *store.Store { return d.store }

// Embedder is the embedder in use: an embed.Swappable, whose model a
// re-embedding switches.
func (d *Daemon) Embedder() memory.Embedder { return d.emb }

// EmbedderChoice says which embedder is in use and why.
func (d *Daemon) EmbedderChoice() embed.Choice { return *d.choice.Load() }

// Close releases what Open acquired, in reverse order: the background
// jobs stop, then the store closes. A second Close does nothing.
func (d *Daemon) Close() error {
	return d.closers.close()
}

// Handler serves everything on one listener at listen ("" for in-process
// hosts such as the Wails window, where no token is needed): the capture
// proxy at /v1/ (Anthropic) and /openai/v1/ (no token: the agent sends its
// own API key; Host and Origin checked), MCP at /mcp (token), and the API
// and UI (token for /api/).
func (d *Daemon) Handler(listen string) http.Handler {
	api := httpapi.New(d.Services(), httpapi.Options{
		Credentials: d.cred,
		Listen:      listen,
		NoAuth:      listen == "",
		Health:      httpapi.Health{Version: d.version, PID: os.Getpid(), Build: &d.build, Window: d.showWindow != nil, OnDemand: d.idle.onDemand},
		ShowWindow:  d.showWindow,
		UI:          frontend.Dist(),

		Heartbeat: d.heartbeat,
	})
	mux := http.NewServeMux()
	mux.Handle("/", api)
	mux.Handle("/v1/", api.Guard(d.proxy, false))
	mux.Handle("/openai/", api.Guard(d.proxy, false))
	mux.Handle("/mcp", api.Guard(d.mcp, true))
	mux.Handle(httpapi.TranscriptPath, api.TranscriptHandler(d))
	return mux
}

// Runtime is what RuntimeFile holds.
type Runtime struct {
	PID    int    `json:"pid"`
	Listen string `json:"listen"`
}

// Serve listens on the configured loopback address and serves the API until
// ctx ends, then shuts down gracefully. ready, if not nil, gets the bound
// address once the listener is up.
func (d *Daemon) Serve(ctx context.Context, ready func(addr string)) error {
	if err := config.CheckListen(d.cfg.Listen, d.cfg.InsecureNonLoopback); err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	if config.CheckLoopback(d.cfg.Listen) != nil {
		d.log.Warn("INSECURE: listening beyond loopback (--insecure-non-loopback): anyone who reaches this address can use the capture proxy; "+
			"the API and MCP still need the token and only loopback Host names are answered", "listen", d.cfg.Listen)
	}
	ln, err := net.Listen("tcp", d.cfg.Listen)
	if err != nil {
		return fmt.Errorf("listen on %s: %w (is another memtray running? `memtray stats` tells)", d.cfg.Listen, err)
	}
	addr := ln.Addr().String()
	d.listen = addr
	ctx, stopIdle := d.idleContext(ctx)
	defer stopIdle()
	srv := &http.Server{
		Handler:           d.idle.track(d.Handler(addr)),
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       2 * time.Minute,
		ErrorLog:          slog.NewLogLogger(d.log.Handler(), slog.LevelWarn),
	}
	srv.Handler = endStreamsOnShutdown(srv, srv.Handler) // shutdown.go
	closeNewConnsOnShutdown(srv)
	rt, _ := json.Marshal(Runtime{PID: os.Getpid(), Listen: addr})
	runtimePath := filepath.Join(d.cfg.DataDir, RuntimeFile)
	if err := config.WriteFileAtomic(runtimePath, rt, 0o600); err != nil {
		ln.Close()
		return err
	}
	defer os.Remove(runtimePath)
	if ready != nil {
		ready(addr)
	}
	bgCtx, stopBackground := context.WithCancel(context.Background())
	var bg sync.WaitGroup
	bg.Go(func() { d.runCapture(bgCtx) })
	bg.Go(func() { d.runTranscripts(bgCtx) })
	bg.Go(func() { d.settings.RunPauses(bgCtx) })
	bg.Go(func() { d.runSteward(bgCtx) })
	bg.Go(func() { d.runFeed(bgCtx) })
	bg.Go(func() { d.runHold(bgCtx) })
	bg.Go(func() { d.runTeam(bgCtx) })
	defer func() { stopBackground(); bg.Wait() }()
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
	}
	shutCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutCtx); err != nil {
		return fmt.Errorf("shutdown: %w", err)
	}
	return nil
}

// ReadRuntime reads where a daemon on dataDir said it listens.
func ReadRuntime(dataDir string) (Runtime, error) {
	var rt Runtime
	data, err := os.ReadFile(filepath.Join(dataDir, RuntimeFile))
	if err != nil {
		return rt, err
	}
	if err := json.Unmarshal(data, &rt); err != nil {
		return rt, fmt.Errorf("read %s: %w", RuntimeFile, err)
	}
	return rt, nil
}

// indexLag turns "stored, but the text index lags" into success with a
// warning: the record is durable and the index catches up by itself.
func (d *Daemon) indexLag(err error) error {
	if errors.Is(err, store.ErrIndexPending) {
		d.log.Warn("text index lags behind the records; it catches up at the next write or start", "err", err)
		d.indexLagAt.Store(d.clock.Now().UnixNano())
		return nil
	}
	return err
}

// ErrDaemonRunning says a command that needs the store to itself found a daemon.
var ErrDaemonRunning = errors.New("a memtray daemon is running")
