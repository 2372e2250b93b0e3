package team

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"regexp"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/memtray/memtray/backend/memory"
	"github.com/memtray/memtray/backend/store"
)

// ErrNotOwner is returned (wrapped) when the database refused to change or
// delete a team memory because another member owns it and the caller is
// not an admin.
var ErrNotOwner = errors.New("team database: the memory belongs to another member (only its owner or an admin may change it)")

// ErrNotFound is returned (wrapped) for an id the team database does not
// hold, live or deleted.
var ErrNotFound = errors.New("team database: no such memory")

// ErrNotMember is returned (wrapped) by Open when the connecting role is
// not a member of the team.
var ErrNotMember = errors.New("team database: this role is not a member of the team (an admin adds it: memtray team member add)")

// Store is a connection pool to one team database. Its methods are safe
// for concurrent use.
type Store struct {
	pool *pgxpool.Pool
	cfg  *pgxpool.Config
	role string
	// schema is the schema version this store reads and writes: known,
	// an older one at least minSyncSchema a member could not migrate, or
	// known on a newer database whose floor allows it.
	schema int
	// known is the schema version this code speaks: SchemaVersion (an
	// older one in tests, as an older memtray would).
	known int
	// database is the database's schema version (newer than known when a
	// newer memtray migrated it compatibly).
	database int
	// floor is the database's floor: the oldest schema version that may
	// sync with it (migration.floor; the highest of its versions').
	floor int
	// machine names the daemon's store the pushes come from (SetMachine;
	// "" none): recorded with the versions it writes and the conflicts
	// its pushes meet (schema 4).
	machine string
}

// SetMachine names the machine (a daemon's store, stable across its
// restarts) this store's pushes come from, for the conflicts they meet
// and whose version a later push meets (Notices). Call it once, before
// the first push.
func (s *Store) SetMachine(id string) { s.machine = id }

// Open validates connString (ParseURL), connects, migrates the schema
// (Migrate) and checks that the role is a member. Close releases it. A
// member whose role may not migrate a schema older than SchemaVersion but
// at least minSyncSchema still opens it (sync works; what needs the newer
// schema says the owner must run memtray team init); an older one fails
// with ErrNeedsOwner. A newer schema opens when its floor is at most
// SchemaVersion (this code then reads and writes what it knows), and
// fails with ErrSchemaNewer otherwise.
func Open(ctx context.Context, connString string) (*Store, error) {
	return openAs(ctx, connString, SchemaVersion)
}

// OpenAs is Open by code that speaks schema version known (1 to
// SchemaVersion), as a memtray of that version opens a team database: it
// syncs with a newer database only when the floor allows known, and then
// reads and writes what version known does (the conflicts from 4, the
// fixed prune at 5, the settings from 6, the dedup per project from 7).
// For tests of the floors, which run an older member's sync through the
// code paths that check the version without building an older memtray;
// a daemon uses Open.
func OpenAs(ctx context.Context, connString string, known int) (*Store, error) {
	if known < 1 || known > SchemaVersion {
		return nil, fmt.Errorf("team database: no schema version %d (1 to %d)", known, SchemaVersion)
	}
	return openAs(ctx, connString, known)
}

// openAs is Open by code that speaks schema version known: SchemaVersion,
// or, in tests, an older one, as an older memtray would.
func openAs(ctx context.Context, connString string, known int) (*Store, error) {
	cfg, err := ParseURL(connString)
	if err != nil {
		return nil, err
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("team database: connect: %w", err)
	}
	s := &Store{pool: pool, cfg: cfg, known: known}
	// The closer stack: each step that fails undoes what came before.
	if err := s.open(ctx); err != nil {
		pool.Close()
		return nil, err
	}
	return s, nil
}

func (s *Store) open(ctx context.Context) error {
	if err := s.pool.QueryRow(ctx, "SELECT current_user::text").Scan(&s.role); err != nil {
		return fmt.Errorf("team database: connect: %w", err)
	}
	s.schema = s.known
	err := s.Migrate(ctx)
	st, verr := readSchema(ctx, s.pool, s.known)
	if err != nil {
		if !errors.Is(err, ErrNeedsOwner) || verr != nil || st.version < minSyncSchema {
			return err
		}
		s.schema = st.version
	}
	if verr != nil {
		return verr
	}
	s.database, s.floor = st.version, st.floor
	var member bool
	if err := s.pool.QueryRow(ctx, "SELECT memtray.is_member(current_user)").Scan(&member); err != nil {
		return fmt.Errorf("team database: check membership: %w", err)
	}
	if !member {
		return fmt.Errorf("%w: role %q", ErrNotMember, s.role)
	}
	return nil
}

// Schema returns the database's schema version and the one this store
// reads and writes (older when a member could not migrate it, or when a
// newer memtray migrated it compatibly: see migration.floor).
func (s *Store) Schema() (database, used int) { return s.database, s.schema }

// Floor returns the database's floor as read when the store opened: the
// oldest memtray schema version that may sync with it (migration.floor).
func (s *Store) Floor() int { return s.floor }

// Known returns the schema version this code speaks (SchemaVersion).
func (s *Store) Known() int { return s.known }

// IsAdmin reports whether the store's role is a team admin: it may
// change the members and the team's settings.
func (s *Store) IsAdmin(ctx context.Context) (bool, error) {
	var admin bool
	if err := s.pool.QueryRow(ctx, "SELECT memtray.is_admin(session_user)").Scan(&admin); err != nil {
		return false, fmt.Errorf("team database: is this role an admin: %w", err)
	}
	return admin, nil
}

// Close closes the pool, waiting for connections in use to be released.
func (s *Store) Close() { s.pool.Close() }

// Role is the database role the store connects as: the member it writes
// as.
func (s *Store) Role() string { return s.role }

// Ping checks that the database answers.
func (s *Store) Ping(ctx context.Context) error {
	if err := s.pool.Ping(ctx); err != nil {
		return fmt.Errorf("team database: ping: %w", err)
	}
	return nil
}

// ErrNotAdmin is returned (wrapped) when a member who is not a team admin
// changes or lists the members, or changes the team's settings.
var ErrNotAdmin = errors.New("only a team admin can change or list the members or change the team's settings")

// ErrNoRole is returned (wrapped) by SetMember for a role the server does
// not have.
var ErrNoRole = errors.New("no such role on the server: create it first (CREATE ROLE ... LOGIN PASSWORD ...)")

// maxRoleLen is PostgreSQL's longest identifier (NAMEDATALEN-1 bytes).
const maxRoleLen = 63

// ValidRole checks a role name given from outside: not empty, at most 63
// bytes of UTF-8 (PostgreSQL would cut a longer one), no NUL.
func ValidRole(role string) error {
	switch {
	case role == "":
		return errors.New("the role is empty")
	case len(role) > maxRoleLen:
		return fmt.Errorf("the role %.20q... is longer than PostgreSQL's %d bytes", role, maxRoleLen)
	case !utf8.ValidString(role) || strings.ContainsRune(role, 0):
		return fmt.Errorf("the role %q is not UTF-8 text without NUL", role)
	}
	return nil
}

// adminErr turns the database's refusal of a non-admin into ErrNotAdmin.
func adminErr(what string, err error) error {
	var pe *pgconn.PgError
	if errors.As(err, &pe) && pe.Code == "42501" {
		return fmt.Errorf("team database: %s: %w", what, ErrNotAdmin)
	}
	return fmt.Errorf("team database: %s: %w", what, err)
}

// SetMember adds role to the team, or changes whether it is an admin. Only
// an admin may (the database refuses others: ErrNotAdmin). The role itself
// must exist (CREATE ROLE ... LOGIN, by whoever administers the server):
// ErrNoRole otherwise.
func (s *Store) SetMember(ctx context.Context, role string, admin bool) error {
	if err := ValidRole(role); err != nil {
		return fmt.Errorf("team database: set member: %w", err)
	}
	var exists bool
	if err := s.pool.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM pg_catalog.pg_roles WHERE rolname = $1)", role).Scan(&exists); err != nil {
		return fmt.Errorf("team database: set member %q: %w", role, err)
	}
	if !exists {
		return fmt.Errorf("team database: set member %q: %w", role, ErrNoRole)
	}
	if _, err := s.pool.Exec(ctx, "SELECT memtray.set_member($1, $2)", role, admin); err != nil {
		return adminErr(fmt.Sprintf("set member %q", role), err)
	}
	return nil
}

// RemoveMember takes role out of the team (admins only: ErrNotAdmin). Its
// memories stay, owned by the role. It reports whether role was a member.
func (s *Store) RemoveMember(ctx context.Context, role string) (bool, error) {
	if err := ValidRole(role); err != nil {
		return false, fmt.Errorf("team database: remove member: %w", err)
	}
	ms, err := s.Members(ctx)
	if err != nil {
		return false, err
	}
	if !slices.ContainsFunc(ms, func(m Member) bool { return m.Role == role }) {
		return false, nil
	}
	if _, err := s.pool.Exec(ctx, "SELECT memtray.remove_member($1)", role); err != nil {
		return false, adminErr(fmt.Sprintf("remove member %q", role), err)
	}
	return true, nil
}

// Member is one member of the team: a database role.
type Member struct {
	Role    string    `json:"role"`
	Admin   bool      `json:"admin"`
	AddedAt time.Time `json:"added_at"`
}

// Members lists the team's members by role (admins only: ErrNotAdmin).
// It needs schema version 2 (ErrNeedsOwner before the owner migrated it).
func (s *Store) Members(ctx context.Context) ([]Member, error) {
	if s.schema < 2 {
		return nil, fmt.Errorf("team database: list members: the schema is at version %d, listing needs 2: %w", s.schema, ErrNeedsOwner)
	}
	rows, err := s.pool.Query(ctx, "SELECT role::text, admin, added_at FROM memtray.list_members()")
	if err != nil {
		return nil, adminErr("list members", err)
	}
	ms, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (Member, error) {
		var m Member
		err := r.Scan(&m.Role, &m.Admin, &m.AddedAt)
		return m, err
	})
	if err != nil {
		return nil, adminErr("list members", err)
	}
	return ms, nil
}

// Memory is a team memory: the part of a local memory.Memory that is
// shared. Counters travel as deltas (store.CounterDelta), vectors per model
// (Vector); pinning, snoozes, hits and the embedding stay local.
type Memory struct {
	ID          string            `json:"id"`
	Text        string            `json:"text"`
	ContentHash string            `json:"content_hash"`
	Kind        memory.Kind       `json:"kind"`
	KindOrigin  memory.KindOrigin `json:"kind_origin,omitempty"`
	Type        memory.Type       `json:"type"`
	Project     string            `json:"project,omitempty"`
	Source      string            `json:"source,omitempty"`
	Surface     string            `json:"surface,omitempty"`
	Importance  float64           `json:"importance"`
	// Supersedes is the memory this one replaced, if any. Push does not
	// delete it: the caller deletes the old version when it should go.
	Supersedes string    `json:"supersedes,omitempty"`
	CreatedAt  time.Time `json:"created_at"`
	UpdatedAt  time.Time `json:"updated_at"`
	// Owner is the member (database role) who pushed it; the database
	// sets it.
	Owner string `json:"owner,omitempty"`
	// Base, on a push, is the team's version the pushed copy is based on
	// (store.OutboxEntry.Base): Push applies the fields the copy changed
	// from it onto the team's version (merge). Nil: none known, and the
	// newer version by UpdatedAt wins, as before bases.
	Base *store.TeamBase `json:"-"`
}

// FromLocal is the shared part of a local memory. The content hash is
// recomputed from the text.
func FromLocal(m memory.Memory) Memory {
	return Memory{
		ID: m.ID, Text: m.Text, ContentHash: memory.ContentHash(m.Text),
		Kind: m.Kind, KindOrigin: m.KindOrigin, Type: m.Type,
		Project: m.Project, Source: m.Source, Surface: m.Surface,
		Importance: m.Importance, Supersedes: m.Supersedes,
		CreatedAt: m.CreatedAt, UpdatedAt: m.UpdatedAt,
	}
}

// Local is m as a local memory (without counters or embedding).
func (m Memory) Local() memory.Memory {
	return memory.Memory{
		ID: m.ID, Text: m.Text, ContentHash: m.ContentHash,
		Kind: m.Kind, KindOrigin: m.KindOrigin, Type: m.Type,
		Project: m.Project, Source: m.Source, Surface: m.Surface,
		Importance: m.Importance, Supersedes: m.Supersedes,
		CreatedAt: m.CreatedAt, UpdatedAt: m.UpdatedAt,
	}
}

var idPattern = regexp.MustCompile(`^[0-9A-Za-z_-]{1,128}$`)

// Validate checks a memory read from or written to the team database:
// what a member wrote there is outside input for every other daemon. It
// applies the local store's rules (memory.Memory.Validate: text, kind,
// type, importance, project) and the team's: an id, the text's content
// hash, created and updated times, and strings PostgreSQL can store
// (UTF-8 without NUL).
func (m Memory) Validate() error {
	var errs []string
	local := m.Local()
	if err := local.Validate(); err != nil {
		var ve *memory.ValidationError
		if errors.As(err, &ve) {
			errs = append(errs, ve.Problems...)
		} else {
			errs = append(errs, err.Error())
		}
	}
	if !idPattern.MatchString(m.ID) {
		errs = append(errs, fmt.Sprintf("id %q is not 1-128 letters, digits, - or _", clip(m.ID)))
	}
	if strings.TrimSpace(m.Text) != "" {
		if h := memory.ContentHash(m.Text); m.ContentHash != h {
			errs = append(errs, fmt.Sprintf("content hash %q is not the text's (%s)", clip(m.ContentHash), h))
		}
	}
	for name, v := range map[string]string{"source": m.Source, "surface": m.Surface} {
		if len(v) > 256 || !memory.ValidUTF8(v) {
			errs = append(errs, name+" is longer than 256 bytes or not UTF-8")
		}
	}
	if m.Supersedes != "" && !idPattern.MatchString(m.Supersedes) {
		errs = append(errs, fmt.Sprintf("supersedes %q is not an id", clip(m.Supersedes)))
	}
	if m.CreatedAt.IsZero() || m.UpdatedAt.IsZero() {
		errs = append(errs, "created or updated time is missing")
	}
	if len(errs) > 0 {
		slices.Sort(errs)
		return fmt.Errorf("%w: memory %q: %s", memory.ErrInvalid, clip(m.ID), strings.Join(errs, "; "))
	}
	return nil
}

// clip shortens s for an error message.
func clip(s string) string {
	if len(s) > 80 {
		return s[:80] + "…"
	}
	return s
}

// PushStatus says what Push did with one memory.
type PushStatus string

// The outcomes of a push.
const (
	// PushInserted: the memory is new to the team.
	PushInserted PushStatus = "inserted"
	// PushUpdated: the id was there with other text or metadata and an
	// older UpdatedAt; it now holds the pushed version.
	PushUpdated PushStatus = "updated"
	// PushUnchanged: the id holds this version already (a retried push),
	// or a newer one (by UpdatedAt) equal to it: nothing was written.
	PushUnchanged PushStatus = "unchanged"
	// PushStale: the pushed copy changed a field the team's version also
	// changed since the copy's base, to another value (with no base: the
	// id holds a newer version by UpdatedAt that differs): an edit made
	// elsewhere and pushed first won. Nothing was written; the caller
	// takes the team's version (Get), or the two would differ until the
	// memory's next change.
	PushStale PushStatus = "stale"
	// PushMerged: the team's version changed other fields since the
	// pushed copy's base: the team holds the fields the copy changed
	// merged onto its version (nothing written when the copy changed
	// nothing the team does not hold already). The caller takes the
	// team's version (Get).
	PushMerged PushStatus = "merged"
	// PushDuplicate: another team memory of the same project holds the
	// same text (content hash; any project's on a schema before 7, whose
	// unique index is store-wide); Winner names it, and the caller
	// relinks its local memory to it. Nothing was written.
	PushDuplicate PushStatus = "duplicate"
	// PushDeleted: the id was deleted from the team (a tombstone); a push
	// does not bring it back (Restore does). Nothing was written.
	PushDeleted PushStatus = "deleted"
	// PushRefused: the id belongs to another member, who alone (or an
	// admin) may change it. Nothing was written.
	PushRefused PushStatus = "refused"
	// PushInvalid: the memory failed validation (PushResult.Error says
	// why). Nothing was written.
	PushInvalid PushStatus = "invalid"
)

// PushResult is the outcome for one pushed memory.
type PushResult struct {
	ID     string     `json:"id"`
	Status PushStatus `json:"status"`
	// Winner is the id holding the text when Status is PushDuplicate.
	Winner string `json:"winner,omitempty"`
	// Error says what is wrong when Status is PushInvalid.
	Error string `json:"error,omitempty"`
}

// maxPush bounds one Push (one transaction).
const maxPush = 5000

// Push writes memories to the team in one transaction, idempotently: by
// id (a memory already there at the same version is left alone,
// PushUnchanged; one pushed with its Base has the fields it changed from
// the base applied onto the team's version, PushUpdated or PushMerged,
// unless the team changed one of them too, PushStale; one without a base
// is refused when the team's is newer by UpdatedAt, PushStale) and by
// content hash (the same text held by
// another id of the same project, of any before schema 7, is a duplicate,
// reported with the winner). A push retried
// after a crash, whether or not the first attempt committed, ends in the
// same state. It returns one result per memory, in order. A memory that
// fails Validate, or repeats an id of the same call, is PushInvalid and
// the others are pushed: an outbox never sticks on one bad entry.
func (s *Store) Push(ctx context.Context, mems []Memory) ([]PushResult, error) {
	if len(mems) == 0 {
		return nil, nil
	}
	if len(mems) > maxPush {
		return nil, fmt.Errorf("team database: push of %d memories: at most %d at once", len(mems), maxPush)
	}
	out := make([]PushResult, len(mems))
	var valid []Memory
	var at []int // valid[k] is mems[at[k]]
	seen := make(map[string]bool, len(mems))
	for i, m := range mems {
		out[i].ID = m.ID
		if err := m.Validate(); err != nil {
			out[i].Status, out[i].Error = PushInvalid, err.Error()
			continue
		}
		if seen[m.ID] {
			out[i].Status, out[i].Error = PushInvalid, "the id is given twice in one push"
			continue
		}
		seen[m.ID] = true
		valid = append(valid, m)
		at = append(at, i)
	}
	if len(valid) == 0 {
		return out, nil
	}
	var res []PushResult
	err := s.retry(ctx, func(tx pgx.Tx) error {
		if err := s.writing(ctx, tx); err != nil {
			return err
		}
		var err error
		res, err = s.push(ctx, tx, valid)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("team database: push: %w", err)
	}
	for k, r := range res {
		out[at[k]] = r
	}
	return out, nil
}

// retry runs f in a transaction, again when it fails on a deadlock or a
// serialization failure (concurrent pushers of the same texts).
func (s *Store) retry(ctx context.Context, f func(pgx.Tx) error) error {
	for attempt := 0; ; attempt++ {
		err := pgx.BeginFunc(ctx, s.pool, f)
		var pe *pgconn.PgError
		if attempt < 5 && errors.As(err, &pe) && (pe.Code == "40P01" || pe.Code == "40001" || pe.Code == "23505") {
			// The transactions that met would meet again if they ran
			// again at once: each waits a random while, longer each time.
			select {
			case <-ctx.Done():
				return err
			case <-time.After(rand.N(time.Duration(attempt+1) * 20 * time.Millisecond)):
			}
			continue
		}
		return err
	}
}

// writing names this store's machine in transaction tx (schema 4: the
// writer of the versions it writes and of the conflicts it records).
func (s *Store) writing(ctx context.Context, tx pgx.Tx) error {
	if s.schema < 4 {
		return nil
	}
	_, err := tx.Exec(ctx, "SELECT set_config('memtray.machine', $1, true)", s.machine)
	return err
}

func (s *Store) push(ctx context.Context, tx pgx.Tx, mems []Memory) ([]PushResult, error) {
	out := make([]PushResult, len(mems))
	ids := make([]string, len(mems))
	for i, m := range mems {
		ids[i] = m.ID
		out[i].ID = m.ID
	}
	// Deleted ids stay deleted.
	dead := map[string]bool{}
	rows, err := tx.Query(ctx, "SELECT id FROM memtray.tombstones WHERE id = ANY($1)", ids)
	if err != nil {
		return nil, err
	}
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		dead[id] = true
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	// Insert the rest in one statement; a conflict on the id or on the
	// text is resolved below, row by row.
	var cols struct {
		id, text, hash, kind, origin, typ, project, source, surface, supersedes []string
		importance                                                              []float64
		created, updated                                                        []time.Time
	}
	for i, m := range mems {
		if dead[m.ID] {
			out[i].Status = PushDeleted
			continue
		}
		cols.id = append(cols.id, m.ID)
		cols.text = append(cols.text, m.Text)
		cols.hash = append(cols.hash, m.ContentHash)
		cols.kind = append(cols.kind, string(m.Kind))
		cols.origin = append(cols.origin, string(m.KindOrigin))
		cols.typ = append(cols.typ, string(m.Type))
		cols.project = append(cols.project, m.Project)
		cols.source = append(cols.source, m.Source)
		cols.surface = append(cols.surface, m.Surface)
		cols.supersedes = append(cols.supersedes, m.Supersedes)
		cols.importance = append(cols.importance, m.Importance)
		cols.created = append(cols.created, m.CreatedAt)
		cols.updated = append(cols.updated, m.UpdatedAt)
	}
	inserted := map[string]bool{}
	if len(cols.id) > 0 {
		rows, err := tx.Query(ctx, `INSERT INTO memtray.memories
			(id, text, content_hash, kind, kind_origin, type, project, source, surface, supersedes, importance, created_at, updated_at)
			SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[],
				$8::text[], $9::text[], $10::text[], $11::float8[], $12::timestamptz[], $13::timestamptz[])
			ON CONFLICT DO NOTHING
			RETURNING id`,
			cols.id, cols.text, cols.hash, cols.kind, cols.origin, cols.typ, cols.project,
			cols.source, cols.surface, cols.supersedes, cols.importance, cols.created, cols.updated)
		if err != nil {
			return nil, err
		}
		for rows.Next() {
			var id string
			if err := rows.Scan(&id); err != nil {
				return nil, err
			}
			inserted[id] = true
		}
		if err := rows.Err(); err != nil {
			return nil, err
		}
	}
	// A retried push: ids held at this version or a newer one, in one
	// query; the rest one by one.
	var skipped []string
	for i, m := range mems {
		if out[i].Status == "" && !inserted[m.ID] {
			skipped = append(skipped, m.ID)
		}
	}
	held := map[string]heldVersion{}
	if len(skipped) > 0 {
		var err error
		if held, err = heldVersions(ctx, tx, mems, skipped); err != nil {
			return nil, err
		}
	}
	for i, m := range mems {
		h, ok := held[m.ID]
		switch {
		case out[i].Status != "":
		case inserted[m.ID]:
			out[i].Status = PushInserted
		case ok && h.same:
			out[i].Status = PushUnchanged
		case ok && m.Base == nil && !m.UpdatedAt.After(h.at):
			out[i].Status = PushStale
		default:
			r, err := s.resolve(ctx, tx, m)
			if err != nil {
				return nil, fmt.Errorf("memory %s: %w", m.ID, err)
			}
			out[i] = r
		}
	}
	return out, nil
}

// heldVersion is a live team memory's version against a pushed one.
type heldVersion struct {
	at   time.Time
	same bool
}

// heldVersions reads, for the pushed memories of ids held live in the
// team, their UpdatedAt and whether they equal the pushed version (text
// and metadata), in one query.
func heldVersions(ctx context.Context, tx pgx.Tx, mems []Memory, ids []string) (map[string]heldVersion, error) {
	want := make(map[string]bool, len(ids))
	for _, id := range ids {
		want[id] = true
	}
	var c struct {
		id, text, kind, origin, typ, project, source, surface, supersedes []string
		importance                                                        []float64
	}
	for _, m := range mems {
		if !want[m.ID] {
			continue
		}
		c.id, c.text, c.kind = append(c.id, m.ID), append(c.text, m.Text), append(c.kind, string(m.Kind))
		c.origin, c.typ, c.project = append(c.origin, string(m.KindOrigin)), append(c.typ, string(m.Type)), append(c.project, m.Project)
		c.source, c.surface, c.supersedes = append(c.source, m.Source), append(c.surface, m.Surface), append(c.supersedes, m.Supersedes)
		c.importance = append(c.importance, m.Importance)
	}
	rows, err := tx.Query(ctx, `SELECT m.id, m.updated_at,
			(m.text, m.kind, m.kind_origin, m.type, m.project, m.source, m.surface, m.importance, m.supersedes)
			= (p.text, p.kind, p.kind_origin, p.type, p.project, p.source, p.surface, p.importance, p.supersedes)
		FROM memtray.memories m
		JOIN unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[],
			$9::text[], $10::float8[]) AS p(id, text, kind, kind_origin, type, project, source, surface, supersedes, importance)
			ON p.id = m.id`,
		c.id, c.text, c.kind, c.origin, c.typ, c.project, c.source, c.surface, c.supersedes, c.importance)
	if err != nil {
		return nil, err
	}
	out := map[string]heldVersion{}
	for rows.Next() {
		var id string
		var h heldVersion
		if err := rows.Scan(&id, &h.at, &h.same); err != nil {
			return nil, err
		}
		out[id] = h
	}
	return out, rows.Err()
}

// resolve decides a pushed memory the insert skipped: its id or its text
// is held already. A memory pushed with a base is applied onto it
// (merge); one without, as the newer version by UpdatedAt or not at all.
// The update is conditional on the row read (its xmin): a push of the
// same id committed in between makes the transaction run again, so a
// merge is never made against a version already replaced.
func (s *Store) resolve(ctx context.Context, tx pgx.Tx, m Memory) (PushResult, error) {
	res := PushResult{ID: m.ID}
	var cur Memory
	var xmin string
	rows, err := tx.Query(ctx, "SELECT "+memoryColumns+", m.xmin::text FROM memtray.memories m WHERE m.id = $1", m.ID)
	if err == nil {
		cur, err = pgx.CollectExactlyOneRow(rows, func(r pgx.CollectableRow) (Memory, error) {
			var c Memory
			err := r.Scan(append(c.scanTargets(), &xmin)...)
			return c, err
		})
	}
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		// The id is free, so the text is taken (in the memory's project,
		// from schema 7).
		winner, err := s.holderOf(ctx, tx, m.ContentHash, m.Project, "")
		if errors.Is(err, pgx.ErrNoRows) {
			// The conflicting row went away since the insert (deleted
			// concurrently): let the transaction run again.
			return res, &pgconn.PgError{Code: "40001", Message: "a conflicting memory changed during the push"}
		}
		if err != nil {
			return res, err
		}
		res.Status, res.Winner = PushDuplicate, winner
		return res, nil
	case err != nil:
		return res, err
	}
	if sameVersion(cur, m) {
		res.Status = PushUnchanged
		return res, nil
	}
	w, status := m, PushUpdated
	if m.Base != nil {
		merged, conflict := merge(*m.Base, cur, m)
		switch {
		case conflict:
			res.Status = PushStale
			return res, s.noteConflict(ctx, tx, m.ID, conflictRefused, pushedFields(*m.Base, cur, m), m.Text, nil)
		case sameVersion(merged, cur):
			// Nothing of the push's that the team does not hold.
			res.Status = PushMerged
			return res, nil
		case !sameVersion(merged, m):
			status = PushMerged
		}
		w = merged
		w.UpdatedAt = m.UpdatedAt
		if !w.UpdatedAt.After(cur.UpdatedAt) {
			w.UpdatedAt = cur.UpdatedAt.Add(time.Millisecond) // a write never makes it older
		}
	} else if !m.UpdatedAt.After(cur.UpdatedAt) {
		res.Status = PushStale
		return res, nil
	}
	// Whose version this push meets, read before the update makes it
	// the writer.
	over, err := s.writerOf(ctx, tx, m.ID)
	if err != nil {
		return res, err
	}
	if w.ContentHash != cur.ContentHash || w.Project != cur.Project {
		// The text, or the project it is held in (schema 7), changes:
		// another memory may hold it there.
		winner, err := s.holderOf(ctx, tx, w.ContentHash, w.Project, m.ID)
		if err == nil {
			res.Status, res.Winner = PushDuplicate, winner
			return res, nil
		}
		if !errors.Is(err, pgx.ErrNoRows) {
			return res, err
		}
	}
	tag, err := tx.Exec(ctx, `UPDATE memtray.memories SET text = $2, content_hash = $3, kind = $4, kind_origin = $5,
			type = $6, project = $7, source = $8, surface = $9, importance = $10, supersedes = $11,
			updated_at = $12, pushed_at = now()
		WHERE id = $1 AND xmin::text = $13`,
		m.ID, w.Text, w.ContentHash, string(w.Kind), string(w.KindOrigin), string(w.Type), w.Project,
		w.Source, w.Surface, w.Importance, w.Supersedes, w.UpdatedAt, xmin)
	if err != nil {
		return res, err
	}
	if tag.RowsAffected() == 1 && status == PushMerged {
		if err := s.noteConflict(ctx, tx, m.ID, conflictMerged, pushedFields(*m.Base, cur, m), m.Text, &over); err != nil {
			return res, err
		}
	}
	if tag.RowsAffected() == 0 {
		var now string
		err := tx.QueryRow(ctx, "SELECT xmin::text FROM memtray.memories WHERE id = $1", m.ID).Scan(&now)
		if errors.Is(err, pgx.ErrNoRows) || (err == nil && now != xmin) {
			// Changed or deleted by a push committed since the read.
			return res, &pgconn.PgError{Code: "40001", Message: "the memory changed during the push"}
		}
		if err != nil {
			return res, err
		}
		// Row-level security hid the row from the update: not ours.
		res.Status = PushRefused
		return res, nil
	}
	res.Status = status
	return res, nil
}

// holderOf is the id of the live team memory holding content hash hash
// in project ("" no project, a project of its own) other than except, or
// pgx.ErrNoRows: the team's exact-text dedup, which the unique index
// decides. From schema 7 (memories_content_hash_project) it is per
// project, as the local store's (store.holderOf); on an older schema a
// member could not migrate, the index is store-wide and so is the
// lookup, or a push clashing with another project's text would find no
// holder and retry until it gave up.
func (s *Store) holderOf(ctx context.Context, tx pgx.Tx, hash, project, except string) (string, error) {
	q, args := "SELECT id FROM memtray.memories WHERE content_hash = $1 AND id <> $2", []any{hash, except}
	if s.schema >= perProjectSchema {
		q, args = q+" AND project = $3", append(args, project)
	}
	var id string
	err := tx.QueryRow(ctx, q, args...).Scan(&id)
	return id, err
}

// sameVersion reports whether a and b hold the same shared fields (what
// Push tells an unchanged memory by).
func sameVersion(a, b Memory) bool {
	return a.ContentHash == b.ContentHash && a.Kind == b.Kind && a.KindOrigin == b.KindOrigin && a.Type == b.Type &&
		a.Project == b.Project && a.Source == b.Source && a.Surface == b.Surface &&
		a.Importance == b.Importance && a.Supersedes == b.Supersedes
}

// merge applies what m changed from base onto cur, the team's version: a
// field m left as in base, or set to cur's value, stays cur's; a field m
// changed that the team did not change since base takes m's value; a
// field both changed to different values is a conflict (the kind and its
// origin count as one field, the text by its content hash). The result
// is cur's id, owner and times with the merged fields. An unknown base
// (store.TeamBase.Unknown) makes every field that differs a conflict.
func merge(base store.TeamBase, cur, m Memory) (Memory, bool) {
	if base.Unknown {
		// No field can be told changed by one side only: any difference
		// is both sides'.
		return cur, !sameVersion(cur, m)
	}
	out := cur
	conflict := false
	type kind struct {
		k memory.Kind
		o memory.KindOrigin
	}
	type text struct{ hash, text string }
	t := text{cur.ContentHash, cur.Text}
	mergeField(&t, text{base.ContentHash, ""}, t, text{m.ContentHash, m.Text}, func(a, b text) bool { return a.hash == b.hash }, &conflict)
	out.ContentHash, out.Text = t.hash, t.text
	k := kind{cur.Kind, cur.KindOrigin}
	mergeField(&k, kind{base.Kind, base.KindOrigin}, k, kind{m.Kind, m.KindOrigin}, eq[kind], &conflict)
	out.Kind, out.KindOrigin = k.k, k.o
	mergeField(&out.Type, base.Type, cur.Type, m.Type, eq[memory.Type], &conflict)
	mergeField(&out.Project, base.Project, cur.Project, m.Project, eq[string], &conflict)
	mergeField(&out.Source, base.Source, cur.Source, m.Source, eq[string], &conflict)
	mergeField(&out.Surface, base.Surface, cur.Surface, m.Surface, eq[string], &conflict)
	mergeField(&out.Importance, base.Importance, cur.Importance, m.Importance, eq[float64], &conflict)
	mergeField(&out.Supersedes, base.Supersedes, cur.Supersedes, m.Supersedes, eq[string], &conflict)
	return out, conflict
}

// mergeField sets *dst (cur's value on entry) to pushed when the push
// changed the field from base and the team did not; both changed it to
// different values sets *conflict.
func mergeField[T any](dst *T, base, cur, pushed T, same func(a, b T) bool, conflict *bool) {
	switch {
	case same(pushed, base) || same(pushed, cur):
	case same(cur, base):
		*dst = pushed
	default:
		*conflict = true
	}
}

func eq[T comparable](a, b T) bool { return a == b }

// ErrStale is returned (wrapped) by DeleteFrom when the team's text of
// the memory is not the one the deleting copy was based on: an edit made
// on another machine, which the deleting one never saw.
var ErrStale = errors.New("team database: the team holds an edit of the memory made meanwhile on another machine")

// Delete deletes team memory id: it moves to the tombstones (the trash)
// and the change feed carries the delete. Deleting a memory already
// deleted is a no-op; one another member owns is refused by the database
// (ErrNotOwner) unless the caller is an admin.
func (s *Store) Delete(ctx context.Context, id string) error {
	return s.DeleteFrom(ctx, id, nil)
}

// DeleteFrom is Delete of a copy based on base (nil: any version): it
// deletes only while the team's text is base's, and refuses (ErrStale)
// once another machine changed the text the deleting copy held. A change
// of other fields (importance, kind, type) does not stop the delete.
func (s *Store) DeleteFrom(ctx context.Context, id string, base *store.TeamBase) error {
	q, args := "DELETE FROM memtray.memories WHERE id = $1", []any{id}
	if base != nil {
		q, args = q+" AND content_hash = $2", append(args, base.ContentHash)
	}
	tag, err := s.pool.Exec(ctx, q, args...)
	if err != nil {
		return fmt.Errorf("team database: delete %s: %w", clip(id), err)
	}
	if tag.RowsAffected() == 1 {
		return nil
	}
	var hash string
	var live, dead bool
	err = s.pool.QueryRow(ctx, `SELECT coalesce((SELECT content_hash FROM memtray.memories WHERE id = $1), ''),
		EXISTS (SELECT 1 FROM memtray.memories WHERE id = $1),
		EXISTS (SELECT 1 FROM memtray.tombstones WHERE id = $1)`, id).Scan(&hash, &live, &dead)
	switch {
	case err != nil:
		return fmt.Errorf("team database: delete %s: %w", clip(id), err)
	case live && base != nil && hash != base.ContentHash:
		if err := s.retry(ctx, func(tx pgx.Tx) error {
			if err := s.writing(ctx, tx); err != nil {
				return err
			}
			return s.noteConflict(ctx, tx, id, conflictDelete, nil, "", nil)
		}); err != nil {
			return fmt.Errorf("team database: delete %s: %w", clip(id), err)
		}
		return fmt.Errorf("%w: delete %s", ErrStale, clip(id))
	case live:
		return fmt.Errorf("%w: delete %s", ErrNotOwner, clip(id))
	case dead:
		return nil
	}
	return fmt.Errorf("%w: delete %s", ErrNotFound, clip(id))
}

// Restore brings a deleted team memory back from the tombstones (undo of
// Delete), as its owner had it. Only the owner or an admin may
// (ErrNotOwner); a live memory of its project holding the same text by
// then (any project's before schema 7) makes it a duplicate
// (PushDuplicate with the winner) and nothing changes.
func (s *Store) Restore(ctx context.Context, id string) (PushResult, error) {
	res := PushResult{ID: id}
	err := s.retry(ctx, func(tx pgx.Tx) error {
		var hash, project string
		err := tx.QueryRow(ctx, "SELECT content_hash, coalesce(memory ->> 'project', '') FROM memtray.tombstones WHERE id = $1", id).Scan(&hash, &project)
		if errors.Is(err, pgx.ErrNoRows) {
			var live bool
			if err := tx.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM memtray.memories WHERE id = $1)", id).Scan(&live); err != nil {
				return err
			}
			if live {
				res.Status = PushUnchanged
				return nil
			}
			return ErrNotFound
		}
		if err != nil {
			return err
		}
		winner, err := s.holderOf(ctx, tx, hash, project, "")
		if err == nil {
			res.Status, res.Winner = PushDuplicate, winner
			return nil
		}
		if !errors.Is(err, pgx.ErrNoRows) {
			return err
		}
		if _, err := tx.Exec(ctx, "SELECT set_config('memtray.restoring', 'on', true)"); err != nil {
			return err
		}
		_, err = tx.Exec(ctx, `INSERT INTO memtray.memories
			SELECT (jsonb_populate_record(NULL::memtray.memories, memory)).* FROM memtray.tombstones WHERE id = $1`, id)
		var pe *pgconn.PgError
		if errors.As(err, &pe) && pe.Code == "42501" { // row-level security
			return ErrNotOwner
		}
		if err != nil {
			return err
		}
		res.Status = PushInserted
		return nil
	})
	if err != nil {
		return res, fmt.Errorf("team database: restore %s: %w", clip(id), err)
	}
	return res, nil
}

// Get returns live team memory id, or ErrNotFound.
func (s *Store) Get(ctx context.Context, id string) (Memory, error) {
	rows, err := s.pool.Query(ctx, "SELECT "+memoryColumns+" FROM memtray.memories m WHERE id = $1", id)
	if err != nil {
		return Memory{}, fmt.Errorf("team database: get %s: %w", clip(id), err)
	}
	m, err := pgx.CollectExactlyOneRow(rows, func(r pgx.CollectableRow) (Memory, error) {
		var m Memory
		err := r.Scan(m.scanTargets()...)
		return m, err
	})
	if errors.Is(err, pgx.ErrNoRows) {
		return Memory{}, fmt.Errorf("%w: %s", ErrNotFound, clip(id))
	}
	if err != nil {
		return Memory{}, fmt.Errorf("team database: get %s: %w", clip(id), err)
	}
	return m, nil
}

// memoryColumns are the columns scanTargets reads, of memories aliased m.
const memoryColumns = `m.id, m.text, m.content_hash, m.kind, m.kind_origin, m.type, m.project, m.source,
	m.surface, m.importance, m.supersedes, m.created_at, m.updated_at, m.owner::text`

func (m *Memory) scanTargets() []any {
	return []any{&m.ID, &m.Text, &m.ContentHash, (*string)(&m.Kind), (*string)(&m.KindOrigin), (*string)(&m.Type),
		&m.Project, &m.Source, &m.Surface, &m.Importance, &m.Supersedes, &m.CreatedAt, &m.UpdatedAt, &m.Owner}
}
