package daemon_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/memtray/memtray/backend/cli"
	"github.com/memtray/memtray/backend/config"
	"github.com/memtray/memtray/backend/daemon"
	"github.com/memtray/memtray/backend/httpapi"
	"github.com/memtray/memtray/backend/memory"
	"github.com/memtray/memtray/backend/store"
)

// oneText is what every entrance writes.
const oneText = "Feature flags are read from config/flags.yaml at start and are never hot-reloaded, because the workers cache them."

// TestEveryEntranceWritesOneMemory writes one text at the same time
// through every way a memory gets in (API add, CLI add through the
// client, MCP memory_store, a UI edit of another memory into the text,
// an export file imported, the Claude Code importer, a captured
// exchange), every one of no project, and finds one live memory holding
// it.
func TestEveryEntranceWritesOneMemory(t *testing.T) {
	ctx := context.Background()
	t.Setenv("MEMTRAY_CONFIG", filepath.Join(t.TempDir(), "none.json"))
	cfg := config.Default()
	cfg.DataDir = t.TempDir()
	cfg.Listen = "127.0.0.1:0"
	cfg.Embedder.Provider = "builtin"
	cfg.Capture.Transcripts.ClaudeCodeDirs = []string{t.TempDir()}
	cfg.Capture.Transcripts.CodexDirs = []string{t.TempDir()}
	d, addr := daemon.ServeWith(t, daemon.Options{Config: cfg, Version: "test"})
	c := httpapi.NewClient(addr, d.Token())

	// The memory the UI edits into the text, and the files to import.
	other, err := d.Memories().Add(ctx, httpapi.AddRequest{Text: "The nightly backup job writes to the s3://ops-backups bucket in eu-west-1."})
	if err != nil {
		t.Fatal(err)
	}
	export := exportOf(t, oneText)
	// The user's own CLAUDE.md: of no project, as every other entrance
	// writes here (exact dedup is per project: a project's memory file,
	// ~/.claude/projects/<folder>/memory/*.md, would be that project's
	// memory of its own).
	home := t.TempDir()
	if err := os.MkdirAll(filepath.Join(home, ".claude"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, ".claude", "CLAUDE.md"), []byte(oneText+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}

	entrances := map[string]func() error{
		"api add": func() error {
			_, err := c.Add(ctx, httpapi.AddRequest{Text: oneText})
			return err
		},
		"cli add": func() error {
			var out, errb bytes.Buffer
			code := cli.Run(&cli.Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb, Ctx: ctx},
				[]string{"add", "--data-dir", cfg.DataDir, oneText})
			if code != 0 {
				return fmt.Errorf("memtray add: %d %s %s", code, out.String(), errb.String())
			}
			return nil
		},
		"mcp memory_store": func() error { return mcpStore(t, addr, d.Token(), oneText) },
		"ui edit": func() error {
			text := oneText
			_, err := c.Edit(ctx, other.ID, httpapi.MemoryPatch{Text: &text})
			if err != nil && strings.Contains(err.Error(), "already stored") {
				return nil // the text was stored first through another entrance
			}
			return err
		},
		"import file": func() error {
			_, err := c.Import(ctx, bytes.NewReader(export))
			return err
		},
		"claude importer": func() error {
			_, err := c.ImportClaude(ctx, httpapi.ImportClaudeRequest{Home: home})
			return err
		},
		"capture": func() error {
			_, err := c.Ingest(ctx, httpapi.IngestRequest{Exchanges: []memory.Exchange{{SessionID: "s1", Turn: 1,
				User: "How do feature flags get loaded?", Assistant: oneText}}})
			return err
		},
	}
	var wg sync.WaitGroup
	start := make(chan struct{})
	for name, write := range entrances {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			if err := write(); err != nil {
				t.Errorf("%s: %v", name, err)
			}
		}()
	}
	close(start)
	wg.Wait()

	var holding []memory.Memory
	err = d.Store().Iterate(ctx, store.Filter{IncludeSnoozed: true}, func(m memory.Memory) error {
		if memory.ContentHash(m.Text) == memory.ContentHash(oneText) {
			holding = append(holding, m)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(holding) != 1 {
		for _, m := range holding {
			t.Logf("%s source %s", m.ID, m.Source)
		}
		t.Fatalf("%d live memories hold the text, want 1", len(holding))
	}
}

// exportOf is an export stream of one memory holding text, made by a
// store of its own with the built-in embedder's model.
func exportOf(t *testing.T, text string) []byte {
	t.Helper()
	cfg := config.Default()
	cfg.DataDir = t.TempDir()
	cfg.Listen = "127.0.0.1:0"
	cfg.Embedder.Provider = "builtin"
	cfg.Capture.Transcripts.ClaudeCodeDirs = []string{t.TempDir()}
	cfg.Capture.Transcripts.CodexDirs = []string{t.TempDir()}
	src, err := daemon.Open(context.Background(), daemon.Options{Config: cfg, Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	if _, err := src.Memories().Add(context.Background(), httpapi.AddRequest{Text: text, Source: "elsewhere"}); err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := src.Memories().Export(context.Background(), &b); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// mcpStore calls memory_store over the daemon's MCP endpoint.
func mcpStore(t *testing.T, addr, token, text string) error {
	post := func(sid, body string) (*http.Response, string, error) {
		req, err := http.NewRequest(http.MethodPost, "http://"+addr+"/mcp", strings.NewReader(body))
		if err != nil {
			return nil, "", err
		}
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
		if sid != "" {
			req.Header.Set("Mcp-Session-Id", sid)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return nil, "", err
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		return resp, string(b), nil
	}
	resp, _, err := post("", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"test","version":"1"}}}`)
	if err != nil {
		return err
	}
	sid := resp.Header.Get("Mcp-Session-Id")
	if _, _, err := post(sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`); err != nil {
		return err
	}
	_, answer, err := post(sid, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"memory_store","arguments":{"text":"`+text+`"}}}`)
	if err != nil {
		return err
	}
	if strings.Contains(answer, `"isError":true`) || strings.Contains(answer, `"error"`) {
		return fmt.Errorf("memory_store: %.300s", answer)
	}
	return nil
}
