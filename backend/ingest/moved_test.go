package ingest

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/memtray/memtray/backend/memory"
)

func bashCall(id, cmd string) memory.ToolCall {
	in, _ := json.Marshal(map[string]string{"command": cmd})
	return memory.ToolCall{ID: id, Name: "Bash", Input: string(in)}
}

func TestCallRelocations(t *testing.T) {
	codexArgv, _ := json.Marshal(map[string]any{"command": []string{"bash", "-lc", "git mv src/old_name.py src/new_name.py"}, "workdir": "/w/app"})
	patch, _ := json.Marshal(map[string]any{"command": []string{"bash", "-lc", "apply_patch << 'PATCH'\n*** Begin Patch\n*** Update File: lib/a.ex\n*** Move to: lib/b/a.ex\n@@\n-x\n+y\n*** Delete File: config/legacy.toml\n*** End Patch\nPATCH"}})
	tests := []struct {
		name string
		call memory.ToolCall
		want []string // "from -> to"
	}{
		{"mv with absolute paths", bashCall("1", "mkdir -p /r/priv/bin && mv /r/tools/run.sh /r/priv/bin/run.sh && rmdir /r/tools 2>/dev/null || true"), []string{"/r/tools/run.sh -> /r/priv/bin/run.sh"}},
		{"relative paths after cd", bashCall("1", "cd /r && git mv -f tools/run.sh priv/bin/"), []string{"/r/tools/run.sh -> /r/priv/bin/run.sh"}},
		{"a file moved into a folder named without a slash", bashCall("1", "mv notes.md docs"), []string{"notes.md -> docs/notes.md"}},
		{"several sources", bashCall("1", "mv a.go b.go pkg/"), []string{"a.go -> pkg/a.go", "b.go -> pkg/b.go"}},
		{"quoted path", bashCall("1", `mv "my dir/x.txt" y.txt`), []string{"my dir/x.txt -> y.txt"}},
		{"rm", bashCall("1", "rm -f migrations/001_hand.sql"), []string{"migrations/001_hand.sql -> "}},
		{"git rm --cached keeps the file", bashCall("1", "git rm --cached secrets.env"), nil},
		{"a glob is not read", bashCall("1", "rm -rf build/*.o"), nil},
		{"a variable is not read", bashCall("1", "mv $SRC dest.txt"), nil},
		{"a here-document's lines are text", bashCall("1", "git commit -F - <<'EOF'\nrm old.txt\nEOF"), nil},
		{"a command that only names mv", bashCall("1", "grep -rn 'mv ' scripts/"), nil},
		{"Codex argv with a workdir", memory.ToolCall{ID: "1", Name: "shell", Input: string(codexArgv)}, []string{"/w/app/src/old_name.py -> /w/app/src/new_name.py"}},
		{"Codex apply_patch moves and deletes", memory.ToolCall{ID: "1", Name: "shell", Input: string(patch)}, []string{"lib/a.ex -> lib/b/a.ex", "config/legacy.toml -> "}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			rs, _ := callFiles(tt.call, callPatch(tt.call))
			for _, r := range rs {
				got = append(got, r.from+" -> "+r.to)
			}
			if !slices.Equal(got, tt.want) {
				t.Fatalf("got %q, want %q", got, tt.want)
			}
		})
	}
}

func TestOldPlace(t *testing.T) {
	tests := []struct {
		p, from, to string
		want        bool
	}{
		{"scripts/x.sh", "/r/scripts/x.sh", "/r/priv/scripts/x.sh", true},
		{"priv/scripts/x.sh", "/r/scripts/x.sh", "/r/priv/scripts/x.sh", false},
		{"x.sh", "/r/scripts/x.sh", "/r/priv/scripts/x.sh", false},
		{"scripts", "/r/scripts", "/r/priv/scripts", true},
		// moved up: "scripts/x.sh" is where it went
		{"scripts/x.sh", "/r/priv/scripts/x.sh", "/r/scripts/x.sh", false},
		{"priv/scripts/x.sh", "/r/priv/scripts/x.sh", "/r/scripts/x.sh", true},
		{"cfg/old.toml", "/r/cfg/old.toml", "", true},
		{"lib/a.ex", "/r/lib/a.ex", "/r/lib/b.ex", true},
		{"other/a.ex", "/r/lib/a.ex", "/r/lib/b.ex", false},
	}
	for _, tt := range tests {
		if got := oldPlace(tt.p, tt.from, tt.to); got != tt.want {
			t.Errorf("oldPlace(%q, %q, %q) = %v", tt.p, tt.from, tt.to, got)
		}
	}
}

// movedTurn is a turn whose model says texts, each step with its calls.
func movedTurn(texts []string, calls [][]memory.ToolCall) Turn {
	t := Turn{SessionID: "s-mv", User: []string{"wire the tail worker"}}
	for i, tx := range texts {
		s := Step{Text: tx}
		if i < len(calls) {
			s.Calls = calls[i]
		}
		t.Steps = append(t.Steps, s)
	}
	return t
}

func TestDropRelocated(t *testing.T) {
	mv := []memory.ToolCall{bashCall("m", "mkdir -p /r/priv/bin && mv /r/tools/run_helper.sh /r/priv/bin/run_helper.sh")}
	claim := "The helper is in `tools/` at the top level, but the worker resolves it with `Application.app_dir(:acme, \"priv/bin/run_helper.sh\")` because releases only ship `priv`."
	item := "The tail worker restarts its port on exit because `tail -F` dies with its parent; its pieces:\n\n- `Acme.Tail.Worker` GenServer supervised by a `DynamicSupervisor`\n- `tools/run_helper.sh`"
	tests := []struct {
		name   string
		texts  []string
		calls  [][]memory.ToolCall
		later  []LaterText
		gone   string // no kept statement has it with the mechanism on, one has it off
		stays  string // a kept statement has it either way
		reason string // the prefix of the reason when a statement goes whole
	}{
		{
			name:  "a locative clause before the move, the same response",
			texts: []string{claim, "Moved it. The worker now starts `run_helper.sh` through an Erlang port with `tail -F` semantics."},
			calls: [][]memory.ToolCall{mv},
			gone:  "is in `tools/`",
			stays: "resolves it with `Application.app_dir",
		},
		{
			name:  "an item naming the old path in an earlier response",
			texts: []string{item, "Starting with the supervisor.", "The helper script is wrapped so the port exits when the worker stops."},
			calls: [][]memory.ToolCall{nil, mv},
			gone:  "`tools/run_helper.sh`",
			stays: "DynamicSupervisor",
		},
		{
			name:  "a later turn's move",
			texts: []string{"The helper lives in `tools/` next to the other scripts, and `run_helper.sh` traps SIGTERM so the port exits cleanly."},
			later: []LaterText{{Text: "/r/tools/run_helper.sh\t/r/priv/bin/run_helper.sh\n", From: LaterMoved}},
			gone:  "lives in `tools/`",
			stays: "traps SIGTERM",
		},
		{
			name:   "a deleted file named by its path",
			texts:  []string{"The unique index on `(session_id, uuid)` that the upsert needs is in `priv/repo/migrations/001_add_index.exs`.", "Switching to the generated migration."},
			calls:  [][]memory.ToolCall{nil, {bashCall("d", "rm /r/priv/repo/migrations/001_add_index.exs")}},
			gone:   "001_add_index.exs",
			reason: "revised later: rm /r/priv/repo/migrations/001_add_index.exs",
		},
		{
			name:  "the old path named in passing",
			texts: []string{"`tools/run_helper.sh` traps SIGTERM and SIGHUP and kills its `tail -F` child, because a closed port does not stop the child process.", "Moving it."},
			calls: [][]memory.ToolCall{nil, mv},
			stays: "`tools/run_helper.sh` traps SIGTERM",
		},
		{
			name:  "a locative before the old path",
			texts: []string{"The wrapper lives at `tools/run_helper.sh`, and it traps SIGTERM and SIGHUP and kills its `tail -F` child because a closed port does not stop the child process.", "Moving it."},
			calls: [][]memory.ToolCall{nil, mv},
			gone:  "lives at",
			stays: "kills its `tail -F` child",
		},
		{
			name:  "the file's name alone is no place",
			texts: []string{"The `run_helper.sh` wrapper traps SIGTERM and SIGHUP so the port's `tail -F` child exits with the worker.", "Moving it."},
			calls: [][]memory.ToolCall{nil, mv},
			stays: "traps SIGTERM and SIGHUP",
		},
		{
			name:  "a change log of the move",
			texts: []string{"Starting.", "Moved `tools/run_helper.sh` to `priv/bin/` because `Application.app_dir` only resolves files under `priv`."},
			calls: [][]memory.ToolCall{mv},
			stays: "Moved `tools/run_helper.sh`",
		},
		{
			name:  "where it was",
			texts: []string{"The helper was in `tools/` before, but `run_helper.sh` must sit under `priv` because releases ship only `priv`.", "Moving it."},
			calls: [][]memory.ToolCall{nil, mv},
			stays: "was in `tools/`",
		},
		{
			name:  "said after the move",
			texts: []string{"Moving it.", "The helper is in `priv/bin/` now, so `run_helper.sh` ships with the release because releases carry `priv`."},
			calls: [][]memory.ToolCall{mv},
			stays: "is in `priv/bin/`",
		},
		{
			name:  "moved back later in the turn",
			texts: []string{claim, "That broke the dev script; moving it back."},
			calls: [][]memory.ToolCall{mv, {bashCall("b", "mv /r/priv/bin/run_helper.sh /r/tools/run_helper.sh")}},
			stays: "is in `tools/`",
		},
		{
			name:  "moved deeper into the folder a statement names",
			texts: []string{"The helper is in `tools/` next to the other scripts, and `run_helper.sh` must be executable because `Port.open` refuses a script without the exec bit.", "Grouping the scripts."},
			calls: [][]memory.ToolCall{nil, {bashCall("g", "mkdir -p /r/tools/port && mv /r/tools/run_helper.sh /r/tools/port/")}},
			stays: "is in `tools/`",
		},
		{
			name:  "another file moved",
			texts: []string{claim, "Moving the other one."},
			calls: [][]memory.ToolCall{nil, {bashCall("o", "mv /r/tools/other.sh /r/priv/bin/other.sh")}},
			stays: "is in `tools/`",
		},
	}
	run := func(tn Turn, later []LaterText) (kept, dropped []string) {
		for _, c := range Distill(tn, later) {
			if c.Keep {
				kept = append(kept, c.Text)
			} else {
				dropped = append(dropped, c.Text+" | "+c.Reason)
			}
		}
		return kept, dropped
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tn := movedTurn(tt.texts, tt.calls)
			kept, dropped := run(tn, tt.later)
			if tt.gone != "" && anyHas(kept, tt.gone) {
				t.Errorf("kept %q: want %q cut", kept, tt.gone)
			}
			if tt.stays != "" && !anyHas(kept, tt.stays) {
				t.Errorf("kept %q (dropped %q): want %q kept", kept, dropped, tt.stays)
			}
			if tt.reason != "" && !anyHas(dropped, tt.reason) {
				t.Errorf("dropped %q: want the reason %q", dropped, tt.reason)
			}
			if tt.gone == "" {
				return
			}
			movedOff["all"] = true
			defer delete(movedOff, "all")
			if kept, _ := run(tn, tt.later); !anyHas(kept, tt.gone) {
				t.Errorf("mechanism off: kept %q, want %q (the case tests nothing)", kept, tt.gone)
			}
		})
	}
}

// TestRelocatedAcrossTurns: a file a later turn moves revises an earlier
// turn's statement of its old place; batch ingest and live capture (the
// earlier turn distilled again when the move comes) end with the same
// store.
func TestRelocatedAcrossTurns(t *testing.T) {
	ctx := context.Background()
	first := sessionOf("s-mv2", "where does the tail helper live?",
		"Let me look.",
		"The helper lives in `tools/` at the repository root, and `run_helper.sh` must be executable because `Port.open` with `:spawn_executable` refuses a script without the exec bit.")
	second := sessionOf("s-mv2", "the release can't find it, fix that", "Let me move it.", "Done: releases only ship `priv`, so the worker resolves the helper with `Application.app_dir(:acme, \"priv/bin/run_helper.sh\")`.")
	second[0].ToolCalls = []memory.ToolCall{bashCall("mv1", "mkdir -p /r/priv/bin && mv /r/tools/run_helper.sh /r/priv/bin/run_helper.sh")}
	for i := range second {
		second[i].Turn, second[i].UserTurns = second[i].Turn+3, 2
	}
	turns := GroupTurns(append(first, second...))
	if len(turns) != 2 {
		t.Fatalf("%d turns", len(turns))
	}
	stores := func() (batch, live []string) {
		b, l := newFixture(t, nil), newFixture(t, nil)
		for i, tn := range turns {
			if _, _, err := b.p.ProcessTurn(ctx, tn, LaterTexts(turns[i+1:], tn.SessionID), SessionState{Ended: true}); err != nil {
				t.Fatal(err)
			}
			if _, _, err := l.p.ProcessTurn(ctx, tn, nil, SessionState{}); err != nil {
				t.Fatal(err)
			}
		}
		return liveTexts(t, b.st), liveTexts(t, l.st)
	}
	want, got := stores()
	if !slices.Equal(want, got) {
		t.Fatalf("live store differs from batch:\nbatch %q\nlive  %q", want, got)
	}
	joined := strings.Join(got, "\n")
	if strings.Contains(joined, "lives in `tools/`") || !strings.Contains(joined, "must be executable") {
		t.Fatalf("store %q: want the old place cut, the rest kept", got)
	}
	movedOff["later"] = true
	defer delete(movedOff, "later")
	if want, got = stores(); !strings.Contains(strings.Join(want, "\n"), "lives in `tools/`") || !strings.Contains(strings.Join(got, "\n"), "lives in `tools/`") {
		t.Fatalf("a later turn's moves off: batch %q live %q, want the old place kept (the test tests nothing)", want, got)
	}
}

// TestRelocatedInContinuation: a move made where a turn goes on after its
// Stop (live capture reads the continuation apart and takes it into the
// turn: continueTurn) revises an earlier turn's statement of the file's
// old place, as batch ingest, which reads the turn whole, revises it.
func TestRelocatedInContinuation(t *testing.T) {
	ctx := context.Background()
	const id = "s-mv3"
	first := sessionOf(id, "where does the tail helper live?",
		"Let me look.",
		"The helper lives in `tools/` at the repository root, and `run_helper.sh` must be executable because `Port.open` with `:spawn_executable` refuses a script without the exec bit.")
	second := sessionOf(id, "the release can't find it, fix that", "Let me check what the release ships.", "Releases only ship `priv`; I'll move the helper once the build finishes.")
	for i := range second {
		second[i].Turn, second[i].UserTurns = second[i].Turn+3, 2
	}
	cont := []memory.Exchange{
		{SessionID: id, Turn: 6, UserTurns: 2, Project: "shop", ToolLoop: true, Assistant: "The build finished; moving the helper.",
			ToolCalls: []memory.ToolCall{bashCall("mv1", "mkdir -p /r/priv/bin && mv /r/tools/run_helper.sh /r/priv/bin/run_helper.sh")}},
		{SessionID: id, Turn: 7, UserTurns: 2, Project: "shop", ToolLoop: true, ToolResults: []memory.ToolResult{{ToolUseID: "mv1", Content: ""}},
			Assistant: "Done: the worker resolves the helper with `Application.app_dir(:acme, \"priv/bin/run_helper.sh\")`."},
	}
	all := append(append(append([]memory.Exchange{}, first...), second...), cont...)
	turns := GroupTurns(all)
	if len(turns) != 2 {
		t.Fatalf("batch reads %d turns, want 2", len(turns))
	}
	batch, live := newFixture(t, nil), newFixture(t, nil)
	for i, tn := range turns {
		if _, _, err := batch.p.ProcessTurn(ctx, tn, LaterTexts(turns[i+1:], id), SessionState{Ended: true}); err != nil {
			t.Fatal(err)
		}
	}
	for _, part := range [][]memory.Exchange{first, second, cont} {
		if _, _, err := live.p.ProcessTurn(ctx, GroupTurns(part)[0], nil, SessionState{}); err != nil {
			t.Fatal(err)
		}
	}
	want, got := liveTexts(t, batch.st), liveTexts(t, live.st)
	if joined := strings.Join(want, "\n"); strings.Contains(joined, "lives in `tools/`") || !strings.Contains(joined, "must be executable") {
		t.Fatalf("batch store %q: want the old place cut, the rest kept", want)
	}
	if !slices.Equal(want, got) {
		t.Fatalf("live store differs from batch:\nbatch %q\nlive  %q", want, got)
	}
}
