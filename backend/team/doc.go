// Package team is the team store of record on PostgreSQL: the shared half
// of team memory (issue 23). Each daemon stays local-first (its bbolt
// store and indexes answer recall); this package is what it pushes team
// memories to and pulls the team's changes from. It holds no local state
// and never touches the local store: the daemon's sync loop (part 2) owns
// the outbox, the cursor and applying changes.
//
// # API for the daemon
//
//	url, err := team.ReadURL(cfg.URLEnv, cfg.URLFile) // env var or a 0600 file
//	s, err := team.Open(ctx, url)   // validate (TLS rule), connect, migrate, check membership
//	defer s.Close()
//
//	// Which local memories go to the outbox: team.SharedByDefault(m, cfg.Projects)
//	// unless the user moved the memory to the other scope.
//
//	// Outbox drain: a memory acknowledged locally is pushed later, in
//	// batches; every outcome is final, so the outbox entry can go.
//	s.SetMachine(machineID) // once: whose versions and conflicts these pushes are
//	tm := team.FromLocal(m)
//	tm.Base = entry.Base // the team's version the copy is based on (&store.UnknownBase: queued without one)
//	res, err := s.Push(ctx, []team.Memory{tm})
//	//   PushInserted / PushUpdated / PushUnchanged: done (the pushed version is the copy's base now)
//	//   PushMerged: the team merged the copy's changes onto its newer version; take it (s.Get)
//	//   PushStale: the team changed a field the copy changed too (pushed first); take it (s.Get),
//	//     keeping the copy's version where the user can put it back
//	//   PushDuplicate: res.Winner holds the text; relink the local memory
//	//   PushDeleted: the team deleted it; PushRefused: another member owns it
//	//   PushInvalid: res.Error says why (the rest of the batch was pushed)
//	err = s.DeleteFrom(ctx, id, base) // ErrNotOwner unless owner or admin; ErrStale once the text changed
//	res, err = s.Restore(ctx, id)      // undo of Delete (the trash)
//	err = s.AddCounters(ctx, deltas)   // per-user deltas, idempotent by delta ID
//	err = s.PutVectors(ctx, model, vs) // share embeddings of the daemon's model
//
//	// Pull loop: at start, on each value of Watch, and on a timer.
//	wake := s.Watch(ctx)
//	page, err := s.Pull(ctx, cursor, team.PullOptions{Model: model})
//	for _, c := range page.Changes { ... apply c.Memory or c.Tombstone, c.Counters, c.Vector ... }
//	cursor = page.Next // store cursor.MarshalText() with the applied changes; pull again while page.More
//	told, seq, err := s.Notices(ctx, seq, machineID) // conflicts other machines' pushes met on this one's versions
//
// Apply a change's state, not a diff: Change.Memory is the memory as the
// pull's snapshot saw it (nil once deleted), so applying a change twice or
// an older one after a newer one is harmless. A change with Invalid set
// was written around memtray and must be skipped.
//
// # Guarantees
//
//   - The change feed returns every committed change exactly once over
//     successive pulls, whatever order concurrent transactions commit in
//     (feed.go explains the xid8 snapshot cursor).
//   - Push is one transaction per call, idempotent by id and content hash:
//     retried after a crash, committed or not, it ends in the same state.
//     The same text pushed by two people is one team memory.
//   - Counters merge by summing per-member deltas, never by the last
//     writer's value.
//   - Row-level security in the database: a member changes or deletes only
//     the memories they own, an admin any; a role that is not a member
//     reads nothing. The role that migrated the database is its first
//     admin; SetMember (admins only) adds members.
//   - Migrations are versioned and run under an advisory lock; a schema
//     newer than SchemaVersion is refused (ErrSchemaNewer) unless its
//     floor, recorded by each migration, is at most SchemaVersion.
//   - TLS is required unless the host is loopback or a unix socket
//     (ParseURL); errors never carry the password.
//
// The pgx code lives in this package alone (docs/architecture.md gives it
// the library); backend/team/pgtest runs a real PostgreSQL for its tests
// and for the daemon's.
package team
