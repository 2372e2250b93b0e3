package setup

import (
	"context"
	"fmt"

	"github.com/memtray/memtray/backend/agentsetup"
	"github.com/memtray/memtray/backend/memory"
)

// SetupClients lists every agent setup knows and how it stands.
func (s *Service) SetupClients(ctx context.Context) (List, error) {
	e, err := s.env(false)
	if err != nil {
		return List{}, err
	}
	out := List{Clients: []Agent{}, Proxy: "http://" + e.Listen, Home: e.Home, CLIFlags: []string{}}
	for _, f := range e.Flags {
		out.CLIFlags = append(out.CLIFlags, agentsetup.ShellQuote(f))
	}
	if bin, _, err := s.o.Binary(); err == nil {
		out.Binary = bin
	}
	for _, c := range agentsetup.Clients() {
		st, err := e.Status(c.Name)
		if err != nil {
			return List{}, err
		}
		out.Clients = append(out.Clients, agentOf(st))
	}
	return out, nil
}

// SetupPreview plans client's setup, writing nothing.
func (s *Service) SetupPreview(ctx context.Context, client string, o PlanOptions) (Preview, error) {
	p, err := s.plan(client, o)
	if err != nil {
		return Preview{}, err
	}
	return previewOf(p, o), nil
}

// SetupApply carries out the setup req's preview showed: planned again
// and compared file by file first, so the user gets exactly what they saw.
func (s *Service) SetupApply(ctx context.Context, client string, req ApplyRequest) (Result, error) {
	filesMu.Lock()
	defer filesMu.Unlock()
	p, err := s.plan(client, PlanOptions{NoProxy: req.NoProxy, NoHooks: req.NoHooks})
	if err != nil {
		return Result{}, err
	}
	return s.carryOut(p, req.Files)
}

// SetupUndoPreview plans taking memtray out of client's files.
func (s *Service) SetupUndoPreview(ctx context.Context, client string) (Preview, error) {
	p, err := s.undoPlan(client)
	if err != nil {
		return Preview{}, err
	}
	return previewOf(p, PlanOptions{}), nil
}

// SetupUndo carries out the undo req's preview showed.
func (s *Service) SetupUndo(ctx context.Context, client string, req UndoRequest) (Result, error) {
	filesMu.Lock()
	defer filesMu.Unlock()
	p, err := s.undoPlan(client)
	if err != nil {
		return Result{}, err
	}
	return s.carryOut(p, req.Files)
}

func (s *Service) plan(client string, o PlanOptions) (*agentsetup.Plan, error) {
	if _, err := agentsetup.Lookup(client); err != nil {
		return nil, fmt.Errorf("%w: %v", memory.ErrInvalid, err)
	}
	e, err := s.env(true)
	if err != nil {
		return nil, err
	}
	p, err := e.Plan(client, agentsetup.Options{NoProxy: o.NoProxy, NoHooks: o.NoHooks})
	if err != nil {
		return nil, tagged{err, ErrConflict}
	}
	return p, nil
}

func (s *Service) undoPlan(client string) (*agentsetup.Plan, error) {
	if _, err := agentsetup.Lookup(client); err != nil {
		return nil, fmt.Errorf("%w: %v", memory.ErrInvalid, err)
	}
	e, err := s.env(false)
	if err != nil {
		return nil, err
	}
	p, err := e.PlanUndo(client, false)
	if err != nil {
		return nil, tagged{err, ErrConflict}
	}
	return p, nil
}

// carryOut applies p when it is the plan seen, and says how the
// client stands after.
func (s *Service) carryOut(p *agentsetup.Plan, seen []FileHash) (Result, error) {
	hashes := make([]agentsetup.FileHash, len(seen))
	for i, h := range seen {
		hashes[i] = agentsetup.FileHash{Path: h.Path, SHA256: h.SHA256, AfterSHA256: h.AfterSHA256}
	}
	if err := p.Verify(hashes); err != nil {
		return Result{}, tagged{err, ErrStalePreview}
	}
	what := "set up"
	if p.Undo {
		what = "undo the setup of"
	}
	res, err := p.Apply()
	if err != nil {
		return Result{}, fmt.Errorf("%s %s: %w", what, p.Client, err)
	}
	s.o.Logger.Info("agent setup", "client", p.Client, "undo", p.Undo, "changed", res.Changed)
	out := Result{Client: res.Client, Changed: nonNil(res.Changed), Backups: nonNil(res.Backups), Message: res.Message}
	e, err := s.env(false)
	if err != nil {
		return out, err
	}
	st, err := e.Status(p.Client)
	if err != nil {
		return out, err
	}
	out.Status = agentOf(st)
	return out, nil
}

func agentOf(st agentsetup.Status) Agent {
	c := Agent{Name: st.Name, Label: st.Label, Hooks: st.Hooks, Proxy: st.Proxy, Detected: st.Detected,
		Configured: st.Configured, Updated: st.Updated, Files: []FileStatus{}, Problem: st.Problem,
		NeedReview: st.NeedReview, ReviewHint: st.ReviewHint}
	for _, f := range st.Files {
		c.Files = append(c.Files, FileStatus{Path: f.Path, Exists: f.Exists, Backup: f.Backup})
	}
	return c
}

func previewOf(p *agentsetup.Plan, o PlanOptions) Preview {
	out := Preview{Client: p.Client, Undo: p.Undo, Options: o, Files: []File{},
		Notes: nonNil(p.Notes), Changes: p.Changes()}
	for _, f := range p.Files {
		out.Files = append(out.Files, File{Path: f.Path, Existed: f.Existed, Changed: f.Changed,
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
