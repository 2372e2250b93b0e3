package daemon

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/memtray/memtray/backend/agentsetup"
	"github.com/memtray/memtray/backend/httpapi"
	"github.com/memtray/memtray/backend/memory"
)

// setupMu makes each setup's check and write one step: the files are the
// user's, shared by every daemon of the process.
var setupMu sync.Mutex

// setupBinary is the memtray the agents' configs are to run: this program,
// by the CLI's rule (agentsetup.Binary). Tests put a binary with memtray's
// name in its place (setup recognises its hooks by that name).
var setupBinary = func() (string, []string, error) { return agentsetup.Binary("") }

// setupEnv is agentsetup's Env for this daemon: the user's home, this
// program (by the CLI's rule), the address the daemon was started on and
// its data dir (the records are the CLI's: `memtray setup --undo` takes
// out what the window put in, and the other way round), and the flags that
// name that data dir and config in what setup writes.
func (d *Daemon) setupEnv(withBinary bool) (agentsetup.Env, error) {
	home, err := os.UserHomeDir()
	if err != nil {
		return agentsetup.Env{}, fmt.Errorf("find the home directory: %w", err)
	}
	if home, err = filepath.Abs(home); err != nil {
		return agentsetup.Env{}, fmt.Errorf("home: %w", err)
	}
	e := agentsetup.Env{Home: home, Listen: d.setupListen(), DataDir: d.cfg.DataDir,
		HookTimeout: agentsetup.HookTimeout(time.Duration(d.live.Load().Recall.HookTimeout))}
	// The agents are to reach this daemon's data dir, with its config.
	if e.Flags, err = agentsetup.Flags(d.cfg.DataDir, d.configPath); err != nil {
		return e, err
	}
	if withBinary {
		if e.Binary, e.Notes, err = setupBinary(); err != nil {
			return e, err
		}
	}
	return e, nil
}

// setupListen is the address agents are to reach: the configured one the
// daemon was started with (as `memtray setup` writes it), or the bound one
// when the port was left to the system.
func (d *Daemon) setupListen() string {
	if _, port, err := net.SplitHostPort(d.cfg.Listen); (err != nil || port == "0") && d.listen != "" {
		return d.listen
	}
	return d.cfg.Listen
}

// SetupClients lists every agent setup knows and how it stands.
func (d *Daemon) SetupClients(ctx context.Context) (httpapi.SetupList, error) {
	e, err := d.setupEnv(false)
	if err != nil {
		return httpapi.SetupList{}, err
	}
	out := httpapi.SetupList{Clients: []httpapi.SetupClient{}, Proxy: "http://" + e.Listen, Home: e.Home}
	if bin, _, err := setupBinary(); err == nil {
		out.Binary = bin
	}
	for _, c := range agentsetup.Clients() {
		st, err := e.Status(c.Name)
		if err != nil {
			return httpapi.SetupList{}, err
		}
		out.Clients = append(out.Clients, setupClientOf(st))
	}
	return out, nil
}

// SetupPreview plans client's setup, writing nothing.
func (d *Daemon) SetupPreview(ctx context.Context, client string, o httpapi.SetupOptions) (httpapi.SetupPreview, error) {
	p, err := d.setupPlan(client, o)
	if err != nil {
		return httpapi.SetupPreview{}, err
	}
	return setupPreviewOf(p, o), nil
}

// SetupApply carries out the setup req's preview showed: planned again
// and compared file by file first, so the user gets exactly what they saw.
func (d *Daemon) SetupApply(ctx context.Context, client string, req httpapi.SetupApplyRequest) (httpapi.SetupResult, error) {
	setupMu.Lock()
	defer setupMu.Unlock()
	p, err := d.setupPlan(client, httpapi.SetupOptions{NoProxy: req.NoProxy, NoHooks: req.NoHooks})
	if err != nil {
		return httpapi.SetupResult{}, err
	}
	return d.setupCarryOut(p, req.Files)
}

// SetupUndoPreview plans taking memtray out of client's files.
func (d *Daemon) SetupUndoPreview(ctx context.Context, client string) (httpapi.SetupPreview, error) {
	p, err := d.setupUndoPlan(client)
	if err != nil {
		return httpapi.SetupPreview{}, err
	}
	return setupPreviewOf(p, httpapi.SetupOptions{}), nil
}

// SetupUndo carries out the undo req's preview showed.
func (d *Daemon) SetupUndo(ctx context.Context, client string, req httpapi.SetupUndoRequest) (httpapi.SetupResult, error) {
	setupMu.Lock()
	defer setupMu.Unlock()
	p, err := d.setupUndoPlan(client)
	if err != nil {
		return httpapi.SetupResult{}, err
	}
	return d.setupCarryOut(p, req.Files)
}

func (d *Daemon) setupPlan(client string, o httpapi.SetupOptions) (*agentsetup.Plan, error) {
	if _, err := agentsetup.Lookup(client); err != nil {
		return nil, fmt.Errorf("%w: %v", memory.ErrInvalid, err)
	}
	e, err := d.setupEnv(true)
	if err != nil {
		return nil, err
	}
	p, err := e.Plan(client, agentsetup.Options{NoProxy: o.NoProxy, NoHooks: o.NoHooks})
	if err != nil {
		return nil, tagged{err, httpapi.ErrSetupConflict}
	}
	return p, nil
}

func (d *Daemon) setupUndoPlan(client string) (*agentsetup.Plan, error) {
	if _, err := agentsetup.Lookup(client); err != nil {
		return nil, fmt.Errorf("%w: %v", memory.ErrInvalid, err)
	}
	e, err := d.setupEnv(false)
	if err != nil {
		return nil, err
	}
	p, err := e.PlanUndo(client, false)
	if err != nil {
		return nil, tagged{err, httpapi.ErrSetupConflict}
	}
	return p, nil
}

// setupCarryOut applies p when it is the plan seen, and says how the
// client stands after.
func (d *Daemon) setupCarryOut(p *agentsetup.Plan, seen []httpapi.SetupFileHash) (httpapi.SetupResult, error) {
	hashes := make([]agentsetup.FileHash, len(seen))
	for i, h := range seen {
		hashes[i] = agentsetup.FileHash{Path: h.Path, SHA256: h.SHA256, AfterSHA256: h.AfterSHA256}
	}
	if err := p.Verify(hashes); err != nil {
		return httpapi.SetupResult{}, tagged{err, httpapi.ErrStalePreview}
	}
	what := "set up"
	if p.Undo {
		what = "undo the setup of"
	}
	res, err := p.Apply()
	if err != nil {
		return httpapi.SetupResult{}, fmt.Errorf("%s %s: %w", what, p.Client, err)
	}
	d.log.Info("agent setup", "client", p.Client, "undo", p.Undo, "changed", res.Changed)
	out := httpapi.SetupResult{Client: res.Client, Changed: nonNil(res.Changed), Backups: nonNil(res.Backups), Message: res.Message}
	e, err := d.setupEnv(false)
	if err != nil {
		return out, err
	}
	st, err := e.Status(p.Client)
	if err != nil {
		return out, err
	}
	out.Status = setupClientOf(st)
	return out, nil
}

func setupClientOf(st agentsetup.Status) httpapi.SetupClient {
	c := httpapi.SetupClient{Name: st.Name, Label: st.Label, Hooks: st.Hooks, Proxy: st.Proxy, Detected: st.Detected,
		Configured: st.Configured, Updated: st.Updated, Files: []httpapi.SetupFileStatus{}, Problem: st.Problem,
		NeedReview: st.NeedReview, ReviewHint: st.ReviewHint}
	for _, f := range st.Files {
		c.Files = append(c.Files, httpapi.SetupFileStatus{Path: f.Path, Exists: f.Exists, Backup: f.Backup})
	}
	return c
}

func setupPreviewOf(p *agentsetup.Plan, o httpapi.SetupOptions) httpapi.SetupPreview {
	out := httpapi.SetupPreview{Client: p.Client, Undo: p.Undo, Options: o, Files: []httpapi.SetupFile{},
		Notes: nonNil(p.Notes), Changes: p.Changes()}
	for _, f := range p.Files {
		out.Files = append(out.Files, httpapi.SetupFile{Path: f.Path, Existed: f.Existed, Changed: f.Changed,
			Remove: f.Remove, State: f.State, What: nonNil(f.What), Diff: f.Diff, SHA256: f.SHA256, AfterSHA256: f.AfterSHA256})
	}
	return out
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// tagged is err answered as sentinel is (its HTTP status and code), with
// err's message.
type tagged struct{ err, sentinel error }

func (t tagged) Error() string   { return t.err.Error() }
func (t tagged) Unwrap() []error { return []error{t.err, t.sentinel} }
