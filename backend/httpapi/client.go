package httpapi

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/memtray/memtray/backend/memory"
	"github.com/memtray/memtray/backend/search"
	"github.com/memtray/memtray/backend/store"
)

// Client is every area of Services, talking to a running memtray over its API.
type Client struct {
	base  string
	token string
	hc    *http.Client
}

var (
	_ Memories    = (*Client)(nil)
	_ Feedback    = (*Client)(nil)
	_ Feed        = (*Client)(nil)
	_ Status      = (*Client)(nil)
	_ Recaller    = (*Client)(nil)
	_ Settings    = (*Client)(nil)
	_ Transfer    = (*Client)(nil)
	_ Importer    = (*Client)(nil)
	_ Steward     = (*Client)(nil)
	_ Setup       = (*Client)(nil)
	_ Autostarter = (*Client)(nil)
	_ Welcome     = (*Client)(nil)
	_ Tokens      = (*Client)(nil)
	_ Embedders   = (*Client)(nil)
	_ Jobs        = (*Client)(nil)
)

// Services is every area of the API over this client.
func (c *Client) Services() Services {
	return Services{Memories: c, Feedback: c, Feed: c, Status: c, Recaller: c, RecallLog: c, Settings: c, Transfer: c, Importer: c, Steward: c,
		Setup: c, Autostarter: c, Welcome: c, Tokens: c, Embedders: c, Jobs: c, Team: c, Doctor: c}
}

// NewClient returns a client for the daemon at addr (host:port) with token.
func NewClient(addr, token string) *Client {
	return &Client{base: "http://" + addr, token: token, hc: &http.Client{}}
}

// Addr is the daemon's host:port.
func (c *Client) Addr() string { return strings.TrimPrefix(c.base, "http://") }

// Token is the token the client sends.
func (c *Client) Token() string { return c.token }

// Probe asks addr's /api/health within timeout and reports whether a
// memtray daemon answers there. With a token it also makes the daemon prove
// it holds the same token (see Proof) before anyone sends it there.
func Probe(ctx context.Context, addr, token string, timeout time.Duration) (Health, bool) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var nonce [16]byte
	rand.Read(nonce[:])
	challenge := hex.EncodeToString(nonce[:])
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/api/health?challenge="+challenge, nil)
	if err != nil {
		return Health{}, false
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return Health{}, false
	}
	defer resp.Body.Close()
	var h Health
	if resp.StatusCode != http.StatusOK || json.NewDecoder(io.LimitReader(resp.Body, 4096)).Decode(&h) != nil || h.Service != "memtray" {
		return Health{}, false
	}
	if token != "" && !hmac.Equal([]byte(h.Proof), []byte(Proof(token, challenge))) {
		return Health{}, false
	}
	return h, true
}

// Add stores a memory through the daemon.
func (c *Client) Add(ctx context.Context, req AddRequest) (memory.Memory, error) {
	var m memory.Memory
	return m, c.do(ctx, http.MethodPost, "/api/memories", req, &m)
}

// Search searches through the daemon.
func (c *Client) Search(ctx context.Context, req SearchRequest) ([]memory.Hit, error) {
	var res struct {
		Hits []memory.Hit `json:"hits"`
	}
	err := c.do(ctx, http.MethodPost, "/api/search", req, &res)
	return res.Hits, err
}

// Get fetches one memory.
func (c *Client) Get(ctx context.Context, id string) (memory.Memory, error) {
	var m memory.Memory
	return m, c.do(ctx, http.MethodGet, "/api/memories/"+url.PathEscape(id), nil, &m)
}

// Delete moves one memory to the trash.
func (c *Client) Delete(ctx context.Context, id string) error {
	return c.do(ctx, http.MethodDelete, "/api/memories/"+url.PathEscape(id), nil, nil)
}

// Purge deletes one memory for good (DELETE /api/memories/{id}?purge=true).
func (c *Client) Purge(ctx context.Context, id string) error {
	return c.do(ctx, http.MethodDelete, "/api/memories/"+url.PathEscape(id)+"?purge=true", nil, nil)
}

// List pages through memories.
func (c *Client) List(ctx context.Context, req ListRequest) (ListResponse, error) {
	q := url.Values{}
	if req.Project != "" {
		q.Set("project", req.Project)
	}
	if req.Kind != "" {
		q.Set("kind", req.Kind)
	}
	if req.Limit > 0 {
		q.Set("limit", fmt.Sprint(req.Limit))
	}
	if req.Offset > 0 {
		q.Set("offset", fmt.Sprint(req.Offset))
	}
	if req.Facets {
		q.Set("facets", "true")
	}
	if req.Worktrees {
		q.Set("worktrees", "true")
	}
	for k, v := range map[string]string{"sort": req.Sort, "order": req.Order, "snoozed": req.Snoozed, "superseded": req.Superseded, "q": req.Q, "type": req.Type, "source": req.Source, "scope": req.Scope} {
		if v != "" {
			q.Set(k, v)
		}
	}
	var res ListResponse
	return res, c.do(ctx, http.MethodGet, "/api/memories?"+q.Encode(), nil, &res)
}

// Stats describes the daemon.
func (c *Client) Stats(ctx context.Context) (Stats, error) {
	var s Stats
	return s, c.do(ctx, http.MethodGet, "/api/stats", nil, &s)
}

// Export streams the daemon's export into w.
func (c *Client) Export(ctx context.Context, w io.Writer) error {
	resp, err := c.send(ctx, http.MethodGet, "/api/export", nil, "")
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if _, err := io.Copy(w, resp.Body); err != nil {
		return fmt.Errorf("export: %w", err)
	}
	return nil
}

// Import sends an export stream to the daemon.
func (c *Client) Import(ctx context.Context, r io.Reader) (store.ImportReport, error) {
	var rep store.ImportReport
	resp, err := c.send(ctx, http.MethodPost, "/api/import", r, "application/x-ndjson")
	if err != nil {
		return rep, err
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(&rep); err != nil {
		return rep, fmt.Errorf("import: reading the answer: %w", err)
	}
	return rep, nil
}

func (c *Client) do(ctx context.Context, method, path string, in, out any) error {
	var body io.Reader
	ct := ""
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return fmt.Errorf("encode request: %w", err)
		}
		body, ct = bytes.NewReader(b), "application/json"
	}
	resp, err := c.send(ctx, method, path, body, ct)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if out == nil {
		return nil
	}
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		return fmt.Errorf("%s %s: reading the answer: %w", method, path, err)
	}
	return nil
}

// send performs the request and turns error answers into errors that wrap
// the matching sentinel.
func (c *Client) send(ctx context.Context, method, path string, body io.Reader, ct string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, body)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", method, path, err)
	}
	if ct != "" {
		req.Header.Set("Content-Type", ct)
	}
	req.Header.Set("Authorization", "Bearer "+c.token)
	resp, err := c.hc.Do(req)
	if err != nil {
		return nil, fmt.Errorf("memtray daemon at %s: %w: %v", c.base, memory.ErrUnavailable, err)
	}
	if resp.StatusCode < 300 {
		return resp, nil
	}
	defer resp.Body.Close()
	var eb errorBody
	data, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	if json.Unmarshal(data, &eb) != nil || eb.Error == "" {
		eb.Error = strings.TrimSpace(string(data))
	}
	if eb.Code == "invalid" && len(eb.Fields) > 0 {
		return nil, &FieldErrors{Message: eb.Error, Fields: eb.Fields, Whole: true}
	}
	for _, c := range codes {
		if c.code == eb.Code {
			return nil, &remoteError{msg: eb.Error, sentinel: c.err}
		}
	}
	return nil, fmt.Errorf("memtray daemon: %s (HTTP %d)", eb.Error, resp.StatusCode)
}

// remoteError carries the daemon's message and matches its sentinel.
type remoteError struct {
	msg      string
	sentinel error
}

func (e *remoteError) Error() string { return e.msg }
func (e *remoteError) Unwrap() error { return e.sentinel }

// Ingest runs POST /api/ingest.
func (c *Client) Ingest(ctx context.Context, req IngestRequest) (IngestResponse, error) {
	var out IngestResponse
	err := c.do(ctx, http.MethodPost, "/api/ingest", req, &out)
	return out, err
}

// Decisions runs GET /api/decisions.
func (c *Client) Decisions(ctx context.Context, limit int) ([]DecisionEntry, error) {
	var out []DecisionEntry
	err := c.do(ctx, http.MethodGet, "/api/decisions?limit="+strconv.Itoa(limit), nil, &out)
	return out, err
}

// Keep runs POST /api/decisions/{id}/keep.
func (c *Client) Keep(ctx context.Context, decisionID string) (memory.Decision, error) {
	var out memory.Decision
	err := c.do(ctx, http.MethodPost, "/api/decisions/"+url.PathEscape(decisionID)+"/keep", nil, &out)
	return out, err
}

// MarkNoise runs POST /api/memories/{id}/noise.
func (c *Client) MarkNoise(ctx context.Context, id string) error {
	return c.do(ctx, http.MethodPost, "/api/memories/"+url.PathEscape(id)+"/noise", nil, nil)
}

// Noise runs GET /api/noise.
func (c *Client) Noise(ctx context.Context) (NoiseState, error) {
	var out NoiseState
	err := c.do(ctx, http.MethodGet, "/api/noise", nil, &out)
	return out, err
}

// Recall asks the daemon for the memories of this turn.
func (c *Client) Recall(ctx context.Context, req search.RecallRequest) (search.Recalled, error) {
	var out search.Recalled
	err := c.do(ctx, http.MethodPost, "/api/recall", req, &out)
	return out, err
}

// ResetSession forgets what a session was given.
func (c *Client) ResetSession(ctx context.Context, sessionID string) error {
	return c.do(ctx, http.MethodPost, "/api/sessions/"+url.PathEscape(sessionID)+"/reset", nil, nil)
}

// Reinforce records that a memory proved useful.
func (c *Client) Reinforce(ctx context.Context, id string) (memory.Memory, error) {
	var out memory.Memory
	err := c.do(ctx, http.MethodPost, "/api/memories/"+url.PathEscape(id)+"/reinforce", nil, &out)
	return out, err
}

// Rate adds +1 or -1 feedback to memories.
func (c *Client) Rate(ctx context.Context, ids []string, score int, reason string) ([]memory.Memory, error) {
	var out []memory.Memory
	err := c.do(ctx, http.MethodPost, "/api/rate", RateRequest{IDs: ids, Score: score, Reason: reason}, &out)
	return out, err
}

// Pin pins or unpins a memory.
func (c *Client) Pin(ctx context.Context, id string, pinned bool) (memory.Memory, error) {
	var out memory.Memory
	err := c.do(ctx, http.MethodPost, "/api/memories/"+url.PathEscape(id)+"/pin", PinRequest{Pinned: pinned}, &out)
	return out, err
}

// Snooze keeps a memory out of recall for days.
func (c *Client) Snooze(ctx context.Context, id string, days float64) (memory.Memory, error) {
	var out memory.Memory
	err := c.do(ctx, http.MethodPost, "/api/memories/"+url.PathEscape(id)+"/snooze", SnoozeRequest{Days: days}, &out)
	return out, err
}

// Capture reports the capture proxy's state.
func (c *Client) Capture(ctx context.Context) (CaptureState, error) {
	var out CaptureState
	err := c.do(ctx, http.MethodGet, "/api/capture", nil, &out)
	return out, err
}

// SetCapture changes the capture switch or the excluded projects.
func (c *Client) SetCapture(ctx context.Context, u CaptureUpdate) (CaptureState, error) {
	var out CaptureState
	err := c.do(ctx, http.MethodPost, "/api/capture", u, &out)
	return out, err
}

// ImportClaude runs POST /api/import/claude.
func (c *Client) ImportClaude(ctx context.Context, req ImportClaudeRequest) (ImportClaudeReport, error) {
	var out ImportClaudeReport
	err := c.do(ctx, http.MethodPost, "/api/import/claude", req, &out)
	return out, err
}
