package team

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// ErrLocked is returned by TryLock when another session holds the lock.
var ErrLocked = errors.New("team database: the lock is held by another daemon")

// Lock is a session-level advisory lock held on a connection of its own:
// the team steward's "one daemon at a time". The server releases it when
// the connection ends, whether by Release, a crash of the holder or a
// network failure; Held tells the holder whether it still has it.
type Lock struct {
	name string
	conn *pgx.Conn
}

// lockKeySQL derives the lock's 64-bit key from its name (and a prefix
// that keeps memtray's keys apart from other users of the database).
const lockKeySQL = "hashtextextended('memtray:' || $1, 0)"

// TryLock takes the advisory lock name without waiting: ErrLocked when
// another session holds it.
func (s *Store) TryLock(ctx context.Context, name string) (*Lock, error) {
	if name == "" {
		return nil, errors.New("team database: lock: the name is empty")
	}
	conn, err := pgx.ConnectConfig(ctx, s.cfg.ConnConfig.Copy())
	if err != nil {
		return nil, fmt.Errorf("team database: lock %s: %w", name, err)
	}
	var ok bool
	if err := conn.QueryRow(ctx, "SELECT pg_try_advisory_lock("+lockKeySQL+")", name).Scan(&ok); err != nil {
		conn.Close(ctx)
		return nil, fmt.Errorf("team database: lock %s: %w", name, err)
	}
	if !ok {
		conn.Close(ctx)
		return nil, fmt.Errorf("%w: %s", ErrLocked, name)
	}
	return &Lock{name: name, conn: conn}, nil
}

// Held checks that the lock's connection is alive, and so the lock held.
func (l *Lock) Held(ctx context.Context) error {
	if err := l.conn.Ping(ctx); err != nil {
		return fmt.Errorf("team database: lock %s lost: %w", l.name, err)
	}
	return nil
}

// Release gives the lock up and closes its connection.
func (l *Lock) Release(ctx context.Context) error {
	_, err := l.conn.Exec(ctx, "SELECT pg_advisory_unlock("+lockKeySQL+")", l.name)
	cerr := l.conn.Close(ctx)
	if err != nil {
		return fmt.Errorf("team database: unlock %s: %w", l.name, err)
	}
	return cerr
}
