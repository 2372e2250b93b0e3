package team

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// SchemaVersion is the version of the team schema this code reads and
// writes: the number of migrations it knows.
const SchemaVersion = 9

// SettingsSchema is the first schema version holding the team's settings
// (memtray.settings: the conflict retention).
const SettingsSchema = 6

// perProjectSchema is the first schema version whose exact-text dedup
// is per project (the unique index on content_hash and project).
const perProjectSchema = 7

// withdrawSchema is the first schema version whose conflict log holds
// withdrawals (outcome "withdrawn", WithdrawConflicts) and keeps the
// conflict retention in days.
const withdrawSchema = 8

// forcedSchema is the first schema version whose conflict log binds its
// owner too (FORCE ROW LEVEL SECURITY) and whose withdrawals say why
// (the why column: a refusal made moot otherwise than by a merge).
const forcedSchema = 9

// minSyncSchema is the oldest schema version push and pull work with: a
// member's daemon meeting a schema between it and SchemaVersion that its
// role may not migrate keeps syncing until the owner migrates it.
const minSyncSchema = 1

// ErrNeedsOwner is returned (wrapped) when the schema must be created or
// migrated and the role may not: the team owner runs memtray team init.
var ErrNeedsOwner = errors.New("migrating the team schema needs the team owner's role (the owner runs memtray team init)")

// ErrSchemaNewer is returned (wrapped) by Open and Migrate when the
// database's schema is newer than SchemaVersion and its floor (the oldest
// version that still syncs safely with it, migration.floor) is newer
// too: a newer memtray migrated it in a way this one must not write to.
var ErrSchemaNewer = errors.New("team database: the schema is newer than this memtray knows; upgrade memtray")

// migrateLock is the key of the transaction-level advisory lock that
// migrations run under (advisory locks are per database): two daemons
// meeting a fresh database migrate it once.
const migrateLock int64 = 0x6d656d7472617901 // "memtray" 01

// schemaName is the schema every table lives in.
const schemaName = "memtray"

// ChangesChannel is the channel a commit that adds changes notifies.
const ChangesChannel = "memtray_changes"

// migrations are the schema's versions: migrations[i] takes version i to
// i+1. Never edit one that has shipped; add the next.
var migrations = []migration{
	// 1: members, memories, tombstones, the change feed, counter deltas,
	// the vector cache, row-level security.
	{floor: 1, sql: `
CREATE TABLE memtray.members (
	role     name        PRIMARY KEY,
	admin    boolean     NOT NULL DEFAULT false,
	added_at timestamptz NOT NULL DEFAULT now()
);
-- The members: this database's roles that may read and write. The
-- migrating role (the team's owner) is the first admin.
INSERT INTO memtray.members (role, admin) VALUES (current_user, true);

CREATE FUNCTION memtray.is_member(r name) RETURNS boolean
	LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp
	AS $$ SELECT EXISTS (SELECT 1 FROM memtray.members WHERE role = r) $$;
CREATE FUNCTION memtray.is_admin(r name) RETURNS boolean
	LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp
	AS $$ SELECT EXISTS (SELECT 1 FROM memtray.members WHERE role = r AND admin) $$;

-- Adding and removing members is an admin's (the session's login role).
CREATE FUNCTION memtray.set_member(r name, adm boolean) RETURNS void
	LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp
	AS $$ BEGIN
		IF NOT memtray.is_admin(session_user) THEN
			RAISE EXCEPTION 'only a team admin can change the members' USING ERRCODE = '42501';
		END IF;
		INSERT INTO memtray.members (role, admin) VALUES (r, adm)
			ON CONFLICT (role) DO UPDATE SET admin = excluded.admin;
	END $$;
CREATE FUNCTION memtray.remove_member(r name) RETURNS void
	LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp
	AS $$ BEGIN
		IF NOT memtray.is_admin(session_user) THEN
			RAISE EXCEPTION 'only a team admin can change the members' USING ERRCODE = '42501';
		END IF;
		DELETE FROM memtray.members WHERE role = r;
	END $$;

-- Team memories: the live ones. A deleted memory moves to tombstones.
CREATE TABLE memtray.memories (
	id           text        PRIMARY KEY CHECK (id ~ '^[0-9A-Za-z_-]{1,128}$'),
	text         text        NOT NULL CHECK (text <> ''),
	content_hash text        NOT NULL CHECK (content_hash ~ '^[0-9a-f]{64}$'),
	kind         text        NOT NULL DEFAULT '',
	kind_origin  text        NOT NULL DEFAULT '',
	type         text        NOT NULL DEFAULT '',
	project      text        NOT NULL DEFAULT '',
	source       text        NOT NULL DEFAULT '',
	surface      text        NOT NULL DEFAULT '',
	importance   double precision NOT NULL DEFAULT 0.5 CHECK (importance >= 0 AND importance <= 1),
	supersedes   text        NOT NULL DEFAULT '',
	created_at   timestamptz NOT NULL,
	updated_at   timestamptz NOT NULL,
	owner        name        NOT NULL DEFAULT current_user,
	pushed_at    timestamptz NOT NULL DEFAULT now()
);
-- One team memory per text: the same fact from two people is one.
CREATE UNIQUE INDEX memories_content_hash ON memtray.memories (content_hash);

-- Deleted memories, whole (the trash: a restore puts the row back).
CREATE TABLE memtray.tombstones (
	id           text        PRIMARY KEY,
	content_hash text        NOT NULL,
	owner        name        NOT NULL,
	deleted_by   name        NOT NULL,
	deleted_at   timestamptz NOT NULL DEFAULT now(),
	memory       jsonb       NOT NULL
);

-- The change feed. xid is the writing transaction's id: a reader takes
-- what its snapshot sees above its cursor, whatever order transactions
-- committed in (see feed.go).
CREATE TABLE memtray.changes (
	seq       bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	xid       xid8   NOT NULL DEFAULT pg_current_xact_id(),
	memory_id text   NOT NULL,
	op        text   NOT NULL CHECK (op IN ('put', 'delete', 'counters')),
	at        timestamptz NOT NULL DEFAULT clock_timestamp()
);
CREATE INDEX changes_xid ON memtray.changes (xid, seq);

-- Per-member counter deltas, summed to merge; id makes a retried push a
-- no-op.
CREATE TABLE memtray.counter_deltas (
	id           text   PRIMARY KEY CHECK (id <> '' AND length(id) <= 128),
	memory_id    text   NOT NULL,
	member       name   NOT NULL DEFAULT current_user,
	access       bigint NOT NULL DEFAULT 0,
	reinforced   bigint NOT NULL DEFAULT 0,
	feedback_sum double precision NOT NULL DEFAULT 0,
	feedback_n   bigint NOT NULL DEFAULT 0,
	at           timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX counter_deltas_memory ON memtray.counter_deltas (memory_id);

-- Embeddings per model, valid while content_hash is the memory's.
CREATE TABLE memtray.vectors (
	model        text  NOT NULL CHECK (model <> '' AND length(model) <= 256),
	memory_id    text  NOT NULL,
	content_hash text  NOT NULL,
	dim          int   NOT NULL CHECK (dim > 0 AND dim <= 65536),
	vector       bytea NOT NULL CHECK (length(vector) = 4 * dim),
	at           timestamptz NOT NULL DEFAULT now(),
	PRIMARY KEY (model, memory_id)
);

CREATE FUNCTION memtray.memories_changed() RETURNS trigger
	LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp
	AS $$ BEGIN
		IF TG_OP = 'DELETE' THEN
			INSERT INTO memtray.tombstones (id, content_hash, owner, deleted_by, memory)
				VALUES (OLD.id, OLD.content_hash, OLD.owner, session_user, to_jsonb(OLD))
				ON CONFLICT (id) DO UPDATE SET content_hash = excluded.content_hash,
					owner = excluded.owner, deleted_by = excluded.deleted_by,
					deleted_at = excluded.deleted_at, memory = excluded.memory;
			INSERT INTO memtray.changes (memory_id, op) VALUES (OLD.id, 'delete');
		ELSE
			-- A deleted id comes back only by a restore, never by a push
			-- that raced the delete (it waited on the deleted row, then
			-- inserted): that push fails and its retry sees the tombstone.
			IF TG_OP = 'INSERT' AND EXISTS (SELECT 1 FROM memtray.tombstones WHERE id = NEW.id) THEN
				IF coalesce(current_setting('memtray.restoring', true), '') <> 'on' THEN
					RAISE EXCEPTION 'memory % was deleted meanwhile', NEW.id USING ERRCODE = '40001';
				END IF;
				DELETE FROM memtray.tombstones WHERE id = NEW.id;
			END IF;
			INSERT INTO memtray.changes (memory_id, op) VALUES (NEW.id, 'put');
		END IF;
		PERFORM pg_notify('memtray_changes', '');
		RETURN NULL;
	END $$;
CREATE TRIGGER memories_changed AFTER INSERT OR UPDATE OR DELETE ON memtray.memories
	FOR EACH ROW EXECUTE FUNCTION memtray.memories_changed();

CREATE FUNCTION memtray.counters_changed() RETURNS trigger
	LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp
	AS $$ BEGIN
		INSERT INTO memtray.changes (memory_id, op) VALUES (NEW.memory_id, 'counters');
		PERFORM pg_notify('memtray_changes', '');
		RETURN NULL;
	END $$;
CREATE TRIGGER counters_changed AFTER INSERT ON memtray.counter_deltas
	FOR EACH ROW EXECUTE FUNCTION memtray.counters_changed();

-- Access: any role that can connect reaches the schema, and row-level
-- security lets members (and only members) in. A member changes or
-- deletes only the memories they own; an admin any.
GRANT USAGE ON SCHEMA memtray TO PUBLIC;
GRANT SELECT ON memtray.schema_version TO PUBLIC;
GRANT SELECT, INSERT, UPDATE, DELETE ON memtray.memories TO PUBLIC;
GRANT SELECT ON memtray.tombstones, memtray.changes TO PUBLIC;
GRANT SELECT, INSERT ON memtray.counter_deltas TO PUBLIC;
GRANT SELECT, INSERT, UPDATE ON memtray.vectors TO PUBLIC;

ALTER TABLE memtray.memories ENABLE ROW LEVEL SECURITY;
ALTER TABLE memtray.tombstones ENABLE ROW LEVEL SECURITY;
ALTER TABLE memtray.changes ENABLE ROW LEVEL SECURITY;
ALTER TABLE memtray.counter_deltas ENABLE ROW LEVEL SECURITY;
ALTER TABLE memtray.vectors ENABLE ROW LEVEL SECURITY;

CREATE POLICY read ON memtray.memories FOR SELECT USING (memtray.is_member(current_user));
CREATE POLICY add ON memtray.memories FOR INSERT
	WITH CHECK (memtray.is_member(current_user) AND (owner = current_user OR memtray.is_admin(current_user)));
CREATE POLICY change ON memtray.memories FOR UPDATE
	USING (owner = current_user OR memtray.is_admin(current_user))
	WITH CHECK (memtray.is_member(current_user) AND (owner = current_user OR memtray.is_admin(current_user)));
CREATE POLICY remove ON memtray.memories FOR DELETE
	USING (owner = current_user OR memtray.is_admin(current_user));

CREATE POLICY read ON memtray.tombstones FOR SELECT USING (memtray.is_member(current_user));
CREATE POLICY read ON memtray.changes FOR SELECT USING (memtray.is_member(current_user));
CREATE POLICY read ON memtray.counter_deltas FOR SELECT USING (memtray.is_member(current_user));
CREATE POLICY add ON memtray.counter_deltas FOR INSERT
	WITH CHECK (member = current_user AND memtray.is_member(current_user));
CREATE POLICY read ON memtray.vectors FOR SELECT USING (memtray.is_member(current_user));
CREATE POLICY add ON memtray.vectors FOR INSERT WITH CHECK (memtray.is_member(current_user));
CREATE POLICY change ON memtray.vectors FOR UPDATE
	USING (memtray.is_member(current_user)) WITH CHECK (memtray.is_member(current_user));
`},
	// 2: the member list, for admins (memtray team member list): the
	// members table is the owner's, as in 1.
	// Floor 1: a function only admins call; an older memtray never does.
	{floor: 1, sql: `
CREATE FUNCTION memtray.list_members() RETURNS TABLE (role name, admin boolean, added_at timestamptz)
	LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp
	AS $$ BEGIN
		IF NOT memtray.is_admin(session_user) THEN
			RAISE EXCEPTION 'only a team admin can list the members' USING ERRCODE = '42501';
		END IF;
		RETURN QUERY SELECT m.role, m.admin, m.added_at FROM memtray.members m ORDER BY m.role;
	END $$;
`},
	// 3: pushes carry their base (team.Memory.Base): a push of a copy
	// is applied onto the version it was based on, merged with what the
	// team changed since. No table changes: the version marks the rule,
	// so that a memtray pushing without a base (version 2 or older: the
	// newer copy by its clock wins, reverting edits it has not pulled)
	// refuses to sync with a database migrated to it (ErrSchemaNewer).
	// Floor 3: what a push must carry changed (its base); a memtray of
	// version 2 pushes without one and would revert edits it has not pulled.
	{floor: 3, sql: `
COMMENT ON TABLE memtray.memories IS
	'Live team memories. Since schema 3 a push of a known memory carries the version its copy was based on and is applied onto it (memtray: backend/team resolve); a daemon pushing without one must not write here.';
`},
	// 4: who wrote each version (the member and the machine: a daemon's
	// store, memtray.machine of the writing transaction), and the
	// conflicts a push met: a push merged onto another machine's newer
	// version, refused as stale, or a delete refused, recorded in the
	// push's transaction for the member whose version it met (Notices).
	// Floor 3: a column a trigger fills and a table an older memtray never
	// reads. A member of version 3 pushes as on a database at 3: its pushes
	// record no conflicts (the other side is not told of what they meet),
	// which this memtray on a database at 3 does too; nothing is lost.
	{floor: 3, sql: `
ALTER TABLE memtray.memories ADD COLUMN IF NOT EXISTS pushed_by name, ADD COLUMN IF NOT EXISTS pushed_from text;
CREATE OR REPLACE FUNCTION memtray.memories_writer() RETURNS trigger
	LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp
	AS $$ BEGIN
		NEW.pushed_by := current_user;
		NEW.pushed_from := nullif(current_setting('memtray.machine', true), '');
		RETURN NEW;
	END $$;
DROP TRIGGER IF EXISTS memories_writer ON memtray.memories;
CREATE TRIGGER memories_writer BEFORE INSERT OR UPDATE ON memtray.memories
	FOR EACH ROW EXECUTE FUNCTION memtray.memories_writer();

CREATE TABLE IF NOT EXISTS memtray.conflicts (
	seq          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	memory_id    text   NOT NULL,
	outcome      text   NOT NULL CHECK (outcome IN ('merged', 'refused', 'delete')),
	member       name   NOT NULL DEFAULT current_user,
	machine      text   NOT NULL DEFAULT coalesce(current_setting('memtray.machine', true), ''),
	over_member  name   NOT NULL,
	over_machine text   NOT NULL DEFAULT '',
	changed      text[] NOT NULL DEFAULT '{}',
	text         text   NOT NULL DEFAULT '',
	at           timestamptz NOT NULL DEFAULT now()
);
GRANT SELECT, INSERT ON memtray.conflicts TO PUBLIC;
ALTER TABLE memtray.conflicts ENABLE ROW LEVEL SECURITY;
DROP POLICY IF EXISTS read ON memtray.conflicts;
DROP POLICY IF EXISTS add ON memtray.conflicts;
CREATE POLICY read ON memtray.conflicts FOR SELECT USING (memtray.is_member(current_user));
CREATE POLICY add ON memtray.conflicts FOR INSERT WITH CHECK (member = current_user AND memtray.is_member(current_user));
`},
	// 5: the conflict log is pruned: a push that records a conflict
	// deletes, in its transaction, the rows older than ConflictRetention
	// (noteConflict); a member may delete those rows only, never a
	// notice another machine has not had the time to read. The index on
	// at keeps that delete from reading the whole log.
	// Floor 3: a policy and an index; a memtray of version 3 or 4 prunes
	// nothing, which only lets the log grow as it did at 4.
	{floor: 3, sql: `
CREATE INDEX IF NOT EXISTS conflicts_at ON memtray.conflicts (at);
GRANT DELETE ON memtray.conflicts TO PUBLIC;
DROP POLICY IF EXISTS prune ON memtray.conflicts;
CREATE POLICY prune ON memtray.conflicts FOR DELETE
	USING (memtray.is_member(current_user) AND at < now() - interval '90 days');
`},
	// 6: the team's settings, one row an admin changes: for now how long
	// the conflict log keeps a row (ConflictRetention by default), which
	// the prune policy reads, so no member deletes a younger row
	// whatever its memtray's version.
	// Floor 3: a table an older memtray never reads, and a policy that
	// only narrows what its prune deletes (a memtray of 5 deletes rows
	// older than 90 days; the policy leaves those younger than the
	// setting) or leaves rows the setting would allow (it prunes less).
	// Written to run again on a database that has it (tests go back to
	// older versions without undoing it).
	{floor: 3, sql: `
CREATE TABLE IF NOT EXISTS memtray.settings (
	singleton          boolean     PRIMARY KEY DEFAULT true CHECK (singleton),
	conflict_retention interval    NOT NULL DEFAULT interval '90 days'
		CHECK (conflict_retention >= interval '1 day' AND conflict_retention <= interval '3650 days'),
	changed_by         name        NOT NULL DEFAULT current_user,
	changed_at         timestamptz NOT NULL DEFAULT now()
);
INSERT INTO memtray.settings DEFAULT VALUES ON CONFLICT DO NOTHING;
GRANT SELECT ON memtray.settings TO PUBLIC;
ALTER TABLE memtray.settings ENABLE ROW LEVEL SECURITY;
DROP POLICY IF EXISTS read ON memtray.settings;
CREATE POLICY read ON memtray.settings FOR SELECT USING (memtray.is_member(current_user));

CREATE OR REPLACE FUNCTION memtray.conflict_retention() RETURNS interval
	LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp
	AS $$ SELECT coalesce((SELECT conflict_retention FROM memtray.settings), interval '90 days') $$;
-- Changing the settings is an admin's (the session's login role).
CREATE OR REPLACE FUNCTION memtray.set_conflict_retention(r interval) RETURNS void
	LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp
	AS $$ BEGIN
		IF NOT memtray.is_admin(session_user) THEN
			RAISE EXCEPTION 'only a team admin can change the team settings' USING ERRCODE = '42501';
		END IF;
		UPDATE memtray.settings SET conflict_retention = r, changed_by = session_user, changed_at = now();
	END $$;

DROP POLICY IF EXISTS prune ON memtray.conflicts;
CREATE POLICY prune ON memtray.conflicts FOR DELETE
	USING (memtray.is_member(current_user) AND at < now() - memtray.conflict_retention());
`},
	// 7: the team's exact-text dedup is per project, as the local
	// store's (exp-hashproj): the same sentence said in project A and in
	// project B is a memory of each, where a store-wide index made B's
	// push a duplicate of A's and B's daemon relinked its memory to A's,
	// which B's prompts never reach. project is NOT NULL ('' is no
	// project, a project of its own), so two memories of no project with
	// one text still clash. content_hash leads the index, so an older
	// memtray's store-wide lookup (WHERE content_hash = $1) still reads
	// it.
	// Floor 3: the database enforces the index whoever pushes, so an
	// older memtray cannot write two memories of one text in a project;
	// it only looks a text up across the team as it always did (a push
	// whose text another project holds is inserted now, as the index lets
	// it; an edit onto such a text is a duplicate of it, and with two
	// projects holding a text its duplicate may name either: the relink
	// it did at 6), and a memtray whose local store dedups across
	// projects skips a second project's copy on a pull, as it skips any
	// text it holds. What it gets is the old behaviour, for its member
	// only; nothing in the team changes.
	// Written to run again on a database that has it.
	{floor: 3, sql: `
DROP INDEX IF EXISTS memtray.memories_content_hash;
CREATE UNIQUE INDEX IF NOT EXISTS memories_content_hash_project ON memtray.memories (content_hash, project);
`},
	// 8: the conflict retention in the unit it is set in, and a refusal
	// that can be withdrawn.
	// The retention: an admin's memtray of 6 or 7 stored it as seconds
	// ('2592000 seconds' is an interval of 720 hours and no days, so
	// extract(day FROM …) read 0 and the table showed 720:00:00). Every
	// write of the settings row now goes through justify_hours, which
	// turns each 24 hours into a day exactly: the rows stored before are
	// converted, and an older admin's memtray, which still passes
	// seconds, stores days. Written in seconds or days, the interval
	// compares and subtracts the same, so the check and the prune
	// policy are unchanged. The trigger also notifies memtray_changes, so
	// every daemon reads a changed setting at its next pull, at once.
	// The withdrawal: a refused edit whose next edit, made before its
	// machine took the team's version, put back what conflicted and
	// merged left no conflict copy (refusedThenMerged in teamsync), yet
	// the machine whose version it met was told "the team refused theirs,
	// which their machine keeps as a conflict copy". The pushing machine
	// now records a "withdrawn" row naming the refused one (withdraws), and
	// the other machine's status says the conflict was resolved by merge.
	// Floor 3: a memtray of 7 or older never writes the new outcome, and
	// never reads it either: the read policy shows a withdrawn row only to
	// a session that says it speaks 8 or later (memtray.speaks, which an
	// older memtray does not set), so an older memtray, which would take
	// any outcome it does not know for a refused delete, keeps its old
	// behaviour (the refusal stays told as it was at 7). The column is one
	// it never selects. (Row-level security does not bind the table's
	// owner: the team owner's own machine, if still on 7, would read a
	// withdrawal as a refused delete; the owner migrates with this
	// memtray.)
	// Written to run again on a database that has it.
	{floor: 3, sql: `
CREATE OR REPLACE FUNCTION memtray.settings_written() RETURNS trigger
	LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp
	AS $$ BEGIN
		NEW.conflict_retention := justify_hours(NEW.conflict_retention);
		PERFORM pg_notify('memtray_changes', '');
		RETURN NEW;
	END $$;
DROP TRIGGER IF EXISTS settings_written ON memtray.settings;
CREATE TRIGGER settings_written BEFORE INSERT OR UPDATE ON memtray.settings
	FOR EACH ROW EXECUTE FUNCTION memtray.settings_written();
UPDATE memtray.settings SET conflict_retention = conflict_retention; -- through the trigger: in days

ALTER TABLE memtray.conflicts DROP CONSTRAINT IF EXISTS conflicts_outcome_check;
ALTER TABLE memtray.conflicts ADD CONSTRAINT conflicts_outcome_check
	CHECK (outcome IN ('merged', 'refused', 'delete', 'withdrawn'));
ALTER TABLE memtray.conflicts ADD COLUMN IF NOT EXISTS withdraws bigint;
DROP POLICY IF EXISTS read ON memtray.conflicts;
CREATE POLICY read ON memtray.conflicts FOR SELECT USING (memtray.is_member(current_user)
	AND (outcome <> 'withdrawn' OR coalesce(nullif(current_setting('memtray.speaks', true), ''), '0')::int >= 8));
`},
	// 9: the conflict log binds its owner, and a withdrawal says why.
	// The owner: row-level security does not bind a table's owner unless
	// the table forces it, so the team owner's own machine, still on a
	// memtray of 7 after migrating the database with a newer one, read
	// every withdrawal (schema 8's read policy never applied to it) and,
	// knowing no such outcome, told it as a refused delete. The log now
	// forces row-level security: the owner reads, writes and prunes it
	// by the members' policies (it is the team's first admin, a member),
	// so a memtray of 7 connected as the owner is hidden the withdrawals
	// as any member's is. The migrator passes one more policy, migrate:
	// the table owner's session that says it migrates
	// (memtray.migrating, set by Migrate in its transaction, which no
	// daemon sets), so a later migration may still rewrite the log's
	// rows. Only the conflict log is forced: the other tables hold
	// nothing an older memtray misreads, and the owner's SECURITY DEFINER
	// functions (settings, members) write them with no policy for it.
	// The why: a refusal is made moot otherwise than by a merge too (its
	// next edit relinked to the memory holding its text, deleted by the
	// team meanwhile, the memory then deleted or made personal on the
	// refused machine, or the next edit refused otherwise): no conflict
	// copy is kept either. Its withdrawal says which (why; '' is a
	// merge, as every withdrawal of 8), and the read policy shows a
	// withdrawal with a why only to a session speaking 9: a memtray of 8
	// would tell it as "resolved by merge"; it keeps the refusal as told.
	// Floor 3: a policy and a column an older memtray never selects.
	// Written to run again on a database that has it.
	{floor: 3, sql: `
ALTER TABLE memtray.conflicts ADD COLUMN IF NOT EXISTS why text NOT NULL DEFAULT ''
	CHECK (why = '' OR why ~ '^[a-z_]{1,32}$');
CREATE OR REPLACE FUNCTION memtray.migrating() RETURNS boolean
	LANGUAGE sql STABLE SET search_path = pg_catalog, pg_temp
	AS $$ SELECT coalesce(current_setting('memtray.migrating', true), '') = 'on'
		AND pg_has_role(current_user, (SELECT relowner FROM pg_class WHERE oid = 'memtray.conflicts'::regclass), 'USAGE') $$;
DROP POLICY IF EXISTS migrate ON memtray.conflicts;
CREATE POLICY migrate ON memtray.conflicts FOR ALL USING (memtray.migrating()) WITH CHECK (memtray.migrating());
DROP POLICY IF EXISTS read ON memtray.conflicts;
CREATE POLICY read ON memtray.conflicts FOR SELECT USING (memtray.is_member(current_user)
	AND (outcome <> 'withdrawn' OR coalesce(nullif(current_setting('memtray.speaks', true), ''), '0')::int
		>= CASE WHEN why = '' THEN 8 ELSE 9 END));
ALTER TABLE memtray.conflicts FORCE ROW LEVEL SECURITY;
`},
}

// migration is one version of the schema.
type migration struct {
	// floor is the oldest SchemaVersion that still syncs safely with a
	// database migrated to this version: this one when it changes what a
	// push must carry or what an older memtray reads (schema 3's bases),
	// an older one when it only adds what an older memtray ignores (a
	// table it never reads, a column a trigger fills, a policy). Recorded
	// beside the version (schema_version.compat); a database's floor is
	// the highest of its versions' floors.
	floor int
	// sql takes the previous version to this one.
	sql string
}

// schemaState is what a database's schema_version says.
type schemaState struct {
	// version is the schema's version (0: memtray never migrated it).
	version int
	// floor is the oldest SchemaVersion that may sync with it (see
	// migration.floor).
	floor int
}

// syncsWith reports whether code speaking version known may read and
// write a database in state st: any older or equal schema (the owner may
// have to migrate it), a newer one whose floor allows it.
func (st schemaState) syncsWith(known int) bool {
	return st.version <= known || st.floor <= known
}

// newerErr is ErrSchemaNewer naming the versions: the database's, its
// floor and the one this code speaks.
func (st schemaState) newerErr(known int) error {
	return fmt.Errorf("%w (the database is at version %d, which memtray of schema version %d or later may sync with; this memtray knows %d)",
		ErrSchemaNewer, st.version, st.floor, known)
}

// querier is what reads schema_version: the pool, or the migrating
// transaction.
type querier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
}

// readSchema reads the database's schema version and floor without
// locking or writing anything. A version whose floor was not recorded (a
// database migrated before floors were, whose compat column is absent or
// empty) has the floor this code knows for it (migrations), or, newer
// than known, its own version: an older memtray never guesses that a
// migration it does not know is compatible.
func readSchema(ctx context.Context, q querier, known int) (schemaState, error) {
	var st schemaState
	rows, err := q.Query(ctx, "SELECT to_regclass('memtray.schema_version') IS NOT NULL")
	if err != nil {
		return st, fmt.Errorf("team database: read the schema version: %w", err)
	}
	exists, err := pgx.CollectExactlyOneRow(rows, pgx.RowTo[bool])
	if err != nil || !exists {
		if err != nil {
			err = fmt.Errorf("team database: read the schema version: %w", err)
		}
		return st, err
	}
	// to_jsonb reads compat whether or not the column exists yet.
	rows, err = q.Query(ctx, "SELECT v.version, (to_jsonb(v) ->> 'compat')::int FROM memtray.schema_version v")
	if err != nil {
		return st, fmt.Errorf("team database: read the schema version: %w", err)
	}
	type row struct {
		Version int
		Compat  *int
	}
	all, err := pgx.CollectRows(rows, pgx.RowToStructByPos[row])
	if err != nil {
		return st, fmt.Errorf("team database: read the schema version: %w", err)
	}
	for _, r := range all {
		floor := r.Version
		switch {
		case r.Compat != nil:
			floor = *r.Compat
		case r.Version >= 1 && r.Version <= min(known, len(migrations)):
			floor = migrations[r.Version-1].floor
		}
		st.version, st.floor = max(st.version, r.Version), max(st.floor, floor)
	}
	return st, nil
}

// Migrate brings the database's schema to SchemaVersion under a
// transaction-level advisory lock, so that concurrent migrators apply each
// migration once, recording each version's floor. A schema newer than
// this code knows is left as it is: synced with when its floor is at
// most SchemaVersion, refused (ErrSchemaNewer, naming the versions)
// otherwise. Creating the schema needs the CREATE privilege on the
// database: the team owner's role, or the first daemon of a database its
// role owns.
func (s *Store) Migrate(ctx context.Context) error {
	st, err := readSchema(ctx, s.pool, s.known)
	if err != nil {
		return err
	}
	if st.version >= s.known {
		if !st.syncsWith(s.known) {
			return st.newerErr(s.known)
		}
		return nil
	}
	err = pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock($1)", migrateLock); err != nil {
			return fmt.Errorf("lock: %w", err)
		}
		if _, err := tx.Exec(ctx, `CREATE SCHEMA IF NOT EXISTS memtray;
			CREATE TABLE IF NOT EXISTS memtray.schema_version (
				version    int         PRIMARY KEY,
				applied_at timestamptz NOT NULL DEFAULT now(),
				applied_by name        NOT NULL DEFAULT current_user)`); err != nil {
			return fmt.Errorf("create the schema: %w", err)
		}
		st, err := readSchema(ctx, tx, s.known)
		if err != nil {
			return err
		}
		if st.version >= s.known {
			if !st.syncsWith(s.known) {
				return st.newerErr(s.known)
			}
			return nil // migrated meanwhile
		}
		// The migrator's own policy on the tables that bind their owner
		// (schema 9's migrate policy): this transaction only.
		if _, err := tx.Exec(ctx, "SELECT set_config('memtray.migrating', 'on', true)"); err != nil {
			return fmt.Errorf("migrate: %w", err)
		}
		if err := recordFloors(ctx, tx, s.known); err != nil {
			return err
		}
		for v := st.version; v < s.known; v++ {
			if _, err := tx.Exec(ctx, migrations[v].sql); err != nil {
				return fmt.Errorf("migration %d: %w", v+1, err)
			}
			if _, err := tx.Exec(ctx, "INSERT INTO memtray.schema_version (version, compat) VALUES ($1, $2)", v+1, migrations[v].floor); err != nil {
				return fmt.Errorf("migration %d: %w", v+1, err)
			}
		}
		return nil
	})
	if err != nil {
		var pe *pgconn.PgError
		if errors.As(err, &pe) && pe.Code == "42501" { // insufficient_privilege
			return fmt.Errorf("team database: to version %d: %w: %w", s.known, ErrNeedsOwner, err)
		}
		if errors.Is(err, ErrSchemaNewer) {
			return err
		}
		return fmt.Errorf("team database: migrate: %w", err)
	}
	return nil
}

// recordFloors gives schema_version its compat column (a database
// migrated before floors were recorded lacks it) and fills it for the
// versions applied before, from what this code knows of them (in tx,
// under the migration lock).
func recordFloors(ctx context.Context, tx pgx.Tx, known int) error {
	if _, err := tx.Exec(ctx, `ALTER TABLE memtray.schema_version ADD COLUMN IF NOT EXISTS compat int;
		COMMENT ON COLUMN memtray.schema_version.compat IS
			'The oldest memtray schema version that still syncs safely with a database migrated to this version (memtray: backend/team migration.floor).'`); err != nil {
		return fmt.Errorf("record the floors: %w", err)
	}
	for v := 1; v <= min(known, len(migrations)); v++ {
		if _, err := tx.Exec(ctx, "UPDATE memtray.schema_version SET compat = $2 WHERE version = $1 AND compat IS NULL", v, migrations[v-1].floor); err != nil {
			return fmt.Errorf("record the floors: %w", err)
		}
	}
	return nil
}
