package httpapi

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"

	"github.com/memtray/memtray/backend/events"
	"github.com/memtray/memtray/backend/memory"
)

// Subscribe is not offered over HTTP: read GET /api/events (SSE) instead.
func (c *Client) Subscribe(string, int) (*events.Subscription, bool, error) {
	return nil, false, fmt.Errorf("%w: the live feed is the SSE stream GET /api/events", memory.ErrUnavailable)
}

// Edit runs PATCH /api/memories/{id}.
func (c *Client) Edit(ctx context.Context, id string, p MemoryPatch) (EditResult, error) {
	var out EditResult
	err := c.do(ctx, http.MethodPatch, "/api/memories/"+url.PathEscape(id), p, &out)
	return out, err
}

// History runs GET /api/memories/{id}/history.
func (c *Client) History(ctx context.Context, id string) (MemoryHistory, error) {
	var out MemoryHistory
	err := c.do(ctx, http.MethodGet, "/api/memories/"+url.PathEscape(id)+"/history", nil, &out)
	return out, err
}

// Overview runs GET /api/overview.
func (c *Client) Overview(ctx context.Context) (Overview, error) {
	var out Overview
	err := c.do(ctx, http.MethodGet, "/api/overview", nil, &out)
	return out, err
}

// Config runs GET /api/config.
func (c *Client) Config(ctx context.Context) (ConfigView, error) {
	var out ConfigView
	err := c.do(ctx, http.MethodGet, "/api/config", nil, &out)
	return out, err
}

// SetConfig runs PUT /api/config.
func (c *Client) SetConfig(ctx context.Context, patch json.RawMessage) (ConfigUpdate, error) {
	var out ConfigUpdate
	err := c.do(ctx, http.MethodPut, "/api/config", patch, &out)
	return out, err
}

// PreviewThreshold runs POST /api/config/preview-threshold.
func (c *Client) PreviewThreshold(ctx context.Context, req ThresholdPreviewRequest) (ThresholdPreview, error) {
	var out ThresholdPreview
	err := c.do(ctx, http.MethodPost, "/api/config/preview-threshold", req, &out)
	return out, err
}

// NoiseProjection runs GET /api/noise/projection.
func (c *Client) NoiseProjection(ctx context.Context) (NoiseProjection, error) {
	var out NoiseProjection
	err := c.do(ctx, http.MethodGet, "/api/noise/projection", nil, &out)
	return out, err
}
