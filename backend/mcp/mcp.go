// Package mcp is memtray's Model Context Protocol server: the memory_* tools
// an agent calls to search, store, rate and manage its long-term memory. It
// is built on the official MCP Go SDK and served two ways: streamable HTTP
// at the daemon's /mcp (HTTPHandler; the daemon adds the token check), and
// stdio through `memtray mcp`, a bridge to that same endpoint.
//
// The package knows nothing of how the daemon is wired: the daemon
// implements Backend. Every tool validates its arguments and answers a bad
// value with a tool error (IsError, a sentence saying what is wrong), never a
// protocol failure, so the agent can correct itself. Each answer carries
// compact text for the model and the same facts as structured content.
package mcp

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"runtime"
	"sync"
	"time"
	"unicode/utf8"
	"weak"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/memtray/memtray/backend/memory"
	"github.com/memtray/memtray/backend/search"
)

// Backend is what the tools need of a memtray daemon; *daemon.Daemon
// implements it.
type Backend interface {
	// Recall hands an agent session the memories that match, never one
	// the session was already given.
	Recall(ctx context.Context, req search.RecallRequest) (search.Recalled, error)
	// Remember stores a memory through the write pipeline's redaction and
	// dedup; the Decision says stored, updated, merged or skipped-duplicate.
	Remember(ctx context.Context, m memory.Memory) (memory.Decision, error)
	// Delete removes one memory.
	Delete(ctx context.Context, id string) error
	// IngestDocument stores a document as source memories ("ingest:<name>").
	IngestDocument(ctx context.Context, name, project, text string) (memory.Decision, error)
	// Reinforce records that a memory proved useful.
	Reinforce(ctx context.Context, id string) (memory.Memory, error)
	// Rate adds +1 or -1 feedback to memories an agent was given.
	Rate(ctx context.Context, ids []string, score int, reason string) ([]memory.Memory, error)
	// Snooze keeps a memory out of recall for days (0 wakes it).
	Snooze(ctx context.Context, id string, days float64) (memory.Memory, error)
	// Status describes the store for memory_status.
	Status(ctx context.Context) (Status, error)
}

// Status describes a running memtray for memory_status.
type Status struct {
	// Total counts every memory, snoozed and superseded ones included.
	Total int `json:"total"`
	// ByKind and ByProject count memories by kind and by project ("" is
	// no project).
	ByKind    map[string]int `json:"by_kind"`
	ByProject map[string]int `json:"by_project"`
	// Snoozed and Superseded count memories recall leaves out.
	Snoozed    int `json:"snoozed"`
	Superseded int `json:"superseded"`
	// StoreDir is the store's folder and StoreBytes its size on disk.
	StoreDir   string `json:"store_dir"`
	StoreBytes int64  `json:"store_bytes"`
	// Capture says whether the capture proxy records exchanges.
	Capture string `json:"capture"`
	// Embedder names the embedding model in use.
	Embedder string `json:"embedder"`
	// Version is the daemon's version.
	Version string `json:"version"`
}

// Options configures NewServer and HTTPHandler.
type Options struct {
	// Version is reported to clients as the server's version.
	Version string
	// Logger receives the SDK's and the tools' diagnostics; nil discards them.
	Logger *slog.Logger
	// Instructions replaces what the server tells a client at
	// initialization (Instructions when empty).
	Instructions string
	// ProtocolVersions, when not empty, are the only protocol versions
	// the server negotiates (the SDK's sdk.ServerOptions
	// .SupportedProtocolVersions): a server standing in for another
	// negotiates what that one would.
	ProtocolVersions []string
}

// SessionIdleTimeout closes an HTTP MCP session after this long without a
// request, so sessions whose client vanished without a DELETE do not pile
// up. It is long: an agent may sit idle for hours between prompts.
const SessionIdleTimeout = 24 * time.Hour

// Instructions is what the server tells a client at initialization.
const Instructions = `memtray is your long-term memory across sessions: decisions, conventions, ` +
	`debugging findings, configuration and preferences of this user and project. ` +
	`Call memory_search before answering questions about past decisions, conventions or earlier work, ` +
	`and before re-investigating a problem that may have been solved before. ` +
	`Call memory_store when you learn something worth keeping beyond this session. ` +
	`After using memories you were given, call memory_rate_context (+1 helped, -1 misled) ` +
	`and memory_reinforce for one that proved right again. ` +
	`A search never returns a memory this session was already given.`

// NewServer returns an MCP server exposing memtray's tools over b. Connect
// it to any transport (stdio, in-memory); HTTPHandler serves it over HTTP.
func NewServer(b Backend, opts Options) *sdk.Server {
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	version := opts.Version
	if version == "" {
		version = "dev"
	}
	instructions := opts.Instructions
	if instructions == "" {
		instructions = Instructions
	}
	srv := sdk.NewServer(&sdk.Implementation{Name: "memtray", Title: "memtray memory", Version: version},
		&sdk.ServerOptions{Instructions: instructions, Logger: log, SupportedProtocolVersions: opts.ProtocolVersions})
	t := &tools{b: b, log: log}
	t.register(srv)
	return srv
}

// HTTPHandler serves the tools over MCP streamable HTTP, for the daemon to
// mount at /mcp. Authentication is the caller's job: put the token check in
// front of it. Each client session gets its own recall exclusion.
func HTTPHandler(b Backend, opts Options) http.Handler {
	srv := NewServer(b, opts)
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	h := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv },
		&sdk.StreamableHTTPOptions{Logger: log, SessionTimeout: SessionIdleTimeout, MaxRequestBodyBytes: MaxRequestBytes})
	return validUTF8(h)
}

// MaxRequestBytes bounds one MCP request body; a larger one is answered 413.
const MaxRequestBytes = sdk.DefaultMaxRequestBodyBytes

// validUTF8 refuses a request body that is not valid UTF-8 with a JSON-RPC
// parse error: the JSON decoder would quietly turn its bytes into U+FFFD,
// and a memory would be stored with text the agent never sent.
func validUTF8(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.Body == nil || r.Body == http.NoBody {
			next.ServeHTTP(w, r)
			return
		}
		if r.ContentLength > MaxRequestBytes {
			http.Error(w, fmt.Sprintf("request body of %d bytes exceeds %d bytes", r.ContentLength, MaxRequestBytes), http.StatusRequestEntityTooLarge)
			return
		}
		var body []byte
		var err error
		if r.ContentLength > 0 {
			body = make([]byte, r.ContentLength)
			_, err = io.ReadFull(r.Body, body)
		} else {
			body, err = io.ReadAll(http.MaxBytesReader(w, r.Body, MaxRequestBytes))
		}
		if err != nil {
			var mbe *http.MaxBytesError
			if errors.As(err, &mbe) {
				http.Error(w, fmt.Sprintf("request body exceeds %d bytes", MaxRequestBytes), http.StatusRequestEntityTooLarge)
				return
			}
			http.Error(w, "read request body: "+err.Error(), http.StatusBadRequest)
			return
		}
		if !utf8.Valid(body) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusBadRequest)
			io.WriteString(w, `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error: the request is not valid UTF-8"}}`+"\n")
			return
		}
		r.Body, r.ContentLength = io.NopCloser(bytes.NewReader(body)), int64(len(body))
		next.ServeHTTP(w, r)
	})
}

// tools holds the tool handlers' shared state.
type tools struct {
	b   Backend
	log *slog.Logger

	mu  sync.Mutex
	ids map[weak.Pointer[sdk.ServerSession]]string
}

// sessionID names the MCP session for recall's exclusion: the transport's
// session id (streamable HTTP), or a random id kept for the life of the
// session when the transport has none (stdio, in-memory).
func (t *tools) sessionID(ss *sdk.ServerSession) string {
	if ss == nil {
		return randomID()
	}
	if id := ss.ID(); id != "" {
		return id
	}
	key := weak.Make(ss)
	t.mu.Lock()
	defer t.mu.Unlock()
	if id, ok := t.ids[key]; ok {
		return id
	}
	if t.ids == nil {
		t.ids = map[weak.Pointer[sdk.ServerSession]]string{}
	}
	id := "mcp-" + randomID()
	t.ids[key] = id
	// Forget the id once the session is garbage: the map never grows
	// with sessions that are gone.
	runtime.AddCleanup(ss, func(k weak.Pointer[sdk.ServerSession]) {
		t.mu.Lock()
		delete(t.ids, k)
		t.mu.Unlock()
	}, key)
	return id
}

func randomID() string {
	var b [12]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
