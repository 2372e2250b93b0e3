package cli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// rpcMessage is the part of a JSON-RPC message the test reads.
type rpcMessage struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Result json.RawMessage `json:"result"`
	Error  json.RawMessage `json:"error"`
}

// TestMCPClientsRecorded replays what each real client sent `memtray mcp`
// (testdata/clients/<client>-<version>/mcp-client.jsonl, recorded by
// build/record-clients.sh: Claude Code 2.1.332 first probes with
// server/discover of a newer protocol, then initializes and lists the
// tools; Codex initializes) through `memtray mcp` to a real daemon: every
// request is answered with its id, initialize names memtray, tools/list
// lists memtray's tools.
func TestMCPClientsRecorded(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "clients", "*", "mcp-client.jsonl"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no recorded MCP exchanges in testdata/clients (build/record-clients.sh): %v", err)
	}
	for _, f := range files {
		t.Run(filepath.Base(filepath.Dir(f)), func(t *testing.T) {
			recorded, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			cfg := mcpIsolate(t)
			serveDaemon(t, cfg)
			noFork(t)
			inR, inW := io.Pipe()
			outR, outW := io.Pipe()
			env := &Env{Stdin: inR, Stdout: outW, Stderr: &syncBuffer{}, Ctx: context.Background()}
			code := make(chan int, 1)
			go func() {
				c := Run(env, []string{"mcp", "--data-dir", cfg.DataDir})
				outW.Close()
				code <- c
			}()
			answers := make(chan rpcMessage, 16)
			go func() {
				sc := bufio.NewScanner(outR)
				sc.Buffer(nil, 1<<20)
				for sc.Scan() {
					var m rpcMessage
					if json.Unmarshal(sc.Bytes(), &m) == nil && m.ID != nil {
						answers <- m
					}
				}
				close(answers)
			}()
			asked := map[string]bool{}
			for line := range bytes.Lines(recorded) {
				var m rpcMessage
				if err := json.Unmarshal(line, &m); err != nil {
					t.Fatalf("recorded line %q: %v", line, err)
				}
				asked[m.Method] = true
				if _, err := inW.Write(line); err != nil {
					t.Fatal(err)
				}
				if m.ID == nil {
					continue // a notification: no answer
				}
				var a rpcMessage
				select {
				case a = <-answers:
				case <-time.After(testWait): // a failure guard
					t.Fatalf("%s (id %s): no answer within %s (stderr %s)", m.Method, m.ID, testWait, env.Stderr)
				}
				if !bytes.Equal(a.ID, m.ID) {
					t.Fatalf("%s: answer id %s, want %s", m.Method, a.ID, m.ID)
				}
				checkMCPAnswer(t, m.Method, a)
			}
			if !asked["initialize"] {
				t.Errorf("the recording has no initialize: %s", recorded)
			}
			inW.Close()
			if c := waitExit(t, code); c != 0 {
				t.Errorf("memtray mcp exited %d at the end of input: %s", c, env.Stderr)
			}
		})
	}
}

// checkMCPAnswer checks the answers to initialize and tools/list.
func checkMCPAnswer(t *testing.T, method string, a rpcMessage) {
	t.Helper()
	switch method {
	case "initialize":
		var res struct {
			ProtocolVersion string `json:"protocolVersion"`
			ServerInfo      struct {
				Name string `json:"name"`
			} `json:"serverInfo"`
		}
		if a.Error != nil || json.Unmarshal(a.Result, &res) != nil || res.ServerInfo.Name != "memtray" || res.ProtocolVersion == "" {
			t.Errorf("initialize: %s %s", a.Result, a.Error)
		}
	case "tools/list":
		var res struct {
			Tools []struct {
				Name string `json:"name"`
			} `json:"tools"`
		}
		if a.Error != nil || json.Unmarshal(a.Result, &res) != nil {
			t.Fatalf("tools/list: %s %s", a.Result, a.Error)
		}
		var names []string
		for _, tl := range res.Tools {
			names = append(names, tl.Name)
		}
		for _, want := range []string{"memory_search", "memory_store", "memory_status"} {
			if !slices.Contains(names, want) {
				t.Errorf("tools/list lacks %s: %v", want, names)
			}
		}
	}
}
