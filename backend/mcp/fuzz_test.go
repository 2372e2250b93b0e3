package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/memtray/memtray/backend/memory"
	"github.com/memtray/memtray/backend/search"
)

// fakeBackend answers every call with something plausible, so the fuzzer
// exercises the tools' decoding, validation and formatting, not a store.
type fakeBackend struct{}

func (fakeBackend) Recall(_ context.Context, req search.RecallRequest) (search.Recalled, error) {
	if err := req.Validate(); err != nil {
		return search.Recalled{}, err
	}
	m := memory.Memory{ID: "m1", Text: req.Prompt, Kind: memory.KindFact, Project: req.Project, CreatedAt: time.Now()}
	return search.Recalled{Hits: []memory.Hit{{Memory: m, Score: 0.5}}, AlreadyGiven: []string{"m0"}, Given: 2}, nil
}

func (fakeBackend) Remember(_ context.Context, m memory.Memory) (memory.Decision, error) {
	if err := m.Validate(); err != nil {
		return memory.Decision{}, err
	}
	return memory.Decision{Verdict: memory.VerdictStored, MemoryIDs: []string{"m1"}}, nil
}

func (fakeBackend) Delete(context.Context, string) error { return nil }

func (fakeBackend) IngestDocument(_ context.Context, name, _, text string) (memory.Decision, error) {
	return memory.Decision{Verdict: memory.VerdictStored, Chunks: 1 + len(text)/2048, MemoryIDs: []string{"d-" + name}}, nil
}

func (fakeBackend) Reinforce(_ context.Context, id string) (memory.Memory, error) {
	return memory.Memory{ID: id, ReinforcedCount: 1}, nil
}

func (fakeBackend) Rate(_ context.Context, ids []string, score int, _ string) ([]memory.Memory, error) {
	out := make([]memory.Memory, len(ids))
	for i, id := range ids {
		out[i] = memory.Memory{ID: id, FeedbackSum: float64(score), FeedbackN: 1}
	}
	return out, nil
}

func (fakeBackend) Snooze(_ context.Context, id string, days float64) (memory.Memory, error) {
	return memory.Memory{ID: id, CooldownUntil: time.Now().Add(time.Duration(days * 24 * float64(time.Hour)))}, nil
}

func (fakeBackend) Status(context.Context) (Status, error) {
	st := Status{ByKind: map[string]int{}, ByProject: map[string]int{}, Version: "fuzz"}
	for i := range 30 {
		st.ByProject[fmt.Sprintf("p\n%d", i)] = i
		st.ByKind[string(memory.Kinds[i%len(memory.Kinds)])]++
		st.Total += i
	}
	return st, nil
}

// FuzzToolArgs sends random JSON arguments to every tool through the MCP
// server: whatever comes in, a tool answers with a result or a tool error,
// never a panic or a protocol failure.
func FuzzToolArgs(f *testing.F) {
	seeds := []string{
		`{}`, `null`, `[]`, `"x"`, `1`, `{"query":"deploy","limit":5,"project":"api","kind":"decision"}`,
		`{"query":"x","limit":0}`, `{"query":"x","limit":1e309}`, `{"query":"x","limit":-1}`, `{"query":{"a":1}}`,
		`{"text":"The build uses Go 1.26.","kind":"fact","type":"user","importance":0.7}`, `{"text":"x","importance":"high"}`,
		`{"id":"m1"}`, `{"id":""}`, `{"id":null}`, `{"id":["a"]}`,
		`{"path":"/etc/hostname"}`, `{"path":"relative"}`, `{"path":"/dev/null"}`, `{"text":"doc","name":"n"}`, `{"text":"doc","name":"n","path":"/x"}`,
		`{"ids":["a","b"],"score":1,"reason":"ok"}`, `{"ids":[1,2],"score":1}`, `{"ids":["a"],"score":1.5}`, `{"ids":null,"score":-1}`,
		`{"id":"m1","days":0}`, `{"id":"m1","days":3650.5}`, `{"id":"m1","days":"NaN"}`, `{"Query":"case"}`, `{"query":"a","query":"b"}`,
		"{\"query\":\"\xff\"}", `{"query":"x"} {"query":"y"}`,
	}
	for i, s := range seeds {
		f.Add(uint8(i), []byte(s))
	}
	ctx := context.Background()
	st, ct := sdk.NewInMemoryTransports()
	ss, err := NewServer(fakeBackend{}, Options{Version: "fuzz"}).Connect(ctx, st, nil)
	if err != nil {
		f.Fatal(err)
	}
	defer ss.Close()
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "fuzz", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		f.Fatal(err)
	}
	defer cs.Close()

	f.Fuzz(func(t *testing.T, which uint8, args []byte) {
		tool := ToolNames[int(which)%len(ToolNames)]
		var arguments any = json.RawMessage(args)
		if !json.Valid(args) {
			arguments = string(args) // the client sends valid JSON: make it a JSON string
		}
		res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: tool, Arguments: arguments})
		if err != nil {
			t.Fatalf("%s %q: protocol error %v", tool, args, err)
		}
		if len(res.Content) == 0 {
			t.Fatalf("%s %q: empty result", tool, args)
		}
		if res.IsError {
			txt := res.Content[0].(*sdk.TextContent).Text
			if !strings.HasPrefix(txt, tool+": ") {
				t.Fatalf("%s %q: error does not name the tool: %q", tool, args, txt)
			}
			return
		}
		if res.StructuredContent == nil {
			t.Fatalf("%s %q: no structured content", tool, args)
		}
	})
}

// FuzzDecodeArgs feeds random JSON straight to the argument decoder and
// the validation of every tool's argument type.
func FuzzDecodeArgs(f *testing.F) {
	f.Add([]byte(`{"query":"x","limit":3}`))
	f.Add([]byte(`{"ids":["a"],"score":-1}`))
	f.Add([]byte(`{"text":"t","name":"n","path":""}`))
	f.Add([]byte(`{"id":"a","days":1e308}`))
	schemas := map[string]func(json.RawMessage) error{
		ToolSearch: func(raw json.RawMessage) error {
			a, err := decodeArgs[SearchArgs](raw, schemaFor[SearchArgs](nil))
			if err == nil {
				err = a.validate()
			}
			return err
		},
		ToolStore: func(raw json.RawMessage) error {
			a, err := decodeArgs[StoreArgs](raw, schemaFor[StoreArgs](nil))
			if err == nil {
				err = a.validate()
			}
			return err
		},
		ToolRate: func(raw json.RawMessage) error {
			a, err := decodeArgs[RateArgs](raw, schemaFor[RateArgs](nil))
			if err == nil {
				err = a.validate()
			}
			return err
		},
		ToolIngest: func(raw json.RawMessage) error {
			a, err := decodeArgs[IngestArgs](raw, schemaFor[IngestArgs](nil))
			if err == nil && a.Path == "" {
				_, _, err = a.document()
			}
			return err
		},
		ToolSnooze: func(raw json.RawMessage) error {
			_, err := decodeArgs[SnoozeArgs](raw, schemaFor[SnoozeArgs](nil))
			return err
		},
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		for name, check := range schemas {
			if err := check(raw); err != nil && err.Error() == "" {
				t.Fatalf("%s: empty error for %q", name, raw)
			}
		}
	})
}
