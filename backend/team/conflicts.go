package team

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/memtray/memtray/backend/store"
)

// Conflicts a push met (schema 4). A push applied onto a version of the
// team's that another machine wrote since the push's base (merged), one
// refused as stale, and a delete refused because the text changed since,
// each leave a row in memtray.conflicts, in the push's transaction, naming
// whose version it met: the member and the machine (a daemon's store,
// SetMachine) that wrote it. That machine reads it at its next pull
// (Notices) and tells its user what the teammate changed: the pusher is
// told by its push's answer, the writer of the version it met was not.

// The outcomes of a conflict.
const (
	// conflictMerged: the push's changed fields were merged onto the
	// newer version.
	conflictMerged = "merged"
	// conflictRefused: the push changed a field the newer version
	// changed too; it was refused as stale.
	conflictRefused = "refused"
	// conflictDelete: a delete of a text changed since was refused.
	conflictDelete = "delete"
	// ConflictWithdrawn (schema 8): a refusal (conflictRefused) its
	// pushing machine withdrew: the next edit of the memory there, made
	// before it took the team's version, put back what conflicted and
	// merged, so no conflict copy was kept (WithdrawConflicts). The row
	// names the refusal it withdraws (Notice.Withdraws).
	ConflictWithdrawn = "withdrawn"
)

// Why a refusal was withdrawn (Notice.Why, WithdrawConflicts): what made
// the conflict copy its sentence promised moot. Every reason but
// WithdrawMerged needs schema 9 (the why column); a memtray of 8 is
// shown only the merges.
const (
	// WithdrawMerged: the next edit put back what conflicted and merged.
	WithdrawMerged = ""
	// WithdrawRelinked: the next edit gave the memory the text of another
	// team memory of its project, which the local copy became (a
	// duplicate, relinked).
	WithdrawRelinked = "relinked"
	// WithdrawTeamDeleted: the team deleted the memory before the refused
	// machine took its version; the edit went to that machine's trash
	// with it.
	WithdrawTeamDeleted = "team_deleted"
	// WithdrawDeleted: the refused machine then deleted the memory.
	WithdrawDeleted = "deleted"
	// WithdrawPersonal: the refused machine then made the memory personal
	// (out of the team).
	WithdrawPersonal = "personal"
	// WithdrawRefused: the next edit was refused otherwise (another
	// member's memory, invalid) and stays on the refused machine as its
	// own version.
	WithdrawRefused = "refused"
)

// versionWriter is whose version a team memory holds: the member and machine
// whose push wrote it ("" when written before schema 4).
type versionWriter struct{ member, machine string }

// writerOf reads whose version memory id holds (schema 4; the zero versionWriter
// before).
func (s *Store) writerOf(ctx context.Context, tx pgx.Tx, id string) (versionWriter, error) {
	var w versionWriter
	if s.schema < 4 {
		return w, nil
	}
	err := tx.QueryRow(ctx, "SELECT coalesce(pushed_by, owner)::text, coalesce(pushed_from, '') FROM memtray.memories WHERE id = $1", id).
		Scan(&w.member, &w.machine)
	if err != nil && !errors.Is(err, pgx.ErrNoRows) {
		return w, err
	}
	return w, nil
}

// noteConflict records a conflict of this store's push of memory id with
// the version over wrote (nil: the version memory id holds now), in tx
// (schema 4; nothing before). changed are the fields the push changed,
// text its text when the text is one of them.
func (s *Store) noteConflict(ctx context.Context, tx pgx.Tx, id, outcome string, changed []string, text string, over *versionWriter) error {
	if s.schema < 4 {
		return nil
	}
	if over == nil {
		w, err := s.writerOf(ctx, tx, id)
		if err != nil {
			return err
		}
		over = &w
	}
	if !containsField(changed, "text") {
		text = ""
	}
	if changed == nil {
		changed = []string{}
	}
	if _, err := tx.Exec(ctx, `INSERT INTO memtray.conflicts (memory_id, outcome, over_member, over_machine, changed, text)
		VALUES ($1, $2, $3, $4, $5, $6)`, id, outcome, over.member, over.machine, changed, text); err != nil {
		return fmt.Errorf("record the conflict: %w", err)
	}
	return pruneConflicts(ctx, tx, s.schema)
}

// ConflictRetention is how long the conflict log keeps a row by default
// (schema 6 makes it a team setting, Settings; schema 5 holds it fixed):
// a machine reads the conflicts its versions met at its next pull
// (Notices), so a row is needed until every machine it concerns has
// pulled once; a machine away longer than the retention misses the
// notice (not the memory: its pull brings the team's version as always).
// The prune policy holds the same retention: a member cannot delete a
// younger row.
const ConflictRetention = 90 * 24 * time.Hour

// The bounds of the conflict retention a team may set (schema 6's check).
const (
	MinConflictRetention = 24 * time.Hour
	MaxConflictRetention = 3650 * 24 * time.Hour
)

// pruneConflicts deletes, in tx (a push that records a conflict), the
// conflict rows older than the team's retention (schema 6: its setting;
// 5: ConflictRetention; nothing before, where a member may not delete).
// The log grows with conflicts only, so it is pruned where it grows,
// without a timer of its own.
func pruneConflicts(ctx context.Context, tx pgx.Tx, schema int) error {
	var err error
	switch {
	case schema >= 6:
		_, err = tx.Exec(ctx, `DELETE FROM memtray.conflicts WHERE at < now() - memtray.conflict_retention()`)
	case schema == 5:
		_, err = tx.Exec(ctx, `DELETE FROM memtray.conflicts WHERE at < now() - $1::interval`, interval(ConflictRetention))
	}
	if err != nil {
		return fmt.Errorf("prune the conflict log: %w", err)
	}
	return nil
}

// interval is d as a PostgreSQL interval's text, in whole seconds.
func interval(d time.Duration) string { return fmt.Sprintf("%d seconds", int64(d/time.Second)) }

// Settings are the team's settings (schema 6), one value for the whole
// team, held in the team database: an admin changes them
// (SetConflictRetention), every member's daemon follows them.
type Settings struct {
	// ConflictRetention is how long the conflict log keeps a row.
	ConflictRetention time.Duration
	// ChangedBy and ChangedAt say who last changed them, and when (the
	// migration's role and time until an admin does).
	ChangedBy string    `json:"changed_by"`
	ChangedAt time.Time `json:"changed_at"`
}

// MarshalJSON writes the retention in days (conflict_retention_days), as
// the command line sets it.
func (st Settings) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		Days      int64     `json:"conflict_retention_days"`
		ChangedBy string    `json:"changed_by,omitempty"`
		ChangedAt time.Time `json:"changed_at"`
	}{int64(st.ConflictRetention / (24 * time.Hour)), st.ChangedBy, st.ChangedAt})
}

// Settings reads the team's settings. Before schema 6 (the owner has not
// migrated) they are the fixed defaults and ChangedBy is "".
func (s *Store) Settings(ctx context.Context) (Settings, error) {
	if s.schema < SettingsSchema {
		return Settings{ConflictRetention: ConflictRetention}, nil
	}
	var out Settings
	var secs int64
	err := s.pool.QueryRow(ctx, `SELECT extract(epoch FROM conflict_retention)::bigint, changed_by::text, changed_at
		FROM memtray.settings`).Scan(&secs, &out.ChangedBy, &out.ChangedAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return Settings{ConflictRetention: ConflictRetention}, nil
	}
	if err != nil {
		return Settings{}, fmt.Errorf("team database: read the settings: %w", err)
	}
	out.ConflictRetention = time.Duration(secs) * time.Second
	return out, nil
}

// SetConflictRetention sets how long the team's conflict log keeps a row
// (admins only: ErrNotAdmin), within MinConflictRetention and
// MaxConflictRetention. It needs schema 6 (ErrNeedsOwner before the
// owner migrated it).
func (s *Store) SetConflictRetention(ctx context.Context, d time.Duration) error {
	if d < MinConflictRetention || d > MaxConflictRetention {
		return fmt.Errorf("team database: the conflict retention must be within %d and %d days, not %v", MinConflictRetention/(24*time.Hour), MaxConflictRetention/(24*time.Hour), d)
	}
	if s.schema < SettingsSchema {
		return fmt.Errorf("team database: set the conflict retention: the schema is at version %d, team settings need 6: %w", s.schema, ErrNeedsOwner)
	}
	// In days, the unit it is set in, whatever the database's version
	// (schema 8's trigger turns the seconds an older memtray passes into
	// days too). Code speaking an older version passes seconds, as that
	// memtray did.
	days, rest := int64(d/(24*time.Hour)), (d % (24 * time.Hour)).Seconds()
	q, args := "SELECT memtray.set_conflict_retention(make_interval(days => $1::int, secs => $2::double precision))", []any{days, rest}
	if s.known < withdrawSchema {
		q, args = "SELECT memtray.set_conflict_retention($1::interval)", []any{interval(d)}
	}
	if _, err := s.pool.Exec(ctx, q, args...); err != nil {
		return adminErr("set the conflict retention", err)
	}
	return nil
}

func containsField(fs []string, f string) bool {
	for _, x := range fs {
		if x == f {
			return true
		}
	}
	return false
}

// pushedFields names the shared fields push m changed from base (an
// unknown base: those where m and cur, the team's version, differ).
func pushedFields(base store.TeamBase, cur, m Memory) []string {
	ref := base
	if base.Unknown {
		ref = baseOfMemory(cur)
	}
	var out []string
	add := func(changed bool, name string) {
		if changed {
			out = append(out, name)
		}
	}
	add(m.ContentHash != ref.ContentHash, "text")
	add(m.Kind != ref.Kind || m.KindOrigin != ref.KindOrigin, "kind")
	add(m.Type != ref.Type, "type")
	add(m.Project != ref.Project, "project")
	add(m.Source != ref.Source, "source")
	add(m.Surface != ref.Surface, "surface")
	add(m.Importance != ref.Importance, "importance")
	add(m.Supersedes != ref.Supersedes, "supersedes")
	return out
}

// baseOfMemory is m's shared fields as a base.
func baseOfMemory(m Memory) store.TeamBase {
	return store.TeamBase{ContentHash: m.ContentHash, Kind: m.Kind, KindOrigin: m.KindOrigin, Type: m.Type,
		Project: m.Project, Source: m.Source, Surface: m.Surface, Importance: m.Importance, Supersedes: m.Supersedes}
}

// Notice is a conflict another machine's push met on a version this
// machine wrote: its edit merged onto this machine's (Outcome "merged"),
// refused as stale because this machine's was pushed first ("refused"),
// or its delete refused because this machine had edited the text
// ("delete"); or, from schema 8, a refusal told before that its machine
// withdrew ("withdrawn", naming it by Withdraws): its next edit put back
// what conflicted and merged.
type Notice struct {
	Seq      int64  `json:"seq"`
	MemoryID string `json:"memory_id"`
	Outcome  string `json:"outcome"`
	// Member is who pushed it (a database role); Machine is "" when it is
	// this store's role on another machine.
	Member string `json:"member"`
	// Changed are the fields the push changed ("text", "kind", "type",
	// "project", "source", "surface", "importance", "supersedes").
	Changed []string `json:"changed,omitempty"`
	// Text is the push's text when it changed the text.
	Text string    `json:"text,omitempty"`
	At   time.Time `json:"at"`
	// Withdraws, for Outcome "withdrawn", is the Seq of the refusal it
	// withdraws.
	Withdraws int64 `json:"withdraws,omitempty"`
	// Why, for Outcome "withdrawn", is what made the refusal moot
	// (WithdrawMerged, WithdrawRelinked, …; schema 9).
	Why string `json:"why,omitempty"`
}

// maxNotices bounds one Notices read.
const maxNotices = 1000

// Notices returns the conflicts recorded after seq after (at most 1000)
// that other machines' pushes met on versions machine wrote (or, for a
// version written before schema 4, that this store's role wrote), and the
// seq of the last conflict read: the next read starts after it. Before
// schema 4 there are none.
func (s *Store) Notices(ctx context.Context, after int64, machine string) ([]Notice, int64, error) {
	if s.schema < 4 || machine == "" {
		return nil, after, nil
	}
	var out []Notice
	last := after
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		out, last = nil, after
		if err := s.speaking(ctx, tx); err != nil {
			return err
		}
		withdraws, why := "0::bigint", "''::text"
		if s.schema >= withdrawSchema {
			withdraws = "coalesce(withdraws, 0)"
		}
		if s.schema >= forcedSchema {
			why = "why"
		}
		rows, err := tx.Query(ctx, `SELECT seq, memory_id, outcome, member::text, machine, over_member::text, over_machine,
				changed, text, at, `+withdraws+`, `+why+`
			FROM memtray.conflicts WHERE seq > $1 ORDER BY seq LIMIT $2`, after, maxNotices)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var n Notice
			var from, overMember, overMachine string
			if err := rows.Scan(&n.Seq, &n.MemoryID, &n.Outcome, &n.Member, &from, &overMember, &overMachine, &n.Changed, &n.Text, &n.At, &n.Withdraws, &n.Why); err != nil {
				return err
			}
			last = n.Seq
			mine := overMachine == machine || (overMachine == "" && overMember == s.role)
			if mine && from != machine {
				out = append(out, n)
			}
		}
		return rows.Err()
	})
	if err != nil {
		return nil, after, fmt.Errorf("team database: read conflicts: %w", err)
	}
	return out, last, nil
}

// speaking tells the database, in transaction tx, the schema version this
// store reads and writes (memtray.speaks): from schema 8 the conflict
// log shows withdrawals only to a session of 8 or later, since an older
// memtray would take the outcome it does not know for a refused delete,
// and from 9 those with a why (other than a merge) only to a session of
// 9 or later, which a memtray of 8 would tell as a merge. From 9 the log
// binds its owner too (FORCE ROW LEVEL SECURITY), so this holds for the
// team owner's machine as for any member's.
func (s *Store) speaking(ctx context.Context, tx pgx.Tx) error {
	if s.schema < withdrawSchema {
		return nil
	}
	_, err := tx.Exec(ctx, "SELECT set_config('memtray.speaks', $1, true)", strconv.Itoa(s.schema))
	return err
}

// WithdrawConflicts withdraws the last n refusals (conflictRefused) this
// machine's pushes of memory id met that are not withdrawn yet, and
// reports how many it withdrew: something made them moot before this
// machine took the team's version, so no conflict copy was kept (why:
// the next edit here put back what conflicted and merged,
// WithdrawMerged; or WithdrawRelinked, WithdrawTeamDeleted,
// WithdrawDeleted, WithdrawPersonal, WithdrawRefused), and the machine
// whose version they met, told "the team refused theirs, which their
// machine keeps as a conflict copy", is told at its next pull what
// became of it instead (a "withdrawn" row naming each refusal, recorded
// in its member's name as any conflict). Idempotent: a refusal is
// withdrawn once. Before schema 8 (the owner has not migrated) there is
// nothing to record it in, before 9 nothing to record a why other than
// a merge in, and the other machine keeps the refusal as told.
func (s *Store) WithdrawConflicts(ctx context.Context, id string, n int, why string) (int, error) {
	if s.schema < withdrawSchema || s.machine == "" || n <= 0 || (why != WithdrawMerged && s.schema < forcedSchema) {
		return 0, nil
	}
	cols, vals := "", ""
	if s.schema >= forcedSchema {
		cols, vals = ", why", ", $4"
	}
	var done int
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if err := s.writing(ctx, tx); err != nil {
			return err
		}
		if err := s.speaking(ctx, tx); err != nil {
			return err
		}
		args := []any{id, s.machine, n}
		if cols != "" {
			args = append(args, why)
		}
		tag, err := tx.Exec(ctx, `INSERT INTO memtray.conflicts (memory_id, outcome, over_member, over_machine, changed, text, withdraws`+cols+`)
			SELECT c.memory_id, 'withdrawn', c.over_member, c.over_machine, c.changed, c.text, c.seq`+vals+`
			FROM memtray.conflicts c
			WHERE c.memory_id = $1 AND c.outcome = 'refused' AND c.member = current_user AND c.machine = $2
				AND NOT EXISTS (SELECT 1 FROM memtray.conflicts w WHERE w.outcome = 'withdrawn' AND w.withdraws = c.seq)
			ORDER BY c.seq DESC LIMIT $3`, args...)
		if err != nil {
			return err
		}
		done = int(tag.RowsAffected())
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("team database: withdraw the refusals of %s: %w", id, err)
	}
	return done, nil
}
