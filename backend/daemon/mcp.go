package daemon

import (
	"context"
	"fmt"
	"io/fs"
	"net/http"
	"path/filepath"

	"github.com/memtray/memtray/backend/feedback"
	"github.com/memtray/memtray/backend/httpapi"
	"github.com/memtray/memtray/backend/mcp"
	"github.com/memtray/memtray/backend/memories"
	"github.com/memtray/memtray/backend/memory"
	"github.com/memtray/memtray/backend/recall"
	"github.com/memtray/memtray/backend/search"
)

// mcpBackend is what the MCP tools reach: the recall service, the
// memories service's writes, the daemon's status, and the feedback
// service's reinforce, rate and snooze.
type mcpBackend struct {
	*Daemon
	*feedback.Service
	memories *memories.Service
	recall   *recall.Service
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

var _ mcp.Backend = mcpBackend{}

// Status describes the store for the MCP memory_status tool.
func (d *Daemon) Status(ctx context.Context) (mcp.Status, error) {
	s, err := d.Stats(ctx)
	if err != nil {
		return mcp.Status{}, fmt.Errorf("status: %w", err)
	}
	st := mcp.Status{ByKind: s.ByKind, ByProject: s.ByProject, Snoozed: s.Snoozed, Superseded: s.Superseded,
		StoreDir: s.Store.Dir, StoreBytes: dirSize(s.Store.Dir), Embedder: s.Embedder, Version: s.Version,
		Capture: captureSummary(s.Capture)}
	for _, n := range s.ByKind {
		st.Total += n
	}
	if st.StoreDir == "" {
		st.StoreDir = d.StorePath()
	}
	return st, nil
}

// MCPBackend is what the MCP tools reach of this daemon, for a server of
// MCP's own (stdio, or in memory in tests).
func (d *Daemon) MCPBackend() mcp.Backend { return mcpBackend{d, d.feedback, d.memories, d.recall} }

// MCPHandler serves the MCP tools over streamable HTTP, to be mounted at
// /mcp behind the token check.
func (d *Daemon) MCPHandler() http.Handler {
	return mcp.HTTPHandler(d.MCPBackend(), mcp.Options{Version: d.version, Logger: d.log})
}

// captureSummary says in a few words whether the proxy keeps what it sees.
func captureSummary(c *httpapi.CaptureState) string {
	switch {
	case c == nil:
		return "unknown"
	case !c.Enabled:
		return "off (the proxy forwards but keeps nothing)"
	case len(c.ExcludeProjects) == 1:
		return "on (1 project excluded)"
	case len(c.ExcludeProjects) > 1:
		return fmt.Sprintf("on (%d projects excluded)", len(c.ExcludeProjects))
	}
	return "on"
}

// dirSize adds up the sizes of the regular files under dir (0 when unreadable).
func dirSize(dir string) int64 {
	var n int64
	filepath.WalkDir(dir, func(_ string, e fs.DirEntry, err error) error {
		if err != nil {
			return nil // skip what cannot be read
		}
		if e.Type().IsRegular() {
			if fi, err := e.Info(); err == nil {
				n += fi.Size()
			}
		}
		return nil
	})
	return n
}
