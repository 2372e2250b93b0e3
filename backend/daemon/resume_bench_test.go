package daemon

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/memtray/memtray/backend/config"
	"github.com/memtray/memtray/backend/httpapi"
	"github.com/memtray/memtray/backend/tail"
)

// resumeBenchSession is the session id of the transcripts resumeTurns
// writes.
const resumeBenchSession = "9a4e0c17-3b2d-4e58-a1f6-resume000001"

// paddedTurnLines returns turn i of a synthetic Claude Code session in
// its JSONL form: a prompt, a tool call and its result, and an answer of
// a few findings and a list, one line of which every turn repeats (the
// held test reads it), as a busy session's turns are; with a file of
// about pad bytes shown in the answer (a fence: text the pipeline reads
// of the turn, so that a few dozen turns pass what a session keeps of its
// recent turns); with revise false its prompt and answer say no "instead
// of" (no turn revises the ones before it: live capture distils none of
// them again).
func paddedTurnLines(i, pad int, revise bool) [][]byte {
	instead := map[bool][2]string{true: {" instead of buffering the whole table", " instead of buffering them"}, false: {"", ""}}[revise]
	rec := func(v map[string]any) []byte {
		v["sessionId"], v["cwd"], v["version"], v["userType"], v["isSidechain"] = resumeBenchSession, "/home/dev/src/quill", "2.1.40", "external", false
		v["timestamp"] = fmt.Sprintf("2026-03-09T%02d:%02d:%02d.000Z", 8+i/3600, i/60%60, i%60)
		data, err := json.Marshal(v)
		if err != nil {
			panic(err)
		}
		return append(data, '\n')
	}
	msg := func(id string, content any, stop any) map[string]any {
		return map[string]any{"model": "claude-sonnet-4-5", "id": id, "type": "message", "role": "assistant",
			"content": content, "stop_reason": stop, "usage": map[string]int{"input_tokens": 12, "output_tokens": 30}}
	}
	answer := fmt.Sprintf("The `render%d` step in `pipeline/stage%d.go` now streams rows%s, "+
		"so a report of stage %d no longer holds every row in memory. The cache key of stage %d includes the locale, "+
		"because two locales rendered the same key before.\n\n"+
		"- `pipeline/stage%d.go`: the streaming writer for stage %d\n"+
		"- Run `quill build --config quill.yaml --stage %d` to try it\n"+
		"- Run `quill test --race` before committing", i, i, instead[0], i, i, i, i, i)
	if pad > 0 {
		var file strings.Builder
		file.WriteString("\n\nThe stage now reads:\n\n```go\n")
		for k := 0; file.Len() < pad; k++ {
			fmt.Fprintf(&file, "\tstage%d.option%d = load(\"opt-%d-%d\", %d)\n", i, k, i, k, k*i)
		}
		answer += file.String() + "```"
	}
	tool := fmt.Sprintf("toolu_%06d", i)
	return [][]byte{
		rec(map[string]any{"type": "user", "uuid": fmt.Sprintf("u%d", i), "parentUuid": nil,
			"message": map[string]any{"role": "user", "content": fmt.Sprintf("make stage %d stream its rows%s", i, instead[1])}}),
		rec(map[string]any{"type": "assistant", "uuid": fmt.Sprintf("a%d", i), "parentUuid": nil, "requestId": fmt.Sprintf("req_%d_1", i),
			"message": msg(fmt.Sprintf("msg_%d_1", i), []any{map[string]any{"type": "tool_use", "id": tool, "name": "Edit",
				"input": map[string]any{"file_path": fmt.Sprintf("/home/dev/src/quill/pipeline/stage%d.go", i),
					"old_string": "rows := buffer(all)", "new_string": "w := stream(out)"}}}, nil)}),
		rec(map[string]any{"type": "user", "uuid": fmt.Sprintf("r%d", i), "parentUuid": nil,
			"message": map[string]any{"role": "user", "content": []any{map[string]any{"tool_use_id": tool, "type": "tool_result",
				"content": "The file has been updated."}}}}),
		rec(map[string]any{"type": "assistant", "uuid": fmt.Sprintf("b%d", i), "parentUuid": nil, "requestId": fmt.Sprintf("req_%d_2", i),
			"message": msg(fmt.Sprintf("msg_%d_2", i), []any{map[string]any{"type": "text", "text": answer}}, "end_turn")}),
	}
}

// resumeRig is a daemon on a data dir and one session file, started and
// stopped by hand (a restart is what is measured).
type resumeRig struct {
	b    testing.TB
	cfg  config.Config
	path string
	d    *Daemon
	cl   *httpapi.Client
	stop func()
}

// start opens and serves a daemon on the rig's config.
func (r *resumeRig) start() {
	r.b.Helper()
	d, _, stop := startServing(r.b, Options{Config: r.cfg, Version: "test"})
	r.d, r.cl, r.stop = d, httpapi.NewClient(d.listen, d.Token()), stop
}

// append writes lines at the end of the session file.
func (r *resumeRig) append(lines ...[]byte) {
	r.b.Helper()
	f, err := os.OpenFile(r.path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		r.b.Fatal(err)
	}
	defer f.Close()
	if _, err := f.Write(bytes.Join(lines, nil)); err != nil {
		r.b.Fatal(err)
	}
}

// hook sends a Stop for the session file and waits until it is read.
func (r *resumeRig) hook(session string) {
	r.b.Helper()
	tr := &transcriptRig{t: r.b, d: r.d}
	before := r.d.tail.Stats().Processed
	got, err := r.cl.CaptureTranscript(context.Background(), httpapi.TranscriptRequest{Path: r.path, Event: tail.EventStop,
		SessionID: session, CWD: "/home/dev/src/quill"})
	if err != nil || !got.Queued {
		r.b.Fatalf("capture transcript: %+v %v", got, err)
	}
	tr.waitProcessed(before + 1)
}

// resumeSetupLines are the lines newResumeRig writes between two reads
// (8 turns: each read within the wait's deadline on a loaded machine).
const resumeSetupLines = 32

// newResumeRig captures earlier (a session file's lines) in a daemon of
// its own, stops it, and returns a rig whose data dir template holds what
// it stored and its cursor: each run copies it (fresh). Its dirs are b's
// (they outlive a sub-benchmark's runs); a failure is fb's.
func newResumeRig(b, fb testing.TB, name string, earlier [][]byte, session string) (*resumeRig, string) {
	fb.Helper()
	template := b.TempDir()
	r := resumeRigAt(b, fb, b.TempDir(), template, name)
	r.start()
	for len(earlier) > 0 { // a read at most every resumeSetupLines (the wait's deadline)
		k := min(len(earlier), resumeSetupLines)
		r.append(earlier[:k]...)
		r.hook(session)
		earlier = earlier[k:]
	}
	r.stop()
	return r, template
}

// resumeRigAt returns a rig (not started) whose session file is name in
// a project folder of root and whose data dir is dataDir. Its dirs are
// b's; a failure is fb's.
func resumeRigAt(b, fb testing.TB, root, dataDir, name string) *resumeRig {
	dir := filepath.Join(root, "-home-dev-src-quill")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		fb.Fatal(err)
	}
	cfg := config.Default()
	cfg.Listen = "127.0.0.1:0"
	cfg.Embedder.Provider = "builtin"
	cfg.Capture.Transcripts.ClaudeCodeDirs = []string{root}
	cfg.Capture.Transcripts.CodexDirs = []string{b.TempDir()}
	cfg.DataDir = dataDir
	return &resumeRig{b: fb, cfg: cfg, path: filepath.Join(dir, name+".jsonl")}
}

// fresh copies the template data dir to a new one and writes the session
// file with earlier only (the file the template's cursor saved).
func (r *resumeRig) fresh(template string, earlier [][]byte) {
	r.b.Helper()
	r.cfg.DataDir = filepath.Join(r.b.TempDir(), "data")
	if err := os.CopyFS(r.cfg.DataDir, os.DirFS(template)); err != nil {
		r.b.Fatal(err)
	}
	if err := os.WriteFile(r.path, bytes.Join(earlier, nil), 0o600); err != nil {
		r.b.Fatal(err)
	}
}

// BenchmarkRestartThenTurn measures what a restarted daemon pays for the
// first new turn of a busy session file: a transcript of n earlier turns
// captured by a daemon that was then stopped; a new daemon on its data
// dir reads the turns before the saved cursor again (tail.Options.Resume)
// on its first read of the file, then captures the new turn ("restart").
// "running" is the same new turn captured by a daemon that read the file
// (and resumed it) before the turn was written: what the turn costs
// without a restart. Only the hook of the new turn and the read it waits
// for are timed; the copy of the data dir and the daemon's start are
// not. Beside the wall clock it reports the process's CPU time in the
// timed part (cpu-ms/op: the daemon's, the machine's load not counted).
// Run with -cpu 1, the two variants of each n interleaved by -count.
//
// The turns are about 650 bytes of text each: a session keeps the last
// 512 KiB of them (about 800 turns) and a resume reads again two such
// windows, so up to n = 1000 it reads every turn. "pad=16KiB" turns
// (paddedTurnLines) pass two windows at n = 100 (32 turns a window).
func BenchmarkRestartThenTurn(b *testing.B) {
	for _, c := range []struct{ n, pad int }{{10, 0}, {100, 0}, {1000, 0}, {100, 16 << 10}} {
		n := c.n
		var earlier [][]byte
		for i := 1; i <= n; i++ {
			earlier = append(earlier, paddedTurnLines(i, c.pad, true)...)
		}
		next := paddedTurnLines(n+1, c.pad, true)
		var r *resumeRig
		var template string
		size := ""
		if c.pad > 0 {
			size = fmt.Sprintf(",pad=%dKiB", c.pad>>10)
		}
		for _, restart := range []bool{true, false} {
			name := fmt.Sprintf("turns=%d%s/running", n, size)
			if restart {
				name = fmt.Sprintf("turns=%d%s/restart", n, size)
			}
			b.Run(name, func(sb *testing.B) {
				if r == nil {
					r, template = newResumeRig(b, sb, resumeBenchSession, earlier, resumeBenchSession)
				}
				r.b = sb
				benchNewTurn(sb, r, template, earlier, next, resumeBenchSession, restart)
			})
		}
	}
}

// benchNewTurn times the capture of next after earlier, on a fresh copy
// of template each run: by a daemon's first read of the file (restart) or
// by a daemon that has read it once before next was written.
func benchNewTurn(b *testing.B, r *resumeRig, template string, earlier, next [][]byte, session string, restart bool) {
	b.StopTimer()
	var cpu time.Duration
	for range b.N {
		r.fresh(template, earlier)
		r.start()
		if !restart {
			r.hook(session) // the first read: the earlier turns resumed, nothing new
		}
		r.append(next...)
		b.StartTimer()
		c0 := processCPU()
		r.hook(session)
		cpu += processCPU() - c0
		b.StopTimer()
		if st := r.d.tail.Stats(); st.Turns != 1 || st.Duplicates != 0 {
			b.Fatalf("after the new turn: %+v, want 1 turn", st)
		}
		r.stop()
	}
	if cpu > 0 {
		b.ReportMetric(float64(cpu.Microseconds())/float64(b.N)/1000, "cpu-ms/op")
	}
}
