package tail

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/memtray/memtray/backend/memory"
	"github.com/memtray/memtray/backend/transcript"
)

// codexRig is a tailer over a temp ~/.codex/sessions whose sink collects
// the turns it is given.
type codexRig struct {
	tl    *Tailer
	root  string
	mu    sync.Mutex
	turns [][]memory.Exchange
}

func newCodexRig(t testing.TB) *codexRig {
	t.Helper()
	r := &codexRig{root: t.TempDir()}
	tl, err := New(Options{Dir: t.TempDir(), Roots: map[string][]string{AgentCodex: {r.root}},
		Sink: func(_ context.Context, exs []memory.Exchange) error {
			r.mu.Lock()
			defer r.mu.Unlock()
			r.turns = append(r.turns, exs)
			return nil
		}, Idle: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	r.tl = tl
	return r
}

// rollout is where Codex writes a session's rollout.
func (r *codexRig) rollout(t testing.TB) string {
	dir := filepath.Join(r.root, "2026", "03", "05")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	return filepath.Join(dir, "rollout-2026-03-05T14-00-00-019c1111-2222-7333-8444-rollout00001.jsonl")
}

func (r *codexRig) hook(t testing.TB, path, event string) {
	t.Helper()
	if ok, err := r.tl.Submit(Request{Path: path, Event: event, Agent: AgentCodex}); err != nil || !ok {
		t.Fatalf("submit %s: %v %v", event, ok, err)
	}
	if err := r.tl.Drain(context.Background()); err != nil {
		t.Fatal(err)
	}
}

func (r *codexRig) exchanges() []memory.Exchange {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []memory.Exchange
	for _, t := range r.turns {
		out = append(out, t...)
	}
	return out
}

// TestCodexRollout: a Codex rollout read as it grows, with the Stop hook
// after each answer (and a PreCompact mid-turn), gives the turns a read of
// the whole file gives, each once its answer is written.
func TestCodexRollout(t *testing.T) {
	data, err := os.ReadFile("testdata/codex_rollout.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	whole, _, err := transcript.ParseCodex(bytes.NewReader(data), transcript.Options{})
	if err != nil || len(whole) != 4 {
		t.Fatalf("fixture: %d exchanges, %v", len(whole), err)
	}
	lines := bytes.SplitAfter(data, []byte("\n"))
	r := newCodexRig(t)
	path := r.rollout(t)
	written := 0
	write := func(n int) {
		appendTo(t, path, bytes.Join(lines[written:n], nil))
		written = n
	}
	for _, step := range []struct {
		upTo  int
		event string
		turns int
	}{
		{10, EventPreCompact, 0},   // turn 1 under way: a tool call waits for its result
		{18, EventStop, 1},         // turn 1 answered
		{len(lines), EventStop, 2}, // turn 2 answered
		{len(lines), EventStop, 2}, // a hook again: nothing twice
	} {
		write(step.upTo)
		r.hook(t, path, step.event)
		if n := len(r.turns); n != step.turns {
			t.Fatalf("after line %d (%s): %d turns, want %d: %+v", step.upTo, step.event, n, step.turns, r.turns)
		}
	}
	got := r.exchanges()
	if len(got) != len(whole) {
		t.Fatalf("%d exchanges, want %d", len(got), len(whole))
	}
	for i, ex := range got {
		w := whole[i]
		if ex.SessionID != w.SessionID || ex.Project != w.Project || ex.User != w.User || ex.Assistant != w.Assistant ||
			ex.Turn != w.Turn || ex.UserTurns != w.UserTurns || ex.ToolLoop != w.ToolLoop || len(ex.ToolCalls) != len(w.ToolCalls) {
			t.Errorf("exchange %d:\n got %+v\nwant %+v", i, ex, w)
		}
	}
	if got[0].SessionID != "019c1111-2222-7333-8444-rollout00001" || got[0].Project != "tiles" {
		t.Errorf("labels %q %q", got[0].SessionID, got[0].Project)
	}
}

func TestCodexBoundary(t *testing.T) {
	for _, tc := range []struct {
		line string
		want bool
	}{
		{`{"type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"hi"}]}}`, true},
		{`{"type":"response_item","payload":{"type":"message","role":"assistant","content":[{"type":"output_text","text":"user"}]}}`, false},
		{`{"type":"event_msg","payload":{"type":"user_message","message":"hi"}}`, false},
		{`{"type":"response_item","payload":{"type":"function_call_output","call_id":"c","output":"user"}}`, false},
		{`{"type":"response_item","payload":{"type":"message","role":"developer","content":"user"}}`, false},
		{`not json "user"`, false},
	} {
		if got := codexBoundary([]byte(tc.line)); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.line, got, tc.want)
		}
	}
}

// FuzzCodexTail appends arbitrary bytes to a rollout in two writes, with a
// hook after each: the tailer must neither fail nor panic, and its cursor
// must stay within the file, at a line boundary.
func FuzzCodexTail(f *testing.F) {
	data, err := os.ReadFile("testdata/codex_rollout.jsonl")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(data, len(data)/2)
	f.Add([]byte(`{"type":"response_item","payload":{"type":"message","role":"user","content":"x"}}`+"\n{\n"), 20)
	f.Add([]byte("\xff\n\x00\n"), 1)
	f.Fuzz(func(t *testing.T, data []byte, split int) {
		if len(data) > 1<<16 {
			return
		}
		split = min(max(split, 0), len(data))
		r := newCodexRig(t)
		path := r.rollout(t)
		appendTo(t, path, data[:split])
		for _, ev := range []string{EventPreCompact, EventStop} {
			if ok, err := r.tl.Submit(Request{Path: path, Event: ev, Agent: AgentCodex}); !ok || err != nil {
				t.Fatalf("submit: %v %v", ok, err)
			}
			r.tl.Drain(context.Background())
			appendTo(t, path, data[split:])
			split = len(data)
		}
		c, ok := r.tl.Cursor(path)
		if !ok {
			return
		}
		if c.Offset < 0 || c.Offset > c.LineEnd || c.LineEnd > int64(len(data)) {
			t.Fatalf("cursor %+v out of a file of %d bytes", c, len(data))
		}
		if c.LineEnd > 0 && data[c.LineEnd-1] != '\n' || c.Offset > 0 && data[c.Offset-1] != '\n' {
			t.Fatalf("cursor %+v not at a line boundary", c)
		}
	})
}
