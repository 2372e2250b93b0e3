package mcp

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/jsonschema-go/jsonschema"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/memtray/memtray/backend/memory"
	"github.com/memtray/memtray/backend/search"
)

// Bounds of the tools' arguments.
const (
	// MaxLimit is the most memories one memory_search asks for.
	MaxLimit = 50
	// MaxSnoozeDays bounds memory_snooze's days.
	MaxSnoozeDays = 3650
	// MaxRateIDs bounds the memories one memory_rate_context covers.
	MaxRateIDs = 100
	// MaxFileBytes bounds the file memory_ingest reads.
	MaxFileBytes = 1 << 20
	// maxProjectBytes bounds a project name (as memory.Validate does).
	maxProjectBytes = 256
	// maxIDBytes bounds a memory id argument.
	maxIDBytes = 128
	// maxReasonBytes bounds memory_rate_context's reason.
	maxReasonBytes = 2000
	// maxHitChars bounds one hit's text in memory_search's text answer.
	maxHitChars = 1000
)

// Tool names.
const (
	ToolSearch    = "memory_search"
	ToolStore     = "memory_store"
	ToolDelete    = "memory_delete"
	ToolIngest    = "memory_ingest"
	ToolReinforce = "memory_reinforce"
	ToolRate      = "memory_rate_context"
	ToolSnooze    = "memory_snooze"
	ToolStatus    = "memory_status"
)

// ToolNames lists every tool, in the order tools/list gives them.
var ToolNames = []string{ToolSearch, ToolStore, ToolDelete, ToolIngest, ToolReinforce, ToolRate, ToolSnooze, ToolStatus}

// SearchArgs are memory_search's arguments.
type SearchArgs struct {
	Query   string `json:"query" jsonschema:"what to look for: a question, topic, file, error message or identifier, in plain words"`
	Limit   *int   `json:"limit,omitempty" jsonschema:"the most memories to return, 1..50 (default: the configured recall size)"`
	Project string `json:"project,omitempty" jsonschema:"only memories of this project (use the repository or folder name)"`
	Kind    string `json:"kind,omitempty" jsonschema:"only memories of this kind"`
}

// SearchHit is one memory memory_search returns.
type SearchHit struct {
	ID      string  `json:"id"`
	Kind    string  `json:"kind"`
	Project string  `json:"project,omitempty"`
	Score   float64 `json:"score"`
	Text    string  `json:"text"`
	Created string  `json:"created,omitempty"`
}

// SearchResult is memory_search's structured answer.
type SearchResult struct {
	Hits []SearchHit `json:"hits"`
	// AlreadyGiven lists memories that matched but this session was given
	// before; they are not repeated.
	AlreadyGiven []string `json:"already_given,omitempty"`
	// Note says why nothing was returned, or what was left out.
	Note string `json:"note,omitempty"`
}

// StoreArgs are memory_store's arguments.
type StoreArgs struct {
	Text       string  `json:"text" jsonschema:"the memory: one self-contained fact, decision or convention, with the concrete names, paths, versions and reasons"`
	Kind       string  `json:"kind,omitempty" jsonschema:"what it is about (default: guessed from the text)"`
	Type       string  `json:"type,omitempty" jsonschema:"how long it stays relevant: user (about the user, decays slowest), reference, feedback, project (default: follows the kind)"`
	Project    string  `json:"project,omitempty" jsonschema:"the project it belongs to (repository or folder name); empty for memories that hold everywhere"`
	Importance float64 `json:"importance,omitempty" jsonschema:"0..1, how much it matters (default 0.5)"`
}

// StoreResult is memory_store's structured answer.
type StoreResult struct {
	// Result is created, updated (an existing memory superseded or
	// merged) or duplicate (the same memory is already stored).
	Result string   `json:"result"`
	IDs    []string `json:"ids"`
	Reason string   `json:"reason,omitempty"`
}

// IDArgs are the arguments of tools that take one memory id.
type IDArgs struct {
	ID string `json:"id" jsonschema:"the memory's id, as memory_search returned it"`
}

// DeleteResult is memory_delete's structured answer.
type DeleteResult struct {
	Deleted string `json:"deleted"`
	// Trashed is true: the memory went to the trash, restorable by the user.
	Trashed bool `json:"trashed"`
}

// IngestArgs are memory_ingest's arguments: a path or a text with a name.
type IngestArgs struct {
	Path    string `json:"path,omitempty" jsonschema:"absolute path of a local UTF-8 text file of at most 1 MiB (give path or text, not both)"`
	Text    string `json:"text,omitempty" jsonschema:"the document's text, at most 1 MiB (give path or text, not both)"`
	Name    string `json:"name,omitempty" jsonschema:"the document's name, required with text (default for a path: the file name)"`
	Project string `json:"project,omitempty" jsonschema:"the project the document belongs to"`
}

// IngestResult is memory_ingest's structured answer.
type IngestResult struct {
	Name   string   `json:"name"`
	Result string   `json:"result"`
	Chunks int      `json:"chunks"`
	IDs    []string `json:"ids"`
	Reason string   `json:"reason,omitempty"`
}

// MemoryResult is the structured answer of memory_reinforce and memory_snooze.
type MemoryResult struct {
	ID              string  `json:"id"`
	ReinforcedCount int     `json:"reinforced_count"`
	FeedbackSum     float64 `json:"feedback_sum"`
	FeedbackN       int     `json:"feedback_n"`
	// SnoozedUntil is when the memory comes back to recall ("" when awake).
	SnoozedUntil string `json:"snoozed_until,omitempty"`
}

// RateArgs are memory_rate_context's arguments.
type RateArgs struct {
	IDs    []string `json:"ids" jsonschema:"ids of the memories you were given and are rating"`
	Score  int      `json:"score" jsonschema:"+1: they helped; -1: they were wrong, stale or irrelevant"`
	Reason string   `json:"reason,omitempty" jsonschema:"a few words on why (optional)"`
}

// RateResult is memory_rate_context's structured answer.
type RateResult struct {
	Rated []MemoryResult `json:"rated"`
}

// SnoozeArgs are memory_snooze's arguments.
type SnoozeArgs struct {
	ID   string  `json:"id" jsonschema:"the memory's id"`
	Days float64 `json:"days" jsonschema:"days to keep it out of search and recall, 0..3650; 0 wakes a snoozed memory"`
}

// StatusArgs are memory_status's arguments (none).
type StatusArgs struct{}

// register adds every tool to srv.
func (t *tools) register(srv *sdk.Server) {
	kinds := make([]any, len(memory.Kinds))
	for i, k := range memory.Kinds {
		kinds[i] = string(k)
	}
	types := make([]any, len(memory.Types))
	for i, ty := range memory.Types {
		types[i] = string(ty)
	}
	readOnly := &sdk.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: ptr(false)}
	write := func(destructive, idempotent bool) *sdk.ToolAnnotations {
		return &sdk.ToolAnnotations{DestructiveHint: ptr(destructive), IdempotentHint: idempotent, OpenWorldHint: ptr(false)}
	}

	addTool(srv, &sdk.Tool{Name: ToolSearch, Title: "Search memory", Annotations: readOnly,
		Description: "Search your long-term memory of this user and their projects. Use it BEFORE answering questions " +
			"about past decisions, conventions, architecture, configuration or earlier debugging, and before " +
			"re-investigating a problem that may have been solved before. Returns the best matching memories " +
			"with their ids; a memory already given to this session is never returned again.",
		InputSchema: schemaFor[SearchArgs](func(p props) {
			p.nonEmpty("query")
			p.num("limit", 1, MaxLimit)
			p["limit"].Types, p["limit"].Type = nil, "integer"
			p.enum("kind", kinds)
			p.maxLen("project", maxProjectBytes)
		})}, t.search)

	addTool(srv, &sdk.Tool{Name: ToolStore, Title: "Store a memory", Annotations: write(false, true),
		Description: "Store something worth remembering beyond this session: a decision and its reason, a convention, " +
			"an invariant, a fix for a tricky bug, a configuration detail, a user preference. Write one " +
			"self-contained statement with the concrete names. Secrets are redacted; storing the same thing " +
			"again is recognised as a duplicate, and a newer version of a memory supersedes the old one.",
		InputSchema: schemaFor[StoreArgs](func(p props) {
			p.nonEmpty("text")
			p.maxLen("text", memory.MaxTextBytes)
			p.enum("kind", kinds)
			p.enum("type", types)
			p.num("importance", 0, 1)
			p.maxLen("project", maxProjectBytes)
		})}, t.store)

	addTool(srv, &sdk.Tool{Name: ToolDelete, Title: "Delete a memory", Annotations: write(true, true),
		Description: "Delete one memory: it leaves recall and goes to the trash, which the user can restore it from " +
			"(`memtray trash restore ID`) until the trash is purged. Use it when the user asks to forget something, or when " +
			"a memory is plainly wrong; for one that is only irrelevant now, prefer memory_snooze or memory_rate_context with -1.",
		InputSchema: schemaFor[IDArgs](idSchema)}, t.delete)

	addTool(srv, &sdk.Tool{Name: ToolIngest, Title: "Ingest a document", Annotations: write(false, true),
		Description: "Store a document (design notes, a README, an ADR, a runbook) as source memories that later " +
			"searches can find. Give either path (an absolute path to a local text file, at most 1 MiB) or " +
			"text with a name. Use it when the user asks you to remember a document.",
		InputSchema: schemaFor[IngestArgs](func(p props) {
			p.maxLen("path", 4096)
			p.maxLen("text", MaxFileBytes)
			p.maxLen("name", 200)
			p.maxLen("project", maxProjectBytes)
		})}, t.ingest)

	addTool(srv, &sdk.Tool{Name: ToolReinforce, Title: "Reinforce a memory", Annotations: write(false, false),
		Description: "Record that a memory proved right and useful again (it then decays more slowly and ranks " +
			"higher). Use it when a recalled memory was confirmed by what you just did.",
		InputSchema: schemaFor[IDArgs](idSchema)}, t.reinforce)

	addTool(srv, &sdk.Tool{Name: ToolRate, Title: "Rate recalled memories", Annotations: write(false, false),
		Description: "Rate memories you were given (by memory_search or in a <memtray-context> block) AFTER you used " +
			"them: score +1 if they helped, -1 if they were wrong, stale or irrelevant. Ratings tune what " +
			"future recalls return.",
		InputSchema: schemaFor[RateArgs](func(p props) {
			p.array("ids", 1, MaxRateIDs)
			p["ids"].Items.MinLength = ptr(1)
			p["ids"].Items.MaxLength = ptr(maxIDBytes)
			p["score"].Enum = []any{-1, 1}
			p.maxLen("reason", maxReasonBytes)
		})}, t.rate)

	addTool(srv, &sdk.Tool{Name: ToolSnooze, Title: "Snooze a memory", Annotations: write(false, true),
		Description: "Keep a memory out of search and recall for some days, without deleting it: for one that is " +
			"correct but keeps coming up when it does not matter. days 0 wakes a snoozed memory.",
		InputSchema: schemaFor[SnoozeArgs](func(p props) {
			idSchema(p)
			p.num("days", 0, MaxSnoozeDays)
		})}, t.snooze)

	addTool(srv, &sdk.Tool{Name: ToolStatus, Title: "Memory status", Annotations: readOnly,
		Description: "Describe the memory store in a few lines: how many memories by project and kind, how many " +
			"are snoozed or superseded, the store's size, the embedder and whether capture runs. Use it when " +
			"the user asks what memtray knows or whether it works.",
		InputSchema: schemaFor[StatusArgs](nil)}, t.status)
}

func (t *tools) search(ctx context.Context, req *sdk.CallToolRequest, in SearchArgs) (*sdk.CallToolResult, SearchResult, error) {
	if err := in.validate(); err != nil {
		return nil, SearchResult{}, err
	}
	rr := search.RecallRequest{
		SessionID: t.sessionID(req.Session), Prompt: in.Query, Event: search.EventSearch, K: deref(in.Limit),
		Project: in.Project, FilterProject: in.Project,
	}
	if in.Kind != "" {
		rr.Kinds = []memory.Kind{memory.Kind(in.Kind)}
	}
	got, err := t.b.Recall(ctx, rr)
	if err != nil {
		return nil, SearchResult{}, failure(ToolSearch, err)
	}
	out := SearchResult{Hits: make([]SearchHit, 0, len(got.Hits)), AlreadyGiven: got.AlreadyGiven}
	for _, h := range got.Hits {
		m := h.Memory
		hit := SearchHit{ID: m.ID, Kind: string(m.Kind), Project: m.Project, Score: round(h.Score, 3),
			Text: clip(strings.Join(strings.Fields(m.Text), " "), maxHitChars)}
		if !m.CreatedAt.IsZero() {
			hit.Created = m.CreatedAt.UTC().Format(time.DateOnly)
		}
		out.Hits = append(out.Hits, hit)
	}
	switch n := len(got.AlreadyGiven); {
	case n > 0:
		out.Note = fmt.Sprintf("%d more matching %s left out: already given earlier in this session", n, plural(n, "memory was", "memories were"))
	case len(out.Hits) == 0 && got.Given > 0:
		// Recall leaves given memories out before it ranks: say so, as
		// the reason may be that everything relevant was given already.
		out.Note = fmt.Sprintf("%s; this session was already given %d %s, which are never repeated",
			orDefault(got.Skipped, "no memory matched"), got.Given, plural(got.Given, "memory", "memories"))
	case len(out.Hits) == 0:
		out.Note = orDefault(got.Skipped, "no memory matched")
	}
	if got.Warning != "" {
		t.log.Warn("memory_search", "warning", got.Warning)
	}
	return text(searchText(out)), out, nil
}

func (t *tools) store(ctx context.Context, _ *sdk.CallToolRequest, in StoreArgs) (*sdk.CallToolResult, StoreResult, error) {
	if err := in.validate(); err != nil {
		return nil, StoreResult{}, err
	}
	dec, err := t.b.Remember(ctx, memory.Memory{Text: in.Text, Kind: memory.Kind(in.Kind), Type: memory.Type(in.Type),
		Project: in.Project, Importance: in.Importance, Source: memory.SourceMCP})
	if err != nil {
		return nil, StoreResult{}, failure(ToolStore, err)
	}
	out := StoreResult{Result: outcome(dec.Verdict), IDs: nonNil(dec.MemoryIDs), Reason: dec.Reason}
	var msg string
	switch out.Result {
	case "created":
		msg = "Stored as " + strings.Join(out.IDs, ", ") + "."
	case "updated":
		msg = "Updated existing memory: " + strings.Join(out.IDs, ", ") + "."
	case "duplicate":
		msg = "Already stored (duplicate): " + strings.Join(out.IDs, ", ") + "; nothing new written."
	default:
		msg = "Not stored: " + dec.Reason
	}
	return text(msg), out, nil
}

func (t *tools) delete(ctx context.Context, _ *sdk.CallToolRequest, in IDArgs) (*sdk.CallToolResult, DeleteResult, error) {
	if err := checkID(in.ID); err != nil {
		return nil, DeleteResult{}, err
	}
	if err := t.b.Delete(ctx, in.ID); err != nil {
		return nil, DeleteResult{}, failureID(ToolDelete, in.ID, err)
	}
	return text("Moved " + in.ID + " to the trash; the user can bring it back with `memtray trash restore " + in.ID + "`."),
		DeleteResult{Deleted: in.ID, Trashed: true}, nil
}

func (t *tools) ingest(ctx context.Context, _ *sdk.CallToolRequest, in IngestArgs) (*sdk.CallToolResult, IngestResult, error) {
	name, body, err := in.document()
	if ae := (*argError)(nil); err != nil && !errors.As(err, &ae) {
		return nil, IngestResult{}, fmt.Errorf("%s: %w", ToolIngest, err)
	}
	if err != nil {
		return nil, IngestResult{}, err
	}
	dec, err := t.b.IngestDocument(ctx, name, in.Project, body)
	if err != nil {
		return nil, IngestResult{}, failure(ToolIngest, err)
	}
	out := IngestResult{Name: name, Result: outcome(dec.Verdict), Chunks: dec.Chunks, IDs: nonNil(dec.MemoryIDs), Reason: dec.Reason}
	msg := fmt.Sprintf("Ingested %q: %d %s, %s", name, out.Chunks, plural(out.Chunks, "chunk", "chunks"), out.Result)
	if len(out.IDs) > 0 {
		msg += ": " + strings.Join(clipList(out.IDs, 20), ", ")
	}
	if out.Result == "rejected" && dec.Reason != "" {
		msg += " (" + dec.Reason + ")"
	}
	return text(msg + "."), out, nil
}

func (t *tools) reinforce(ctx context.Context, _ *sdk.CallToolRequest, in IDArgs) (*sdk.CallToolResult, MemoryResult, error) {
	if err := checkID(in.ID); err != nil {
		return nil, MemoryResult{}, err
	}
	m, err := t.b.Reinforce(ctx, in.ID)
	if err != nil {
		return nil, MemoryResult{}, failureID(ToolReinforce, in.ID, err)
	}
	out := memoryResult(m)
	return text(fmt.Sprintf("Reinforced %s (reinforced %d %s).", m.ID, m.ReinforcedCount, plural(m.ReinforcedCount, "time", "times"))), out, nil
}

func (t *tools) rate(ctx context.Context, _ *sdk.CallToolRequest, in RateArgs) (*sdk.CallToolResult, RateResult, error) {
	if err := in.validate(); err != nil {
		return nil, RateResult{}, err
	}
	ms, err := t.b.Rate(ctx, in.IDs, in.Score, in.Reason)
	if errors.Is(err, memory.ErrNotFound) {
		return nil, RateResult{}, fmt.Errorf("%s: an id is not a memory (%w); nothing was rated", ToolRate, err)
	}
	if err != nil {
		return nil, RateResult{}, failure(ToolRate, err)
	}
	out := RateResult{Rated: make([]MemoryResult, 0, len(ms))}
	for _, m := range ms {
		out.Rated = append(out.Rated, memoryResult(m))
	}
	return text(fmt.Sprintf("Rated %d %s %+d.", len(ms), plural(len(ms), "memory", "memories"), in.Score)), out, nil
}

func (t *tools) snooze(ctx context.Context, _ *sdk.CallToolRequest, in SnoozeArgs) (*sdk.CallToolResult, MemoryResult, error) {
	if err := checkID(in.ID); err != nil {
		return nil, MemoryResult{}, err
	}
	if !(in.Days >= 0 && in.Days <= MaxSnoozeDays) {
		return nil, MemoryResult{}, badArgs("days must be within 0..%d, not %v", MaxSnoozeDays, in.Days)
	}
	m, err := t.b.Snooze(ctx, in.ID, in.Days)
	if err != nil {
		return nil, MemoryResult{}, failureID(ToolSnooze, in.ID, err)
	}
	out := memoryResult(m)
	if out.SnoozedUntil == "" {
		return text("Woke " + m.ID + ": it can be recalled again."), out, nil
	}
	return text("Snoozed " + m.ID + " until " + out.SnoozedUntil + "."), out, nil
}

func (t *tools) status(ctx context.Context, _ *sdk.CallToolRequest, _ StatusArgs) (*sdk.CallToolResult, StatusResult, error) {
	st, err := t.b.Status(ctx)
	if err != nil {
		return nil, StatusResult{}, failure(ToolStatus, err)
	}
	out := summarize(st)
	return text(statusText(out)), out, nil
}

// validate checks memory_search's arguments.
func (a *SearchArgs) validate() error {
	var errs []string
	if strings.TrimSpace(a.Query) == "" {
		errs = append(errs, "query is empty: say what to look for")
	} else if len(a.Query) > search.MaxQueryBytes {
		errs = append(errs, fmt.Sprintf("query is longer than %d bytes", search.MaxQueryBytes))
	}
	if a.Limit != nil && (*a.Limit < 1 || *a.Limit > MaxLimit) {
		errs = append(errs, fmt.Sprintf("limit must be within 1..%d, not %d", MaxLimit, *a.Limit))
	}
	errs = append(errs, checkKind(a.Kind)...)
	errs = append(errs, checkProject(a.Project)...)
	errs = append(errs, checkUTF8("query", a.Query)...)
	return joined(errs)
}

// validate checks memory_store's arguments.
func (a *StoreArgs) validate() error {
	var errs []string
	if strings.TrimSpace(a.Text) == "" {
		errs = append(errs, "text is empty: give the memory to store")
	} else if len(a.Text) > memory.MaxTextBytes {
		errs = append(errs, fmt.Sprintf("text is longer than %d bytes: store one fact, or use memory_ingest for a document", memory.MaxTextBytes))
	}
	errs = append(errs, checkKind(a.Kind)...)
	if a.Type != "" && !memory.Type(a.Type).Valid() {
		errs = append(errs, fmt.Sprintf("unknown type %q: use one of %s", a.Type, join(memory.Types)))
	}
	if !(a.Importance >= 0 && a.Importance <= 1) {
		errs = append(errs, fmt.Sprintf("importance must be within 0..1, not %v", a.Importance))
	}
	errs = append(errs, checkProject(a.Project)...)
	errs = append(errs, checkUTF8("text", a.Text)...)
	return joined(errs)
}

// validate checks memory_rate_context's arguments.
func (a *RateArgs) validate() error {
	var errs []string
	if len(a.IDs) == 0 {
		errs = append(errs, "ids is empty: give the ids of the memories you rate")
	} else if len(a.IDs) > MaxRateIDs {
		errs = append(errs, fmt.Sprintf("at most %d ids at once, not %d", MaxRateIDs, len(a.IDs)))
	}
	for i, id := range a.IDs {
		if err := checkID(id); err != nil {
			errs = append(errs, fmt.Sprintf("ids[%d]: %v", i, err))
			break
		}
	}
	if a.Score != 1 && a.Score != -1 {
		errs = append(errs, fmt.Sprintf("score must be +1 (helped) or -1 (misled or irrelevant), not %d", a.Score))
	}
	if len(a.Reason) > maxReasonBytes {
		errs = append(errs, fmt.Sprintf("reason is longer than %d bytes", maxReasonBytes))
	}
	errs = append(errs, checkUTF8("reason", a.Reason)...)
	return joined(errs)
}

func checkID(id string) error {
	switch {
	case strings.TrimSpace(id) == "":
		return badArgs("id is empty: give a memory id as memory_search returned it")
	case len(id) > maxIDBytes || !utf8.ValidString(id):
		return badArgs("id %q is not a memory id", clip(id, 40))
	}
	return nil
}

func checkKind(kind string) []string {
	if kind != "" && !memory.Kind(kind).Valid() {
		return []string{fmt.Sprintf("unknown kind %q: use one of %s", clip(kind, 40), join(memory.Kinds))}
	}
	return nil
}

func checkProject(p string) []string {
	if len(p) > maxProjectBytes {
		return []string{fmt.Sprintf("project is longer than %d bytes", maxProjectBytes)}
	}
	return checkUTF8("project", p)
}

func checkUTF8(field, s string) []string {
	if !utf8.ValidString(s) {
		return []string{field + " is not valid UTF-8"}
	}
	return nil
}

// argError is a problem with a tool's arguments (as opposed to a failure
// of the backend).
type argError struct{ msg string }

func (e *argError) Error() string { return e.msg }

func badArgs(format string, a ...any) error { return &argError{fmt.Sprintf(format, a...)} }

func joined(errs []string) error {
	if len(errs) == 0 {
		return nil
	}
	return &argError{strings.Join(errs, "; ")}
}

// failure turns a backend error into the tool error an agent reads.
func failure(tool string, err error) error {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("%s: cancelled: %w", tool, err)
	}
	if errors.Is(err, memory.ErrUnavailable) {
		return fmt.Errorf("%s: memtray cannot answer right now (%w); try again shortly", tool, err)
	}
	return fmt.Errorf("%s: %w", tool, err)
}

// failureID is failure for tools that act on one memory id.
func failureID(tool, id string, err error) error {
	if errors.Is(err, memory.ErrNotFound) {
		return fmt.Errorf("%s: no memory has id %q (it may have been deleted or merged; search again for its current id)", tool, id)
	}
	return failure(tool, err)
}

// outcome names a write Decision's verdict for the agent.
func outcome(v memory.Verdict) string {
	switch v {
	case memory.VerdictStored:
		return "created"
	case memory.VerdictUpdated, memory.VerdictMerged:
		return "updated"
	case memory.VerdictDuplicate:
		return "duplicate"
	}
	return string(v)
}

func memoryResult(m memory.Memory) MemoryResult {
	r := MemoryResult{ID: m.ID, ReinforcedCount: m.ReinforcedCount, FeedbackSum: m.FeedbackSum, FeedbackN: m.FeedbackN}
	if !m.CooldownUntil.IsZero() && m.CooldownUntil.After(time.Now()) {
		r.SnoozedUntil = m.CooldownUntil.UTC().Format(time.RFC3339)
	}
	return r
}

func searchText(r SearchResult) string {
	var b strings.Builder
	if len(r.Hits) == 0 {
		b.WriteString("No memories: " + r.Note + ".")
		return b.String()
	}
	fmt.Fprintf(&b, "%d %s:\n", len(r.Hits), plural(len(r.Hits), "memory", "memories"))
	for _, h := range r.Hits {
		meta := h.Kind
		if h.Project != "" {
			meta += ", " + h.Project
		}
		if h.Created != "" {
			meta += ", " + h.Created
		}
		fmt.Fprintf(&b, "- [%s] (id %s, score %.2f) %s\n", meta, h.ID, h.Score, h.Text)
	}
	if r.Note != "" {
		b.WriteString("Note: " + r.Note + ".\n")
	}
	b.WriteString("After using these, rate them with memory_rate_context.")
	return b.String()
}

// text is a tool result holding one text block.
func text(s string) *sdk.CallToolResult {
	return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: s}}}
}

func clip(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}

func clipList(ids []string, n int) []string {
	if len(ids) <= n {
		return ids
	}
	return append(ids[:n:n], fmt.Sprintf("and %d more", len(ids)-n))
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

func round(x float64, digits int) float64 {
	p := math.Pow(10, float64(digits))
	return math.Round(x*p) / p
}

func join[T ~string](vs []T) string {
	s := make([]string, len(vs))
	for i, v := range vs {
		s[i] = string(v)
	}
	return strings.Join(s, ", ")
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func ptr[T any](v T) *T { return &v }

func deref(p *int) int {
	if p == nil {
		return 0
	}
	return *p
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// props are an input schema's properties, for schemaFor's adjustments.
type props map[string]*jsonschema.Schema

func (p props) nonEmpty(name string) { p[name].MinLength = ptr(1) }

func (p props) maxLen(name string, n int) { p[name].MaxLength = ptr(n) }

func (p props) num(name string, lo, hi float64) {
	p[name].Minimum, p[name].Maximum = ptr(lo), ptr(hi)
}

func (p props) enum(name string, values []any) { p[name].Enum = values }

func (p props) array(name string, lo, hi int) {
	p[name].Types, p[name].Type = nil, "array"
	p[name].MinItems, p[name].MaxItems = ptr(lo), ptr(hi)
}

func idSchema(p props) {
	p.nonEmpty("id")
	p.maxLen("id", maxIDBytes)
}

// schemaFor infers T's input schema from its struct tags and lets adjust
// add what tags cannot say (enums, bounds).
func schemaFor[T any](adjust func(props)) *jsonschema.Schema {
	s, err := jsonschema.For[T](nil)
	if err != nil {
		panic(fmt.Sprintf("mcp: schema: %v", err)) // a programming error, caught by any test
	}
	if s.Properties == nil {
		s.Properties = map[string]*jsonschema.Schema{}
	}
	if adjust != nil {
		adjust(props(s.Properties))
	}
	return s
}
