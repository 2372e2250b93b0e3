package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/memtray/memtray/backend/config"
	"github.com/memtray/memtray/backend/httpapi"
	"github.com/memtray/memtray/backend/search"
	"github.com/memtray/memtray/backend/transcript"
)

// HookMaxInput bounds the JSON a hook reads from stdin (1 MiB).
const HookMaxInput = 1 << 20

// hookEvents maps `memtray hook` events to Claude Code's hook event names.
var hookEvents = map[string]string{
	"user-prompt-submit": "UserPromptSubmit",
	"session-start":      "SessionStart",
	"pre-compact":        "PreCompact",
	"session-end":        "SessionEnd",
	"stop":               "Stop",
}

// HookInput is the part of Claude Code's hook stdin JSON memtray reads
// (the fields common to every event plus the event-specific ones).
type HookInput struct {
	SessionID      string `json:"session_id"`
	TranscriptPath string `json:"transcript_path"`
	CWD            string `json:"cwd"`
	HookEventName  string `json:"hook_event_name"`
	// Prompt is UserPromptSubmit's prompt.
	Prompt string `json:"prompt"`
	// Source is SessionStart's source: startup, resume, clear or compact.
	Source string `json:"source"`
	// Trigger is PreCompact's trigger: manual or auto.
	Trigger string `json:"trigger"`
	// Reason is SessionEnd's reason.
	Reason string `json:"reason"`
}

// ParseHookInput decodes a hook's stdin: one JSON object of at most
// HookMaxInput bytes (unknown fields ignored, trailing data refused).
func ParseHookInput(data []byte) (HookInput, error) {
	var in HookInput
	if len(data) > HookMaxInput {
		return in, fmt.Errorf("hook input: larger than %d bytes", HookMaxInput)
	}
	// JSON's own whitespace only: bytes.TrimSpace would also drop a form
	// feed or U+0085, which JSON does not allow around a value.
	trimmed := bytes.Trim(data, " \t\r\n")
	if len(trimmed) == 0 || trimmed[0] != '{' {
		return in, errors.New("hook input: not a JSON object")
	}
	if !json.Valid(trimmed) {
		return in, errors.New("hook input: not one valid JSON object")
	}
	dec := json.NewDecoder(bytes.NewReader(trimmed))
	if err := dec.Decode(&in); err != nil {
		return HookInput{}, fmt.Errorf("hook input: %w", err)
	}
	if dec.More() {
		return HookInput{}, errors.New("hook input: data after the JSON object")
	}
	return in, nil
}

// HookOutput is Claude Code's hook output JSON, as far as memtray fills it.
type HookOutput struct {
	HookSpecificOutput *HookSpecificOutput `json:"hookSpecificOutput,omitempty"`
}

// HookSpecificOutput carries the context a UserPromptSubmit or SessionStart
// hook adds to the conversation.
type HookSpecificOutput struct {
	HookEventName     string `json:"hookEventName"`
	AdditionalContext string `json:"additionalContext"`
}

// hookResult is what the hook's worker hands back: the stdout bytes (nil
// for none) and notes for --debug.
type hookResult struct {
	out   []byte
	notes []string
}

func (r *hookResult) notef(format string, a ...any) {
	r.notes = append(r.notes, fmt.Sprintf(format, a...))
}

// runHook answers one Claude Code hook. It never fails the agent: every
// problem (bad input, no daemon, an error, the deadline) prints nothing on
// stdout and returns nil, so the exit code is 0. Problems are reported on
// stderr only with --debug (a wrong event name or flag always is).
func runHook(env *Env, args []string) error {
	start := time.Now()
	var c common
	fs := newFlags("hook", env, &c, false)
	timeout := fs.Duration("timeout", 0, "hard deadline (default: config recall.hook_timeout, 1.5s)")
	debug := fs.Bool("debug", false, "say on stderr why nothing was printed")
	agent := fs.String("agent", "claude-code", "the agent whose session file the hook names: claude-code or codex")
	pos, err := parse(fs, args)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return nil // the flag package said what was wrong on stderr
	}
	if len(pos) != 1 || hookEvents[pos[0]] == "" {
		fmt.Fprintf(env.Stderr, "memtray hook: want one event of user-prompt-submit, session-start, pre-compact, session-end, stop; got %q\n", pos)
		return nil
	}
	event := pos[0]
	if *agent != "claude-code" && *agent != "codex" {
		fmt.Fprintf(env.Stderr, "memtray hook: --agent must be claude-code or codex, not %q\n", *agent)
		return nil
	}
	limit := time.Duration(config.Default().Recall.HookTimeout)
	if *timeout > 0 {
		limit = *timeout
	}
	// With --timeout the worker's context ends at the deadline; without it
	// the worker sets the config's deadline itself once it has read it
	// (the timer below holds the default meanwhile).
	var ctx context.Context
	var cancel context.CancelFunc
	if *timeout > 0 {
		ctx, cancel = context.WithDeadline(env.Ctx, start.Add(limit))
	} else {
		ctx, cancel = context.WithCancel(env.Ctx)
	}
	defer cancel() // also stops the worker's requests when the deadline wins

	// The worker may learn a different deadline from the config; it sends
	// it here. Only this goroutine writes to stdout and stderr.
	limits := make(chan time.Duration, 1)
	done := make(chan hookResult, 1)
	go func() {
		done <- hookWork(ctx, start, env.Stdin, c, hookCall{event: event, agent: *agent}, *timeout <= 0, limits)
	}()
	timer := time.NewTimer(limit)
	defer timer.Stop()
	note := func(s string) {
		if *debug {
			fmt.Fprintf(env.Stderr, "memtray hook %s: %s\n", event, s)
		}
	}
	for {
		select {
		case d := <-limits:
			timer.Reset(time.Until(start.Add(d)))
		case r := <-done:
			for _, n := range r.notes {
				note(n)
			}
			if len(r.out) > 0 {
				env.Stdout.Write(r.out) // nothing to do about a failed write
			}
			return nil
		case <-timer.C:
			note(fmt.Sprintf("deadline passed after %v: printed nothing", time.Since(start).Round(time.Millisecond)))
			return nil
		case <-env.Ctx.Done():
			note("interrupted: printed nothing")
			return nil
		}
	}
}

// hookWork does a hook's work under ctx: reads stdin, loads the config
// (sending its deadline on limits when useConfigLimit), finds the daemon
// and asks it. It never starts a daemon.
func hookWork(ctx context.Context, start time.Time, stdin io.Reader, c common, call hookCall, useConfigLimit bool, limits chan<- time.Duration) (r hookResult) {
	event := call.event
	data, err := io.ReadAll(io.LimitReader(stdin, HookMaxInput+1))
	if err != nil {
		r.notef("read stdin: %v", err)
		return r
	}
	in, err := ParseHookInput(data)
	if err != nil {
		r.notef("%v", err)
		return r
	}
	if strings.TrimSpace(in.SessionID) == "" {
		r.notef("no session_id in the input")
		return r
	}
	if event == "user-prompt-submit" && strings.TrimSpace(in.Prompt) == "" {
		r.notef("empty prompt")
		return r
	}
	cfg, err := c.load()
	if err != nil {
		r.notef("config: %v", err)
		return r
	}
	if useConfigLimit {
		limits <- time.Duration(cfg.Recall.HookTimeout)
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, start.Add(time.Duration(cfg.Recall.HookTimeout)))
		defer cancel()
	}
	cl, ok := remote(ctx, cfg)
	if !ok {
		r.notef("no memtray daemon answers for %s", cfg.DataDir)
		return r
	}
	project := transcript.ProjectName(in.CWD)
	reset := func() bool {
		if err := cl.ResetSession(ctx, in.SessionID); err != nil {
			r.notef("reset session: %v", err)
			return false
		}
		return true
	}
	switch event {
	case "stop":
		sendTranscript(ctx, cl, in, call, &r)
		return r
	case "pre-compact", "session-end":
		sendTranscript(ctx, cl, in, call, &r)
		// After compaction the agent no longer has what it was given; at
		// the end the session's state is of no further use.
		reset()
		return r
	case "session-start":
		if in.Source == "clear" || in.Source == "compact" {
			if !reset() {
				return r
			}
		}
	}
	req := search.RecallRequest{SessionID: in.SessionID, Prompt: in.Prompt, Project: project, Event: search.EventPrompt, Agent: call.agent}
	if event == "session-start" {
		req.Prompt, req.Event = "", search.EventSessionStart
	}
	got, err := cl.Recall(ctx, req)
	if err != nil {
		r.notef("recall: %v", err)
		return r
	}
	if got.Context == "" {
		r.notef("nothing to add: %s", got.Skipped)
		return r
	}
	out, err := encodeHookOutput(hookEvents[event], got.Context)
	if err != nil {
		r.notef("%v", err)
		return r
	}
	r.out = out
	return r
}

// hookCall is what the command line of `memtray hook` says.
type hookCall struct {
	event string
	agent string // claude-code or codex
}

// sendTranscript hands the session file of a turn or session that ended
// to the daemon, which reads it later (it answers at once); the hook has
// nothing to print either way.
func sendTranscript(ctx context.Context, cl *httpapi.Client, in HookInput, call hookCall, r *hookResult) {
	if in.TranscriptPath == "" {
		r.notef("no transcript_path in the input: nothing to capture")
		return
	}
	got, err := cl.CaptureTranscript(ctx, httpapi.TranscriptRequest{Path: in.TranscriptPath, SessionID: in.SessionID,
		CWD: in.CWD, Event: call.event, Agent: call.agent})
	switch {
	case err != nil:
		r.notef("capture transcript: %v", err)
	case !got.Queued:
		r.notef("capture transcript: the daemon's queue is full (its watcher reads the file later)")
	default:
		r.notef("transcript queued for capture")
	}
}

// encodeHookOutput renders Claude Code's hook output for additional context,
// one line, with <, > and & left as they are.
func encodeHookOutput(eventName, context string) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	err := enc.Encode(HookOutput{HookSpecificOutput: &HookSpecificOutput{HookEventName: eventName, AdditionalContext: context}})
	if err != nil {
		return nil, fmt.Errorf("encode hook output: %w", err)
	}
	return b.Bytes(), nil
}

// printTranscripts is the `memtray stats` line of capture from session
// files.
func printTranscripts(w io.Writer, t httpapi.TranscriptStats) {
	if !t.Enabled {
		fmt.Fprintln(w, "transcripts: off (capture.transcripts.enabled)")
		return
	}
	fmt.Fprintf(w, "transcripts: %d files tracked (%d with a turn not ended), %d turns captured, %d duplicates skipped (%d proxy exchanges), %d dropped (queue full), %d refused, %d errors\n",
		t.Files, t.Pending, t.Turns, t.Duplicates, t.ProxyDuplicates, t.Dropped, t.Refused, t.Errors)
	if t.LastError != "" {
		fmt.Fprintf(w, "last error: %s\n", t.LastError)
	}
}
