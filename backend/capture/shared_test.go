package capture

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// sharedSSE is the directory of recorded Anthropic streams in ../shared,
// beside the repository; it is not part of it.
const sharedSSE = "../../../shared/data/anthropic-sse"

// TestReplaySharedAnthropicStreams replays every recorded stream (the
// *.sse files and the text/event-stream bodies of the go-vcr cassettes)
// through the proxy: the client must get it byte for byte, and a stream
// that ends with message_stop must be captured.
func TestReplaySharedAnthropicStreams(t *testing.T) {
	if _, err := os.Stat(sharedSSE); err != nil {
		t.Skipf("no recorded streams: %v", err)
	}
	streams := map[string][]byte{}
	files, _ := filepath.Glob(filepath.Join(sharedSSE, "*.sse"))
	for _, name := range files {
		b, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		streams[filepath.Base(name)] = b
	}
	cassettes, _ := filepath.Glob(filepath.Join(sharedSSE, "*.yaml"))
	for _, name := range cassettes {
		b, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		for i, body := range literalBodies(string(b)) {
			if strings.HasPrefix(body, "event: ") {
				streams[filepath.Base(name)+"#"+string(rune('0'+i))] = []byte(body)
			}
		}
	}
	if len(streams) == 0 {
		t.Skip("no recorded streams")
	}
	h := newHarness(t, harnessOpt{})
	req := readFile(t, "claude_code_prompt.json")
	captured := 0
	for name, sse := range streams {
		h.up.reply(200, sseHeader(), sse)
		resp, got := h.post(t, "/v1/messages?beta=true", claudeHeader(), req)
		if resp.StatusCode != 200 || !bytes.Equal(got, sse) {
			t.Errorf("%s: status %d, body differs (%d bytes, want %d)", name, resp.StatusCode, len(got), len(sse))
			continue
		}
		if bytes.Contains(sse, []byte("event: message_stop")) && bytes.HasSuffix(sse, []byte("\n\n")) {
			ex := h.sink.next(t)
			captured++
			if ex.Model == "" || (ex.Assistant == "" && len(ex.ToolCalls) == 0 && !ex.Error) {
				t.Errorf("%s: captured %+v", name, ex)
			}
		}
	}
	h.sink.none(t, h.p)
	t.Logf("%d recorded streams replayed byte-identically, %d captured", len(streams), captured)
}

// literalBodies returns the "body: |+" (or "|", "|-") literal block
// scalars of a YAML document: the minimal YAML a go-vcr cassette needs,
// read by hand to avoid a dependency. The "+" keeps trailing newlines.
func literalBodies(doc string) []string {
	var out []string
	lines := strings.SplitAfter(doc, "\n")
	for i := 0; i < len(lines); i++ {
		trim := strings.TrimSpace(lines[i])
		if !strings.HasPrefix(trim, "body: |") {
			continue
		}
		keep := strings.HasSuffix(trim, "|+")
		var b strings.Builder
		indent := -1
		j := i + 1
		for ; j < len(lines); j++ {
			l := lines[j]
			content := strings.TrimRight(l, "\r\n")
			if strings.TrimSpace(content) == "" {
				b.WriteString("\n")
				continue
			}
			n := len(content) - len(strings.TrimLeft(content, " "))
			if indent < 0 {
				indent = n
			}
			if n < indent {
				break
			}
			b.WriteString(content[indent:])
			b.WriteString("\n")
		}
		body := b.String()
		if !keep {
			body = strings.TrimRight(body, "\n") + "\n"
		}
		out = append(out, body)
		i = j - 1
	}
	return out
}
