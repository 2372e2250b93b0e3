package mcp

import (
	"context"
	"fmt"

	"github.com/memtray/memtray/backend/memory"
	"github.com/memtray/memtray/backend/search"
)

// Unavailable is a Backend that cannot answer: every call fails with Err.
// `memtray mcp` serves the tools over it when no daemon can be had (the
// store is damaged, the daemon does not start), so that the agent sees a
// working server whose every tool answers with a tool error (IsError)
// saying why, instead of a server that failed to start.
type Unavailable struct {
	// Err says why memtray cannot answer and what to do about it.
	Err error
}

// Recall implements Backend.
func (u Unavailable) Recall(context.Context, search.RecallRequest) (search.Recalled, error) {
	return search.Recalled{}, u.Err
}

// Remember implements Backend.
func (u Unavailable) Remember(context.Context, memory.Memory) (memory.Decision, error) {
	return memory.Decision{}, u.Err
}

// Delete implements Backend.
func (u Unavailable) Delete(context.Context, string) error { return u.Err }

// IngestDocument implements Backend.
func (u Unavailable) IngestDocument(context.Context, string, string, string) (memory.Decision, error) {
	return memory.Decision{}, u.Err
}

// Reinforce implements Backend.
func (u Unavailable) Reinforce(context.Context, string) (memory.Memory, error) {
	return memory.Memory{}, u.Err
}

// Rate implements Backend.
func (u Unavailable) Rate(context.Context, []string, int, string) ([]memory.Memory, error) {
	return nil, u.Err
}

// Snooze implements Backend.
func (u Unavailable) Snooze(context.Context, string, float64) (memory.Memory, error) {
	return memory.Memory{}, u.Err
}

// Status implements Backend.
func (u Unavailable) Status(context.Context) (Status, error) { return Status{}, u.Err }

// UnavailableInstructions is what a server over Unavailable tells a
// client at initialization: memtray's memory is out of reach, why, that
// the user should be told, and that the tools work again in this session
// once it is repaired (`memtray mcp` checks again on the next tool call).
func UnavailableInstructions(why error) string {
	return fmt.Sprintf("memtray is your long-term memory across sessions, but it cannot answer now: %v. "+
		"Every memory_* tool fails with this message until it is repaired; once it is, the tools work again in this session. "+
		"Tell the user once; do not call the tools again and again to wait for it.", why)
}
