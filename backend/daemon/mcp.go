package daemon

import (
	"context"
	"net/http"

	"github.com/memtray/memtray/backend/feedback"
	"github.com/memtray/memtray/backend/mcp"
	"github.com/memtray/memtray/backend/memories"
	"github.com/memtray/memtray/backend/memory"
	"github.com/memtray/memtray/backend/recall"
	"github.com/memtray/memtray/backend/search"
	"github.com/memtray/memtray/backend/status"
)

// mcpBackend is what the MCP tools reach: the recall service, the
// memories service's writes, the status service's status, and the
// feedback service's reinforce, rate and snooze.
type mcpBackend struct {
	*feedback.Service
	memories *memories.Service
	recall   *recall.Service
	status   *status.Service
}

// Remember is the memories service's.
func (b mcpBackend) Remember(ctx context.Context, m memory.Memory) (memory.Decision, error) {
	return b.memories.Remember(ctx, m)
}

// IngestDocument is the memories service's.
func (b mcpBackend) IngestDocument(ctx context.Context, name, project, text string) (memory.Decision, error) {
	return b.memories.IngestDocument(ctx, name, project, text)
}

// Delete is the memories service's.
func (b mcpBackend) Delete(ctx context.Context, id string) error { return b.memories.Delete(ctx, id) }

// Recall is the recall service's.
func (b mcpBackend) Recall(ctx context.Context, req search.RecallRequest) (search.Recalled, error) {
	return b.recall.Recall(ctx, req)
}

// Status is the status service's.
func (b mcpBackend) Status(ctx context.Context) (mcp.Status, error) { return b.status.Status(ctx) }

var _ mcp.Backend = mcpBackend{}

// MCPBackend is what the MCP tools reach of this daemon, for a server of
// MCP's own (stdio, or in memory in tests).
func (d *Daemon) MCPBackend() mcp.Backend {
	return mcpBackend{d.feedback, d.memories, d.recall, d.status}
}

// MCPHandler serves the MCP tools over streamable HTTP, to be mounted at
// /mcp behind the token check.
func (d *Daemon) MCPHandler() http.Handler {
	return mcp.HTTPHandler(d.MCPBackend(), mcp.Options{Version: d.version, Logger: d.log})
}
