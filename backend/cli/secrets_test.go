package cli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/memtray/memtray/backend/daemon"
	"github.com/memtray/memtray/backend/embed"
	"github.com/memtray/memtray/backend/eval"
	"github.com/memtray/memtray/backend/httpapi"
	"github.com/memtray/memtray/backend/mcp"
	"github.com/memtray/memtray/backend/memory"
	"github.com/memtray/memtray/backend/polltest"
	"github.com/memtray/memtray/backend/store"
)

// TestSecretsNeverPersist feeds the secrets of testdata/secrets.jsonl (fake
// but well-formed keys and passwords of every kind redaction covers)
// through every way text enters memtray, then looks for each secret in
// every file of the data dir, the daemon's debug log, the CLI's output, the
// live feed, the API's answers and an export: it must be nowhere.
func TestSecretsNeverPersist(t *testing.T) {
	items, err := eval.LoadRedactFile(context.Background(), "testdata/secrets.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	checkSecretsNeverPersist(t, items)
}

// TestSecretsNeverPersistSharedSet runs the same with the redaction file
// $MEMTRAY_SECRETS_SET names (a path relative to the repository root, e.g.
// ../shared/eval/secrets-dev.jsonl), when it is set and present.
func TestSecretsNeverPersistSharedSet(t *testing.T) {
	p := os.Getenv("MEMTRAY_SECRETS_SET")
	if p == "" {
		t.Skip("MEMTRAY_SECRETS_SET is not set (e.g. MEMTRAY_SECRETS_SET=../shared/eval/secrets-dev.jsonl)")
	}
	if !filepath.IsAbs(p) {
		p = filepath.Join("..", "..", p) // this package's dir is backend/cli
	}
	if _, err := os.Stat(p); err != nil {
		t.Skipf("%s absent: %v", p, err)
	}
	items, err := eval.LoadRedactFile(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	checkSecretsNeverPersist(t, items)
}

// entrance is one way text gets into memtray: feed sends every item's
// text through it.
type entrance struct {
	name string
	feed func(t *testing.T, texts []string)
}

func checkSecretsNeverPersist(t *testing.T, items []eval.RedactItem) {
	dir := isolate(t)
	home := t.TempDir()
	t.Setenv("HOME", home)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	var texts []string
	nSecrets := 0
	for _, it := range items {
		texts = append(texts, it.Text)
		nSecrets += len(it.Secrets)
	}
	// Everything the agent's side prints (CLI output) and the daemon logs.
	var logs syncBuffer

	upstream := fakeProvider(t)
	cfgFile := os.Getenv("MEMTRAY_CONFIG")
	cfg := fmt.Sprintf(`{"log_level":"debug","capture":{"anthropic_upstream":%q,"openai_upstream":%q}}`, upstream.URL, upstream.URL)
	if err := os.WriteFile(cfgFile, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	var serveOut syncBuffer
	srv := startServe(t, &serveOut, &logs, "--data-dir", dir, "--listen", "127.0.0.1:0")
	srv.waitServing(t)
	rt, err := daemon.ReadRuntime(dir)
	if err != nil {
		t.Fatal(err)
	}
	tok, err := daemon.ReadToken(dir)
	if err != nil {
		t.Fatal(err)
	}
	addr := rt.Listen
	c := httpapi.NewClient(addr, tok)

	// The live feed, as the UI reads it, for the whole session.
	var feed syncBuffer
	feedCtx, stopFeed := context.WithCancel(ctx)
	feedDone := make(chan struct{})
	{
		req, _ := http.NewRequestWithContext(feedCtx, http.MethodGet, "http://"+addr+"/api/events", nil)
		req.Header.Set("Authorization", "Bearer "+tok)
		resp, err := http.DefaultClient.Do(req)
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("GET /api/events: %v %v", resp, err)
		}
		go func() {
			defer close(feedDone)
			defer resp.Body.Close()
			io.Copy(&feed, resp.Body)
		}()
	}

	cli := func(t *testing.T, stdin string, args ...string) {
		t.Helper()
		code, out, errs := run(t, ctx, stdin, append(args[:1:1], append([]string{"--data-dir", dir}, args[1:]...)...)...)
		logs.Write([]byte(out + errs))
		if code != 0 {
			t.Fatalf("memtray %s: exit %d: %s", args[0], code, errs)
		}
	}
	call := func(t *testing.T, method, path string, in, out any) {
		t.Helper()
		var body io.Reader
		if in != nil {
			b, _ := json.Marshal(in)
			body = bytes.NewReader(b)
		}
		req, _ := http.NewRequestWithContext(ctx, method, "http://"+addr+path, body)
		req.Header.Set("Authorization", "Bearer "+tok)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("%s %s: %v", method, path, err)
		}
		defer resp.Body.Close()
		data, _ := io.ReadAll(resp.Body)
		if resp.StatusCode >= 300 {
			t.Fatalf("%s %s: %d %s", method, path, resp.StatusCode, hideSecrets(string(data), items))
		}
		if out != nil {
			if err := json.Unmarshal(data, out); err != nil {
				t.Fatalf("%s %s: %v", method, path, err)
			}
		}
	}
	mcpSession := func(t *testing.T) *sdk.ClientSession {
		hc := &http.Client{Transport: &bearer{token: tok, base: http.DefaultTransport}}
		cs, err := sdk.NewClient(&sdk.Implementation{Name: "secrets-test", Version: "1"}, nil).
			Connect(ctx, &sdk.StreamableClientTransport{Endpoint: "http://" + addr + "/mcp", HTTPClient: hc, MaxRetries: -1}, nil)
		if err != nil {
			t.Fatalf("mcp connect: %v", err)
		}
		return cs
	}
	work := t.TempDir() // files the user hands memtray: outside the data dir

	entrances := []entrance{
		{"capture proxy, Anthropic Messages (SSE)", func(t *testing.T, texts []string) {
			for i, tx := range texts {
				proxyAnthropic(t, addr, i, tx)
			}
		}},
		{"capture proxy, OpenAI chat completions", func(t *testing.T, texts []string) {
			for i, tx := range texts {
				proxyOpenAI(t, addr, i, tx)
			}
		}},
		{"MCP memory_store and memory_ingest", func(t *testing.T, texts []string) {
			cs := mcpSession(t)
			defer cs.Close()
			for i, tx := range texts {
				res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: mcp.ToolIngest,
					Arguments: mcp.IngestArgs{Name: fmt.Sprintf("mcp-notes-%d.md", i), Text: "Notes the agent ingested:\n\n" + tx, Project: "secrets"}})
				if err != nil || res.IsError {
					t.Fatalf("memory_ingest: %v %v", err, res)
				}
				res, err = cs.CallTool(ctx, &sdk.CallToolParams{Name: mcp.ToolStore,
					Arguments: mcp.StoreArgs{Text: "Stored over MCP: " + tx, Project: "secrets"}})
				if err != nil {
					t.Fatalf("memory_store: %v", err)
				}
				if res.IsError {
					t.Logf("memory_store refused an item (allowed, it stores nothing)")
				}
			}
		}},
		{"memtray ingest (exchanges file and a document)", func(t *testing.T, texts []string) {
			exs := filepath.Join(work, "exchanges.jsonl")
			var b bytes.Buffer
			for _, tx := range texts {
				line, _ := json.Marshal(map[string]string{"user": "Remember this setup for the deploy scripts:\n" + tx,
					"assistant": "Understood. The deploy scripts use this configuration:\n" + tx + "\nI will keep it in mind for the next release."})
				b.Write(append(line, '\n'))
			}
			os.WriteFile(exs, b.Bytes(), 0o600)
			cli(t, "", "ingest", "--as", "exchanges", "--project", "secrets", exs)
			doc := filepath.Join(work, "RUNBOOK.md")
			var d strings.Builder
			for i, tx := range texts {
				fmt.Fprintf(&d, "## Step %d\n\nThe runbook step %d configures:\n\n%s\n\n", i+1, i+1, tx)
			}
			os.WriteFile(doc, []byte(d.String()), 0o600)
			cli(t, "", "ingest", "--project", "secrets", doc)
			cli(t, texts[0], "ingest", "--project", "secrets", "-")
		}},
		{"POST /api/ingest", func(t *testing.T, texts []string) {
			var req httpapi.IngestRequest
			for i, tx := range texts {
				req.Exchanges = append(req.Exchanges, memory.Exchange{SessionID: "api-ingest", Turn: i + 1,
					User: "What does this config do?\n" + tx, Assistant: "This is the production configuration; it sets:\n" + tx})
				req.Documents = append(req.Documents, httpapi.Document{Name: fmt.Sprintf("notes-%d.md", i), Text: "Notes:\n\n" + tx})
			}
			call(t, "POST", "/api/ingest", req, nil)
		}},
		{"memtray add and POST /api/memories", func(t *testing.T, texts []string) {
			for _, tx := range texts {
				cli(t, "", "add", "--project", "secrets", "Added by hand: "+tx)
				call(t, "POST", "/api/memories", httpapi.AddRequest{Text: "Added over the API: " + tx}, nil)
			}
		}},
		{"import (memtray import, POST /api/import/job)", func(t *testing.T, texts []string) {
			exp := craftExport(t, c, texts)
			f := filepath.Join(work, "import.jsonl")
			os.WriteFile(f, exp, 0o600)
			cli(t, "", "import", f)
			j, err := c.ImportJob(ctx, bytes.NewReader(bytes.ReplaceAll(exp, []byte("Imported: "), []byte("Imported as a job: "))))
			if err == nil {
				j, err = c.WaitJob(ctx, j.ID, 20*time.Millisecond, nil)
			}
			if err != nil || j.State != httpapi.JobDone {
				t.Fatalf("import job: %+v %v", j, err)
			}
			if !strings.Contains(j.Result, "with secrets masked") {
				t.Errorf("the import job does not say it masked secrets: %s", j.Result)
			}
		}},
		{"PATCH /api/memories/{id} (edits)", func(t *testing.T, texts []string) {
			m, err := c.Add(ctx, httpapi.AddRequest{Text: "The staging cluster runs k3s on three nodes behind one load balancer."})
			if err != nil {
				t.Fatal(err)
			}
			id := m.ID
			for _, tx := range texts {
				next := "Edited in the window: " + tx
				var res httpapi.EditResult
				call(t, "PATCH", "/api/memories/"+id, httpapi.MemoryPatch{Text: &next}, &res)
				id = res.Memory.ID
			}
		}},
		{"feedback reasons (the debug log)", func(t *testing.T, texts []string) {
			m, err := c.Add(ctx, httpapi.AddRequest{Text: "Feature flags are read from flags.yaml at start and never hot-reloaded."})
			if err != nil {
				t.Fatal(err)
			}
			for _, tx := range texts {
				call(t, "POST", "/api/rate", httpapi.RateRequest{IDs: []string{m.ID}, Score: 1, Reason: cut(tx, 2000)}, nil)
			}
		}},
		{"searches and recall", func(t *testing.T, texts []string) {
			for i, tx := range texts {
				q := cut(tx, 1000)
				call(t, "GET", "/api/search?q="+url.QueryEscape(q), nil, nil)
				call(t, "POST", "/api/recall", map[string]any{"session_id": fmt.Sprintf("s-%d", i), "prompt": q}, nil)
			}
		}},
		{"the prompt hook (memtray hook user-prompt-submit)", func(t *testing.T, texts []string) {
			for i, tx := range texts {
				in, _ := json.Marshal(HookInput{SessionID: fmt.Sprintf("hook-%d", i), CWD: work, HookEventName: "UserPromptSubmit", Prompt: tx})
				cli(t, string(in), "hook", "user-prompt-submit")
			}
		}},
	}
	// The entrances run side by side, as an agent, a terminal and the
	// window would.
	t.Run("entrances", func(t *testing.T) {
		for _, e := range entrances {
			t.Run(e.name, func(t *testing.T) {
				t.Parallel()
				start := time.Now()
				e.feed(t, texts)
				t.Logf("%v", time.Since(start).Round(time.Millisecond))
			})
		}
	})
	if t.Failed() {
		t.FailNow()
	}
	waitCaptured(t, c, 2*len(texts))
	// The user's own verdicts on what came in: keep what the pipeline
	// rejected, mark one stored memory as noise.
	decs, err := c.Decisions(ctx, 10000)
	if err != nil {
		t.Fatal(err)
	}
	kept := 0
	for _, d := range decs {
		if d.Verdict == memory.VerdictRejected && kept < 5 {
			if _, err := c.Keep(ctx, d.ID); err == nil {
				kept++
			}
		}
	}
	list, err := c.List(ctx, httpapi.ListRequest{Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Memories) > 0 {
		if err := c.MarkNoise(ctx, list.Memories[0].ID); err != nil {
			t.Fatal(err)
		}
	}
	st, err := c.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if st.Store.Count < len(texts) {
		t.Errorf("only %d memories stored from %d texts through %d entrances: the entrances are not exercised", st.Store.Count, len(texts), len(entrances))
	}

	// What the API shows: decisions, memories (with history), search.
	var answers bytes.Buffer
	for _, p := range []string{"/api/decisions?limit=10000", "/api/memories?limit=1000", "/api/overview", "/api/capture", "/api/noise"} {
		var v json.RawMessage
		call(t, "GET", p, nil, &v)
		answers.Write(v)
	}
	// An export, to a file as the user makes it.
	expFile := filepath.Join(work, "export.jsonl")
	cli(t, "", "export", expFile)
	exported, _ := os.ReadFile(expFile)
	if !bytes.Contains(exported, []byte(`"end":true`)) {
		t.Fatalf("export incomplete: %d bytes", len(exported))
	}

	stopFeed()
	<-feedDone
	if code := srv.stop(t); code != 0 {
		t.Fatalf("serve exited %d", code)
	}

	// The text index: a search of its terms for a secret's distinctive
	// token finds nothing. (Through the store, the daemon stopped: the
	// API masks a query's secrets before it searches, so asking it proves
	// nothing about the index.)
	indexed := 0
	idx, err := store.Open(ctx, store.Options{Dir: filepath.Join(dir, daemon.StoreDir), Model: embed.BuiltinModel,
		Dim: embed.BuiltinDim, AllowModelChange: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, it := range items {
		for _, s := range it.Secrets {
			tokn := distinctiveToken(s)
			if tokn == "" {
				continue
			}
			var terms []store.Term
			for _, a := range idx.Analyze(tokn) {
				terms = append(terms, store.Term{Text: a, Boost: 1})
			}
			hits, err := idx.TextSearchTerms(ctx, terms, 5, store.Filter{IncludeSnoozed: true, IncludeSuperseded: true})
			if err != nil {
				t.Fatal(err)
			}
			if len(hits) > 0 {
				indexed++
				t.Errorf("item %s: the text index finds a token of secret %s", it.ID, hint(s))
			}
		}
	}
	idx.Close()

	// Now look for every secret everywhere.
	type place struct {
		name        string
		data, lower []byte
	}
	var places []place
	files := 0
	err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		rel, _ := filepath.Rel(dir, p)
		places = append(places, place{name: "data dir: " + rel, data: b})
		files++
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	places = append(places, place{name: "daemon log and CLI output", data: []byte(logs.String() + serveOut.String())},
		place{name: "live feed (/api/events)", data: []byte(feed.String())}, place{name: "API answers", data: answers.Bytes()},
		place{name: "export file", data: exported})
	for i := range places {
		places[i].lower = bytes.ToLower(places[i].data)
	}
	if !strings.Contains(logs.String(), "level=DEBUG") {
		t.Error("the daemon did not log at debug: the log check proves less than it says")
	}
	hits := 0
	for _, it := range items {
		for _, s := range it.Secrets {
			for _, pl := range places {
				if where := findSecret(pl.data, pl.lower, s); where != "" {
					hits++
					t.Errorf("item %s: secret %s found in %s (%s)", it.ID, hint(s), pl.name, where)
				}
			}
		}
	}
	t.Logf("%d items, %d secrets, %d entrances, %d memories stored, %d exchanges captured; searched %d data files, the logs, the live feed, the API and the export: %d hits, %d indexed tokens",
		len(items), nSecrets, len(entrances), st.Store.Count, upstream.calls.Load(), files, hits, indexed)
}

// findSecret says how s occurs in data, whose lower case is lower ("" when
// it does not): as is, in another case, or JSON-escaped (a JSON writer
// turns <, > and & into \u003c...).
func findSecret(data, lower []byte, s string) string {
	if bytes.Contains(data, []byte(s)) {
		return "verbatim"
	}
	if len(s) >= 8 && bytes.Contains(lower, bytes.ToLower([]byte(s))) {
		return "in another case"
	}
	js, _ := json.Marshal(s)
	if esc := js[1 : len(js)-1]; string(esc) != s && bytes.Contains(data, esc) {
		return "JSON-escaped"
	}
	return ""
}

// distinctiveToken is the longest run of letters and digits in s if it is
// at least 12 long and mixes letters and digits (a term the text index
// would hold, and no ordinary word), else "".
func distinctiveToken(s string) string {
	best := ""
	for _, r := range alnumRun.FindAllString(s, -1) {
		if len(r) > len(best) {
			best = r
		}
	}
	if len(best) < 12 || !strings.ContainsAny(best, "0123456789") || strings.Trim(best, "0123456789") == "" {
		return ""
	}
	return best
}

var alnumRun = regexp.MustCompile(`[A-Za-z0-9]+`)

// cut is s cut to at most n bytes, on a rune boundary.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return strings.ToValidUTF8(s[:n], "")
}

// hint names a secret in test output without showing it.
func hint(s string) string {
	n := min(4, len(s))
	return fmt.Sprintf("%q… (%d bytes)", s[:n], len(s))
}

// hideSecrets replaces every secret of items in s by its hint.
func hideSecrets(s string, items []eval.RedactItem) string {
	for _, it := range items {
		for _, sec := range it.Secrets {
			s = strings.ReplaceAll(s, sec, hint(sec))
		}
	}
	return s
}

// provider is a loopback stand-in for Anthropic and OpenAI: it answers
// each request with an answer that repeats the user's message (so the
// secret is in the prompt and in the answer).
type provider struct {
	*httptest.Server
	calls atomic.Int64
}

func fakeProvider(t *testing.T) *provider {
	p := &provider{}
	p.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.calls.Add(1)
		var req struct {
			Messages []struct {
				Content string `json:"content"`
			} `json:"messages"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil || len(req.Messages) == 0 {
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		answer := "I checked the configuration you pasted. It reads:\n\n" + req.Messages[len(req.Messages)-1].Content +
			"\n\nWe decided to keep this setup for the billing deploy because the old one broke the nightly backup job."
		switch r.URL.Path {
		case "/v1/messages":
			w.Header().Set("Content-Type", "text/event-stream")
			fl := w.(http.Flusher)
			for _, ev := range anthropicStream(answer) {
				io.WriteString(w, ev)
				fl.Flush()
			}
		case "/v1/chat/completions":
			w.Header().Set("Content-Type", "application/json")
			json.NewEncoder(w).Encode(map[string]any{"id": "chatcmpl-1", "object": "chat.completion", "model": "gpt-test",
				"choices": []any{map[string]any{"index": 0, "finish_reason": "stop", "message": map[string]any{"role": "assistant", "content": answer}}},
				"usage":   map[string]int{"prompt_tokens": 100, "completion_tokens": 50}})
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(p.Close)
	return p
}

// anthropicStream renders a Messages API stream of text, event by event.
func anthropicStream(text string) []string {
	var out []string
	ev := func(name string, v any) {
		data, _ := json.Marshal(v)
		out = append(out, fmt.Sprintf("event: %s\ndata: %s\n\n", name, data))
	}
	ev("message_start", map[string]any{"type": "message_start", "message": map[string]any{"id": "msg_1", "type": "message", "role": "assistant",
		"model": "claude-test", "content": []any{}, "usage": map[string]int{"input_tokens": 100, "output_tokens": 1}}})
	ev("content_block_start", map[string]any{"type": "content_block_start", "index": 0, "content_block": map[string]any{"type": "text", "text": ""}})
	for _, part := range strings.SplitAfter(text, " ") {
		ev("content_block_delta", map[string]any{"type": "content_block_delta", "index": 0, "delta": map[string]any{"type": "text_delta", "text": part}})
	}
	ev("content_block_stop", map[string]any{"type": "content_block_stop", "index": 0})
	ev("message_delta", map[string]any{"type": "message_delta", "delta": map[string]any{"stop_reason": "end_turn"}, "usage": map[string]int{"output_tokens": 50}})
	ev("message_stop", map[string]any{"type": "message_stop"})
	return out
}

// proxyAnthropic sends one streaming Messages request through the proxy,
// as Claude Code does, and reads the answer to its end.
func proxyAnthropic(t *testing.T, addr string, i int, text string) {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"model": "claude-test", "max_tokens": 1024, "stream": true,
		"system":   "You are Claude Code, Anthropic's official CLI for Claude.\n<env>\nWorking directory: /home/dev/secrets\n</env>",
		"metadata": map[string]string{"user_id": fmt.Sprintf("user_0123abcd_account_00000000-0000-0000-0000-000000000000_session_00000000-0000-4000-8000-%012d", i)},
		"messages": []any{map[string]any{"role": "user", "content": "Here is our production config, remember it:\n" + text}}})
	proxyPost(t, addr, "/v1/messages", body)
}

// proxyOpenAI sends one chat completion through the proxy's OpenAI route.
func proxyOpenAI(t *testing.T, addr string, i int, text string) {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"model": "gpt-test", "metadata": map[string]string{"session_id": fmt.Sprintf("openai-%d", i)},
		"messages": []any{map[string]any{"role": "user", "content": "Keep this configuration in mind:\n" + text}}})
	proxyPost(t, addr, "/openai/v1/chat/completions", body)
}

func proxyPost(t *testing.T, addr, path string, body []byte) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, "http://"+addr+path, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("x-api-key", "sk-ant-test-not-a-key")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("proxy %s: %v", path, err)
	}
	defer resp.Body.Close()
	io.Copy(io.Discard, bufio.NewReader(resp.Body))
	if resp.StatusCode != 200 {
		t.Fatalf("proxy %s: %d", path, resp.StatusCode)
	}
}

// waitCaptured waits until the proxy's pipeline has handled n exchanges
// (or dropped or refused them: either way they are done).
func waitCaptured(t *testing.T, c *httpapi.Client, n int) {
	t.Helper()
	var s struct {
		Captured, Finished, Dropped, Unparsed int64
		InFlight                              int64 `json:"in_flight"`
	}
	var st httpapi.CaptureState
	var err error
	polltest.Wait(t, fmt.Sprintf("the proxy to hand over %d exchanges", n), func() bool {
		if st, err = c.Capture(context.Background()); err == nil {
			json.Unmarshal(st.Stats, &s)
		}
		return s.Captured+s.Dropped+s.Unparsed >= int64(n) && s.InFlight == 0 && s.Finished == s.Captured
	}, func() string { return fmt.Sprintf("%s (%v)", st.Stats, err) })
	if s.Captured < int64(n) {
		t.Errorf("captured %d of %d exchanges: %s", s.Captured, n, st.Stats)
	}
}

// craftExport builds an export file of the daemon's embedding model whose
// records hold the texts, with vectors made from the texts as they are (a
// file from another memtray that kept secrets, or one made by hand).
func craftExport(t *testing.T, c *httpapi.Client, texts []string) []byte {
	t.Helper()
	var cur bytes.Buffer
	if err := c.Export(context.Background(), &cur); err != nil {
		t.Fatal(err)
	}
	var hdr store.ExportHeader
	first, _, _ := bytes.Cut(cur.Bytes(), []byte("\n"))
	if err := json.Unmarshal(first, &hdr); err != nil {
		t.Fatal(err)
	}
	if hdr.EmbeddingModel != embed.BuiltinModel {
		t.Fatalf("the daemon embeds with %s, not the built-in model", hdr.EmbeddingModel)
	}
	var recs []string
	for _, tx := range texts {
		text := "Imported: " + tx
		vecs, err := embed.NewBuiltin().Embed(context.Background(), []string{text})
		if err != nil {
			t.Fatal(err)
		}
		line, _ := json.Marshal(memory.Memory{Text: text, Kind: memory.KindFact, Type: memory.TypeProject, Project: "secrets",
			Importance: 0.5, CreatedAt: time.Now().UTC(), Embedding: vecs[0], EmbeddingModel: hdr.EmbeddingModel})
		recs = append(recs, string(line))
	}
	hdr.Count = len(recs)
	h, _ := json.Marshal(hdr)
	return []byte(string(h) + "\n" + strings.Join(recs, "\n") + "\n" + fmt.Sprintf(`{"end":true,"count":%d}`, len(recs)) + "\n")
}
