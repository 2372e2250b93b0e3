package tail

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/memtray/memtray/backend/memory"
	"github.com/memtray/memtray/backend/transcript"
)

func TestTurnChunks(t *testing.T) {
	prompt := `{"type":"user","message":{"role":"user","content":"why?"}}` + "\n"
	answer := `{"type":"assistant","message":{"id":"m","role":"assistant","content":[{"type":"text","text":"because"}]}}` + "\n"
	result := `{"type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t","content":"x"}]}}` + "\n"
	interrupted := `{"type":"user","message":{"role":"user","content":[{"type":"text","text":"[Request interrupted by user]"}]}}` + "\n"
	notification := `{"type":"user","message":{"role":"user","content":"<task-notification>\n<task-id>b1</task-id>\n</task-notification>"}}` + "\n"
	tests := []struct {
		name string
		data string
		want []string
	}{
		{"empty", "", nil},
		{"one turn", prompt + answer, []string{prompt + answer}},
		{"two turns", prompt + answer + result + prompt + answer, []string{prompt + answer + result, prompt + answer}},
		{"last line unfinished", prompt + answer + prompt + "{\"type\"", []string{prompt + answer, prompt + "{\"type\""}},
		// The agent may have stopped before the harness's lines too.
		{"interruption and notification", prompt + answer + interrupted + notification + answer, []string{prompt + answer, interrupted, notification + answer}},
		{"tool result", prompt + result + answer, []string{prompt + result + answer}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := TurnChunks(AgentClaudeCode, []byte(tt.data))
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(tt.want) {
				t.Fatalf("got %d pieces %q, want %d", len(got), got, len(tt.want))
			}
			for i := range got {
				if string(got[i]) != tt.want[i] {
					t.Errorf("piece %d = %q, want %q", i, got[i], tt.want[i])
				}
			}
		})
	}
	if _, err := TurnChunks("aider", nil); !errors.Is(err, memory.ErrInvalid) {
		t.Errorf("unknown agent: %v", err)
	}
}

// TestGrowingFileGivesWholeTurns is issue 19 item 1 on the tailer: a
// session file written a user turn at a time (TurnChunks), with a Stop
// hook after each piece and SessionEnd at the end, gives the turns a
// read of the whole file gives (`memtray ingest`), each once and whole:
// a turn the user interrupted and a background task's notification
// resumed stays one turn, a compaction summary written after a turn's
// last response reaches the next turn, and a turn that begins as an
// earlier one did (the same "yes", the same first response) is not
// taken for that one read again.
func TestGrowingFileGivesWholeTurns(t *testing.T) {
	tests := []struct {
		agent, fixture, name string
	}{
		{AgentClaudeCode, "testdata/session.jsonl", filepath.Join("-home-dev-src-ledgerd", "7d1f6c2e-0b5a-4c39-9a7e-tail00000001.jsonl")},
		{AgentClaudeCode, "testdata/interrupted_session.jsonl", filepath.Join("-home-dev-src-ledgerd", "7d1f6c2e-0b5a-4c39-9a7e-tail00000002.jsonl")},
		{AgentClaudeCode, "testdata/repeated_prompt.jsonl", filepath.Join("-home-dev-src-ledgerd", "7d1f6c2e-0b5a-4c39-9a7e-tail00000003.jsonl")},
		{AgentCodex, "testdata/codex_rollout.jsonl", filepath.Join("2026", "03", "05", "rollout-2026-03-05T14-00-00-019c1111-2222-7333-8444-rollout00001.jsonl")},
	}
	for _, tt := range tests {
		t.Run(filepath.Base(tt.fixture), func(t *testing.T) {
			data, err := os.ReadFile(tt.fixture)
			if err != nil {
				t.Fatal(err)
			}
			parse := transcript.Parse
			if tt.agent == AgentCodex {
				parse = transcript.ParseCodex
			}
			wantExs, _, err := parse(bytes.NewReader(data), transcript.Options{})
			if err != nil {
				t.Fatal(err)
			}
			want := splitTurns(wantExs)

			root := t.TempDir()
			var mu sync.Mutex
			var got [][]memory.Exchange
			tl, err := New(Options{Dir: t.TempDir(), Roots: map[string][]string{tt.agent: {root}}, Idle: time.Minute,
				Sink: func(_ context.Context, exs []memory.Exchange) error {
					mu.Lock()
					defer mu.Unlock()
					got = append(got, exs)
					return nil
				}})
			if err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(root, tt.name)
			if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
				t.Fatal(err)
			}
			chunks, err := TurnChunks(tt.agent, data)
			if err != nil {
				t.Fatal(err)
			}
			hook := func(event string) {
				t.Helper()
				if ok, err := tl.Submit(Request{Path: path, Event: event, Agent: tt.agent}); err != nil || !ok {
					t.Fatalf("submit %s: %v %v", event, ok, err)
				}
				if err := tl.Drain(context.Background()); err != nil {
					t.Fatal(err)
				}
			}
			for _, c := range chunks {
				appendTo(t, path, c)
				hook(EventStop)
			}
			hook(EventSessionEnd)
			if len(got) != len(want) {
				t.Fatalf("got %d turns, want %d:\n got %+v\nwant %+v", len(got), len(want), got, want)
			}
			for i := range want {
				sameExchanges(t, got[i], want[i])
				for j := range want[i] {
					if got[i][j].Summary != want[i][j].Summary {
						t.Errorf("turn %d exchange %d: summary %q, want %q", i+1, j, got[i][j].Summary, want[i][j].Summary)
					}
				}
			}
		})
	}
}

// FuzzTurnChunks: the pieces hold every byte of the input, in order, and
// each piece after the first begins where the agent may have stopped.
func FuzzTurnChunks(f *testing.F) {
	for _, name := range []string{"testdata/session.jsonl", "testdata/interrupted_session.jsonl", "testdata/codex_rollout.jsonl"} {
		data, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data, name == "testdata/codex_rollout.jsonl")
	}
	f.Add([]byte("{\"type\":\"user\"}\n\n{"), false)
	f.Fuzz(func(t *testing.T, data []byte, codex bool) {
		agent := AgentClaudeCode
		if codex {
			agent = AgentCodex
		}
		pieces, err := TurnChunks(agent, data)
		if err != nil {
			t.Fatal(err)
		}
		if got := bytes.Join(pieces, nil); !bytes.Equal(got, data) {
			t.Fatalf("pieces %q do not make up %q", pieces, data)
		}
		for i, p := range pieces {
			if len(p) == 0 {
				t.Fatalf("piece %d is empty", i)
			}
			line, _, _ := bytes.Cut(p, []byte("\n"))
			if i > 0 && !formats[agent].stop(bytes.TrimSpace(line)) {
				t.Fatalf("piece %d begins with %q", i, line)
			}
		}
		if h := heldFrom(data, formats[agent]); h < 0 || h > len(data) {
			t.Fatalf("heldFrom = %d of %d bytes", h, len(data))
		}
	})
}

// repeatedTurns reads testdata/repeated_prompt.jsonl: the session file's
// bytes and its two turns, which begin alike (the same Fingerprint).
func repeatedTurns(t *testing.T) ([]byte, [][]memory.Exchange) {
	t.Helper()
	data, err := os.ReadFile("testdata/repeated_prompt.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	exs, _, err := transcript.Parse(bytes.NewReader(data), transcript.Options{})
	if err != nil {
		t.Fatal(err)
	}
	turns := splitTurns(exs)
	if len(turns) != 2 || Fingerprint(turns[0][0]) != Fingerprint(turns[1][0]) {
		t.Fatalf("fixture: %d turns, want 2 beginning alike", len(turns))
	}
	return data, turns
}

// TestRepeatedTurnProxyFirst: the proxy took the first of two turns that
// begin alike (the user's "yes", the same first response); the session
// file's copy of that one is skipped and the second is stored: each turn
// once, none lost.
func TestRepeatedTurnProxyFirst(t *testing.T) {
	data, turns := repeatedTurns(t)
	r := newRig(t)
	for _, ex := range turns[0] { // turn 1 as the proxy saw it
		ex.Source = memory.SourceCapture
		if skip, err := r.tl.ProxyExchange(ex); skip || err != nil {
			t.Fatalf("proxy: %v %v", skip, err)
		}
		if err := r.tl.ProxyTook(ex); err != nil {
			t.Fatal(err)
		}
	}
	path := r.session("7d1f6c2e-0b5a-4c39-9a7e-tail00000003")
	appendTo(t, path, data)
	r.hook(path, EventSessionEnd)
	if st := r.tl.Stats(); len(r.turns) != 1 || st.Duplicates != 1 || r.turns[0][0].Turn != turns[1][0].Turn {
		t.Fatalf("stored %d turns (%+v), %d duplicates; want turn 2 stored, turn 1 skipped", len(r.turns), r.turns, st.Duplicates)
	}
}

// TestRepeatedTurnProxyCounts: the capture proxy numbers the turns of a
// session that begin alike (memory.Exchange.Occurrence, counted in the
// request's history), and the ledger keys the n-th one as the session
// file's path does. Before, the proxy did not count: with the proxy alone
// (an agent without session files) the second "yes" turn was skipped as
// the first one stored already, and lost. Each case says which turns the
// proxy took (by occurrence), whether the session file is read before or
// after, and what each path must keep; a restart (the tailer opened again)
// between the two paths stands for a daemon restart, and a retried request
// (the same occurrence again) must be skipped.
func TestRepeatedTurnProxyCounts(t *testing.T) {
	data, turns := repeatedTurns(t)
	cases := []struct {
		name      string
		file      string // "": no session file; "before" or "after" the proxy
		proxy     []int  // occurrences the proxy sees, in order
		proxyKeep []bool
		fileKeep  []int // the turns (by occurrence) stored from the file
	}{
		{name: "proxy only", proxy: []int{1, 2}, proxyKeep: []bool{true, true}},
		{name: "proxy retries", proxy: []int{1, 2, 2}, proxyKeep: []bool{true, true, false}},
		{name: "proxy both then file", file: "after", proxy: []int{1, 2}, proxyKeep: []bool{true, true}, fileKeep: nil},
		{name: "proxy second then file", file: "after", proxy: []int{2}, proxyKeep: []bool{true}, fileKeep: []int{1}},
		{name: "proxy first then file", file: "after", proxy: []int{1}, proxyKeep: []bool{true}, fileKeep: []int{2}},
		{name: "file then proxy", file: "before", proxy: []int{1, 2}, proxyKeep: []bool{false, false}, fileKeep: []int{1, 2}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := newRig(t)
			path := r.session("7d1f6c2e-0b5a-4c39-9a7e-tail00000003")
			readFile := func() {
				appendTo(t, path, data)
				r.hook(path, EventSessionEnd)
				var got []int
				for _, turn := range r.turns {
					for k := range turns {
						if turn[0].Turn == turns[k][0].Turn {
							got = append(got, k+1)
						}
					}
				}
				if !slices.Equal(got, tc.fileKeep) {
					t.Errorf("stored turns %v from the file, want %v (stats %+v)", got, tc.fileKeep, r.tl.Stats())
				}
			}
			if tc.file == "before" {
				readFile()
				r.open()
			}
			for i, occ := range tc.proxy {
				kept := false
				for j, ex := range turns[occ-1] { // the turn as the proxy saw it
					ex.Source, ex.Turn, ex.Occurrence = memory.SourceCapture, ex.Turn+7, occ
					skip, err := r.tl.ProxyExchange(ex)
					if err != nil {
						t.Fatal(err)
					}
					if j == 0 {
						kept = !skip
					}
					if !skip {
						if err := r.tl.ProxyTook(ex); err != nil {
							t.Fatal(err)
						}
					}
				}
				if kept != tc.proxyKeep[i] {
					t.Errorf("proxy request %d (occurrence %d): kept %v, want %v", i+1, occ, kept, tc.proxyKeep[i])
				}
				r.open() // a restart between requests: the ledger's file decides
			}
			if tc.file == "after" {
				readFile()
			}
		})
	}
}
