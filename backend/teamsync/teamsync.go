// Package teamsync is the daemon's side of team memory (issue 23): the
// loop that pushes the local store's outbox to the team database and
// applies the team's changes to the local store.
//
// The local store stays the daemon's one writer and source of recall:
// a local write of a team memory is acknowledged once it is durable
// locally, with its outbox entry written in the same transaction
// (store.Options.Shared). The Syncer drains the outbox with team.Push
// (idempotent by id and content hash), team.Delete and team.AddCounters,
// and acknowledges each entry only after the team database answered, so
// a crash at any point repeats a push and never loses one. It pulls the
// change feed after the cursor the store keeps with the last applied
// changes: at start, on each notification of team.Watch and on a timer,
// and applies the changes through store.ApplyTeam (which enqueues
// nothing). With the team database down, every local write and recall
// works as before; the loop retries with a growing backoff and records
// the last error for the status.
package teamsync

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"slices"
	"sync"
	"time"

	"github.com/memtray/memtray/backend/memory"
	"github.com/memtray/memtray/backend/store"
	"github.com/memtray/memtray/backend/team"
)

// Options configure a Syncer.
type Options struct {
	// Store is the daemon's local store, opened with a Shared policy.
	Store *store.Store
	// Embedder embeds pulled texts without a cached vector of its model.
	Embedder memory.Embedder
	// Connect opens the team database (team.ReadURL and team.Open); it is
	// called again after a failure.
	Connect func(ctx context.Context) (*team.Store, error)
	// PullInterval is the timer of pulls between notifications (default
	// 30 s).
	PullInterval time.Duration
	// PushInterval is how often the outbox is looked at besides Kick
	// (default 1 s).
	PushInterval time.Duration
	// MaxBackoff bounds the wait between retries while the database fails
	// (default 30 s; the first wait is MaxBackoff/64, at least 50 ms).
	MaxBackoff time.Duration
	// Batch is the number of memories per push (default 500).
	Batch int
	// PullBatch is the number of changes per pull page, each applied in
	// one local transaction (default 2000: a daemon joining a large team
	// writes few, large transactions).
	PullBatch int
	// Workers is the number of goroutines embedding pulled texts without
	// a cached vector (default runtime.GOMAXPROCS: the built-in embedder
	// is CPU-bound).
	Workers int
	// Applied, if set, is told the ids of the memories a pull wrote and
	// moved to the trash (the daemon announces them to the UI).
	Applied func(put, trashed []string)
	// Projects are the team.projects in effect (reported in the status).
	Projects []string
	// Logger logs what a status cannot say (nil: discarded).
	Logger *slog.Logger
	// Now tells the time (nil: time.Now).
	Now func() time.Time
}

// Status is what `memtray team status` and /api/status report.
type Status struct {
	// Enabled: team memory is configured on (team.share).
	Enabled bool `json:"enabled"`
	// Connected: the last exchange with the team database succeeded.
	Connected bool `json:"connected"`
	// Role is the database role this daemon writes as, once connected.
	Role string `json:"role,omitempty"`
	// Outbox is the number of memories waiting to be pushed.
	Outbox int `json:"outbox"`
	// LagSeconds is how old the oldest team change not applied yet was at
	// the last pull (0 when none was waiting).
	LagSeconds float64 `json:"lag_seconds"`
	// LastError is the last failure (empty after a success).
	LastError string `json:"last_error"`
	// LastPush and LastPull are when they last succeeded.
	LastPush time.Time `json:"last_push,omitzero"`
	LastPull time.Time `json:"last_pull,omitzero"`
	// Pushed, Pulled and Relinked count memories since the daemon started.
	Pushed   int64 `json:"pushed"`
	Pulled   int64 `json:"pulled"`
	Relinked int64 `json:"relinked"`
	// Refused are the latest writes the team refused (at most
	// maxRefused, oldest first), kept in the store across restarts. A
	// refused change is not pushed again until it changes or PushAll.
	Refused []Refusal `json:"refused,omitempty"`
	// Projects are the team.projects this daemon runs with. The team
	// section is read at start: a change takes effect after a restart.
	Projects []string `json:"projects,omitempty"`
	// Told are the latest writes of teammates (or of this member's other
	// machines) that met an edit of this machine's: merged with it, or
	// refused because it was pushed first (at most maxTold, oldest
	// first), kept across restarts. Read at each pull (tell.go).
	Told []Told `json:"told,omitempty"`
	// Settings are what the team database says of the team (its settings,
	// who may change them, its schema), read when the daemon connects and
	// at each pull; nil until first read.
	Settings *SettingsStatus `json:"settings,omitempty"`
}

// Refusal is a local write of a team memory the team database refused:
// the memory belongs to another member, and only they or an admin may
// change, delete or restore it (or it is invalid).
type Refusal struct {
	ID string `json:"id"`
	// Op is what was refused: "change", "delete" or "restore".
	// A change the team holds a newer version of is refused too.
	Op string `json:"op"`
	// Outcome says what became of the local copy.
	Outcome string    `json:"outcome"`
	At      time.Time `json:"at"`
	// Copy, for an edit refused as stale, is the id of this machine's
	// version in the trash (a conflict copy, store.TrashConflict):
	// restoring it makes it a new edit of the team's version.
	Copy string `json:"copy,omitempty"`
}

// maxRefused bounds Status.Refused.
const maxRefused = 10

// The outcomes of a refusal for the local copy.
const (
	refusedChange  = "the team keeps the owner's version; this machine keeps its edit until the team's copy next changes, its counts of use too (it is pushed again only when edited again here, or by push --all)"
	refusedDelete  = "deleted on this machine only; the team keeps it, and it comes back here when the team's copy changes (its owner or an admin may delete it)"
	refusedRestore = "restored on this machine only, as a personal memory; the team's copy stays deleted (its owner or an admin may restore it)"
	refusedInvalid = "the team refused it as invalid; it stays on this machine"
	refusedStale   = "the team holds another edit of it, made on another machine meanwhile and pushed first: this machine took the team's version and keeps its own in the trash as a conflict copy (restore the copy to make it a new edit of the team's version)"
	// An edit queued by a memtray from before bases (no base known): it
	// cannot be told whether the team's version came after it.
	refusedUnbased = "this edit was queued before memtray's upgrade to pushes that carry their base, and the team's version differs: which came first cannot be told, so this machine took the team's version and keeps its own in the trash as a conflict copy (restore the copy to make it a new edit of the team's version)"
	// A delete of a text the team changed since this machine's copy.
	refusedStaleDelete = "the team holds an edit of it made meanwhile on another machine, which this machine had not seen: the team keeps it, and it is back here with that edit"
	// A stale edit's refusal once the next edit of the memory, pushed
	// before this machine took the team's version, put back what
	// conflicted and merged: the version the user left conflicts with
	// nothing, so no conflict copy is made (refusedStale's is withdrawn).
	refusedThenMerged = "the team holds another edit of it, made on another machine meanwhile and pushed first; your next edit here put back what conflicted, and the team merged that edit with its version: nothing the team refused is left in your version, so no conflict copy was kept"
	// The same, the next edit having met another answer (relinked to the
	// memory holding its text, deleted by the team meanwhile, refused as
	// another member's or invalid): what became of it is its own line.
	refusedThenReplaced = "the team holds another edit of it, made on another machine meanwhile and pushed first; your next edit here replaced it before this machine took the team's version, so no conflict copy was kept (that edit went as any edit does: relinked, deleted or refused, a refusal of it is listed on its own)"
	// The same, the team having deleted the memory before this machine
	// took its version: there is no version to take, and the local copy,
	// with the edit, goes to the trash at the next pull.
	refusedThenTeamDeleted = "the team holds another edit of it, made on another machine meanwhile and pushed first; the team then deleted it before this machine took its version, so no conflict copy was kept (your copy, with your edit, goes to the trash with the team's delete)"
	// The same, the memory deleted (or made personal) here before this
	// machine took the team's version: nothing is left to keep a copy of.
	refusedThenDeleted = "the team holds another edit of it, made on another machine meanwhile and pushed first; you deleted it here (or made it personal) before this machine took the team's version, so no conflict copy was kept"
	// An edit of a memory the team deleted since this machine's copy.
	refusedDeletedEdit = "the team deleted it meanwhile: this machine moved it, with this edit, to its trash (restore it from there to bring it back)"
)

// deletedVersion is the Version of a held delete the team refused as
// stale (heldEdit): no memory's version is it.
const deletedVersion = "deleted"

// Syncer runs the push and pull loop of one daemon.
type Syncer struct {
	o    Options
	log  *slog.Logger
	kick chan struct{}

	// cycle serialises pushes and pulls (the loop's and PushNow/PullNow).
	cycle sync.Mutex
	ts    *team.Store // guarded by cycle
	lock  *team.Lock  // the team steward's lock when held; guarded by cycle

	// held are the refused edits the loop does not push again
	// (refusals.go); heldDirty: a pull forgot some since the store last
	// saved them. Guarded by cycle.
	held      heldEdits
	heldDirty bool
	// machine is this daemon's store as a machine of the team
	// (store.TeamMachine); toldSeq is where the next read of the team's
	// conflicts starts (tell.go). toldSeq is guarded by cycle.
	machine string
	toldSeq int64
	// queuedScoped: the memories shared, changed, made personal or
	// deleted while team memory was off were queued (queueScoped, at the
	// first successful connection). Guarded by cycle.
	queuedScoped bool

	mu sync.Mutex // guards st
	st Status

	// serial makes pull run its stages one after the other, as it did
	// before the pipeline: BenchmarkInitialSync's baseline.
	serial bool
	// crashAt, when set (by tests), is called at the crash points of a
	// push (crashBeforeAck, crashAfterAck); an error ends the push there,
	// as if the daemon died.
	crashAt func(point string) error
}

// The crash points of a push: after the team answered, before and after
// the store recorded the answer (refusals and acknowledgements).
const (
	crashBeforeAck = "before-ack"
	crashAfterAck  = "after-ack"
)

// crash calls crashAt at point, if set.
func (s *Syncer) crash(point string) error {
	if s.crashAt == nil {
		return nil
	}
	return s.crashAt(point)
}

// New checks opts and returns a Syncer; Run starts it.
func New(opts Options) (*Syncer, error) {
	switch {
	case opts.Store == nil:
		return nil, errors.New("team sync: no store")
	case opts.Embedder == nil:
		return nil, errors.New("team sync: no embedder")
	case opts.Connect == nil:
		return nil, errors.New("team sync: no way to connect")
	}
	if opts.PullInterval <= 0 {
		opts.PullInterval = 30 * time.Second
	}
	if opts.PushInterval <= 0 {
		opts.PushInterval = time.Second
	}
	if opts.MaxBackoff <= 0 {
		opts.MaxBackoff = 30 * time.Second
	}
	if opts.Batch <= 0 {
		opts.Batch = 500
	}
	if opts.PullBatch <= 0 {
		opts.PullBatch = 2000
	}
	if opts.Workers <= 0 {
		opts.Workers = runtime.GOMAXPROCS(0)
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	s := &Syncer{o: opts, log: log, kick: make(chan struct{}, 1)}
	s.st.Enabled = true
	if err := s.loadRefusals(); err != nil {
		return nil, err
	}
	machine, err := opts.Store.TeamMachine(context.Background())
	if err != nil {
		return nil, fmt.Errorf("team sync: %w", err)
	}
	s.machine = machine
	s.st.Projects = append([]string(nil), opts.Projects...)
	return s, nil
}

// Kick asks the loop to push soon (a local write queued something).
func (s *Syncer) Kick() {
	select {
	case s.kick <- struct{}{}:
	default:
	}
}

// Status reports the loop's state; it never waits on the network.
func (s *Syncer) Status() Status {
	n, err := s.o.Store.OutboxLen()
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.st
	st.Refused = append([]Refusal(nil), s.st.Refused...)
	st.Told = append([]Told(nil), s.st.Told...)
	st.Projects = append([]string(nil), s.st.Projects...)
	if s.st.Settings != nil {
		set := *s.st.Settings
		st.Settings = &set
	}
	if err == nil {
		st.Outbox = n
	}
	return st
}

// ack takes the pushed entries and deltas out of the outbox and, with
// saved (nil: unchanged), stores the refusals and held edits in the same
// transaction; the status takes refused under its lock, held across the
// commit, so a Status that sees the outbox acknowledged (it reads the
// outbox's length first) sees the refusals recorded with it.
func (s *Syncer) ack(ctx context.Context, acked []store.OutboxEntry, dids []string, saved []byte, refused []Refusal) error {
	if saved == nil {
		return s.o.Store.AckOutboxRefusals(ctx, acked, dids, nil)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.o.Store.AckOutboxRefusals(ctx, acked, dids, saved); err != nil {
		return err
	}
	s.st.Refused = refused
	return nil
}

func (s *Syncer) update(f func(*Status)) {
	s.mu.Lock()
	f(&s.st)
	s.mu.Unlock()
}

// loadRefusals reads the refusals and held edits the store kept (pushBatch
// saves them) into the status. A value it cannot read is dropped with a
// warning: it is only the status's history and a saving of pushes, and
// team sync must start regardless.
func (s *Syncer) loadRefusals() error {
	b, err := s.o.Store.TeamRefusals()
	if err != nil {
		return fmt.Errorf("team sync: %w", err)
	}
	if len(b) == 0 {
		return nil
	}
	v, err := decodeRefusals(b)
	if err != nil {
		s.log.Warn("team sync: the stored list of refused writes is unreadable; it starts empty", "err", err)
		return nil
	}
	s.st.Refused, s.held = v.Refused, v.Held
	s.st.Told, s.toldSeq = v.Told, v.ToldSeq
	return nil
}

// fail records err as the last error and the database as unreachable.
func (s *Syncer) fail(err error) {
	s.update(func(st *Status) { st.Connected, st.LastError = false, err.Error() })
}

// done records the outcome of an exchange with the database.
func (s *Syncer) done(err error) {
	if err != nil {
		s.fail(err)
		return
	}
	s.update(func(st *Status) { st.Connected, st.LastError = true, "" })
}

// Close releases the steward's lock and the connection, if held. Run
// does it when it ends; Close is for a Syncer used without Run (PushNow
// and PullNow from a command). A later call connects again.
func (s *Syncer) Close() {
	s.cycle.Lock()
	defer s.cycle.Unlock()
	if s.lock != nil {
		_ = s.lock.Release(context.Background())
		s.lock = nil
	}
	if s.ts != nil {
		s.ts.Close()
		s.ts = nil
	}
}

// Run pushes and pulls until ctx ends, then closes the connection.
func (s *Syncer) Run(ctx context.Context) {
	defer s.Close()
	backoff := s.minBackoff()
	var watch <-chan struct{}
	watchCtx, stopWatch := context.WithCancel(ctx)
	defer stopWatch()
	pullTimer := time.NewTicker(s.o.PullInterval)
	defer pullTimer.Stop()
	pushTimer := time.NewTicker(s.o.PushInterval)
	defer pushTimer.Stop()
	pull := true
	for ctx.Err() == nil {
		err := s.step(ctx, pull)
		if err == nil && watch == nil {
			watch = s.watch(watchCtx)
		}
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			s.fail(err)
			s.log.Debug("team sync failed; retrying", "err", err, "in", backoff)
			select {
			case <-ctx.Done():
				return
			case <-time.After(backoff):
			}
			backoff = min(2*backoff, s.o.MaxBackoff)
			pull = true // a notification may have been missed
			continue
		}
		backoff = s.minBackoff()
		pull = false
		select {
		case <-ctx.Done():
			return
		case _, ok := <-watch:
			if !ok {
				watch = nil
			}
			pull = true
		case <-pullTimer.C:
			pull = true
		case <-pushTimer.C:
		case <-s.kick:
		}
	}
}

func (s *Syncer) minBackoff() time.Duration { return max(50*time.Millisecond, s.o.MaxBackoff/64) }

// watch starts team.Watch on the connected store.
func (s *Syncer) watch(ctx context.Context) <-chan struct{} {
	s.cycle.Lock()
	defer s.cycle.Unlock()
	if s.ts == nil {
		return nil
	}
	return s.ts.Watch(ctx)
}

// step connects if needed, pushes the outbox and, when pull is set, pulls.
func (s *Syncer) step(ctx context.Context, pull bool) error {
	s.cycle.Lock()
	defer s.cycle.Unlock()
	if err := s.connect(ctx); err != nil {
		return err
	}
	if _, err := s.push(ctx, false); err != nil {
		return err
	}
	if pull {
		if _, err := s.pull(ctx); err != nil {
			return err
		}
	}
	s.update(func(st *Status) { st.Connected, st.LastError = true, "" })
	return nil
}

// connect opens the team database once (s.cycle held).
func (s *Syncer) connect(ctx context.Context) error {
	if s.ts != nil {
		return nil
	}
	ts, err := s.o.Connect(ctx)
	if err != nil {
		return err
	}
	ts.SetMachine(s.machine)
	s.ts = ts
	s.update(func(st *Status) { st.Role = ts.Role() })
	s.readSettings(ctx)
	s.queueScoped(ctx)
	return nil
}

// queueScoped queues, once per daemon and at its first successful
// connection (s.cycle held), what changed for the team while team memory
// was off, when no write queued anything: the memories the user shared
// with the team (scope team) that the team was never sent
// (store.EnqueueTeamScoped, push --all's way limited to them; the store
// seeds each one's base as it queues it, so a later start queues none of
// them again), and the team memories whose copy here differs from its
// base, the team's version this store last synced (store.EnqueueSinceBase:
// edited, made personal, deleted, or back in the team after being kept
// apart). Each goes as the same write made online would, so the team
// decides whose version wins by the same rules (merged, refused as stale
// with a conflict copy, refused as another member's). A failure is logged
// and tried again at the next connection.
func (s *Syncer) queueScoped(ctx context.Context) {
	if s.queuedScoped {
		return
	}
	n, err := s.o.Store.EnqueueTeamScoped(ctx)
	if err != nil {
		s.log.Warn("team sync: could not queue the memories shared while team memory was off; trying again at the next connection", "err", err)
		return
	}
	c, err := s.o.Store.EnqueueSinceBase(ctx)
	if err != nil {
		s.log.Warn("team sync: could not queue the changes made while team memory was off; trying again at the next connection", "err", err)
		return
	}
	s.queuedScoped = true
	if n > 0 {
		s.log.Info("team sync: queued the memories shared with the team while team memory was off", "count", n)
	}
	if c.Total() > 0 {
		s.log.Info("team sync: queued the changes made to team memories while team memory was off",
			"edited", c.Edited, "made_personal", c.Left, "deleted", c.Deleted, "back", c.Back)
	}
}

// PushNow pushes the whole outbox now (memtray team push).
func (s *Syncer) PushNow(ctx context.Context) (PushReport, error) {
	s.cycle.Lock()
	defer s.cycle.Unlock()
	if err := s.connect(ctx); err != nil {
		s.fail(err)
		return PushReport{}, err
	}
	r, err := s.push(ctx, false)
	s.done(err)
	return r, err
}

// PushAll queues every team memory again (store.EnqueueShared) and pushes
// them now, the refused edits held back included (memtray team push
// --all): after team.projects changed, to seed a new team database, or to
// try refused edits again.
func (s *Syncer) PushAll(ctx context.Context) (PushReport, error) {
	s.cycle.Lock()
	defer s.cycle.Unlock()
	// Under cycle: the loop must not take these entries for held edits.
	if _, err := s.o.Store.EnqueueShared(ctx); err != nil {
		return PushReport{}, fmt.Errorf("team sync: %w", err)
	}
	if err := s.connect(ctx); err != nil {
		s.fail(err)
		return PushReport{}, err
	}
	r, err := s.push(ctx, true)
	s.done(err)
	return r, err
}

// PullNow pulls and applies every change after the cursor now (memtray
// team pull).
func (s *Syncer) PullNow(ctx context.Context) (PullReport, error) {
	s.cycle.Lock()
	defer s.cycle.Unlock()
	if err := s.connect(ctx); err != nil {
		s.fail(err)
		return PullReport{}, err
	}
	r, err := s.pull(ctx)
	s.done(err)
	return r, err
}

// PushReport counts what a push did.
type PushReport struct {
	// Pushed counts memories the team took (inserted or updated) or held
	// already (unchanged).
	Pushed int `json:"pushed"`
	// Deleted counts deletes pushed.
	Deleted int `json:"deleted"`
	// Relinked counts local memories replaced by the team memory holding
	// the same text, or deleted because the team deleted them.
	Relinked int `json:"relinked"`
	// Refused counts memories or deletes the team refused (another
	// member's memory, invalid, or older than the team's version of it);
	// they leave the outbox. A refused change written again unchanged is
	// not pushed (nor counted) but by PushAll.
	Refused int `json:"refused"`
	// Deltas counts counter deltas pushed.
	Deltas int `json:"deltas"`
}

// PullReport counts what a pull applied.
type PullReport struct {
	Changes int `json:"changes"`
	store.TeamApplied
}

// push drains the outbox in batches (s.cycle held), then takes the
// team's version of the stale held edits; retry pushes the refused edits
// held back too.
func (s *Syncer) push(ctx context.Context, retry bool) (PushReport, error) {
	rep, err := s.drain(ctx, retry)
	if err != nil {
		return rep, err
	}
	return rep, s.takeStale(ctx)
}

// takeStale gives this machine the team's version of the stale held
// edits (s.cycle held): those a pull marked stale and those the team
// refused as stale (it holds another edit, pushed first) or merged onto its newer version, and ends their hold; one
// whose local write waits in the outbox again stays held for the next
// push. Taken after the push acknowledged its write, so a stop in between
// (a restart) leaves it held and stale, to be taken at the next push:
// dropped with that acknowledgement, the edit was pushed again at its
// next write.
func (s *Syncer) takeStale(ctx context.Context) error {
	var ids []string
	var conflicts []store.TeamConflict
	for _, h := range s.held {
		if h.Stale {
			ids = append(ids, h.ID)
			if h.Copy != "" {
				conflicts = append(conflicts, store.TeamConflict{ID: h.ID, CopyID: h.Copy, Reason: conflictReason})
			}
		}
	}
	if len(ids) == 0 {
		return nil
	}
	kept, gone, err := s.takeTeam(ctx, ids, conflicts)
	if err != nil {
		return err
	}
	var moots []heldEdit
	for _, h := range s.held {
		if h.Stale && h.Copy != "" && slices.Contains(gone, h.ID) {
			moots = append(moots, h)
		}
	}
	for _, id := range ids {
		if !slices.Contains(kept, id) {
			s.heldDirty = s.held.drop(id) || s.heldDirty
		}
	}
	return s.withdrawGone(ctx, moots)
}

// withdrawGone withdraws the refusals naming the conflict copies of
// stale holds whose memory the team deleted before this machine took its
// version (s.cycle held): there is no version to take, so the copy is
// never made (the next pull moves the local memory, with the edit, to the
// trash). The refusals here say so instead of naming the copy, the team
// withdraws them (team.WithdrawTeamDeleted), so the machine told that
// this one keeps a conflict copy is told what became of it, and the
// refusals and holds are stored.
func (s *Syncer) withdrawGone(ctx context.Context, holds []heldEdit) error {
	if len(holds) == 0 {
		return nil
	}
	refused := s.refusedNow()
	for _, h := range holds {
		made, err := s.copyMade(ctx, h.Copy)
		if err != nil {
			return err
		}
		if made {
			continue
		}
		n := 0
		for i := range refused {
			if refused[i].ID == h.ID && refused[i].Copy == h.Copy {
				refused[i].Copy, refused[i].Outcome = "", refusedThenTeamDeleted
				n++
			}
		}
		if n = max(n, h.Refusals); n > 0 {
			if _, err := s.ts.WithdrawConflicts(ctx, h.ID, n, team.WithdrawTeamDeleted); err != nil {
				return err
			}
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	b, err := (storedRefusals{Refused: refused, Held: s.held, Told: s.st.Told, ToldSeq: s.toldSeq}).encode()
	if err != nil {
		return err
	}
	if err := s.o.Store.SetTeamRefusals(ctx, b); err != nil {
		return fmt.Errorf("team sync: %w", err)
	}
	s.st.Refused, s.heldDirty = refused, false
	return nil
}

// drain pushes the outbox in batches (s.cycle held).
func (s *Syncer) drain(ctx context.Context, retry bool) (PushReport, error) {
	var rep PushReport
	for {
		entries, deltas, err := s.o.Store.Outbox(ctx, s.o.Batch)
		if err != nil {
			return rep, err
		}
		if len(entries) == 0 && len(deltas) == 0 {
			return rep, nil
		}
		before := rep.Pushed
		if err := s.pushBatch(ctx, entries, deltas, retry, &rep); err != nil {
			return rep, err
		}
		s.update(func(st *Status) { st.LastPush = s.o.Now(); st.Pushed += int64(rep.Pushed - before) })
		if len(entries) < s.o.Batch && len(deltas) < s.o.Batch {
			return rep, nil
		}
	}
}

// pushBatch pushes one read of the outbox and acknowledges what the team
// answered for, with the refusals and held edits in the same store
// transaction. Unless retry, an entry of a held edit's version is
// acknowledged without a push.
func (s *Syncer) pushBatch(ctx context.Context, entries []store.OutboxEntry, deltas []store.CounterDelta, retry bool, rep *PushReport) error {
	ts := s.ts
	var acked []store.OutboxEntry
	var puts []team.Memory
	var putEntries []store.OutboxEntry
	var relinkRestored []relinkTo
	dropped := map[string]bool{} // ids whose deltas the team will never take
	var refusals []Refusal       // recorded with the acknowledgement
	refuseCopy := func(id, op, outcome, copyID string) {
		rep.Refused++
		s.log.Info("the team refused a write: another member owns the memory, or it is invalid", "id", id, "op", op)
		refusals = append(refusals, Refusal{ID: id, Op: op, Outcome: outcome, At: s.o.Now(), Copy: copyID})
	}
	refuse := func(id, op, outcome string) { refuseCopy(id, op, outcome, "") }
	held := slices.Clone(s.held)
	heldChanged := s.heldDirty
	pendingCopy := map[string]string{} // id -> the copy a stale hold it ends had chosen
	pendingN := map[string]int{}       // id -> how many refusals name that copy (0: not known)
	withdrawn := map[string]moot{}     // id -> what became of its pending copy's refusals
	for _, e := range entries {
		if h, ok := held.find(e.ID); ok && !retry && !e.Delete && !e.Restore && h.Version == version(e.Memory) {
			// The version the team refused, written again as it was (an
			// edit undone back to it; an access queues counters alone):
			// the team would refuse it again.
			s.log.Debug("team sync: a refused edit is held back", "id", e.ID)
			// Stale: the team changed it while this write waited, and
			// takeStale gives this machine the team's version once the
			// counters went.
			if h.Invalid && !h.Stale {
				dropped[e.ID] = true
			}
			acked = append(acked, e)
			continue
		}
		if h, ok := held.find(e.ID); ok && h.Copy != "" {
			pendingCopy[e.ID] = h.Copy // refused again: the same copy (copyFor)
			pendingN[e.ID] = h.Refusals
		}
		if held.drop(e.ID) {
			heldChanged = true // pushed again; held again if refused again
		}
		if e.Delete {
			if pendingCopy[e.ID] != "" {
				// Deleted or made personal here before the take: the
				// stale edit's copy is never made.
				why, err := s.deletedWhy(ctx, e.ID)
				if err != nil {
					return err
				}
				withdrawn[e.ID] = moot{refusedThenDeleted, why}
			}
			err := ts.DeleteFrom(ctx, e.ID, e.Base)
			switch {
			case err == nil || errors.Is(err, team.ErrNotFound):
				rep.Deleted++
				// The team holds no version now: the copy's base goes, as
				// a pulled delete's does, so a move back to the team
				// (even while team memory is off) is a memory the team
				// was never sent (queueScoped).
				e.Accepted = true
			case errors.Is(err, team.ErrStale):
				// Held stale with the acknowledgement, as a stale edit:
				// takeStale brings the team's version back here.
				refuse(e.ID, "delete", refusedStaleDelete)
				held.hold(heldEdit{ID: e.ID, Version: deletedVersion, Stale: true})
				heldChanged = true
				e.Refused = true // the base stays, apart: not sent again at a start
			case errors.Is(err, team.ErrNotOwner):
				refuse(e.ID, "delete", refusedDelete)
				e.Refused = true
			default:
				return err
			}
			acked = append(acked, e)
			continue
		}
		if e.Restore {
			r, err := ts.Restore(ctx, e.ID)
			switch {
			case errors.Is(err, team.ErrNotFound):
				// Never pushed: the push below inserts it.
			case errors.Is(err, team.ErrNotOwner):
				// Another member's memory: the restore holds on this
				// machine only. Left a team memory, the local copy would
				// go back to the trash at its next write (the team answers
				// that the id is deleted), so it becomes personal.
				if err := s.keepPersonal(ctx, e.ID); err != nil {
					return err
				}
				dropped[e.ID] = true
				acked = append(acked, e)
				refuse(e.ID, "restore", refusedRestore)
				continue
			case err != nil:
				return err
			case r.Status == team.PushDuplicate:
				relinkRestored = append(relinkRestored, relinkTo{local: e.ID, winner: r.Winner})
				acked = append(acked, e)
				continue
			}
		}
		tm := team.FromLocal(e.Memory)
		tm.Base = e.Base
		if tm.Base == nil && !e.Restore {
			// Queued by a daemon from before bases (a memory new to the
			// team is inserted whatever its base): the team takes it only
			// where it equals the team's version.
			tm.Base = &store.UnknownBase
		}
		puts = append(puts, tm)
		putEntries = append(putEntries, e)
	}
	remap := map[string]string{} // local id -> team id holding its text
	for _, r := range relinkRestored {
		remap[r.local] = r.winner
	}
	if err := s.relink(ctx, relinkRestored); err != nil {
		return err
	}
	if len(puts) > 0 {
		res, err := ts.Push(ctx, puts)
		if err != nil {
			return err
		}
		var vecs []team.Vector
		var relink []relinkTo
		dim := s.o.Store.Info().Dim
		for i, r := range res {
			e := putEntries[i]
			switch r.Status {
			case team.PushInserted, team.PushUpdated:
				rep.Pushed++
				withdrawn[e.ID] = moot{refusedThenMerged, team.WithdrawMerged}
				e.Accepted = true // the team holds it as pushed: the copy's base
				// A damaged stored vector (kept by a write until it is
				// embedded anew) is not the team's to cache: every other
				// member's pull would take it and refuse the memory.
				if store.SoundVector(e.Memory.Embedding, dim) {
					vecs = append(vecs, team.Vector{MemoryID: e.ID, ContentHash: puts[i].ContentHash, Values: e.Memory.Embedding})
				}
			case team.PushUnchanged:
				rep.Pushed++
				e.Accepted = true
				withdrawn[e.ID] = moot{refusedThenMerged, team.WithdrawMerged}
			case team.PushMerged:
				// The team merged this copy's changes onto its own: held
				// stale, as a stale edit, so takeStale gives this machine
				// the merged version after the drain (and after a restart,
				// if it stops in between). Nothing is refused.
				rep.Pushed++
				held.hold(heldEdit{ID: e.ID, Version: version(e.Memory), Stale: true})
				heldChanged = true
				withdrawn[e.ID] = moot{refusedThenMerged, team.WithdrawMerged}
			case team.PushStale:
				// Held, stale, with the acknowledgement: takeStale takes
				// the team's version after it and only then ends the hold,
				// so a stop in between does not leave the edit to be pushed
				// (and refused as stale) again at its next write.
				outcome := refusedStale
				if puts[i].Base != nil && puts[i].Base.Unknown {
					outcome = refusedUnbased
				}
				cp, err := s.copyFor(ctx, pendingCopy[e.ID])
				if err != nil {
					return err
				}
				n := 1
				if cp == pendingCopy[e.ID] {
					n += max(pendingN[e.ID], refusalsNaming(s.refusedNow(), e.ID, cp))
				}
				refuseCopy(e.ID, "change", outcome, cp)
				held.hold(heldEdit{ID: e.ID, Version: version(e.Memory), Stale: true, Copy: cp, Refusals: n})
				heldChanged = true
			case team.PushDuplicate:
				relink = append(relink, relinkTo{local: e.ID, winner: r.Winner})
				remap[e.ID] = r.Winner
				withdrawn[e.ID] = moot{refusedThenReplaced, team.WithdrawRelinked}
			case team.PushDeleted:
				relink = append(relink, relinkTo{local: e.ID})
				withdrawn[e.ID] = moot{refusedThenReplaced, team.WithdrawTeamDeleted}
				dropped[e.ID] = true
				if e.Base != nil && store.BaseOf(e.Memory) != e.Base.Team() {
					// An edit of a version the team deleted since: not
					// lost silently (it waits in the trash here).
					refuse(e.ID, "change", refusedDeletedEdit)
				}
			case team.PushRefused:
				// Kept here: a non-admin steward's decay of another
				// member's memory still counts on this machine.
				withdrawn[e.ID] = moot{refusedThenReplaced, team.WithdrawRefused}
				refuse(e.ID, "change", refusedChange)
				held.hold(heldEdit{ID: e.ID, Version: version(e.Memory)})
				heldChanged = true
			default: // PushInvalid
				dropped[e.ID] = true
				withdrawn[e.ID] = moot{refusedThenReplaced, team.WithdrawRefused}
				s.log.Warn("team refused a memory as invalid; it stays local", "id", e.ID, "why", r.Error)
				refuse(e.ID, "change", refusedInvalid)
				held.hold(heldEdit{ID: e.ID, Version: version(e.Memory), Invalid: true})
				heldChanged = true
			}
			acked = append(acked, e)
		}
		if len(vecs) > 0 && s.o.Embedder.Model() == s.o.Store.Info().Model {
			if err := ts.PutVectors(ctx, s.o.Store.Info().Model, vecs); err != nil {
				return err
			}
		}
		if err := s.relink(ctx, relink); err != nil {
			return err
		}
		rep.Relinked += len(relink)
	}
	// Counters of a memory entering the team go as what they exceed the
	// team's sums of its id by (all of them when the team never counted
	// it), so counts pushed before are not pushed again.
	var based []string
	for _, d := range deltas {
		if d.Baseline && !dropped[d.MemoryID] {
			based = append(based, d.MemoryID)
		}
	}
	sums, err := ts.CountersOf(ctx, based)
	if err != nil {
		return err
	}
	var tds []store.CounterDelta
	var dids []string
	for _, d := range deltas {
		dids = append(dids, d.ID)
		if dropped[d.MemoryID] {
			continue
		}
		if d.Baseline {
			c := sums[d.MemoryID]
			d = d.Growth(store.CounterDelta{Access: c.Access, Reinforced: c.Reinforced, FeedbackSum: c.FeedbackSum, FeedbackN: c.FeedbackN})
		}
		if w, ok := remap[d.MemoryID]; ok {
			d.MemoryID = w
		}
		if d.Zero() || d.Validate() != nil {
			continue
		}
		tds = append(tds, d)
	}
	if err := ts.AddCounters(ctx, tds); err != nil {
		return err
	}
	rep.Deltas += len(tds)
	// The refusals and held edits are stored as their entries leave the
	// outbox, in one transaction (nil: unchanged).
	s.mu.Lock()
	refused := newest(append(slices.Clone(s.st.Refused), refusals...), maxRefused)
	told := slices.Clone(s.st.Told)
	s.mu.Unlock()
	amended, err := s.withdrawCopies(ctx, ts, refused, pendingCopy, pendingN, withdrawn)
	if err != nil {
		return err
	}
	var saved []byte
	if len(refusals) > 0 || heldChanged || amended {
		if saved, err = (storedRefusals{Refused: refused, Held: held, Told: told, ToldSeq: s.toldSeq}).encode(); err != nil {
			return err
		}
	}
	if err := s.crash(crashBeforeAck); err != nil {
		return err
	}
	if err := s.ack(ctx, acked, dids, saved, refused); err != nil {
		return err
	}
	if saved != nil {
		s.held, s.heldDirty = held, false
	}
	if err := s.crash(crashAfterAck); err != nil {
		return err
	}
	s.update(func(st *Status) { st.Relinked += int64(len(remap)) })
	return nil
}

// moot is what became of a stale edit's pending conflict copy when the
// next push of its memory (or its delete) met another answer than a
// refusal as stale: outcome is what this machine's refusals naming the
// copy now say, why what the team's withdrawal of them says
// (team.WithdrawMerged, …).
type moot struct{ outcome, why string }

// withdrawCopies makes the refusals in refused true of the conflict
// copies that will never be made (in place; it reports whether it changed
// any): pending are the copies the stale holds this batch ended had
// chosen, by memory id, pendingN how many refusals of the team named
// each (0: not known), and withdrawn what became of the next push of
// those memories, by id. A copy is made when this machine takes the
// team's version of a memory whose last push was refused as stale; when
// the user edited the memory again before that take and the second push
// was not refused as stale (it put back what conflicted and merged, it
// was relinked to the memory holding its text, the team had deleted the
// memory, it was refused as another member's; or the user deleted the
// memory or made it personal), the version the user left conflicts with
// nothing the team holds, so there is no copy to make, and a refusal
// still naming it would send the user to a trash entry that never is.
// Such a refusal keeps its place (the team did refuse that edit, and the
// other machine was told so) and now says what became of it instead. A
// copy made already (in the trash) is left named. The refusals are
// withdrawn in the team too (team.Store.WithdrawConflicts: every refusal
// naming the copy, pendingN, however many the status's last lines still
// show), so the machine whose version they met, told that this one keeps
// a conflict copy, is told at its next pull what became of it.
func (s *Syncer) withdrawCopies(ctx context.Context, ts *team.Store, refused []Refusal, pending map[string]string, pendingN map[string]int, withdrawn map[string]moot) (bool, error) {
	changed := false
	for id, mt := range withdrawn {
		cp := pending[id]
		if cp == "" {
			continue
		}
		made, err := s.copyMade(ctx, cp)
		if err != nil {
			return false, err
		}
		if made {
			continue
		}
		n := 0
		for i := range refused {
			if refused[i].ID == id && refused[i].Copy == cp {
				refused[i].Copy, refused[i].Outcome = "", mt.outcome
				changed = true
				n++
			}
		}
		if n = max(n, pendingN[id]); n > 0 {
			if _, err := ts.WithdrawConflicts(ctx, id, n, mt.why); err != nil {
				return false, err
			}
		}
	}
	return changed, nil
}

// refusedNow is a copy of the status's refusals.
func (s *Syncer) refusedNow() []Refusal {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.st.Refused)
}

// refusalsNaming counts the refusals of memory id in refused that name
// conflict copy cp.
func refusalsNaming(refused []Refusal, id, cp string) int {
	n := 0
	for _, r := range refused {
		if r.ID == id && r.Copy == cp {
			n++
		}
	}
	return n
}

// deletedWhy is why a stale edit's refusals are withdrawn when memory id
// leaves the team from here before this machine took the team's version:
// made personal (its record is still here) or deleted.
func (s *Syncer) deletedWhy(ctx context.Context, id string) (string, error) {
	m, err := s.o.Store.Get(ctx, id)
	switch {
	case err == nil && m.Scope == memory.ScopePersonal:
		return team.WithdrawPersonal, nil
	case err == nil || errors.Is(err, memory.ErrNotFound):
		return team.WithdrawDeleted, nil
	default:
		return "", fmt.Errorf("team sync: read %s: %w", id, err)
	}
}

// copyMade reports whether conflict copy cp is in the trash.
func (s *Syncer) copyMade(ctx context.Context, cp string) (bool, error) {
	made, err := s.o.Store.TrashGet(ctx, []string{cp})
	if err != nil {
		return false, fmt.Errorf("team sync: the conflict copy %s: %w", cp, err)
	}
	_, ok := made[cp]
	return ok, nil
}

// copyFor is the id of the conflict copy a stale edit's refusal names:
// pending, the copy an earlier refusal of the memory chose, when that copy
// is not made yet (the user edited the memory again before takeStale took
// the team's version, and the second edit was refused too), so that one
// copy, made at the take of the version the user left, holds both edits
// and both refusals name it; a new id otherwise.
func (s *Syncer) copyFor(ctx context.Context, pending string) (string, error) {
	if pending == "" {
		return s.o.Store.NewID(), nil
	}
	made, err := s.copyMade(ctx, pending)
	if err != nil {
		return "", err
	}
	if made {
		return s.o.Store.NewID(), nil // taken already: this refusal's copy is another
	}
	return pending, nil
}

// keepPersonal makes local memory id personal (gone meanwhile: nothing
// to do).
func (s *Syncer) keepPersonal(ctx context.Context, id string) error {
	_, err := s.o.Store.Update(ctx, id, func(m *memory.Memory) error {
		m.Scope = memory.ScopePersonal
		return nil
	})
	if err != nil && !errors.Is(err, memory.ErrNotFound) && !errors.Is(err, store.ErrIndexPending) {
		return fmt.Errorf("team sync: keep %s on this machine: %w", id, err)
	}
	return nil
}

// conflictReason is the trash reason of a conflict copy.
const conflictReason = "conflict copy: your version, which the team refused because it holds another edit of the memory, made on another machine and pushed first; restore it to make it a new edit of the team's version"

// takeTeam replaces the local versions of ids by the team's, with the
// team's counters (plus this daemon's waiting deltas, as a pull does),
// keeping those conflicts name as conflict copies in the trash. A
// local write made since the push keeps its memory for the next push:
// kept are those ids; gone are those the team deleted meanwhile (the
// next pull says so), which have no version to take.
func (s *Syncer) takeTeam(ctx context.Context, ids []string, conflicts []store.TeamConflict) (kept, gone []string, err error) {
	if len(ids) == 0 {
		return nil, nil, nil
	}
	var ms []team.Memory
	for _, id := range ids {
		m, err := s.ts.Get(ctx, id)
		if errors.Is(err, team.ErrNotFound) {
			gone = append(gone, id)
			continue
		}
		if err != nil {
			return nil, nil, err
		}
		ms = append(ms, m)
	}
	sums, err := s.ts.CountersOf(ctx, ids)
	if err != nil {
		return nil, nil, err
	}
	// As a pulled change, with the team's counters and no cached vector:
	// localize gives them to the local memories.
	changes := make([]team.Change, len(ms))
	for i, m := range ms {
		changes[i].Counters = sums[m.ID]
	}
	puts, err := s.localize(ctx, s.ts, ms, changes)
	if err != nil {
		return nil, nil, err
	}
	applied, err := s.o.Store.ApplyTeam(ctx, store.TeamChanges{Put: puts, Conflicts: conflicts})
	if err != nil {
		return nil, nil, err
	}
	if s.o.Applied != nil && len(applied.PutIDs) > 0 {
		s.o.Applied(applied.PutIDs, nil)
	}
	return applied.KeptPuts, gone, nil
}

// relinkTo replaces local memory local by the team memory winner holding
// its text ("" when the team deleted it).
type relinkTo struct{ local, winner string }

// relink applies relinks to the local store: the local copy goes to the
// trash and the team memory comes in.
func (s *Syncer) relink(ctx context.Context, rs []relinkTo) error {
	if len(rs) == 0 {
		return nil
	}
	var ch store.TeamChanges
	var winners []team.Memory
	for _, r := range rs {
		if r.winner == "" {
			ch.Delete = append(ch.Delete, store.TeamDelete{ID: r.local, Reason: "deleted from the team"})
			continue
		}
		w, err := s.ts.Get(ctx, r.winner)
		if errors.Is(err, team.ErrNotFound) {
			continue // deleted meanwhile: the next pull says so
		}
		if err != nil {
			return err
		}
		ch.Delete = append(ch.Delete, store.TeamDelete{ID: r.local, Reason: "the team holds the same text as " + r.winner})
		winners = append(winners, w)
	}
	puts, err := s.localize(ctx, s.ts, winners, nil)
	if err != nil {
		return err
	}
	ch.Put = puts
	_, err = s.o.Store.ApplyTeam(ctx, ch)
	return err
}

// localize turns team memories into local ones with counters and an
// embedding of the store's model: the cached vector when given (vecs, by
// id) and of the right size, else embedded here. The vectors embedded
// here are cached in the team for the next daemon of this model.
func (s *Syncer) localize(ctx context.Context, ts *team.Store, ms []team.Memory, changes []team.Change) ([]memory.Memory, error) {
	info := s.o.Store.Info()
	out := make([]memory.Memory, 0, len(ms))
	var need []int
	var texts []string
	for i, tm := range ms {
		m := tm.Local()
		m.Scope = memory.ScopeTeam
		if changes != nil {
			c := changes[i]
			m.AccessCount, m.ReinforcedCount = int(c.Counters.Access), int(c.Counters.Reinforced)
			m.FeedbackSum, m.FeedbackN = c.Counters.FeedbackSum, int(c.Counters.FeedbackN)
			if len(c.Vector) == info.Dim && s.o.Embedder.Model() == info.Model {
				m.Embedding = c.Vector
			}
		}
		if len(m.Embedding) == 0 {
			need = append(need, len(out))
			texts = append(texts, m.Text)
		}
		out = append(out, m)
	}
	if len(texts) == 0 {
		return out, nil
	}
	if s.o.Embedder.Model() != info.Model {
		return nil, fmt.Errorf("team sync: the embedder (%s) is not the store's model (%s): a re-embedding is running", s.o.Embedder.Model(), info.Model)
	}
	vs, err := s.embed(ctx, texts)
	if err != nil {
		return nil, err
	}
	cache := make([]team.Vector, 0, len(need))
	for k, i := range need {
		out[i].Embedding = vs[k]
		cache = append(cache, team.Vector{MemoryID: out[i].ID, ContentHash: memory.ContentHash(out[i].Text), Values: vs[k]})
	}
	if err := ts.PutVectors(ctx, info.Model, cache); err != nil {
		s.log.Debug("caching vectors in the team database failed", "err", err)
	}
	return out, nil
}

// minEmbedChunk is the fewest texts worth a goroutine of their own.
const minEmbedChunk = 64

// embed embeds texts with up to Options.Workers goroutines, each over a
// contiguous chunk, and checks the embedder returned one vector each.
func (s *Syncer) embed(ctx context.Context, texts []string) ([][]float32, error) {
	workers := min(s.o.Workers, (len(texts)+minEmbedChunk-1)/minEmbedChunk)
	if workers <= 1 {
		return s.embedChunk(ctx, texts)
	}
	out := make([][]float32, len(texts))
	errs := make([]error, workers)
	chunk := (len(texts) + workers - 1) / workers
	var wg sync.WaitGroup
	for w := range workers {
		lo, hi := w*chunk, min((w+1)*chunk, len(texts))
		if lo >= hi {
			break
		}
		wg.Go(func() {
			vs, err := s.embedChunk(ctx, texts[lo:hi])
			if err != nil {
				errs[w] = err
				return
			}
			copy(out[lo:hi], vs)
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return out, nil
}

// embedChunk embeds texts in one call of the embedder.
func (s *Syncer) embedChunk(ctx context.Context, texts []string) ([][]float32, error) {
	vs, err := s.o.Embedder.Embed(ctx, texts)
	if err != nil {
		return nil, fmt.Errorf("team sync: embed pulled memories: %w", err)
	}
	if len(vs) != len(texts) {
		return nil, fmt.Errorf("team sync: the embedder returned %d vectors for %d texts", len(vs), len(texts))
	}
	return vs, nil
}

// pulledPage is one page of the feed on its way through the pull: the
// changes made local (embedded) and the cursor after them.
type pulledPage struct {
	n      int // changes on the page
	ch     store.TeamChanges
	cursor team.Cursor
}

// pull applies the team's changes (pullFeed), then reads the conflicts
// other machines' pushes met on this machine's versions (tell).
func (s *Syncer) pull(ctx context.Context) (PullReport, error) {
	rep, err := s.pullFeed(ctx)
	if err != nil {
		return rep, err
	}
	s.readSettings(ctx)
	return rep, s.tell(ctx)
}

// pullFeed applies the changes after the stored cursor, page by page, each
// page with its cursor in one local transaction (s.cycle held). Three
// stages overlap, each on its own goroutine with one page of slack, so a
// daemon joining a large team reads the next page from the database and
// embeds another while the store writes one: at most four pages are held
// at once, however large the team. A failing stage stops the others; the
// stored cursor is the last page applied, so the next pull goes on from
// there.
func (s *Syncer) pullFeed(ctx context.Context) (PullReport, error) {
	var rep PullReport
	raw, err := s.o.Store.TeamCursor()
	if err != nil {
		return rep, err
	}
	var cur team.Cursor
	if err := cur.UnmarshalText(raw); err != nil {
		return rep, fmt.Errorf("team sync: the stored cursor: %w", err)
	}
	ts := s.ts
	model := s.o.Store.Info().Model
	if s.serial {
		return s.pullSerial(ctx, ts, cur, model)
	}
	if len(raw) == 0 {
		// Joining the team: size the vector index for the whole feed once.
		if b, err := ts.Backlog(ctx, cur); err == nil {
			s.o.Store.ReserveTeam(int(min(b.Changes, 1<<24)))
		}
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var wg sync.WaitGroup
	defer wg.Wait()
	pages := make(chan team.Page, 1)
	local := make(chan pulledPage, 1)
	wg.Go(func() { // read the feed
		defer close(pages)
		for c := cur; ; {
			page, err := ts.Pull(ctx, c, team.PullOptions{Limit: s.o.PullBatch, Model: model})
			if err != nil {
				cancel(err)
				return
			}
			select {
			case pages <- page:
			case <-ctx.Done():
				return
			}
			if !page.More {
				return
			}
			c = page.Next
		}
	})
	wg.Go(func() { // embed what has no cached vector
		defer close(local)
		for page := range pages {
			ch, err := s.changes(ctx, ts, page.Changes)
			if err != nil {
				cancel(err)
				return
			}
			select {
			case local <- pulledPage{n: len(page.Changes), ch: ch, cursor: page.Next}:
			case <-ctx.Done():
				return
			}
		}
	})
	for p := range local { // apply, in order
		if err := s.apply(ctx, p, &rep); err != nil {
			cancel(err)
			break
		}
		cur = p.cursor
	}
	wg.Wait()
	if err := context.Cause(ctx); err != nil {
		return rep, err
	}
	s.pulled(ctx, ts, cur, rep)
	return rep, nil
}

// pullSerial is pull with its stages one after the other.
func (s *Syncer) pullSerial(ctx context.Context, ts *team.Store, cur team.Cursor, model string) (PullReport, error) {
	var rep PullReport
	for {
		page, err := ts.Pull(ctx, cur, team.PullOptions{Limit: s.o.PullBatch, Model: model})
		if err != nil {
			return rep, err
		}
		ch, err := s.changes(ctx, ts, page.Changes)
		if err != nil {
			return rep, err
		}
		if err := s.apply(ctx, pulledPage{n: len(page.Changes), ch: ch, cursor: page.Next}, &rep); err != nil {
			return rep, err
		}
		cur = page.Next
		if !page.More {
			break
		}
	}
	s.pulled(ctx, ts, cur, rep)
	return rep, nil
}

// pulled records a finished pull in the status, with the lag of what
// the feed holds after cur (committed meanwhile).
func (s *Syncer) pulled(ctx context.Context, ts *team.Store, cur team.Cursor, rep PullReport) {
	lag := 0.0
	if b, err := ts.Backlog(ctx, cur); err == nil && b.Changes > 0 {
		// The database's clock on both ends: this machine's may be off.
		lag = max(0, b.Age.Seconds())
	}
	s.update(func(st *Status) {
		st.LastPull, st.LagSeconds = s.o.Now(), lag
		st.Pulled += int64(rep.Put)
	})
}

// apply writes one pulled page and its cursor to the store and adds what
// it did to rep.
func (s *Syncer) apply(ctx context.Context, p pulledPage, rep *PullReport) error {
	next, err := p.cursor.MarshalText()
	if err != nil {
		return err
	}
	ch := p.ch
	ch.Cursor = next
	applied, err := s.o.Store.ApplyTeam(ctx, ch)
	if err != nil {
		return err
	}
	// The team's version replaced (or deleted) a held edit: a later write
	// is pushed as usual. Any pulled change counts, the team's counters
	// too: a held edit may rest on a version of the owner's that ApplyTeam
	// left to a waiting push, and only taking the team's version makes the
	// two machines agree again. A local copy ApplyTeam kept, with a write
	// waiting in the outbox, stays held, marked stale: the push takes the
	// team's version after it (takeStale) unless the write is a new edit.
	kept := make(map[string]bool, len(applied.KeptPuts))
	for _, id := range applied.KeptPuts {
		kept[id] = true
	}
	for _, m := range ch.Put {
		if kept[m.ID] {
			s.heldDirty = s.held.markStale(m.ID) || s.heldDirty
			continue
		}
		s.heldDirty = s.held.drop(m.ID) || s.heldDirty
	}
	for _, d := range ch.Delete {
		s.heldDirty = s.held.drop(d.ID) || s.heldDirty
	}
	// Only what the store changed: not the puts it left to a waiting
	// write (or skipped), nor the deletes it left alone.
	if s.o.Applied != nil && (len(applied.PutIDs) > 0 || len(applied.DeletedIDs) > 0) {
		s.o.Applied(applied.PutIDs, applied.DeletedIDs)
	}
	rep.Changes += p.n
	rep.Put += applied.Put
	rep.Kept += applied.Kept
	rep.Skipped += applied.Skipped
	rep.Deleted += applied.Deleted
	if applied.Invalid > 0 {
		rep.Invalid += applied.Invalid
		s.log.Warn("skipped team memories this store cannot hold", "count", applied.Invalid, "first", applied.InvalidWhy)
	}
	if applied.Unreadable > 0 {
		rep.Unreadable += applied.Unreadable
		s.log.Warn("the team's changes replaced or deleted local records that could not be read", "count", applied.Unreadable, "ids", applied.UnreadableIDs)
	}
	if len(applied.ScopeUnknown) > 0 {
		s.log.Warn("team memories replaced local records too garbled to say whether they had been made personal here: they are team memories again; make one personal again if it should not be shared", "ids", applied.ScopeUnknown)
	}
	return nil
}

// changes turns a page of the feed into local changes: the last state of
// each memory (a page may name one several times), skipping invalid rows.
func (s *Syncer) changes(ctx context.Context, ts *team.Store, cs []team.Change) (store.TeamChanges, error) {
	last := map[string]int{}
	for i, c := range cs {
		last[c.MemoryID] = i
	}
	var ch store.TeamChanges
	var ms []team.Memory
	var mc []team.Change
	for i, c := range cs {
		if last[c.MemoryID] != i || c.Invalid != "" {
			if c.Invalid != "" {
				s.log.Warn("skipped an invalid team memory", "id", c.MemoryID, "why", c.Invalid)
			}
			continue
		}
		switch {
		case c.Memory != nil && !store.ValidID(c.MemoryID):
			s.log.Warn("skipped a team memory whose id this store cannot hold", "id", c.MemoryID)
		case c.Memory != nil:
			ms = append(ms, *c.Memory)
			mc = append(mc, c)
		case c.Tombstone != nil:
			reason := "deleted from the team"
			if c.Tombstone.DeletedBy != "" {
				reason += " by " + c.Tombstone.DeletedBy
			}
			ch.Delete = append(ch.Delete, store.TeamDelete{ID: c.MemoryID, Reason: reason})
		}
	}
	puts, err := s.localize(ctx, ts, ms, mc)
	if err != nil {
		return ch, err
	}
	ch.Put = puts
	return ch, nil
}

// Shared is the scope policy for store.Options.Shared: a memory's own
// scope, else team.SharedByDefault with the configured projects.
func Shared(projects []string) func(*memory.Memory) bool {
	projects = append([]string(nil), projects...)
	return func(m *memory.Memory) bool {
		switch m.Scope {
		case memory.ScopeTeam:
			return true
		case memory.ScopePersonal:
			return false
		}
		return team.SharedByDefault(*m, projects)
	}
}

// StewardLock names the advisory lock of the team steward.
const StewardLock = "steward"

// Steward reports whether this daemon is the team's steward now: it holds
// (taking it if free) the team's advisory lock StewardLock, so one daemon
// at a time decays, prunes and merges team memories. False when another
// daemon holds it or the database does not answer: then the caller leaves
// team memories alone. The lock is kept until the loop ends or the
// connection holding it is lost.
func (s *Syncer) Steward(ctx context.Context) bool {
	s.cycle.Lock()
	defer s.cycle.Unlock()
	if s.lock != nil {
		if s.lock.Held(ctx) == nil {
			return true
		}
		_ = s.lock.Release(ctx)
		s.lock = nil
	}
	if err := s.connect(ctx); err != nil {
		return false
	}
	l, err := s.ts.TryLock(ctx, StewardLock)
	if err != nil {
		return false
	}
	s.lock = l
	return true
}
