package capture

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"crypto/sha1"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/memtray/memtray/backend/config"
	"github.com/memtray/memtray/backend/memory"
)

// A minimal RFC 6455 client and server for the tests (the standard library
// has none): frames of any length, masking, fragments, close.

const wsGUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"

func wsAccept(key string) string {
	sum := sha1.Sum([]byte(key + wsGUID))
	return base64.StdEncoding.EncodeToString(sum[:])
}

// wsFrame encodes one frame; a client's frames are masked with mask.
func wsFrame(fin bool, op byte, payload []byte, mask []byte) []byte {
	var b bytes.Buffer
	h0 := op
	if fin {
		h0 |= 0x80
	}
	b.WriteByte(h0)
	m := byte(0)
	if mask != nil {
		m = 0x80
	}
	switch n := len(payload); {
	case n < 126:
		b.WriteByte(m | byte(n))
	case n <= 0xffff:
		b.WriteByte(m | 126)
		_ = binary.Write(&b, binary.BigEndian, uint16(n))
	default:
		b.WriteByte(m | 127)
		_ = binary.Write(&b, binary.BigEndian, uint64(n))
	}
	if mask == nil {
		b.Write(payload)
		return b.Bytes()
	}
	b.Write(mask)
	for i, c := range payload {
		b.WriteByte(c ^ mask[i%4])
	}
	return b.Bytes()
}

// clientFrame is a masked frame with a random mask.
func clientFrame(fin bool, op byte, payload []byte) []byte {
	mask := make([]byte, 4)
	_, _ = rand.Read(mask)
	return wsFrame(fin, op, payload, mask)
}

// frame is one frame read: its payload unmasked, and its bytes as sent.
type frame struct {
	fin     bool
	op      byte
	payload []byte
	raw     []byte
}

func readFrame(r *bufio.Reader) (frame, error) {
	var raw bytes.Buffer
	tr := io.TeeReader(r, &raw)
	h := make([]byte, 2)
	if _, err := io.ReadFull(tr, h); err != nil {
		return frame{}, err
	}
	n := uint64(h[1] & 0x7f)
	switch n {
	case 126:
		var l uint16
		if err := binary.Read(tr, binary.BigEndian, &l); err != nil {
			return frame{}, err
		}
		n = uint64(l)
	case 127:
		if err := binary.Read(tr, binary.BigEndian, &n); err != nil {
			return frame{}, err
		}
	}
	var mask []byte
	if h[1]&0x80 != 0 {
		mask = make([]byte, 4)
		if _, err := io.ReadFull(tr, mask); err != nil {
			return frame{}, err
		}
	}
	if n > 16<<20 {
		return frame{}, fmt.Errorf("frame of %d bytes", n)
	}
	p := make([]byte, n)
	if _, err := io.ReadFull(tr, p); err != nil {
		return frame{}, err
	}
	for i := range p {
		if mask != nil {
			p[i] ^= mask[i%4]
		}
	}
	return frame{fin: h[0]&0x80 != 0, op: h[0] & 0x0f, payload: p, raw: raw.Bytes()}, nil
}

// wsUpstream is a WebSocket server on loopback: it echoes every data frame
// (same fin, opcode and payload), answers a response.create naming a
// model with events,
// a close with a close, "close-now" by dropping the connection.
// When its extensions are permessage-deflate, it inflates the compressed
// messages it gets (with wsRefInflater), answers a response.create with
// its events compressed (wsRefDeflater) and cut in fragments of
// fragment bytes with a ping between them, "corrupt-event" with a
// compressed event that is not DEFLATE, and any other message with
// "ack" ("bad deflate" when it could not inflate it), uncompressed.
type wsUpstream struct {
	srv        *httptest.Server
	header     chan http.Header // the handshake's headers
	path       chan string
	frames     chan frame    // every frame received
	sent       chan []byte   // every write to the agent
	ended      chan struct{} // the connection ended (closed or read EOF)
	events     [][]byte      // the answer to a response.create
	extensions string        // Sec-WebSocket-Extensions answered
	deflate    *wsDeflate    // parsed from extensions, when permessage-deflate
	fragment   int           // the size of the fragments of compressed events; 0: one frame
}

func newWSUpstream(t testing.TB, events [][]byte, extensions string) *wsUpstream {
	u := &wsUpstream{header: make(chan http.Header, 10), path: make(chan string, 10), frames: make(chan frame, 1000),
		sent: make(chan []byte, 1000), ended: make(chan struct{}, 10), events: events, extensions: extensions}
	u.deflate, _ = parseWSExtensions([]string{extensions})
	u.srv = httptest.NewServer(http.HandlerFunc(u.serve))
	t.Cleanup(u.srv.Close)
	return u
}

func (u *wsUpstream) serve(w http.ResponseWriter, r *http.Request) {
	if !headerHasToken(r.Header["Connection"], "upgrade") || r.Header.Get("Upgrade") != "websocket" || r.Header.Get("Sec-WebSocket-Version") != "13" {
		http.Error(w, "not a websocket handshake", http.StatusBadRequest)
		return
	}
	u.header <- r.Header.Clone()
	u.path <- r.URL.Path
	conn, brw, err := http.NewResponseController(w).Hijack()
	if err != nil {
		return
	}
	defer func() { conn.Close(); u.ended <- struct{}{} }()
	fmt.Fprintf(brw, "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: %s\r\nX-Upstream: ws\r\n", wsAccept(r.Header.Get("Sec-WebSocket-Key")))
	if u.extensions != "" {
		fmt.Fprintf(brw, "Sec-WebSocket-Extensions: %s\r\n", u.extensions)
	}
	brw.WriteString("\r\n")
	if brw.Flush() != nil {
		return
	}
	var held []frame // the frames of a message in progress
	var msg []byte
	var inflater *wsRefInflater
	var deflater *wsRefDeflater
	if u.deflate != nil {
		inflater = &wsRefInflater{takeover: !u.deflate.clientNoTakeover}
		deflater = &wsRefDeflater{takeover: !u.deflate.serverNoTakeover}
	}
	write := func(b []byte) error {
		u.sent <- b
		_, err := conn.Write(b)
		return err
	}
	for {
		f, err := readFrame(brw.Reader)
		if err != nil {
			return
		}
		u.frames <- f
		if f.op == wsText || f.op == wsBinary || f.op == wsContinuation {
			held, msg = append(held, f), append(msg, f.payload...)
			if !f.fin {
				continue
			}
			f.payload = msg
		}
		var out []byte
		bad := false
		if inflater != nil && f.op < 0x8 && held[0].raw[0]&0x40 != 0 {
			p, err := inflater.inflate(msg)
			f.payload, bad = p, err != nil
		}
		switch {
		case f.op == wsClose:
			_ = write(wsFrame(true, wsClose, f.payload, nil))
			return
		case f.op == 0x9: // ping
			out = wsFrame(true, 0xa, f.payload, nil)
		case string(f.payload) == "close-now":
			return
		case bad:
			out = wsFrame(true, wsText, []byte("bad deflate"), nil)
		case deflater != nil && string(f.payload) == "corrupt-event":
			out = deflateFrames([]byte{0xff, 0xff, 0xff, 0xff}, wsText, 0, false)
		case bytes.HasPrefix(f.payload, []byte(`{"type":"response.create"`)) && bytes.Contains(f.payload, []byte(`"model"`)):
			for _, ev := range u.events {
				if deflater != nil {
					out = append(out, deflateFrames(deflater.deflate(ev), wsText, u.fragment, false)...)
				} else {
					out = append(out, wsFrame(true, wsText, ev, nil)...)
				}
			}
		case deflater != nil && f.op < 0x8:
			out = wsFrame(true, wsText, []byte("ack"), nil)
		default:
			for _, h := range held {
				out = append(out, wsFrame(h.fin, h.op, h.payload, nil)...)
			}
		}
		if f.op < 0x8 {
			held, msg = nil, nil
		}
		if write(out) != nil {
			return
		}
	}
}

// wsDial opens a WebSocket on base+path; header is added to the handshake.
func wsDial(t testing.TB, base, path string, header http.Header) (net.Conn, *bufio.Reader, *http.Response) {
	t.Helper()
	host := strings.TrimPrefix(base, "http://")
	conn, err := net.Dial("tcp", host)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	// A failure guard: nothing in these tests waits that long.
	_ = conn.SetDeadline(time.Now().Add(20 * time.Second))
	key := base64.StdEncoding.EncodeToString([]byte("memtray-ws-key-1"))
	var req bytes.Buffer
	fmt.Fprintf(&req, "GET %s HTTP/1.1\r\nHost: %s\r\nUpgrade: websocket\r\nConnection: keep-alive, Upgrade\r\nSec-WebSocket-Key: %s\r\nSec-WebSocket-Version: 13\r\n", path, host, key)
	for k, vs := range header {
		for _, v := range vs {
			fmt.Fprintf(&req, "%s: %s\r\n", k, v)
		}
	}
	req.WriteString("\r\n")
	if _, err := conn.Write(req.Bytes()); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(conn)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode == http.StatusSwitchingProtocols && resp.Header.Get("Sec-WebSocket-Accept") != wsAccept(key) {
		t.Fatalf("accept %q, want %q", resp.Header.Get("Sec-WebSocket-Accept"), wsAccept(key))
	}
	return conn, br, resp
}

// wsHarness is the proxy in front of a WebSocket upstream for both APIs.
func wsHarness(t *testing.T, events [][]byte, extensions string, cfg func(*config.Capture)) (*harness, *wsUpstream) {
	ws := newWSUpstream(t, events, extensions)
	h := newHarness(t, harnessOpt{cfg: func(c *config.Capture) {
		c.OpenAIUpstream, c.AnthropicUpstream = ws.srv.URL, ws.srv.URL
		if cfg != nil {
			cfg(c)
		}
	}})
	return h, ws
}

func recv[T any](t testing.TB, ch chan T) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(10 * time.Second): // a failure guard
		t.Fatal("nothing received")
		panic("unreachable")
	}
}

// TestWebSocketPassThrough: Codex's WebSocket on GET /v1/responses passes
// the proxy (it used to get a 502: the 101 answer's body was wrapped and
// no longer writable), frames flow unchanged both ways, and a close on one
// side closes the other.
func TestWebSocketPassThrough(t *testing.T) {
	for _, path := range []string{"/openai/v1/responses", "/openai/v1/realtime", "/v1/other"} {
		t.Run(path, func(t *testing.T) {
			h, ws := wsHarness(t, nil, "", nil)
			conn, br, resp := wsDial(t, h.url, path+"?x=1", http.Header{"Authorization": {"Bearer sk-test"}, "Openai-Beta": {"responses_websockets=2026-02-06"}})
			if resp.StatusCode != http.StatusSwitchingProtocols {
				body, _ := io.ReadAll(resp.Body)
				t.Fatalf("status %d: %s", resp.StatusCode, body)
			}
			if resp.Header.Get("X-Upstream") != "ws" || !headerHasToken(resp.Header["Connection"], "upgrade") || resp.Header.Get("Upgrade") != "websocket" {
				t.Errorf("101 headers %v", resp.Header)
			}
			hdr := recv(t, ws.header)
			if hdr.Get("Authorization") != "Bearer sk-test" || hdr.Get("Openai-Beta") != "responses_websockets=2026-02-06" ||
				hdr.Get("Upgrade") != "websocket" || !headerHasToken(hdr["Connection"], "upgrade") || headerHasToken(hdr["Connection"], "keep-alive") {
				t.Errorf("upstream handshake headers %v", hdr)
			}
			if got, want := recv(t, ws.path), strings.TrimPrefix(path, "/openai"); got != want {
				t.Errorf("upstream path %q, want %q", got, want)
			}

			big := bytes.Repeat([]byte("0123456789abcdef"), 5000) // 80 000 bytes: a 64-bit length
			mid := bytes.Repeat([]byte("é"), 300)                 // a 16-bit length
			sent := [][]byte{
				clientFrame(true, wsText, []byte(`{"type":"hello"}`)),
				clientFrame(true, wsBinary, []byte{0, 1, 2, 255}),
				clientFrame(true, wsText, mid),
				clientFrame(true, wsText, big),
				clientFrame(false, wsText, []byte("frag-1 ")), // a fragmented message
				clientFrame(true, 0x9, []byte("ping")),        // a control frame between fragments
				clientFrame(true, wsContinuation, []byte("frag-2")),
				clientFrame(true, wsText, nil),
			}
			for _, f := range sent {
				if _, err := conn.Write(f); err != nil {
					t.Fatal(err)
				}
			}
			for i, f := range sent {
				if got := recv(t, ws.frames); !bytes.Equal(got.raw, f) {
					t.Errorf("frame %d reached the upstream changed: %d bytes, want %d", i, len(got.raw), len(f))
				}
			}
			// The upstream echoes a message once it has all of it: the
			// ping's pong comes before the fragments.
			for _, i := range []int{0, 1, 2, 3, 5, 4, 6, 7} {
				f := sent[i]
				back, err := readFrame(br)
				if err != nil {
					t.Fatal(err)
				}
				sentF, _ := readFrame(bufio.NewReader(bytes.NewReader(f)))
				wantOp := sentF.op
				if wantOp == 0x9 {
					wantOp = 0xa
				}
				if back.op != wantOp || back.fin != sentF.fin || !bytes.Equal(back.payload, sentF.payload) ||
					!bytes.Equal(back.raw, wsFrame(sentF.fin, wantOp, sentF.payload, nil)) {
					t.Errorf("frame %d came back changed: op %x fin %v %d bytes", i, back.op, back.fin, len(back.payload))
				}
			}

			// The agent closes: the upstream answers the close and ends the
			// connection; the agent sees the close, then the end.
			if _, err := conn.Write(clientFrame(true, wsClose, []byte{0x03, 0xe8})); err != nil {
				t.Fatal(err)
			}
			if f := recv(t, ws.frames); f.op != wsClose {
				t.Errorf("upstream got op %x, want close", f.op)
			}
			back, err := readFrame(br)
			if err != nil || back.op != wsClose || !bytes.Equal(back.payload, []byte{0x03, 0xe8}) {
				t.Fatalf("close answer %+v %v", back, err)
			}
			recv(t, ws.ended)
			if _, err := br.ReadByte(); err != io.EOF {
				t.Errorf("after the upstream closed, the agent read %v, want EOF", err)
			}
			if st := h.p.Stats(); st.WebSockets != 1 || st.UpstreamErrors != 0 {
				t.Errorf("stats %+v", st)
			}
		})
	}
}

// TestWebSocketCloseEitherSide: the upstream dropping the connection ends
// the agent's, and the agent dropping its connection ends the upstream's.
func TestWebSocketCloseEitherSide(t *testing.T) {
	h, ws := wsHarness(t, nil, "", nil)
	conn, br, resp := wsDial(t, h.url, "/openai/v1/responses", nil)
	if resp.StatusCode != http.StatusSwitchingProtocols {
		t.Fatalf("status %d", resp.StatusCode)
	}
	if _, err := conn.Write(clientFrame(true, wsText, []byte("close-now"))); err != nil {
		t.Fatal(err)
	}
	recv(t, ws.ended)
	if _, err := br.ReadByte(); err != io.EOF {
		t.Errorf("upstream dropped: agent read %v, want EOF", err)
	}

	conn, _, resp = wsDial(t, h.url, "/openai/v1/responses", nil)
	if resp.StatusCode != http.StatusSwitchingProtocols {
		t.Fatalf("status %d", resp.StatusCode)
	}
	recv(t, ws.header)
	conn.Close()
	recv(t, ws.ended)
}

// responsesEvents are the data of the recorded Responses stream's events:
// what the upstream sends over a WebSocket, one per text message.
func responsesEvents(t testing.TB) [][]byte {
	var out [][]byte
	for line := range strings.Lines(string(readFile(t, "openai_responses.sse"))) {
		if d, ok := strings.CutPrefix(strings.TrimRight(line, "\r\n"), "data: "); ok {
			out = append(out, []byte(d))
		}
	}
	return out
}

// responseCreate is the recorded request body as a response.create message.
func responseCreate(t testing.TB) []byte {
	body := readFile(t, "openai_responses_request.json")
	return append([]byte(`{"type":"response.create",`), bytes.TrimPrefix(bytes.TrimSpace(body), []byte("{"))...)
}

// TestWebSocketResponsesCaptured: a turn of the Responses API over
// WebSocket gives the Exchange the same turn over HTTPS gives.
func TestWebSocketResponsesCaptured(t *testing.T) {
	events := responsesEvents(t)
	h, _ := wsHarness(t, events, "", nil)
	conn, br, resp := wsDial(t, h.url, "/openai/v1/responses", http.Header{"Authorization": {"Bearer x"}})
	if resp.StatusCode != http.StatusSwitchingProtocols {
		t.Fatalf("status %d", resp.StatusCode)
	}
	create := responseCreate(t)
	for turn := range 2 {
		// The message split in fragments, written in small pieces.
		msg := append(clientFrame(false, wsText, create[:10]), clientFrame(true, wsContinuation, create[10:])...)
		for len(msg) > 0 {
			n := min(len(msg), 7)
			if _, err := conn.Write(msg[:n]); err != nil {
				t.Fatal(err)
			}
			msg = msg[n:]
		}
		for i := range events {
			f, err := readFrame(br)
			if err != nil || !bytes.Equal(f.payload, events[i]) {
				t.Fatalf("turn %d event %d: %q %v", turn, i, f.payload, err)
			}
		}
		ex := h.sink.next(t)
		want := memory.Exchange{SessionID: "0199a8d2-1c3b-7f00-8e8e-3d2c1b0a9f8e", Turn: 1, UserTurns: 1, Project: "codexed", Source: "capture",
			User: "where do tests live?", Assistant: "Tests live next to the code they test.",
			ToolCalls: []memory.ToolCall{{ID: "call_memtray_r1", Name: "shell", Input: `{"command":["ls"]}`}},
			Model:     "gpt-5-codex", Usage: &memory.Usage{InputTokens: 320, OutputTokens: 41, CacheReadInputTokens: 128}}
		if ex.StartedAt.IsZero() || ex.EndedAt.Before(ex.StartedAt) {
			t.Errorf("times %v %v", ex.StartedAt, ex.EndedAt)
		}
		ex.StartedAt, ex.EndedAt = time.Time{}, time.Time{}
		if !reflect.DeepEqual(ex, want) {
			t.Errorf("turn %d exchange\n got %+v\nwant %+v", turn, ex, want)
		}
	}
	if st := h.p.Stats(); st.Captured != 2 || st.Unparsed != 0 {
		t.Errorf("stats %+v", st)
	}
}

// TestWebSocketNotCaptured: paused capture, a connection with an extension
// not understood and a turn the agent abandons pass through and are not
// captured.
func TestWebSocketNotCaptured(t *testing.T) {
	events := responsesEvents(t)
	run := func(t *testing.T, h *harness, frames ...[]byte) {
		conn, br, resp := wsDial(t, h.url, "/openai/v1/responses", nil)
		if resp.StatusCode != http.StatusSwitchingProtocols {
			t.Fatalf("status %d", resp.StatusCode)
		}
		for _, f := range frames {
			if _, err := conn.Write(f); err != nil {
				t.Fatal(err)
			}
		}
		for i := range events {
			if f, err := readFrame(br); err != nil || !bytes.Equal(f.payload, events[i]) {
				t.Fatalf("event %d: %q %v", i, f.payload, err)
			}
		}
		h.sink.none(t, h.p)
	}
	create := clientFrame(true, wsText, responseCreate(t))
	t.Run("paused", func(t *testing.T) {
		h, _ := wsHarness(t, events, "", func(c *config.Capture) { c.Enabled = false })
		run(t, h, create)
		if st := h.p.Stats(); st.PausedSkipped != 1 {
			t.Errorf("stats %+v", st)
		}
	})
	t.Run("prewarm", func(t *testing.T) {
		// Codex 0.171 first sends its request with "generate": false.
		h, _ := wsHarness(t, events, "", nil)
		prewarm := bytes.Replace(responseCreate(t), []byte(`"type":"response.create",`), []byte(`"type":"response.create","generate":false,`), 1)
		run(t, h, clientFrame(true, wsText, prewarm))
		if st := h.p.Stats(); st.Captured != 0 || st.Unparsed != 0 {
			t.Errorf("stats %+v", st)
		}
	})
	t.Run("unknown extension", func(t *testing.T) {
		h, _ := wsHarness(t, events, "permessage-deflate; x-unknown=1", nil)
		run(t, h, create)
	})
	t.Run("replaced turn", func(t *testing.T) {
		// A create the upstream does not answer (it echoes it), then one
		// it answers: the first turn is dropped, the second captured.
		h, _ := wsHarness(t, events, "", nil)
		conn, br, resp := wsDial(t, h.url, "/openai/v1/responses", nil)
		if resp.StatusCode != http.StatusSwitchingProtocols {
			t.Fatalf("status %d", resp.StatusCode)
		}
		bare := []byte(`{"type":"response.create"}`)
		if _, err := conn.Write(clientFrame(true, wsText, bare)); err != nil {
			t.Fatal(err)
		}
		if f, err := readFrame(br); err != nil || !bytes.Equal(f.payload, bare) {
			t.Fatalf("echo %q %v", f.payload, err)
		}
		if _, err := conn.Write(create); err != nil {
			t.Fatal(err)
		}
		for i := range events {
			if _, err := readFrame(br); err != nil {
				t.Fatalf("event %d: %v", i, err)
			}
		}
		if ex := h.sink.next(t); ex.User != "where do tests live?" {
			t.Errorf("captured %+v", ex)
		}
		if st := h.p.Stats(); st.Unparsed != 1 || st.Captured != 1 {
			t.Errorf("stats %+v", st)
		}
	})
}

// wsMessages feeds b to a reader in pieces of size n and returns what it
// emitted.
func wsMessages(b []byte, n int, masked bool) []string {
	var got []string
	r := wsReader{max: 1 << 16, masked: masked, emit: func(op byte, data []byte) {
		got = append(got, fmt.Sprintf("%d:%s", op, data))
	}}
	for len(b) > 0 {
		k := min(n, len(b))
		r.Write(b[:k])
		b = b[k:]
	}
	return got
}

func TestWSReader(t *testing.T) {
	mask := []byte{1, 2, 3, 4}
	cat := func(fs ...[]byte) []byte { return bytes.Join(fs, nil) }
	tests := []struct {
		name   string
		in     []byte
		masked bool
		want   []string
	}{
		{"server text", wsFrame(true, wsText, []byte("hi"), nil), false, []string{"1:hi"}},
		{"client text", wsFrame(true, wsText, []byte("hi"), mask), true, []string{"1:hi"}},
		{"fragments and a ping", cat(wsFrame(false, wsText, []byte("a"), nil), wsFrame(true, 0x9, []byte("p"), nil),
			wsFrame(false, 0, []byte("b"), nil), wsFrame(true, 0, []byte("c"), nil), wsFrame(true, wsBinary, []byte{7}, nil)), false,
			[]string{"1:abc", "2:\x07"}},
		{"empty message", wsFrame(true, wsText, nil, nil), false, []string{"1:"}},
		{"over max skipped, next kept", cat(wsFrame(true, wsText, make([]byte, 1<<16+1), nil), wsFrame(true, wsText, []byte("ok"), nil)), false, []string{"1:ok"}},
		{"unmasked client frame stops", cat(wsFrame(true, wsText, []byte("x"), nil), wsFrame(true, wsText, []byte("y"), mask)), true, nil},
		{"masked server frame stops", wsFrame(true, wsText, []byte("x"), mask), false, nil},
		{"continuation outside a message stops", cat(wsFrame(true, 0, []byte("x"), nil), wsFrame(true, wsText, []byte("y"), nil)), false, nil},
		{"data inside a message stops", cat(wsFrame(false, wsText, []byte("x"), nil), wsFrame(true, wsText, []byte("y"), nil)), false, nil},
		{"compressed (rsv1) stops", append([]byte{0xc1, 1}, 'x'), false, nil},
		{"close stops", cat(wsFrame(true, wsClose, nil, nil), wsFrame(true, wsText, []byte("y"), nil)), false, nil},
		{"long control frame stops", wsFrame(true, 0x9, make([]byte, 126), nil), false, nil},
	}
	for _, tt := range tests {
		for _, n := range []int{1, 3, len(tt.in)} {
			if got := wsMessages(tt.in, n, tt.masked); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("%s, pieces of %d: got %q, want %q", tt.name, n, got, tt.want)
			}
		}
	}
}

// FuzzWSReader: any bytes, cut anywhere, give the same messages as whole,
// and never a panic.
func FuzzWSReader(f *testing.F) {
	f.Add(wsFrame(true, wsText, []byte(`{"type":"response.create"}`), []byte{9, 8, 7, 6}), 1, true)
	f.Add(append(wsFrame(false, wsText, []byte("a"), nil), wsFrame(true, 0, bytes.Repeat([]byte("b"), 300), nil)...), 5, false)
	f.Add(wsFrame(true, wsBinary, make([]byte, 70000), nil), 4096, false)
	f.Add([]byte{0x81, 0x7f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}, 2, false)
	f.Fuzz(func(t *testing.T, b []byte, n int, masked bool) {
		if n < 1 {
			n = 1
		}
		whole := wsMessages(b, len(b)+1, masked)
		if cut := wsMessages(b, n, masked); !reflect.DeepEqual(cut, whole) {
			t.Errorf("pieces of %d: %q, whole: %q", n, cut, whole)
		}
	})
}
