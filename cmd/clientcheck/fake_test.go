package main

import (
	"bufio"
	"bytes"
	"crypto/sha1"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestFakeAnthropic: the fake's Messages stream is well-formed SSE, asks
// for the Read when the prompt names README.md, and answers the tool
// result with text.
func TestFakeAnthropic(t *testing.T) {
	f, err := newFake("anthropic", "/p/README.md")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	f.gap = 0
	tests := []struct {
		name, messages string
		want           []string
	}{
		{"prompt", `[{"role":"user","content":"Read README.md please"}]`, []string{`"name":"Read"`, `"stop_reason":"tool_use"`, `\"file_path\":\"/p/README.md\"`}},
		{"tool result", `[{"role":"user","content":"Read README.md"},{"role":"assistant","content":[{"type":"tool_use","id":"t","name":"Read","input":{}}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"t","content":"x"}]}]`,
			[]string{"README.md says", `"stop_reason":"end_turn"`}},
	}
	for _, tt := range tests {
		body := `{"model":"m","stream":true,"tools":[{"name":"Read"}],"messages":` + tt.messages + `}`
		resp, err := http.Post(f.url+"/v1/messages?beta=true", "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.Header.Get("Content-Type") != "text/event-stream" || !strings.HasPrefix(string(b), "event: message_start\n") || !strings.HasSuffix(string(b), "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n") {
			t.Errorf("%s: not a Messages stream: %s", tt.name, b)
		}
		for ev := range strings.SplitSeq(strings.TrimSpace(string(b)), "\n\n") {
			_, data, ok := strings.Cut(ev, "\ndata: ")
			if !ok || !json.Valid([]byte(data)) {
				t.Errorf("%s: bad event %q", tt.name, ev)
			}
		}
		for _, w := range tt.want {
			if !strings.Contains(string(b), w) {
				t.Errorf("%s: answer lacks %s", tt.name, w)
			}
		}
	}
	if got := len(f.requests()); got != 2 {
		t.Errorf("%d requests kept, want 2", got)
	}
}

// TestFakeResponsesWebSocket: a WebSocket handshake on GET /v1/responses
// is accepted (RFC 6455 accept key), a masked response.create frame gets
// the Responses events as text frames ending in response.completed, and a
// prewarm ("generate":false) gets only created and completed.
func TestFakeResponsesWebSocket(t *testing.T) {
	f, err := newFake("openai", "README.md")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	f.gap = 0
	conn, err := net.Dial("tcp", strings.TrimPrefix(f.url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(10 * time.Second)) // a failure guard
	key := base64.StdEncoding.EncodeToString([]byte("0123456789abcdef"))
	fmt.Fprintf(conn, "GET /v1/responses HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: %s\r\nSec-WebSocket-Version: 13\r\n\r\n", key)
	br := bufio.NewReader(conn)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha1.Sum([]byte(key + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"))
	if resp.StatusCode != http.StatusSwitchingProtocols || resp.Header.Get("Sec-WebSocket-Accept") != base64.StdEncoding.EncodeToString(sum[:]) {
		t.Fatalf("handshake: %d %v", resp.StatusCode, resp.Header)
	}
	for _, tt := range []struct {
		frame string
		types []string
	}{
		{`{"type":"response.create","model":"m","generate":false}`, []string{"response.created", "response.completed"}},
		{`{"type":"response.create","model":"m","input":"about orders"}`, nil},
	} {
		if _, err := conn.Write(maskedFrame([]byte(tt.frame))); err != nil {
			t.Fatal(err)
		}
		var types []string
		for {
			payload := readServerFrame(t, br)
			var ev struct{ Type string }
			if err := json.Unmarshal(payload, &ev); err != nil {
				t.Fatalf("frame %q: %v", payload, err)
			}
			types = append(types, ev.Type)
			if ev.Type == "response.completed" {
				break
			}
		}
		if tt.types != nil && strings.Join(types, ",") != strings.Join(tt.types, ",") {
			t.Errorf("%s: events %v, want %v", tt.frame, types, tt.types)
		}
		if tt.types == nil && !strings.Contains(strings.Join(types, ","), "response.output_text.delta") {
			t.Errorf("%s: events %v lack text deltas", tt.frame, types)
		}
	}
}

// maskedFrame is a client's text frame (masked, as RFC 6455 requires).
func maskedFrame(p []byte) []byte {
	mask := []byte{1, 2, 3, 4}
	b := []byte{0x81}
	switch {
	case len(p) < 126:
		b = append(b, 0x80|byte(len(p)))
	default:
		b = append(b, 0x80|126)
		b = binary.BigEndian.AppendUint16(b, uint16(len(p)))
	}
	b = append(b, mask...)
	for i, c := range p {
		b = append(b, c^mask[i%4])
	}
	return b
}

// readServerFrame reads one unmasked text frame.
func readServerFrame(t *testing.T, br *bufio.Reader) []byte {
	t.Helper()
	var h [2]byte
	if _, err := io.ReadFull(br, h[:]); err != nil {
		t.Fatal(err)
	}
	if h[0] != 0x81 || h[1]&0x80 != 0 {
		t.Fatalf("frame header %x: want a final unmasked text frame", h)
	}
	n := int(h[1] & 0x7f)
	switch n {
	case 126:
		var l [2]byte
		io.ReadFull(br, l[:])
		n = int(binary.BigEndian.Uint16(l[:]))
	case 127:
		var l [8]byte
		io.ReadFull(br, l[:])
		n = int(binary.BigEndian.Uint64(l[:]))
	}
	p := make([]byte, n)
	if _, err := io.ReadFull(br, p); err != nil {
		t.Fatal(err)
	}
	return bytes.Clone(p)
}
