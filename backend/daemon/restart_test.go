package daemon

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/memtray/memtray/backend/httpapi"
	"github.com/memtray/memtray/backend/tail"
)

// restartSession is testdata/restart_session.jsonl, a Claude Code session
// of four turns written for this test: the first states that `parser.go`
// was split, the second how a ledger is exported; the third's list only
// repeats the second's command (dropped as said in an earlier turn,
// held.go) and the fourth corrects the first (the parser was not split:
// live capture revises the first turn's memory).
const restartSession = "5e2b9c41-7a3d-4f08-b6e1-restart00001"

// restartRig returns a transcript rig on restartSession's file.
func restartRig(t *testing.T) *transcriptRig {
	t.Helper()
	cfg := testConfig(t)
	root := t.TempDir()
	cfg.Capture.Transcripts.ClaudeCodeDirs = []string{root}
	r := &transcriptRig{t: t, cfg: cfg, root: root}
	data, err := os.ReadFile("testdata/restart_session.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	r.lines = bytes.SplitAfter(bytes.TrimSuffix(data, []byte("\n")), []byte("\n"))
	r.lines[len(r.lines)-1] = append(r.lines[len(r.lines)-1], '\n')
	dir := filepath.Join(root, "-home-dev-src-tally")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	r.path = filepath.Join(dir, restartSession+".jsonl")
	r.serve(Options{Config: cfg, Version: "test"})
	return r
}

// hookSession sends a hook's event for restartSession's file and waits
// until the daemon has read it.
func (r *transcriptRig) hookSession(event string) {
	r.t.Helper()
	before := r.d.tail.Stats().Processed
	got, err := r.cl.CaptureTranscript(context.Background(), httpapi.TranscriptRequest{Path: r.path, Event: event,
		SessionID: restartSession, CWD: "/home/dev/src/tally"})
	if err != nil || !got.Queued {
		r.t.Fatalf("capture transcript: %+v %v", got, err)
	}
	r.waitProcessed(before + 1)
}

// TestTranscriptRestartMidSession: a daemon stopped after half a live
// session's turns and started again ends with the memories of one
// uninterrupted capture. The new daemon goes on from the saved cursor;
// the turns before it were decided by the first one, and it reads them
// again for what they said and kept (tail.Options.Resume,
// ingest.Pipeline.Remember): the third turn's repeated command is dropped,
// the fourth turn revises the first's statement. At 1368516 the new
// daemon knew nothing of them: the command was stored and the first
// turn's statement stood.
func TestTranscriptRestartMidSession(t *testing.T) {
	t.Parallel()
	whole := restartRig(t)
	whole.write(len(whole.lines))
	whole.hookSession(tail.EventStop)
	want := storedTexts(t, false, whole.d.Store())
	if len(want) == 0 {
		t.Fatal("the uninterrupted capture stored nothing")
	}
	for _, s := range want {
		if bytes.Contains([]byte(s), []byte("lexer package")) {
			t.Fatalf("the uninterrupted capture kept the corrected statement: %q", want)
		}
	}

	r := restartRig(t)
	r.write(5) // two turns and the third's prompt: the second has ended
	r.hookSession(tail.EventPreCompact)
	if st := r.d.tail.Stats(); st.Turns != 2 {
		t.Fatalf("before the restart: %+v, want 2 turns", st)
	}
	r.d.Close()
	r.serveAgain()
	r.write(len(r.lines))
	r.hookSession(tail.EventStop)
	if st := r.d.tail.Stats(); st.Turns != 2 || st.Duplicates != 0 {
		t.Errorf("after the restart: %+v, want the 2 other turns and no duplicate", st)
	}
	if got := storedTexts(t, false, r.d.Store()); !slices.Equal(got, want) {
		t.Errorf("restarted capture's live memories\n%q\nuninterrupted capture's\n%q", got, want)
	}
}

// A daemon restarted at any point of a long live session (past the two
// windows of later text the pipeline keeps and reads again: about 1.4 MiB
// of text in 30 turns) ends with the memories of one uninterrupted
// capture: restarted within the first window, between the two windows
// and past both, each time reading again only the turns before its
// cursor the session's next turns can reach (ingest.Pipeline.ResumeTurns).
// Its turns revise nothing (each would distil the ones before it again:
// minutes under -race).
func TestTranscriptRestartLongSession(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("1.4 MiB of turns captured live twice: minutes under -race (TestResumeReadsTheLastTwoWindows checks the bound under it)")
	}
	t.Parallel()
	const n, pad = 30, 48 << 10
	var turns [][][]byte
	for i := 1; i <= n; i++ {
		turns = append(turns, paddedTurnLines(i, pad, false))
	}
	upTo := func(k int) (lines [][]byte) {
		for _, tl := range turns[:k] {
			lines = append(lines, tl...)
		}
		return lines
	}
	capture := func(r *resumeRig, from, to int) {
		for at := from; at < to; at += 3 { // a read at most every 3 turns (the wait's deadline, under -race)
			r.append(upTo(min(at+3, to))[len(upTo(at)):]...)
			r.hook(resumeBenchSession)
		}
		if st := r.d.tail.Stats(); st.Turns != to-from || st.Duplicates != 0 {
			t.Fatalf("turns %d to %d: %+v, want %d turns and no duplicate", from+1, to, st, to-from)
		}
	}
	whole := resumeRigAt(t, t, t.TempDir(), t.TempDir(), resumeBenchSession)
	whole.start()
	capture(whole, 0, n)
	want := storedTexts(t, false, whole.d.Store())
	whole.stop()
	if len(want) == 0 {
		t.Fatal("the uninterrupted capture stored nothing")
	}

	r := resumeRigAt(t, t, t.TempDir(), t.TempDir(), resumeBenchSession)
	at := 0
	for _, k := range []int{4, 22, 27, n} { // 11 turns a window: within the first, at the second's start, past both
		r.start()
		capture(r, at, k)
		if k == n {
			if got := storedTexts(t, false, r.d.Store()); !slices.Equal(got, want) {
				t.Errorf("restarted capture's live memories\n%q\nuninterrupted capture's\n%q", got, want)
			}
		}
		r.stop()
		at = k
	}
}
