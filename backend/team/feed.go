package team

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/memtray/memtray/backend/memory"
)

// The change feed never skips a change, although transactions commit in
// another order than they wrote. Every change row records the id of the
// transaction that wrote it (pg_current_xact_id(), an xid8, 64 bits, never
// wrapping), and all of a transaction's rows become visible together when
// it commits. A reader reads in one REPEATABLE READ transaction, so one
// snapshot S answers both "which transactions have ended" and "which rows
// are visible":
//
//   - every transaction whose xid is below xmin(S) has ended (committed or
//     aborted): the rows of the committed ones are visible in S;
//   - a transaction at or above xmin(S) may still be running: its rows are
//     not visible yet and will be later.
//
// A Cursor is (Xmin, Done): every committed transaction below Xmin has been
// read, and Done lists the transactions at or above Xmin that have been
// read too. A pull reads the visible rows with xid >= Xmin whose xid is
// not in Done, ordered by (xid, seq), then moves Xmin up to xmin(S) and
// keeps in Done only the xids at or above it. A transaction below the new
// Xmin had ended when S was taken, so its rows, if it committed, were
// visible and read now or before; one at or above it is either in Done or
// was not visible and is read by a later pull. So each committed change is
// returned exactly once, and in the order of its transaction's id within a
// pull.
//
// A page limit cuts only between transactions (a transaction's rows are
// returned together, however many), and a cut keeps Xmin at or below the
// first transaction not read. Done holds the transactions committed since
// the oldest one still running began: it stays small unless a session
// keeps a transaction open for long, in any database of the server, since
// transaction ids are the server's (idle_in_transaction_session_timeout
// bounds that). Its size never affects correctness.

// Cursor is a reader's position in the change feed. The zero Cursor is
// the beginning. Its text form (MarshalText) is what a daemon stores
// between pulls.
type Cursor struct {
	// Xmin: every committed transaction with a smaller id has been read.
	Xmin uint64
	// Done are the ids at or above Xmin of transactions already read,
	// ascending.
	Done []uint64
}

// cursorPrefix starts the text form, which names its version.
const cursorPrefix = "c1:"

// maxCursorDone bounds a cursor's Done list read from text.
const maxCursorDone = 1 << 20

// MarshalText encodes the cursor as "c1:<xmin>" or "c1:<xmin>:<done>,<done>…".
func (c Cursor) MarshalText() ([]byte, error) {
	var b strings.Builder
	b.WriteString(cursorPrefix)
	b.WriteString(strconv.FormatUint(c.Xmin, 10))
	for i, d := range c.Done {
		if i == 0 {
			b.WriteByte(':')
		} else {
			b.WriteByte(',')
		}
		b.WriteString(strconv.FormatUint(d, 10))
	}
	return []byte(b.String()), nil
}

// String is the text form.
func (c Cursor) String() string {
	b, _ := c.MarshalText()
	return string(b)
}

// UnmarshalText decodes MarshalText's form. The empty text is the zero
// cursor. Done must be ascending, without repeats and not below Xmin.
func (c *Cursor) UnmarshalText(text []byte) error {
	s := string(text)
	if s == "" {
		*c = Cursor{}
		return nil
	}
	rest, ok := strings.CutPrefix(s, cursorPrefix)
	if !ok {
		return fmt.Errorf("team cursor %q: does not start with %q", clip(s), cursorPrefix)
	}
	xs, ds, hasDone := strings.Cut(rest, ":")
	xmin, err := strconv.ParseUint(xs, 10, 64)
	if err != nil || xs != strconv.FormatUint(xmin, 10) {
		return fmt.Errorf("team cursor %q: bad xmin %q", clip(s), clip(xs))
	}
	out := Cursor{Xmin: xmin}
	if hasDone {
		parts := strings.Split(ds, ",")
		if len(parts) > maxCursorDone {
			return fmt.Errorf("team cursor: %d done transactions, more than %d", len(parts), maxCursorDone)
		}
		out.Done = make([]uint64, 0, len(parts))
		for _, p := range parts {
			d, err := strconv.ParseUint(p, 10, 64)
			if err != nil || p != strconv.FormatUint(d, 10) {
				return fmt.Errorf("team cursor %q: bad transaction id %q", clip(s), clip(p))
			}
			if d < xmin || (len(out.Done) > 0 && d <= out.Done[len(out.Done)-1]) {
				return fmt.Errorf("team cursor %q: transaction ids must ascend from xmin", clip(s))
			}
			out.Done = append(out.Done, d)
		}
	}
	*c = out
	return nil
}

// Op is what a change did.
type Op string

// The changes.
const (
	// OpPut: the memory was added, updated or restored.
	OpPut Op = "put"
	// OpDelete: the memory was deleted.
	OpDelete Op = "delete"
	// OpCounters: a member added counter deltas to the memory.
	OpCounters Op = "counters"
)

// Change is one row of the change feed with the memory's state as the
// pull's snapshot sees it: changes are notices, and the state is what to
// apply (so applying an old change after a newer one is harmless).
type Change struct {
	// Seq is the change's number (unique, but not in commit order).
	Seq int64 `json:"seq"`
	// Xid is the writing transaction's id.
	Xid uint64    `json:"xid"`
	Op  Op        `json:"op"`
	At  time.Time `json:"at"`
	// MemoryID is the memory changed.
	MemoryID string `json:"memory_id"`
	// Memory is its state when live, nil when deleted.
	Memory *Memory `json:"memory,omitempty"`
	// Tombstone is its deletion when deleted, nil when live.
	Tombstone *Tombstone `json:"tombstone,omitempty"`
	// Counters are the team's sums of its counter deltas.
	Counters Counters `json:"counters"`
	// Vector is its embedding under the pull's model when the cache holds
	// one for its current text (nil otherwise).
	Vector []float32 `json:"vector,omitempty"`
	// Invalid says why the row failed validation (a member wrote it
	// outside memtray); Memory is nil then and the change should be
	// skipped, not applied.
	Invalid string `json:"invalid,omitempty"`
}

// Tombstone is a deleted team memory.
type Tombstone struct {
	ContentHash string    `json:"content_hash"`
	Owner       string    `json:"owner"`
	DeletedBy   string    `json:"deleted_by"`
	DeletedAt   time.Time `json:"deleted_at"`
}

// PullOptions shape a Pull.
type PullOptions struct {
	// Limit is about how many changes to return (default 1000); a
	// transaction's changes are returned together, so a page may hold
	// more.
	Limit int
	// Model, when set, fills Change.Vector from the vector cache.
	Model string
}

// Page is what Pull returns.
type Page struct {
	Changes []Change
	// Next is the cursor to pull from next.
	Next Cursor
	// More says the page was cut at the limit: pull again now.
	More bool
}

// Pull returns the changes after cursor, in (transaction, seq) order, each
// exactly once over successive pulls, whatever order their transactions
// committed in.
func (s *Store) Pull(ctx context.Context, cursor Cursor, opt PullOptions) (Page, error) {
	if opt.Limit <= 0 {
		opt.Limit = 1000
	}
	var page Page
	err := pgx.BeginTxFunc(ctx, s.pool, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}, func(tx pgx.Tx) error {
		var err error
		page, err = pull(ctx, tx, cursor, opt)
		return err
	})
	if err != nil {
		return Page{}, fmt.Errorf("team database: pull: %w", err)
	}
	return page, nil
}

const changeQuery = `SELECT c.seq, c.xid::text, c.op, c.at, c.memory_id,
		m.id IS NOT NULL, ` + memoryColumns + `,
		t.id IS NOT NULL, t.content_hash, t.owner::text, t.deleted_by::text, t.deleted_at,
		k.access, k.reinforced, k.feedback_sum, k.feedback_n,
		v.dim, v.vector
	FROM memtray.changes c
	LEFT JOIN memtray.memories m ON m.id = c.memory_id
	LEFT JOIN memtray.tombstones t ON t.id = c.memory_id
	LEFT JOIN LATERAL (SELECT coalesce(sum(d.access), 0)::bigint AS access,
			coalesce(sum(d.reinforced), 0)::bigint AS reinforced,
			coalesce(sum(d.feedback_sum), 0)::float8 AS feedback_sum,
			coalesce(sum(d.feedback_n), 0)::bigint AS feedback_n
		FROM memtray.counter_deltas d WHERE d.memory_id = c.memory_id) k ON true
	LEFT JOIN memtray.vectors v ON v.model = $1 AND v.memory_id = c.memory_id AND v.content_hash = m.content_hash
	`

func pull(ctx context.Context, tx pgx.Tx, cur Cursor, opt PullOptions) (Page, error) {
	var snapXmin uint64
	var xs string
	if err := tx.QueryRow(ctx, "SELECT pg_snapshot_xmin(pg_current_snapshot())::text").Scan(&xs); err != nil {
		return Page{}, err
	}
	snapXmin, err := strconv.ParseUint(xs, 10, 64)
	if err != nil {
		return Page{}, fmt.Errorf("snapshot xmin %q: %w", xs, err)
	}
	done := make([]string, len(cur.Done))
	for i, d := range cur.Done {
		done[i] = strconv.FormatUint(d, 10)
	}
	xmin := strconv.FormatUint(cur.Xmin, 10)
	changes, err := queryChanges(ctx, tx, changeQuery+`WHERE c.xid >= $2::text::xid8 AND NOT (c.xid = ANY($3::text[]::xid8[]))
		ORDER BY c.xid, c.seq LIMIT $4`, opt.Model, xmin, done, opt.Limit)
	if err != nil {
		return Page{}, err
	}
	page := Page{Changes: changes}
	newXmin := snapXmin
	if len(changes) == opt.Limit {
		// Cut: finish the last transaction, then stop below the next.
		last := changes[len(changes)-1]
		rest, err := queryChanges(ctx, tx, changeQuery+`WHERE c.xid = $2::text::xid8 AND c.seq <> ALL($3::int8[])
			ORDER BY c.seq`, opt.Model, strconv.FormatUint(last.Xid, 10), seqsOf(changes, last.Xid))
		if err != nil {
			return Page{}, err
		}
		page.Changes = append(page.Changes, rest...)
		page.More = true
		newXmin = min(snapXmin, last.Xid+1)
	}
	// Done: the old list and the transactions read, at or above newXmin.
	next := Cursor{Xmin: max(newXmin, cur.Xmin)}
	for _, d := range cur.Done {
		if d >= next.Xmin {
			next.Done = append(next.Done, d)
		}
	}
	for _, c := range page.Changes {
		if c.Xid >= next.Xmin {
			next.Done = append(next.Done, c.Xid)
		}
	}
	slices.Sort(next.Done)
	next.Done = slices.Compact(next.Done)
	page.Next = next
	return page, nil
}

// seqsOf lists the seqs of the changes of transaction xid.
func seqsOf(cs []Change, xid uint64) []int64 {
	var out []int64
	for _, c := range cs {
		if c.Xid == xid {
			out = append(out, c.Seq)
		}
	}
	return out
}

// queryChanges runs a changeQuery completed by a WHERE clause; args
// start with the model ($1).
func queryChanges(ctx context.Context, tx pgx.Tx, sql string, args ...any) ([]Change, error) {
	rows, err := tx.Query(ctx, sql, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Change
	for rows.Next() {
		c, err := scanChange(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, rows.Err()
}

func scanChange(rows pgx.Rows) (Change, error) {
	var (
		c                             Change
		xid, op                       string
		live, dead                    bool
		m                             nullMemory
		tHash, tOwner, tBy            *string
		tAt                           *time.Time
		dim                           *int32
		vec                           []byte
		access, reinforced, feedbackN int64
		feedbackSum                   float64
	)
	targets := []any{&c.Seq, &xid, &op, &c.At, &c.MemoryID, &live}
	targets = append(targets, m.scanTargets()...)
	targets = append(targets, &dead, &tHash, &tOwner, &tBy, &tAt,
		&access, &reinforced, &feedbackSum, &feedbackN, &dim, &vec)
	if err := rows.Scan(targets...); err != nil {
		return Change{}, err
	}
	x, err := strconv.ParseUint(xid, 10, 64)
	if err != nil {
		return Change{}, fmt.Errorf("change %d: xid %q: %w", c.Seq, xid, err)
	}
	c.Xid, c.Op = x, Op(op)
	c.Counters = Counters{Access: access, Reinforced: reinforced, FeedbackSum: feedbackSum, FeedbackN: feedbackN}
	switch {
	case live:
		mem := m.memory()
		if err := mem.Validate(); err != nil {
			c.Invalid = err.Error()
			break
		}
		c.Memory = &mem
		if dim != nil {
			v, err := DecodeVector(vec, int(*dim))
			if err != nil {
				c.Invalid = err.Error()
				c.Memory = nil
				break
			}
			c.Vector = v
		}
	case dead:
		c.Tombstone = &Tombstone{ContentHash: deref(tHash), Owner: deref(tOwner), DeletedBy: deref(tBy)}
		if tAt != nil {
			c.Tombstone.DeletedAt = *tAt
		}
	}
	return c, nil
}

func deref[T any](p *T) T {
	var z T
	if p == nil {
		return z
	}
	return *p
}

// nullMemory scans a memories row of an outer join.
type nullMemory struct {
	id, text, hash, kind, origin, typ, project, source, surface, supersedes, owner *string
	importance                                                                     *float64
	created, updated                                                               *time.Time
}

func (n *nullMemory) scanTargets() []any {
	return []any{&n.id, &n.text, &n.hash, &n.kind, &n.origin, &n.typ, &n.project, &n.source,
		&n.surface, &n.importance, &n.supersedes, &n.created, &n.updated, &n.owner}
}

func (n *nullMemory) memory() Memory {
	return Memory{
		ID: deref(n.id), Text: deref(n.text), ContentHash: deref(n.hash),
		Kind: memory.Kind(deref(n.kind)), KindOrigin: memory.KindOrigin(deref(n.origin)), Type: memory.Type(deref(n.typ)),
		Project: deref(n.project), Source: deref(n.source), Surface: deref(n.surface),
		Importance: deref(n.importance), Supersedes: deref(n.supersedes),
		CreatedAt: deref(n.created), UpdatedAt: deref(n.updated), Owner: deref(n.owner),
	}
}

// Watch returns a channel that receives a value after commits that add
// changes (LISTEN memtray_changes; notifications are coalesced: one value
// may stand for many commits), and after each (re)connection, since a
// notification may have been missed while disconnected. It keeps its own
// connection, reconnecting with a backoff, until ctx ends; then the
// channel is closed. A daemon pulls on each value.
func (s *Store) Watch(ctx context.Context) <-chan struct{} {
	ch := make(chan struct{}, 1)
	wake := func() {
		select {
		case ch <- struct{}{}:
		default:
		}
	}
	go func() {
		defer close(ch)
		backoff := 100 * time.Millisecond
		for ctx.Err() == nil {
			err := s.listen(ctx, wake, func() { backoff = 100 * time.Millisecond })
			if ctx.Err() != nil {
				return
			}
			_ = err // the daemon sees connection trouble through its pulls
			select {
			case <-ctx.Done():
				return
			case <-time.After(backoff):
			}
			backoff = min(2*backoff, 10*time.Second)
		}
	}()
	return ch
}

// listen holds one LISTEN connection until it fails or ctx ends.
func (s *Store) listen(ctx context.Context, wake, connected func()) error {
	conn, err := pgx.ConnectConfig(ctx, s.cfg.ConnConfig.Copy())
	if err != nil {
		return err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	if _, err := conn.Exec(ctx, "LISTEN "+ChangesChannel); err != nil {
		return err
	}
	connected()
	wake()
	for {
		if _, err := conn.WaitForNotification(ctx); err != nil {
			if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
				return ctx.Err()
			}
			return err
		}
		wake()
	}
}

// Backlog is how far a cursor is behind the feed.
type Backlog struct {
	// Changes is the number of committed changes after the cursor.
	Changes int64 `json:"changes"`
	// Oldest is when the oldest of them was written (zero when none), by
	// the database's clock.
	Oldest time.Time `json:"oldest,omitzero"`
	// Age is the time since Oldest by the database's clock (zero when
	// none): the lag of a daemon at that cursor, whatever the daemon's own
	// clock says.
	Age time.Duration `json:"age,omitempty"`
}

// Backlog counts the changes after cursor, for a status report.
func (s *Store) Backlog(ctx context.Context, cursor Cursor) (Backlog, error) {
	done := make([]string, len(cursor.Done))
	for i, d := range cursor.Done {
		done[i] = strconv.FormatUint(d, 10)
	}
	var b Backlog
	var oldest *time.Time
	var age *float64
	err := s.pool.QueryRow(ctx, `SELECT count(*), min(at), extract(epoch FROM clock_timestamp() - min(at))::float8
		FROM memtray.changes
		WHERE xid >= $1::text::xid8 AND NOT (xid = ANY($2::text[]::xid8[]))`,
		strconv.FormatUint(cursor.Xmin, 10), done).Scan(&b.Changes, &oldest, &age)
	if err != nil {
		return Backlog{}, fmt.Errorf("team database: backlog: %w", err)
	}
	if oldest != nil {
		b.Oldest = *oldest
	}
	if age != nil && *age > 0 {
		b.Age = time.Duration(*age * float64(time.Second))
	}
	return b, nil
}
