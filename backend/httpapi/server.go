package httpapi

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/memtray/memtray/backend/autostart"
	"github.com/memtray/memtray/backend/memory"
	"github.com/memtray/memtray/backend/search"
	"github.com/memtray/memtray/backend/steward"
	"github.com/memtray/memtray/backend/store"
	"github.com/memtray/memtray/backend/teamsync"
)

// Limits on request bodies.
const (
	MaxJSONBody   = 1 << 20 // one JSON request
	MaxImportBody = 1 << 30 // an import stream (parsed whole before it is applied)
	cookieName    = "memtray_token"
)

// Options configures the handler.
type Options struct {
	// Token is the install's API token; required for every /api/ route but
	// /api/health. Credentials, when set, are used instead (and can be
	// rotated while the handler serves).
	Token string
	// Credentials are the token and session key shared with other handlers
	// of the same daemon; nil means NewCredentials(Token).
	Credentials *Credentials
	// Listen is the address the handler is served on (host:port). Requests
	// whose Host header is not a loopback name with this port are refused
	// (DNS rebinding). Empty disables the Host check (in-process use, e.g.
	// the Wails asset server, where the request never crossed a socket).
	Listen string
	// NoAuth skips the token check, for in-process hosts only.
	NoAuth bool
	// Health is returned by /api/health.
	Health Health
	// UI is the built web UI (frontend.Dist()), served at / with every
	// path that names no file answered by its index.html; nil or without
	// an index.html, / says how to build it.
	UI fs.FS
	// Heartbeat is how often GET /api/events sends a ping; zero means
	// DefaultHeartbeat.
	Heartbeat time.Duration
	// ShowWindow brings the desktop app's window forward (POST
	// /api/window/show, window.go); nil for a headless daemon.
	ShowWindow func()
}

// Handler serves the API. It is safe for concurrent use.
type Handler struct {
	s    Services
	opts Options
	mux  *http.ServeMux
	cred *Credentials
}

// New returns the API handler over s. A program sets every area; a test
// of routes that need none may leave them all nil.
func New(s Services, opts Options) *Handler {
	h := &Handler{s: s, opts: opts, mux: http.NewServeMux(), cred: opts.Credentials}
	if h.cred == nil {
		h.cred = NewCredentials(opts.Token)
	}
	h.mux.HandleFunc("GET /api/health", h.health)
	h.windowRoutes()
	h.mux.HandleFunc("GET /login", h.login)
	h.mux.HandleFunc("GET /api/stats", h.stats)
	h.mux.HandleFunc("GET /api/memories", h.list)
	h.mux.HandleFunc("POST /api/memories", h.add)
	h.mux.HandleFunc("GET /api/memories/{id}", h.get)
	h.mux.HandleFunc("DELETE /api/memories/{id}", h.delete)
	h.mux.HandleFunc("GET /api/search", h.searchGet)
	h.mux.HandleFunc("POST /api/search", h.searchPost)
	h.mux.HandleFunc("GET /api/export", h.export)
	h.mux.HandleFunc("POST /api/import", h.importStream)
	h.mux.HandleFunc("POST /api/ingest", h.ingest)
	h.mux.HandleFunc("GET /api/decisions", h.decisions)
	h.mux.HandleFunc("POST /api/decisions/{id}/keep", withoutBody(h.keep))
	h.mux.HandleFunc("POST /api/memories/{id}/noise", h.markNoise)
	h.mux.HandleFunc("GET /api/noise", withoutBody(h.noise))
	h.mux.HandleFunc("POST /api/recall", withJSON(h.recall))
	h.mux.HandleFunc("POST /api/sessions/{id}/reset", withoutBody(h.resetSession))
	h.mux.HandleFunc("POST /api/memories/{id}/reinforce", withoutBody(h.reinforce))
	h.mux.HandleFunc("POST /api/memories/{id}/snooze", withJSON(h.snooze))
	h.mux.HandleFunc("POST /api/memories/{id}/pin", withJSON(h.pin))
	h.mux.HandleFunc("POST /api/rate", withJSON(h.rate))
	h.mux.HandleFunc("GET /api/capture", withoutBody(h.captureGet))
	h.mux.HandleFunc("POST /api/capture", withJSON(h.capturePost))
	h.mux.HandleFunc("POST /api/import/claude", withJSON(h.importClaude))
	h.stewardRoutes()
	h.recallLogRoutes()
	h.doctorRoutes()
	h.autostartRoutes()
	h.transferRoutes()
	h.welcomeRoutes()
	h.tokenRoutes()
	h.setupRoutes()
	h.embedderRoutes()
	h.teamRoutes()
	h.uiRoutes()
	h.mux.HandleFunc("GET /", h.index)
	return h
}

// ServeHTTP checks Host, Origin and the token, then routes.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if h.opts.Listen != "" && !h.allowedHost(r.Host) {
		writeError(w, http.StatusMisdirectedRequest, errors.New("host not allowed: memtray answers on loopback names only"))
		return
	}
	if o := r.Header.Get("Origin"); o != "" && !h.allowedOrigin(o) {
		writeError(w, http.StatusForbidden, errors.New("cross-origin request refused"))
		return
	}
	if h.needsToken(r) && !h.authorized(r) {
		w.Header().Set("WWW-Authenticate", `Bearer realm="memtray"`)
		writeError(w, http.StatusUnauthorized, errors.New("missing or wrong token: run `memtray token` and send it as `Authorization: Bearer <token>`"))
		return
	}
	h.mux.ServeHTTP(w, r)
}

// Guard wraps next (a handler mounted beside the API on the same listener)
// in the API's checks: the Host allow-list, the Origin check and, when
// token is set, the install token. The MCP endpoint takes the token; the
// capture proxy cannot (the agent sends its own API key) and takes the
// Host and Origin checks alone, so a web page cannot drive it.
func (h *Handler) Guard(next http.Handler, token bool) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if h.opts.Listen != "" && !h.allowedHost(r.Host) {
			writeError(w, http.StatusMisdirectedRequest, errors.New("host not allowed: memtray answers on loopback names only"))
			return
		}
		if o := r.Header.Get("Origin"); o != "" && !h.allowedOrigin(o) {
			writeError(w, http.StatusForbidden, errors.New("cross-origin request refused"))
			return
		}
		if token && !h.opts.NoAuth && !h.authorized(r) {
			w.Header().Set("WWW-Authenticate", `Bearer realm="memtray"`)
			writeError(w, http.StatusUnauthorized, errors.New("missing or wrong token: run `memtray token` and send it as `Authorization: Bearer <token>`"))
			return
		}
		next.ServeHTTP(w, r)
	})
}

func (h *Handler) needsToken(r *http.Request) bool {
	if h.opts.NoAuth {
		return false
	}
	p := r.URL.Path
	return strings.HasPrefix(p, "/api/") && p != "/api/health"
}

func (h *Handler) authorized(r *http.Request) bool {
	tok := h.cred.Token()
	if tok == "" {
		return false
	}
	if a := r.Header.Get("Authorization"); strings.HasPrefix(a, "Bearer ") {
		return subtle.ConstantTimeCompare([]byte(strings.TrimPrefix(a, "Bearer ")), []byte(tok)) == 1
	}
	if c, err := r.Cookie(sessionCookieName(r)); err == nil {
		return h.cred.validSession(c.Value)
	}
	return false
}

// sessionCookieName is the session cookie's name for the address r was
// sent to: cookies do not tell ports apart, so two daemons on one host
// (a serve and a desktop app, two data dirs) each keep their own session
// instead of logging each other's browser out.
func sessionCookieName(r *http.Request) string {
	_, port, err := net.SplitHostPort(r.Host)
	if err != nil || port == "" {
		return cookieName
	}
	return cookieName + "_" + port
}

// Proof is what a daemon holding token answers to challenge on
// /api/health: HMAC-SHA256(token, challenge), hex. A client checks it before
// it sends the token, so a process squatting on the port learns nothing.
func Proof(token, challenge string) string {
	return keyedHash([]byte(token), "memtray-health:"+challenge)
}

func keyedHash(key []byte, msg string) string {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(msg))
	return hex.EncodeToString(m.Sum(nil))
}

// allowedHost accepts 127.0.0.1, localhost and [::1] with the listen port.
func (h *Handler) allowedHost(host string) bool {
	_, port, err := net.SplitHostPort(h.opts.Listen)
	if err != nil {
		return false
	}
	name, p, err := net.SplitHostPort(host)
	if err != nil || p != port {
		return false
	}
	switch strings.ToLower(name) {
	case "127.0.0.1", "localhost", "::1":
		return true
	}
	return false
}

func (h *Handler) allowedOrigin(origin string) bool {
	u, err := url.Parse(origin)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https" && u.Scheme != "wails") {
		return false
	}
	if u.Scheme == "wails" {
		return h.opts.Listen == ""
	}
	if h.opts.Listen == "" {
		return false
	}
	return h.allowedHost(u.Host)
}

func (h *Handler) health(w http.ResponseWriter, r *http.Request) {
	hl := h.opts.Health
	hl.Service = "memtray"
	if c, tok := r.URL.Query().Get("challenge"), h.cred.Token(); c != "" && len(c) <= 128 && tok != "" {
		hl.Proof = Proof(tok, c)
	}
	writeJSON(w, http.StatusOK, hl)
}

// login turns a token in the query into an HttpOnly SameSite=Strict cookie,
// so the browser UI works without keeping the token in page script.
func (h *Handler) login(w http.ResponseWriter, r *http.Request) {
	tok, want := r.URL.Query().Get("token"), h.cred.Token()
	if want == "" || subtle.ConstantTimeCompare([]byte(tok), []byte(want)) != 1 {
		// A browser comes here (the login form, a printed link): a page
		// that says what to do, not the API's JSON error.
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Content-Security-Policy", uiCSP)
		w.Header().Set("X-Content-Type-Options", "nosniff")
		w.Header().Set("Referrer-Policy", "no-referrer")
		w.Header().Set("Cache-Control", "no-store")
		w.WriteHeader(http.StatusUnauthorized)
		io.WriteString(w, loginFailedPage)
		return
	}
	h.setSessionCookie(w, r)
	http.Redirect(w, r, "/", http.StatusSeeOther)
}

// loginFailedPage answers a login with a wrong token.
const loginFailedPage = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>memtray: wrong token</title></head>
<body style="font-family: system-ui, sans-serif; max-width: 40em; margin: 4em auto; line-height: 1.5">
<h1 style="font-size: 1.3em">That token is not this memtray's</h1>
<p>It was mistyped, replaced since (<code>memtray token rotate</code>), or is another data dir's.
Run <code>memtray token</code> in a terminal, then <a href="/">log in again</a> with what it prints.</p>
</body></html>
`

// setSessionCookie hands the browser a session cookie of the current
// token: HttpOnly, SameSite=Strict, SessionLifetime.
func (h *Handler) setSessionCookie(w http.ResponseWriter, r *http.Request) {
	http.SetCookie(w, &http.Cookie{Name: sessionCookieName(r), Value: h.cred.session(), Path: "/", HttpOnly: true,
		SameSite: http.SameSiteStrictMode, MaxAge: int(SessionLifetime / time.Second)})
}

func (h *Handler) stats(w http.ResponseWriter, r *http.Request) {
	s, err := h.s.Status.Stats(r.Context())
	if err != nil {
		writeErr(w, err)
		return
	}
	if h.s.Team != nil {
		if ts, err := h.s.Team.TeamStatus(r.Context()); err == nil {
			s.Team = &ts
		}
	}
	writeJSON(w, http.StatusOK, s)
}

func (h *Handler) list(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	req := ListRequest{Project: q.Get("project"), Kind: q.Get("kind"), Sort: q.Get("sort"), Order: q.Get("order"),
		Snoozed: q.Get("snoozed"), Superseded: q.Get("superseded"), Q: q.Get("q"), Type: q.Get("type"), Source: q.Get("source"), Scope: q.Get("scope")}
	var err error
	for name, v := range map[string]*bool{"facets": &req.Facets, "worktrees": &req.Worktrees} {
		if s := q.Get(name); s != "" {
			if *v, err = strconv.ParseBool(s); err != nil {
				writeErr(w, fmt.Errorf("%w: %s must be true or false", memory.ErrInvalid, name))
				return
			}
		}
	}
	if req.Limit, err = intParam(q, "limit", 50, 0, 1000); err != nil {
		writeErr(w, err)
		return
	}
	if req.Offset, err = intParam(q, "offset", 0, 0, 1<<31-1); err != nil {
		writeErr(w, err)
		return
	}
	res, err := h.s.Memories.List(r.Context(), req)
	if err != nil {
		writeErr(w, err)
		return
	}
	for i := range res.Memories {
		res.Memories[i].Embedding = nil
	}
	writeJSON(w, http.StatusOK, res)
}

func (h *Handler) add(w http.ResponseWriter, r *http.Request) {
	var req AddRequest
	if err := readJSON(w, r, &req); err != nil {
		writeErr(w, err)
		return
	}
	m, err := h.s.Memories.Add(r.Context(), req)
	if err != nil {
		writeErr(w, err)
		return
	}
	m.Embedding = nil
	writeJSON(w, http.StatusCreated, m)
}

func (h *Handler) ingest(w http.ResponseWriter, r *http.Request) {
	var req IngestRequest
	if err := readJSONLimit(w, r, &req, MaxIngestBody); err != nil {
		writeErr(w, err)
		return
	}
	if n := len(req.Exchanges) + len(req.Documents); n == 0 || n > MaxIngestItems {
		writeErr(w, fmt.Errorf("%w: give 1..%d exchanges and documents", memory.ErrInvalid, MaxIngestItems))
		return
	}
	resp, err := h.s.Feed.Ingest(r.Context(), req)
	if err != nil {
		writeErr(w, err)
		return
	}
	writeJSON(w, http.StatusOK, resp)
}

func (h *Handler) decisions(w http.ResponseWriter, r *http.Request) {
	limit := 100
	if v := r.URL.Query().Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 10000 {
			writeErr(w, fmt.Errorf("%w: limit must be within 1..10000", memory.ErrInvalid))
			return
		}
		limit = n
	}
	ds, err := h.s.Feed.Decisions(r.Context(), limit)
	if err != nil {
		writeErr(w, err)
		return
	}
	writeJSON(w, http.StatusOK, ds)
}

func (h *Handler) keep(r *http.Request) (memory.Decision, error) {
	return h.s.Feed.Keep(r.Context(), r.PathValue("id"))
}

func (h *Handler) markNoise(w http.ResponseWriter, r *http.Request) {
	if err := h.s.Feed.MarkNoise(r.Context(), r.PathValue("id")); err != nil {
		writeErr(w, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func (h *Handler) noise(r *http.Request) (NoiseState, error) {
	return h.s.Feed.Noise(r.Context())
}

func (h *Handler) get(w http.ResponseWriter, r *http.Request) {
	m, err := h.s.Memories.Get(r.Context(), r.PathValue("id"))
	if err != nil {
		writeErr(w, err)
		return
	}
	m.Embedding = nil
	writeJSON(w, http.StatusOK, m)
}

// delete moves a memory to the trash, or deletes it for good with
// ?purge=true.
func (h *Handler) delete(w http.ResponseWriter, r *http.Request) {
	del := h.s.Memories.Delete
	switch p := r.URL.Query().Get("purge"); p {
	case "", "false":
	case "true":
		del = h.s.Memories.Purge
	default:
		writeErr(w, fmt.Errorf("%w: purge must be true or false, not %q", memory.ErrInvalid, p))
		return
	}
	if err := del(r.Context(), r.PathValue("id")); err != nil {
		writeErr(w, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func (h *Handler) searchGet(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	req := SearchRequest{Query: q.Get("q"), Project: q.Get("project"), Mode: q.Get("mode"), Kinds: q["kind"]}
	var err error
	if req.K, err = intParam(q, "k", 0, 0, 100); err != nil {
		writeErr(w, err)
		return
	}
	h.search(w, r, req)
}

func (h *Handler) searchPost(w http.ResponseWriter, r *http.Request) {
	var req SearchRequest
	if err := readJSON(w, r, &req); err != nil {
		writeErr(w, err)
		return
	}
	h.search(w, r, req)
}

func (h *Handler) search(w http.ResponseWriter, r *http.Request, req SearchRequest) {
	hits, err := h.s.Memories.Search(r.Context(), req)
	if err != nil {
		writeErr(w, err)
		return
	}
	if hits == nil {
		hits = []memory.Hit{}
	}
	for i := range hits {
		hits[i].Memory.Embedding = nil
	}
	writeJSON(w, http.StatusOK, map[string]any{"hits": hits})
}

func (h *Handler) export(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/x-ndjson")
	w.Header().Set("Content-Disposition", `attachment; filename="memtray-export.jsonl"`)
	if err := h.s.Memories.Export(r.Context(), w); err != nil {
		// Headers are gone; the missing trailer tells the reader the stream is incomplete.
		return
	}
}

func (h *Handler) importStream(w http.ResponseWriter, r *http.Request) {
	body := http.MaxBytesReader(w, r.Body, MaxImportBody)
	rep, err := h.s.Memories.Import(r.Context(), body)
	if err != nil {
		writeErr(w, err)
		return
	}
	writeJSON(w, http.StatusOK, rep)
}

func intParam(q url.Values, name string, def, lo, hi int) (int, error) {
	s := q.Get(name)
	if s == "" {
		return def, nil
	}
	v, err := strconv.Atoi(s)
	if err != nil || v < lo || v > hi {
		return 0, fmt.Errorf("%w: %s must be a whole number within %d..%d", memory.ErrInvalid, name, lo, hi)
	}
	return v, nil
}

func readJSON(w http.ResponseWriter, r *http.Request, v any) error {
	return readJSONLimit(w, r, v, MaxJSONBody)
}

// MaxIngestBody bounds a POST /api/ingest body.
const MaxIngestBody = 64 << 20

func readJSONLimit(w http.ResponseWriter, r *http.Request, v any, limit int64) error {
	if ct := r.Header.Get("Content-Type"); ct != "" && !strings.HasPrefix(ct, "application/json") {
		return fmt.Errorf("%w: Content-Type must be application/json", memory.ErrInvalid)
	}
	if r.ContentLength > limit {
		// Refused before reading a byte of it.
		return fmt.Errorf("request body of %d bytes is larger than the %d allowed: %w", r.ContentLength, limit, &http.MaxBytesError{Limit: limit})
	}
	data, err := readBody(http.MaxBytesReader(w, r.Body, limit), r.ContentLength)
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			// writeErr answers 413 for it.
			return fmt.Errorf("request body larger than %d bytes: %w", limit, mbe)
		}
		return fmt.Errorf("read request body: %w", err)
	}
	// encoding/json would quietly turn invalid UTF-8 into U+FFFD; refuse it instead.
	if !utf8.Valid(data) {
		return fmt.Errorf("%w: request body is not valid UTF-8", memory.ErrInvalid)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("%w: request body: %v", memory.ErrInvalid, err)
	}
	if dec.More() {
		return fmt.Errorf("%w: request body: trailing data", memory.ErrInvalid)
	}
	return nil
}

// readBody reads a request body of a known length into one buffer of
// that size (io.ReadAll would grow one to about twice a large body).
func readBody(r io.Reader, length int64) ([]byte, error) {
	if length <= 0 {
		return io.ReadAll(r)
	}
	buf := make([]byte, length)
	if _, err := io.ReadFull(r, buf); err != nil {
		if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("request body shorter than its Content-Length: %w", err)
		}
		return nil, err
	}
	return buf, nil
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

// errorBody is the JSON of every error answer.
type errorBody struct {
	Error string `json:"error"`
	Code  string `json:"code"`
	// Fields gives invalid input's problem per field (dotted JSON names).
	Fields map[string]string `json:"fields,omitempty"`
}

// codes maps sentinel errors to HTTP statuses and stable codes the Client
// maps back, so errors.Is works across the wire.
var codes = []struct {
	err    error
	status int
	code   string
}{
	{memory.ErrNotFound, http.StatusNotFound, "not_found"},
	{memory.ErrInvalid, http.StatusBadRequest, "invalid"},
	{memory.ErrModelMismatch, http.StatusConflict, "model_mismatch"},
	{memory.ErrNewerFormat, http.StatusConflict, "newer_format"},
	{memory.ErrLocked, http.StatusConflict, "locked"},
	{memory.ErrUnavailable, http.StatusServiceUnavailable, "unavailable"},
	{steward.ErrNothingToUndo, http.StatusConflict, "nothing_to_undo"},
	{ErrStalePreview, http.StatusConflict, "stale_preview"},
	{ErrSetupConflict, http.StatusConflict, "setup_conflict"},
	{store.ErrConflict, http.StatusConflict, "conflict"},
	{teamsync.ErrNotAdmin, http.StatusForbidden, "not_admin"},
	{teamsync.ErrNeedsOwner, http.StatusConflict, "needs_owner"},
	{teamsync.ErrRetentionRange, http.StatusBadRequest, "invalid"},
	{ErrJobRunning, http.StatusConflict, "job_running"},
	{autostart.ErrNotOurs, http.StatusConflict, "autostart_not_ours"},
	{autostart.ErrUnsupported, http.StatusNotImplemented, "unsupported"},
}

func writeErr(w http.ResponseWriter, err error) {
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		writeJSON(w, http.StatusRequestEntityTooLarge, errorBody{Error: err.Error(), Code: "too_large"})
		return
	}
	for _, c := range codes {
		if errors.Is(err, c.err) {
			writeJSON(w, c.status, errorBody{Error: err.Error(), Code: c.code, Fields: fieldsOf(err)})
			return
		}
	}
	writeJSON(w, http.StatusInternalServerError, errorBody{Error: err.Error(), Code: "internal"})
}

func writeError(w http.ResponseWriter, status int, err error) {
	writeJSON(w, status, errorBody{Error: err.Error(), Code: http.StatusText(status)})
}

// withJSON serves a route that reads a JSON body, calls fn and answers
// its result as JSON (200) or its error.
func withJSON[Req, Resp any](fn func(r *http.Request, req Req) (Resp, error)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		var req Req
		if err := readJSON(w, r, &req); err != nil {
			writeErr(w, err)
			return
		}
		out, err := fn(r, req)
		if err != nil {
			writeErr(w, err)
			return
		}
		writeJSON(w, http.StatusOK, out)
	}
}

// withoutBody serves a route without a request body the same way.
func withoutBody[Resp any](fn func(r *http.Request) (Resp, error)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		out, err := fn(r)
		if err != nil {
			writeErr(w, err)
			return
		}
		writeJSON(w, http.StatusOK, out)
	}
}

func (h *Handler) recall(r *http.Request, req search.RecallRequest) (search.Recalled, error) {
	return h.s.Recaller.Recall(r.Context(), req)
}

func (h *Handler) resetSession(r *http.Request) (map[string]bool, error) {
	return map[string]bool{"reset": true}, h.s.Recaller.ResetSession(r.Context(), r.PathValue("id"))
}

func (h *Handler) reinforce(r *http.Request) (memory.Memory, error) {
	return h.s.Feedback.Reinforce(r.Context(), r.PathValue("id"))
}

func (h *Handler) snooze(r *http.Request, req SnoozeRequest) (memory.Memory, error) {
	return h.s.Feedback.Snooze(r.Context(), r.PathValue("id"), req.Days)
}

func (h *Handler) pin(r *http.Request, req PinRequest) (memory.Memory, error) {
	return h.s.Feedback.Pin(r.Context(), r.PathValue("id"), req.Pinned)
}

func (h *Handler) rate(r *http.Request, req RateRequest) ([]memory.Memory, error) {
	return h.s.Feedback.Rate(r.Context(), req.IDs, req.Score, req.Reason)
}

func (h *Handler) captureGet(r *http.Request) (CaptureState, error) {
	return h.s.Settings.Capture(r.Context())
}

func (h *Handler) capturePost(r *http.Request, u CaptureUpdate) (CaptureState, error) {
	return h.s.Settings.SetCapture(r.Context(), u)
}

func (h *Handler) importClaude(r *http.Request, req ImportClaudeRequest) (ImportClaudeReport, error) {
	return h.s.Importer.ImportClaude(r.Context(), req)
}
