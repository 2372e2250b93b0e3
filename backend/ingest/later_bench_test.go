package ingest

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/memtray/memtray/backend/memory"
)

// patchSession returns a synthetic Codex-like session of n user turns,
// each of which edits a configuration file with an apply_patch call (a
// hunk of 60 settings, one of them removed: what removedLaterText reads),
// states a finding, runs the tests and sums up; every other turn corrects
// the finding of the turn before it ("Actually, ..."), so that live
// capture distils the session's earlier turns again knowing it.
func patchSession(id string, n int) []Turn {
	var exs []memory.Exchange
	for i := range n {
		var hunk strings.Builder
		for k := range 60 {
			if k == 30 {
				fmt.Fprintf(&hunk, "-legacy_retry_%d = true\n", i)
			}
			fmt.Fprintf(&hunk, " worker_%d_option_%d = %d\n", i, k, k*i)
		}
		patch := fmt.Sprintf("*** Begin Patch\n*** Update File: pkg%d/config.toml\n@@ [worker]\n%s*** End Patch", i, hunk.String())
		in, _ := json.Marshal(map[string]any{"command": []string{"apply_patch", patch}})
		finding := fmt.Sprintf("The scheduler in `pkg%[1]d/sched.go` retries a failed job %[2]d times because the queue driver drops the lease after %[2]d0 seconds.", i, i%7+2)
		if i%2 == 1 {
			finding += fmt.Sprintf(" Actually, the scheduler in `pkg%[1]d/sched.go` retries %[2]d times, not %[3]d: it reads `retry_count` from `pkg%[1]d/config.toml`.", i-1, i%5+3, (i-1)%7+2)
		}
		summary := fmt.Sprintf("Changed the retry count of worker %[1]d.\n\n"+
			"- Removed `legacy_retry_%[1]d` from `pkg%[1]d/config.toml`, so the scheduler no longer retries twice\n"+
			"- Run the tests with `go test ./pkg%[1]d/...` before pushing\n", i)
		call := fmt.Sprintf("c%d", i)
		turn := []memory.Exchange{
			{User: fmt.Sprintf("tune the retries of worker %d", i), Assistant: "Let me update the worker's configuration.",
				ToolCalls: []memory.ToolCall{{ID: call + "a", Name: "shell", Input: string(in)}}},
			{ToolLoop: true, Assistant: finding,
				ToolResults: []memory.ToolResult{{ToolUseID: call + "a", Content: fmt.Sprintf("Success. Updated the following files:\nM pkg%d/config.toml", i)}},
				ToolCalls:   []memory.ToolCall{{ID: call + "b", Name: "shell", Input: fmt.Sprintf(`{"command":["bash","-lc","go test ./pkg%d/..."]}`, i)}}},
			{ToolLoop: true, Assistant: summary,
				ToolResults: []memory.ToolResult{{ToolUseID: call + "b", Content: "ok"}}},
		}
		for _, ex := range turn {
			ex.SessionID, ex.Project, ex.Turn, ex.UserTurns = id, "shop", len(exs)+1, i+1
			exs = append(exs, ex)
		}
	}
	return GroupTurns(exs)
}

// BenchmarkLiveSessionLater captures an n-turn synthetic Codex-like
// session live (patchSession: every turn an apply_patch, every other turn
// a correction, so its earlier turns are distilled again knowing what
// followed them): what a long session costs per turn as it grows, which
// grew with the square of its turns while each distillation read every
// later turn's patches again (LaterTexts).
func BenchmarkLiveSessionLater(b *testing.B) {
	ctx := context.Background()
	for _, n := range []int{16, 32} {
		b.Run(fmt.Sprintf("turns=%d", n), func(b *testing.B) {
			turns := patchSession("bench", n)
			if len(turns) != n {
				b.Fatalf("%d turns, want %d", len(turns), n)
			}
			b.ReportAllocs()
			for range b.N {
				b.StopTimer()
				f := newFixture(b, nil)
				b.StartTimer()
				for _, tn := range turns {
					if _, _, err := f.p.ProcessTurn(ctx, tn, nil, SessionState{}); err != nil {
						b.Fatal(err)
					}
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/turn")
		})
	}
}

// BenchmarkBatchLaterTexts gathers what the session said after each turn
// of an n-turn synthetic Codex-like session (patchSession), as batch
// ingest gives it to each turn of a request (feed.Ingest): each turn's
// texts, its patches' removals among them, were read again for every
// turn before it.
func BenchmarkBatchLaterTexts(b *testing.B) {
	for _, n := range []int{16, 64} {
		b.Run(fmt.Sprintf("turns=%d", n), func(b *testing.B) {
			turns := patchSession("bench", n)
			b.ReportAllocs()
			k := 0
			for range b.N {
				after := laterEach(turns)
				for i, tn := range turns {
					k += len(after(i, tn.SessionID))
				}
			}
			if k == 0 {
				b.Fatal("no later texts")
			}
		})
	}
}

// laterEach returns what batch ingest gives turn i of turns as what its
// session said after it.
func laterEach(turns []Turn) func(i int, session string) []LaterText {
	l := NewLater(turns)
	return l.After
}

// insteadSession returns a synthetic Claude Code-like session of n user
// turns as BenchmarkRestartThenTurn (backend/daemon) writes it: each
// prompt asks for a change "instead of" what is there (a revision cue),
// each turn edits a file and answers with two findings and a list, one
// line of which every turn repeats. Every turn revises, so live capture
// distils the session's recent turns again at each one (reviseEarlier).
func insteadSession(id string, n int) []Turn {
	var exs []memory.Exchange
	for i := 1; i <= n; i++ {
		answer := fmt.Sprintf("The `render%d` step in `pipeline/stage%d.go` now streams rows instead of buffering the whole table, "+
			"so a report of stage %d no longer holds every row in memory. The cache key of stage %d includes the locale, "+
			"because two locales rendered the same key before.\n\n"+
			"- `pipeline/stage%d.go`: the streaming writer for stage %d\n"+
			"- Run `quill build --config quill.yaml --stage %d` to try it\n"+
			"- Run `quill test --race` before committing", i, i, i, i, i, i, i)
		call := fmt.Sprintf("toolu_%06d", i)
		in := fmt.Sprintf(`{"file_path":"/home/dev/src/quill/pipeline/stage%d.go","old_string":"rows := buffer(all)","new_string":"w := stream(out)"}`, i)
		turn := []memory.Exchange{
			{User: fmt.Sprintf("make stage %d stream its rows instead of buffering them", i),
				ToolCalls: []memory.ToolCall{{ID: call, Name: "Edit", Input: in}}},
			{ToolLoop: true, Assistant: answer, ToolResults: []memory.ToolResult{{ToolUseID: call, Content: "The file has been updated."}}},
		}
		for _, ex := range turn {
			ex.SessionID, ex.Project, ex.Turn, ex.UserTurns = id, "quill", len(exs)+1, i
			exs = append(exs, ex)
		}
	}
	return GroupTurns(exs)
}

// BenchmarkLiveSessionRevising captures an n-turn session whose every
// turn revises (insteadSession) live, with the revising sentences read
// once per new turn (reviserMemo) and, as at 7034821, once for every
// earlier turn distilled again ("memo off"): the time of the last
// quarter of its turns, per turn, when the session's recent turns reach
// maxRedistillBytes, and the process's CPU time in it (the machine's
// load does not count). Run with -cpu 1; the two variants of one n
// compare within a run.
func BenchmarkLiveSessionRevising(b *testing.B) {
	for _, n := range []int{40, 80} {
		turns := insteadSession("bench", n)
		if len(turns) != n {
			b.Fatalf("%d turns, want %d", len(turns), n)
		}
		for _, off := range []bool{false, true} {
			name := fmt.Sprintf("turns=%d/memo", n)
			if off {
				name += " off"
			}
			b.Run(name, func(b *testing.B) {
				revMemoOff = off
				b.Cleanup(func() { revMemoOff = false })
				benchTurns(b, turns, func(*fixture, int) SessionState { return SessionState{} }, nil)
			})
		}
	}
}
