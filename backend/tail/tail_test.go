package tail

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/memtray/memtray/backend/memory"
	"github.com/memtray/memtray/backend/transcript"
)

// rig is a tailer over a temp Claude Code projects folder whose sink
// collects the turns it is given.
type rig struct {
	t     *testing.T
	dir   string // state
	root  string // ~/.claude/projects
	now   time.Time
	mu    sync.Mutex
	turns [][]memory.Exchange
	tl    *Tailer
}

func newRig(t *testing.T) *rig {
	t.Helper()
	r := &rig{t: t, dir: t.TempDir(), root: t.TempDir(), now: time.Now()}
	r.open()
	return r
}

// open (re)creates the tailer over the rig's state, as a restart does.
func (r *rig) open() {
	r.t.Helper()
	tl, err := New(Options{Dir: r.dir, Roots: map[string][]string{AgentClaudeCode: {r.root}},
		Sink: r.sink, Now: func() time.Time { return r.now }, Idle: time.Minute})
	if err != nil {
		r.t.Fatal(err)
	}
	r.tl = tl
}

func (r *rig) sink(_ context.Context, exs []memory.Exchange) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.turns = append(r.turns, exs)
	return nil
}

func (r *rig) exchanges() []memory.Exchange {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []memory.Exchange
	for _, t := range r.turns {
		out = append(out, t...)
	}
	return out
}

// session returns the path of a new session file of project "-home-dev-src-ledgerd".
func (r *rig) session(name string) string {
	dir := filepath.Join(r.root, "-home-dev-src-ledgerd")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		r.t.Fatal(err)
	}
	return filepath.Join(dir, name+".jsonl")
}

// hook submits event for path and does the work.
func (r *rig) hook(path, event string) {
	r.t.Helper()
	ok, err := r.tl.Submit(Request{Path: path, Event: event})
	if err != nil || !ok {
		r.t.Fatalf("submit %s: %v %v", event, ok, err)
	}
	if err := r.tl.Drain(context.Background()); err != nil {
		r.t.Fatal(err)
	}
}

func fixture(t *testing.T) [][]byte {
	t.Helper()
	data, err := os.ReadFile("testdata/session.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	return bytes.SplitAfter(data, []byte("\n"))
}

func appendTo(t *testing.T, path string, b []byte) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.Write(b); err != nil {
		t.Fatal(err)
	}
}

// whole is what `memtray ingest` reads from the fixture: Parse of the whole file.
func whole(t *testing.T) []memory.Exchange {
	t.Helper()
	f, err := os.Open("testdata/session.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	exs, _, err := transcript.Parse(f, transcript.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return exs
}

func sameExchanges(t *testing.T, got, want []memory.Exchange) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("got %d exchanges, want %d", len(got), len(want))
	}
	for i := range want {
		g, w := got[i], want[i]
		if g.SessionID != w.SessionID || g.Turn != w.Turn || g.UserTurns != w.UserTurns || g.Project != w.Project ||
			g.User != w.User || g.Assistant != w.Assistant || g.ToolLoop != w.ToolLoop || len(g.ToolCalls) != len(w.ToolCalls) ||
			len(g.ToolResults) != len(w.ToolResults) || g.Source != w.Source || !reflect.DeepEqual(g.Answers, w.Answers) {
			t.Errorf("exchange %d:\n got %+v\nwant %+v", i, g, w)
		}
	}
}

// Appended a line at a time, with a hook after each line (and each line
// written in two halves), the session gives the exchanges a read of the
// whole file gives, each once, turns in order.
func TestLineByLineMatchesWholeFile(t *testing.T) {
	r := newRig(t)
	path := r.session("live")
	for _, line := range fixture(t) {
		if len(line) == 0 {
			continue
		}
		half := len(line) / 2
		appendTo(t, path, line[:half])
		r.hook(path, EventPreCompact) // a half-written line is left for later
		appendTo(t, path, line[half:])
		r.hook(path, EventPreCompact)
	}
	if n := len(r.turns); n != 3 {
		t.Fatalf("before Stop: %d turns captured, want the 3 a later prompt ended", n)
	}
	r.hook(path, EventStop)
	sameExchanges(t, r.exchanges(), whole(t))
	if len(r.turns) != 4 {
		t.Errorf("%d turns, want 4", len(r.turns))
	}
	for i, turn := range r.turns {
		if turn[0].ToolLoop || turn[0].User == "" {
			t.Errorf("turn %d begins with %+v, want the user's prompt", i, turn[0])
		}
	}
	c, _ := r.tl.Cursor(path)
	fi, _ := os.Stat(path)
	if c.Offset != fi.Size() || c.LineEnd != fi.Size() || c.pending() {
		t.Errorf("cursor %+v, want everything read (size %d)", c, fi.Size())
	}
	// Another Stop with nothing new stores nothing.
	r.hook(path, EventStop)
	if len(r.turns) != 4 {
		t.Errorf("%d turns after a repeated Stop", len(r.turns))
	}
}

// TestAnswersCapturedLive: the user's answer to AskUserQuestion, and the
// words the user typed when refusing a tool call, reach live capture as
// they reach a read of the whole file: on the tool-loop response after
// them, in the same turn.
func TestAnswersCapturedLive(t *testing.T) {
	for _, tt := range []struct {
		file    string
		refused bool
	}{
		{"asked_session.jsonl", false},
		{"refused_session.jsonl", true},
	} {
		t.Run(tt.file, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join("testdata", tt.file))
			if err != nil {
				t.Fatal(err)
			}
			want, _, err := transcript.Parse(bytes.NewReader(data), transcript.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if len(want) < 2 || len(want[1].Answers) != 1 || want[1].Answers[0].Refused != tt.refused || !want[1].ToolLoop {
				t.Fatalf("the fixture's answer: %+v", want)
			}
			r := newRig(t)
			path := r.session(strings.TrimSuffix(tt.file, ".jsonl"))
			for _, line := range bytes.SplitAfter(data, []byte("\n")) {
				appendTo(t, path, line)
				r.hook(path, EventPreCompact)
			}
			r.hook(path, EventStop)
			sameExchanges(t, r.exchanges(), want)
			if len(r.turns) != 2 || len(r.turns[0]) != 3 || len(r.turns[0][1].Answers) != 1 || r.turns[0][1].Answers[0].Refused != tt.refused {
				t.Fatalf("turns: %+v", r.turns)
			}
		})
	}
}

// Which events end the last turn.
func TestEndOfTurn(t *testing.T) {
	lines := fixture(t)
	// Lines 0..7 are turn 1 (its last response is line 7); line 8 is
	// prompt 2; lines 10..11 turn 3's first response and its tool call.
	for _, tc := range []struct {
		name  string
		upTo  int
		event string
		turns int
	}{
		{"turn 1 written, pre-compact", 8, EventPreCompact, 0},
		{"turn 1 written, stop", 8, EventStop, 1},
		{"turn 1 written, session end", 8, EventSessionEnd, 1},
		{"prompt 2 written, pre-compact", 9, EventPreCompact, 1},
		{"prompt 2 written, not answered yet, stop", 9, EventStop, 1},
		{"prompt 2 written, not answered yet, idle", 9, EventIdle, 1},
		{"prompt 2 written, not answered yet, session end", 9, EventSessionEnd, 1},
		{"turn 3 mid tool call, stop", 13, EventStop, 2},
		{"turn 3 mid tool call, session end", 13, EventSessionEnd, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newRig(t)
			path := r.session("s")
			appendTo(t, path, bytes.Join(lines[:tc.upTo], nil))
			if tc.event == EventIdle {
				r.tl.enqueue(job{req: Request{Path: path, Agent: AgentClaudeCode, Event: EventIdle}, final: true})
				r.tl.Drain(context.Background())
			} else {
				r.hook(path, tc.event)
			}
			if len(r.turns) != tc.turns {
				t.Errorf("%d turns captured, want %d", len(r.turns), tc.turns)
			}
			// The rest of the session: nothing lost, nothing twice.
			appendTo(t, path, bytes.Join(lines[tc.upTo:], nil))
			r.hook(path, EventSessionEnd)
			sameExchanges(t, r.exchanges(), whole(t))
		})
	}
}

// A file quiet for Options.Idle ends its last turn at the next Scan.
func TestIdleEndsTurn(t *testing.T) {
	r := newRig(t)
	path := r.session("idle")
	lines := fixture(t)
	appendTo(t, path, bytes.Join(lines[:8], nil))
	if n := r.tl.Scan(); n != 1 {
		t.Fatalf("scan queued %d files, want the new one", n)
	}
	r.tl.Drain(context.Background())
	if len(r.turns) != 0 {
		t.Fatalf("%d turns before the file went idle", len(r.turns))
	}
	if n := r.tl.Scan(); n != 0 {
		t.Fatalf("scan queued %d unchanged files", n)
	}
	if r.tl.Stats().Pending != 1 {
		t.Errorf("stats %+v, want 1 pending", r.tl.Stats())
	}
	r.now = r.now.Add(2 * time.Minute)
	if n := r.tl.Scan(); n != 1 {
		t.Fatalf("scan queued %d files after the idle time", n)
	}
	r.tl.Drain(context.Background())
	if len(r.turns) != 1 {
		t.Fatalf("%d turns after idle, want 1", len(r.turns))
	}
	if n := r.tl.Scan(); n != 0 {
		t.Errorf("scan queued %d files once nothing was pending", n)
	}
}

// Files untouched since capture from transcripts was enabled are history:
// the watcher leaves them to `memtray ingest`.
func TestScanSkipsHistory(t *testing.T) {
	r := newRig(t)
	path := r.session("old")
	appendTo(t, path, bytes.Join(fixture(t), nil))
	old := r.tl.Since().Add(-time.Hour)
	if err := os.Chtimes(path, old, old); err != nil {
		t.Fatal(err)
	}
	if n := r.tl.Scan(); n != 0 {
		t.Errorf("scan queued %d old files", n)
	}
	// Restarting keeps the first enable time.
	since := r.tl.Since()
	r.now = r.now.Add(time.Hour)
	r.open()
	if !r.tl.Since().Equal(since) {
		t.Errorf("since moved from %v to %v on restart", since, r.tl.Since())
	}
}

// A file truncated, rewritten with other content or replaced by another
// is read again from the start; turns stored already are not stored again.
func TestTruncatedOrReplaced(t *testing.T) {
	lines := fixture(t)
	all := bytes.Join(lines, nil)
	for _, tc := range []struct {
		name   string
		change func(t *testing.T, path string)
		resets int
		turns  int // turns captured in all
		dupes  int
	}{
		{"truncated to its first turn, then grown again", func(t *testing.T, path string) {
			os.Truncate(path, int64(len(bytes.Join(lines[:9], nil))))
			appendTo(t, path, bytes.Join(lines[9:], nil))
		}, 0, 4, 0}, // same size again, same head: nothing new, nothing lost
		{"truncated to nothing and rewritten", func(t *testing.T, path string) {
			os.Truncate(path, 0)
			appendTo(t, path, bytes.Join(lines[:9], nil))
		}, 1, 4, 1},
		{"replaced by a copy (another inode)", func(t *testing.T, path string) {
			tmp := path + ".new"
			os.WriteFile(tmp, all, 0o600)
			os.Rename(tmp, path)
		}, 1, 4, 4},
		{"head rewritten", func(t *testing.T, path string) {
			b := bytes.Replace(all, []byte("2.1.40"), []byte("2.1.41"), 1)
			os.WriteFile(path, b, 0o600)
		}, 1, 4, 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newRig(t)
			path := r.session("s")
			appendTo(t, path, all)
			r.hook(path, EventStop)
			if len(r.turns) != 4 {
				t.Fatalf("%d turns first", len(r.turns))
			}
			tc.change(t, path)
			r.hook(path, EventStop)
			st := r.tl.Stats()
			if st.Resets != tc.resets || len(r.turns) != tc.turns || st.Duplicates != tc.dupes {
				t.Errorf("resets %d turns %d duplicates %d, want %d %d %d", st.Resets, len(r.turns), st.Duplicates, tc.resets, tc.turns, tc.dupes)
			}
		})
	}
}

// A restart mid-file goes on from the saved cursor: nothing stored twice,
// nothing lost, turn numbers as in the whole file.
func TestRestartMidFile(t *testing.T) {
	r := newRig(t)
	path := r.session("restart")
	lines := fixture(t)
	appendTo(t, path, bytes.Join(lines[:12], nil))
	r.hook(path, EventPreCompact)
	if len(r.turns) != 2 {
		t.Fatalf("%d turns before the restart", len(r.turns))
	}
	r.open()
	appendTo(t, path, bytes.Join(lines[12:], nil))
	r.hook(path, EventStop)
	sameExchanges(t, r.exchanges(), whole(t))
}

// A kill between writing a cursor's temporary file and renaming it leaves
// the temporary file: the next start removes it and reads the cursor the
// last complete write left. A damaged cursor is ignored (the file is read
// again, its turns skipped as stored).
func TestCursorCrashSafety(t *testing.T) {
	r := newRig(t)
	path := r.session("crash")
	lines := fixture(t)
	appendTo(t, path, bytes.Join(lines[:9], nil))
	r.hook(path, EventPreCompact)
	saved, _ := r.tl.Cursor(path)
	cfile := r.tl.cursors.file(path)
	tmp := filepath.Join(filepath.Dir(cfile), "."+filepath.Base(cfile)+".tmp123456")
	if err := os.WriteFile(tmp, []byte(`{"path":"`+path+`","offset":99999`), 0o600); err != nil {
		t.Fatal(err)
	}
	r.open()
	if _, err := os.Stat(tmp); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the temporary file is still there: %v", err)
	}
	if got, _ := r.tl.Cursor(path); got.Offset != saved.Offset || got.Exchanges != saved.Exchanges {
		t.Errorf("cursor after restart %+v, want %+v", got, saved)
	}
	// Damaged cursor.
	if err := os.WriteFile(cfile, []byte("{not json"), 0o600); err != nil {
		t.Fatal(err)
	}
	r.open()
	if _, ok := r.tl.Cursor(path); ok {
		t.Fatal("a damaged cursor was loaded")
	}
	appendTo(t, path, bytes.Join(lines[9:], nil))
	r.hook(path, EventStop)
	sameExchanges(t, r.exchanges(), whole(t))
	if d := r.tl.Stats().Duplicates; d != 1 {
		t.Errorf("%d duplicates, want turn 1 skipped", d)
	}
}

// Paths outside the session folders, and other bad requests, are refused.
func TestSubmitRefuses(t *testing.T) {
	r := newRig(t)
	good := r.session("good")
	appendTo(t, good, fixture(t)[1])
	outside := filepath.Join(t.TempDir(), "x.jsonl")
	os.WriteFile(outside, fixture(t)[1], 0o600)
	link := r.session("link")
	if err := os.Symlink(outside, link); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(filepath.Dir(r.root), "escape.jsonl"), fixture(t)[1], 0o600)
	dir := r.session("dir")
	os.Mkdir(dir, 0o700)
	txt := filepath.Join(filepath.Dir(good), "notes.txt")
	os.WriteFile(txt, []byte("x\n"), 0o600)
	for _, tc := range []struct {
		name string
		req  Request
		want error
	}{
		{"outside the folders", Request{Path: outside, Event: EventStop}, memory.ErrInvalid},
		{"a link out of the folders", Request{Path: link, Event: EventStop}, memory.ErrInvalid},
		{"dot-dot out", Request{Path: r.root + "/../escape.jsonl", Event: EventStop}, memory.ErrInvalid},
		{"relative", Request{Path: "proj/s.jsonl", Event: EventStop}, memory.ErrInvalid},
		{"not jsonl", Request{Path: txt, Event: EventStop}, memory.ErrInvalid},
		{"a folder", Request{Path: dir, Event: EventStop}, memory.ErrInvalid},
		{"missing", Request{Path: r.session("missing"), Event: EventStop}, memory.ErrNotFound},
		{"empty", Request{Event: EventStop}, memory.ErrInvalid},
		{"bad event", Request{Path: good, Event: "poll"}, memory.ErrInvalid},
		{"unknown agent", Request{Path: good, Event: EventStop, Agent: "vim"}, memory.ErrInvalid},
		{"a claude file named codex", Request{Path: good, Event: EventStop, Agent: AgentCodex}, memory.ErrInvalid},
		{"nul", Request{Path: good + "\x00", Event: EventStop}, memory.ErrInvalid},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := r.tl.Submit(tc.req)
			if !errors.Is(err, tc.want) {
				t.Errorf("err %v, want %v", err, tc.want)
			}
		})
	}
	if _, err := r.tl.Submit(Request{Path: good, Event: EventStop}); err != nil {
		t.Errorf("good path refused: %v", err)
	}
	if st := r.tl.Stats(); st.Refused < 8 {
		t.Errorf("refused %d", st.Refused)
	}
}

// A full queue drops (and counts) instead of waiting; requests for a file
// already queued merge into its job.
func TestQueueFull(t *testing.T) {
	r := newRig(t)
	tl, err := New(Options{Dir: r.dir, Roots: map[string][]string{AgentClaudeCode: {r.root}}, Sink: r.sink, QueueSize: 2})
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, n := range []string{"a", "b", "c"} {
		p := r.session(n)
		appendTo(t, p, fixture(t)[1])
		paths = append(paths, p)
	}
	for i, want := range []bool{true, true, true, false} {
		p := paths[min(i, 2)]
		if i == 1 {
			p = paths[0] // merged
		}
		if i == 2 {
			p = paths[1]
		}
		ok, err := tl.Submit(Request{Path: p, Event: EventStop})
		if err != nil || ok != want {
			t.Errorf("submit %d: %v %v, want %v", i, ok, err, want)
		}
	}
	if st := tl.Stats(); st.Dropped != 1 || st.Queued != 2 {
		t.Errorf("stats %+v, want 1 dropped, 2 queued", st)
	}
}

// The proxy and the transcript agree on a turn's fingerprint: whichever
// comes second is skipped (with the tool-loop iterations of its turn).
func TestProxyAndTranscriptStoreOnce(t *testing.T) {
	t.Run("proxy first", func(t *testing.T) {
		r := newRig(t)
		exs := whole(t)
		for _, ex := range exs[:3] { // turn 1 as the proxy saw it
			ex.Source, ex.Turn = memory.SourceCapture, ex.Turn+7 // numbered its own way
			if skip, err := r.tl.ProxyExchange(ex); skip || err != nil {
				t.Fatalf("proxy: %v %v", skip, err)
			}
			if err := r.tl.ProxyTook(ex); err != nil { // its copy is durable
				t.Fatal(err)
			}
		}
		path := r.session("p")
		appendTo(t, path, bytes.Join(fixture(t), nil))
		r.hook(path, EventStop)
		if st := r.tl.Stats(); len(r.turns) != 3 || st.Duplicates != 1 {
			t.Errorf("%d turns, %d duplicates; want 3 and turn 1 skipped", len(r.turns), st.Duplicates)
		}
	})
	t.Run("transcript first", func(t *testing.T) {
		r := newRig(t)
		path := r.session("p")
		appendTo(t, path, bytes.Join(fixture(t), nil))
		r.hook(path, EventStop)
		skipped := 0
		for _, ex := range whole(t) {
			ex.Source = memory.SourceCapture
			// Claude Code's request carries injected blocks the proxy removes.
			skip, err := r.tl.ProxyExchange(ex)
			if err != nil {
				t.Fatal(err)
			}
			if skip {
				skipped++
			}
		}
		if skipped != len(whole(t)) || r.tl.Stats().ProxyDuplicates != skipped {
			t.Errorf("proxy skipped %d of %d", skipped, len(whole(t)))
		}
		// A new turn the transcript has not seen passes.
		ex := memory.Exchange{SessionID: whole(t)[0].SessionID, User: "and one more thing", Assistant: "sure"}
		if skip, _ := r.tl.ProxyExchange(ex); skip {
			t.Error("a new turn was skipped")
		}
	})
}

// TestProxyCheckRecordsNothing: the proxy's check of a turn records no
// fingerprint; only ProxyTook (called once the proxy's copy is durable)
// does. Before, the check recorded it: a kill after the check, before the
// proxy saved or decided the exchange, lost the turn from both paths (the
// transcript skipped it as the proxy's). A tailer opened again on the same
// dir stands for the restart.
func TestProxyCheckRecordsNothing(t *testing.T) {
	for _, took := range []bool{false, true} {
		t.Run(fmt.Sprintf("took=%v", took), func(t *testing.T) {
			r := newRig(t)
			for _, ex := range whole(t)[:3] { // turn 1 as the proxy saw it
				ex.Source = memory.SourceCapture
				if skip, err := r.tl.ProxyExchange(ex); skip || err != nil {
					t.Fatalf("proxy: %v %v", skip, err)
				}
				if took {
					if err := r.tl.ProxyTook(ex); err != nil {
						t.Fatal(err)
					}
				}
			}
			r.open() // a kill, then the next start
			path := r.session("p")
			appendTo(t, path, bytes.Join(fixture(t), nil))
			r.hook(path, EventStop)
			want := 4 // every turn, turn 1 included: the proxy's copy was lost
			if took {
				want = 3 // turn 1 is the proxy's
			}
			if len(r.turns) != want {
				t.Errorf("%d turns stored from the transcript, want %d (stats %+v)", len(r.turns), want, r.tl.Stats())
			}
		})
	}
}

// TestTranscriptWaitsForProxy: the transcript's copy of a turn the proxy
// is taking (checked, its copy not durable yet) waits until the proxy took
// it (then it is skipped) or dropped it (then it is stored). Stored while
// the proxy takes it, it would be stored twice; skipped, a kill before the
// proxy's copy is durable would lose it. The ledger's onWait hook orders
// the two paths: the proxy settles the turn once the tailer waits.
func TestTranscriptWaitsForProxy(t *testing.T) {
	for _, took := range []bool{true, false} {
		t.Run(fmt.Sprintf("took=%v", took), func(t *testing.T) {
			r := newRig(t)
			first := whole(t)[0] // turn 1's first exchange, as the proxy saw it
			first.Source = memory.SourceCapture
			if skip, err := r.tl.ProxyExchange(first); skip || err != nil {
				t.Fatalf("proxy: %v %v", skip, err)
			}
			waiting := make(chan struct{})
			r.tl.ledger.onWait = func() { close(waiting) }
			path := r.session("p")
			appendTo(t, path, bytes.Join(fixture(t), nil))
			done := make(chan struct{})
			go func() {
				defer close(done)
				if _, err := r.tl.Submit(Request{Path: path, Event: EventStop}); err != nil {
					t.Error(err)
				}
				if err := r.tl.Drain(context.Background()); err != nil {
					t.Error(err)
				}
			}()
			select {
			case <-waiting:
			case <-done:
				t.Fatalf("the transcript was read without waiting for the proxy's turn: %d turns stored", len(r.turns))
			}
			if took {
				if err := r.tl.ProxyTook(first); err != nil {
					t.Fatal(err)
				}
			} else {
				r.tl.ProxyDropped(first)
			}
			<-done
			want, dups := 3, 1 // turn 1 is the proxy's
			if !took {
				want, dups = 4, 0
			}
			if st := r.tl.Stats(); len(r.turns) != want || st.Duplicates != dups {
				t.Errorf("%d turns stored, %d skipped; want %d and %d", len(r.turns), st.Duplicates, want, dups)
			}
		})
	}
}

func TestFingerprint(t *testing.T) {
	a := memory.Exchange{SessionID: "s", User: "fix  the\nbug", Assistant: "Done.", ToolCalls: []memory.ToolCall{{Name: "Edit", Input: `{"a": 1}`}}}
	b := a
	b.User, b.Turn, b.Source = "fix the bug ", 9, "capture"
	b.ToolCalls = []memory.ToolCall{{Name: "Edit", Input: `{"a":1}`}}
	if Fingerprint(a) != Fingerprint(b) {
		t.Error("white space, turn number, source or tool input changed the fingerprint")
	}
	for name, f := range map[string]func(*memory.Exchange){
		"session":   func(e *memory.Exchange) { e.SessionID = "t" },
		"user":      func(e *memory.Exchange) { e.User = "fix the bugs" },
		"assistant": func(e *memory.Exchange) { e.Assistant = "Done!" },
		"tool":      func(e *memory.Exchange) { e.ToolCalls[0].Name = "Write" },
		"boundary":  func(e *memory.Exchange) { e.SessionID, e.User = "sfix", "the bug" },
	} {
		c := a
		c.ToolCalls = append([]memory.ToolCall(nil), a.ToolCalls...)
		f(&c)
		if Fingerprint(c) == Fingerprint(a) {
			t.Errorf("changing the %s kept the fingerprint", name)
		}
	}
}

func TestClaudeBoundary(t *testing.T) {
	for _, tc := range []struct {
		line string
		want bool
	}{
		{`{"type":"user","message":{"role":"user","content":"hello"}}`, true},
		{`{"type":"user","message":{"role":"user","content":[{"type":"text","text":"hi"}]}}`, true},
		{`{"type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t","content":"x"}]}}`, false},
		{`{"type":"user","isMeta":true,"message":{"role":"user","content":"expansion"}}`, false},
		{`{"type":"user","isSidechain":true,"message":{"role":"user","content":"agent prompt"}}`, false},
		{`{"type":"user","isCompactSummary":true,"message":{"role":"user","content":"summary"}}`, false},
		{`{"type":"assistant","message":{"role":"assistant","content":"user"}}`, false},
		{`{"type":"user"}`, false},
		{`{"type":"user","message":{"content":""}}`, false},
		{`not json "user"`, false},
	} {
		if got := claudeBoundary([]byte(tc.line)); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.line, got, tc.want)
		}
	}
	if !strings.Contains(string(fixture(t)[1]), `"type":"user"`) {
		t.Fatal("fixture changed")
	}
}

// TestPendingTurnReadOnce: while a turn goes on (no later prompt ends
// it), each event that cannot end it reads and decodes only the lines
// written since the last one, not the whole turn again, and the turn is
// captured as a read of the whole file gives it.
func TestPendingTurnReadOnce(t *testing.T) {
	calls := 0
	orig := formats[AgentClaudeCode]
	counted := orig
	counted.boundary = func(line []byte) bool { calls++; return orig.boundary(line) }
	formats[AgentClaudeCode] = counted
	t.Cleanup(func() { formats[AgentClaudeCode] = orig })

	r := newRig(t)
	path := r.session("long-turn")
	prompt := `{"type":"user","uuid":"p1","sessionId":"lt","cwd":"/home/dev/src/ledgerd","timestamp":"2026-05-04T09:00:00.000Z","message":{"role":"user","content":"Run the migration tests until they pass."}}` + "\n"
	step := func(i int) string {
		return fmt.Sprintf(`{"type":"assistant","uuid":"a%d","sessionId":"lt","timestamp":"2026-05-04T09:%02d:01.000Z","message":{"id":"m%d","role":"assistant","model":"claude-opus-4-5","content":[{"type":"tool_use","id":"t%d","name":"Bash","input":{"command":"make test-migrations"}}]}}`+"\n"+
			`{"type":"user","uuid":"r%d","sessionId":"lt","timestamp":"2026-05-04T09:%02d:02.000Z","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t%d","content":"FAIL migration %d"}]}}`+"\n", i, i, i, i, i, i, i, i)
	}
	cases := []struct {
		name      string
		steps     int // steps appended before the event
		wantCalls int // boundary calls the event makes at most
	}{
		{"first read: every line after the first", 20, 40},
		{"two more steps: their lines only", 2, 4},
		{"one more step", 1, 2},
		{"nothing new", 0, 0},
	}
	appendTo(t, path, []byte(prompt))
	n, added := 0, int64(len(prompt))
	for _, tc := range cases {
		for range tc.steps {
			appendTo(t, path, []byte(step(n)))
			added += int64(len(step(n)))
			n++
		}
		calls = 0
		before := r.tl.readBytes.Load()
		r.hook(path, EventPreCompact)
		if calls > tc.wantCalls {
			t.Errorf("%s: %d lines decoded, want at most %d", tc.name, calls, tc.wantCalls)
		}
		// The bytes too: only what was added since the last event is read.
		if read := r.tl.readBytes.Load() - before; read > added {
			t.Errorf("%s: %d bytes read, want at most the %d added", tc.name, read, added)
		}
		added = 0
		if len(r.turns) != 0 {
			t.Fatalf("%s: %d turns captured before the turn ended", tc.name, len(r.turns))
		}
	}
	appendTo(t, path, []byte(`{"type":"assistant","uuid":"done","sessionId":"lt","timestamp":"2026-05-04T10:00:00.000Z","message":{"id":"mdone","role":"assistant","model":"claude-opus-4-5","content":[{"type":"text","text":"The migrations pass now."}]}}`+"\n"))
	r.hook(path, EventStop)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	want, _, err := transcript.Parse(bytes.NewReader(data), transcript.Options{})
	if err != nil {
		t.Fatal(err)
	}
	sameExchanges(t, r.exchanges(), want)
}

// BenchmarkPendingTurn measures one event (a PreCompact hook; a poll of
// the watcher reads the same way) on a session file whose turn goes on:
// one tool call and its result appended, then the file read. The turn
// holds 250, 1000 or 4000 such steps before: a cost that grows with the
// turn's length shows as ns/op growing with it.
func BenchmarkPendingTurn(b *testing.B) {
	prompt := `{"type":"user","uuid":"p1","sessionId":"bt","cwd":"/home/dev/src/ledgerd","timestamp":"2026-05-04T09:00:00.000Z","message":{"role":"user","content":"Run the migration tests until they pass."}}` + "\n"
	step := func(i int) string {
		return fmt.Sprintf(`{"type":"assistant","uuid":"a%d","sessionId":"bt","timestamp":"2026-05-04T09:00:01.000Z","message":{"id":"m%d","role":"assistant","model":"claude-opus-4-5","content":[{"type":"tool_use","id":"t%d","name":"Bash","input":{"command":"make test-migrations"}}]}}`+"\n"+
			`{"type":"user","uuid":"r%d","sessionId":"bt","timestamp":"2026-05-04T09:00:02.000Z","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t%d","content":"FAIL migration %d"}]}}`+"\n", i, i, i, i, i, i)
	}
	for _, n := range []int{250, 1000, 4000} {
		b.Run(fmt.Sprintf("steps=%d", n), func(b *testing.B) {
			root := b.TempDir()
			tl, err := New(Options{Dir: b.TempDir(), Roots: map[string][]string{AgentClaudeCode: {root}},
				Sink: func(context.Context, []memory.Exchange) error { return nil }})
			if err != nil {
				b.Fatal(err)
			}
			dir := filepath.Join(root, "-home-dev-src-ledgerd")
			if err := os.MkdirAll(dir, 0o700); err != nil {
				b.Fatal(err)
			}
			path := filepath.Join(dir, "bench.jsonl")
			f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
			if err != nil {
				b.Fatal(err)
			}
			defer f.Close()
			event := func() {
				if ok, err := tl.Submit(Request{Path: path, Event: EventPreCompact}); err != nil || !ok {
					b.Fatalf("submit: %v %v", ok, err)
				}
				if err := tl.Drain(context.Background()); err != nil {
					b.Fatal(err)
				}
			}
			var head strings.Builder
			head.WriteString(prompt)
			for i := range n {
				head.WriteString(step(i))
			}
			if _, err := f.WriteString(head.String()); err != nil {
				b.Fatal(err)
			}
			event()
			read := tl.readBytes.Load()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, err := f.WriteString(step(n + i)); err != nil {
					b.Fatal(err)
				}
				event()
			}
			b.ReportMetric(float64(tl.readBytes.Load()-read)/float64(b.N), "read-B/op")
		})
	}
}
