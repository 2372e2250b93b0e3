// Package steward keeps a memory store healthy: it consolidates memories
// with the operations below, always as a plan first (a dry run), applied
// only on request, with an undo of the last applied run.
//
// # Operations
//
// In sweep order (config.StewardOps), with config.Steward's thresholds
// (per memory type from cfg.Types[type], else cfg.Types["default"]):
//
//   - merge: near-duplicates (cosine >= merge_similarity, 0.88), found as
//     each memory's nearest neighbours in the store's vector index, of the
//     same type and project (any project with PlanOptions.All). The one with
//     more retrieval signal survives (reinforced, then accessed); it keeps
//     the better of the two texts (the one that holds every load-bearing
//     token of the other when only one does, else the one with more
//     load-bearing tokens, see LoadBearing, else its own; never a concatenation) with that text's
//     embedding, the higher importance, the sum of access, reinforcement and
//     feedback counts, and both's hit times. When the retrieval signal ties
//     (0/0 included), the better text decides the survivor: more
//     load-bearing tokens, else the one that reads as a standalone statement
//     (no conversational reply opener such as "Yes,", not a question, fewer
//     pronouns without an antecedent, then the shorter), then the higher
//     importance, the newer. The action's reason names the rule applied.
//     The other goes to the trash, its id in the action (MergedIDs) and in
//     the trash reason (no record field fits: Supersedes means a kept
//     history). A merge that would lose a load-bearing token (number, path,
//     identifier, version, URL...) of either text is refused and listed in
//     Plan.Refused with both texts (a token the kept text writes otherwise
//     is not lost: memory.HoldsToken; the text that holds every token of
//     the other is the one kept), as is a merge of two texts that open
//     with the same words (MinSharedOpening) whose kept text's rest holds
//     less than MinRestContent of the other's rest (items of one list are
//     not restatements of each other), and as are near-duplicates left apart
//     because one is pinned or snoozed or their types differ (an
//     incremental scan re-checks the pairs the last scan refused).
//   - decay_stale: not accessed or reinforced (nor created) for stale_days:
//     importance x decay_factor, never below decay_floor.
//   - boost_active: accessed at least boost_min_access times, not stale and
//     not sticky (stickiness <= unreinforced_stickiness): importance x
//     boost_factor, at most 1.
//   - prune: importance below prune_importance and older than
//     prune_age_days: to the trash.
//   - decay_unreinforced: stickiness (Stickiness) above
//     unreinforced_stickiness: importance x unreinforced_factor.
//   - snooze_sticky: stickiness above snooze_stickiness with at least
//     snooze_min_access accesses: hidden from recall for snooze_days
//     (CooldownUntil). A snoozed memory is not snoozed again, nor is one
//     that has not been retrieved since its last snooze ended.
//
// The importance-scaling operations (decay_stale, boost_active,
// decay_unreinforced) touch a memory at most once per Options.MinInterval
// (a week), recorded in a small ledger in Options.Dir, so an hourly
// schedule does not compound them.
//
// # Never touched
//
// Pinned memories: never merged, decayed, boosted, pruned or snoozed.
// Superseded memories (the kept history of an update) are left alone.
// Snoozed memories are not merged.
//
// # Safety model
//
//  1. Plan reads the store page by page (no lock held across the sweep;
//     capture and recall go on) and returns every action with the memory's
//     state before and after and the reason. Nothing in the store is
//     written (the steward directory records the merge scan, so the next
//     plan's merge search is incremental).
//  2. Apply re-checks each action against the store: a memory changed
//     since the plan (updated_at differs) or gone is skipped and reported.
//  3. Apply writes an undo journal first (Options.Dir/runs/<seq>-<run>.json,
//     fsync'd, atomic rename): the full record of every touched memory
//     before the run (its embedding when the run changes its text; else the
//     record or the trash keeps it). The last JournalDepth runs keep
//     theirs, so an hourly scheduled run never takes the undo of a run the
//     user applied away. The journal of a run a kill stopped before step 4
//     is removed by the next process's first use: undoing it would change
//     nothing.
//  4. Every change of the run is then one store.Apply batch: one bbolt
//     transaction, all or nothing even under kill -9, with preconditions
//     on updated_at so a write racing the apply is never overwritten.
//  5. Nothing is deleted: pruned and merged-away memories go to the
//     store's trash (not searched, counted or exported), restorable for
//     config trash_days (PurgeTrash deletes older ones).
//  6. Undo puts the last run back in one batch: records exactly as they
//     were (every field, updated_at and embedding included), trashed ones
//     restored from the trash; undoing again puts back the run before.
//     UndoRun reverts any kept run, keeping what later runs and edits
//     changed (field by field).
//
// Quality (log-usage with exponential decay, not scored before
// quality_min_events retrievals) is reported on each action for the UI.
package steward
