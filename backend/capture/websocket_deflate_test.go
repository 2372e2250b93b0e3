package capture

import (
	"bufio"
	"bytes"
	"compress/flate"
	"errors"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/memtray/memtray/backend/config"
	"github.com/memtray/memtray/backend/memory"
)

// The tests' own permessage-deflate (RFC 7692) ends, written differently
// from the proxy's inflater: the deflater is one flate.Writer per
// direction, flushed at each message (or a new one per message without
// context takeover), the inflater inflates the whole stream of the
// direction again at each message and keeps what is new.

// wsRefDeflater compresses the messages of one direction.
type wsRefDeflater struct {
	takeover bool
	final    bool // end each message with a BFINAL block (Close) instead of a flush; no takeover then
	w        *flate.Writer
	buf      bytes.Buffer
}

// deflate returns the payload of msg compressed: the DEFLATE data with
// the final 0x00 0x00 0xff 0xff cut.
func (d *wsRefDeflater) deflate(msg []byte) []byte {
	d.buf.Reset()
	if d.w == nil || !d.takeover || d.final {
		d.w, _ = flate.NewWriter(&d.buf, flate.BestCompression)
	}
	_, _ = d.w.Write(msg)
	if d.final {
		_ = d.w.Close()
		return bytes.Clone(d.buf.Bytes())
	}
	_ = d.w.Flush()
	out, ok := bytes.CutSuffix(d.buf.Bytes(), []byte{0, 0, 0xff, 0xff})
	if !ok {
		panic("a flushed DEFLATE stream must end with 00 00 ff ff")
	}
	return bytes.Clone(out)
}

// wsRefInflater inflates the messages of one direction.
type wsRefInflater struct {
	takeover bool
	stream   []byte // the direction's DEFLATE stream so far
	n        int    // the bytes it inflated to
}

func (r *wsRefInflater) inflate(payload []byte) ([]byte, error) {
	if !r.takeover {
		r.stream, r.n = nil, 0
	}
	r.stream = append(append(r.stream, payload...), 0, 0, 0xff, 0xff)
	all, err := io.ReadAll(flate.NewReader(bytes.NewReader(r.stream)))
	if !errors.Is(err, io.ErrUnexpectedEOF) { // the stream goes on
		return nil, fmt.Errorf("inflate: %v", err)
	}
	out := all[r.n:]
	r.n = len(all)
	return out, nil
}

// deflateFrames frames a compressed payload as one message of op, in
// fragments of n bytes (n < 1: one frame) with a ping between fragments,
// RSV1 on the first; masked for a client.
func deflateFrames(payload []byte, op byte, n int, client bool) []byte {
	if n < 1 {
		n = len(payload) + 1
	}
	frame := func(fin bool, op byte, p []byte) []byte {
		if client {
			return clientFrame(fin, op, p)
		}
		return wsFrame(fin, op, p, nil)
	}
	var out []byte
	for first := true; ; first = false {
		k := min(n, len(payload))
		chunk, fin := payload[:k], k == len(payload)
		payload = payload[k:]
		o := byte(wsContinuation)
		if first {
			o = op
		}
		f := frame(fin, o, chunk)
		if first {
			f[0] |= 0x40
		}
		out = append(out, f...)
		if fin {
			return out
		}
		out = append(out, frame(true, 0x9, []byte("p"))...)
	}
}

// readMessage reads frames up to a whole data message (control frames
// skipped) and returns it, inflated when compressed, and the bytes read.
func readMessage(br *bufio.Reader, inf *wsRefInflater) ([]byte, []byte, error) {
	var msg, raw []byte
	z := false
	for {
		f, err := readFrame(br)
		if err != nil {
			return nil, raw, err
		}
		raw = append(raw, f.raw...)
		if f.op >= 0x8 {
			continue
		}
		if f.op != wsContinuation {
			z = f.raw[0]&0x40 != 0
		}
		msg = append(msg, f.payload...)
		if !f.fin {
			continue
		}
		if z {
			msg, err = inf.inflate(msg)
		}
		return msg, raw, err
	}
}

func TestParseWSExtensions(t *testing.T) {
	tests := []struct {
		in   []string
		want *wsDeflate
		err  string
	}{
		{nil, nil, ""},
		{[]string{""}, nil, ""},
		{[]string{"permessage-deflate"}, &wsDeflate{}, ""},
		{[]string{"Permessage-Deflate ; client_max_window_bits=15"}, &wsDeflate{clientBits: 15}, ""},
		{[]string{"permessage-deflate; client_max_window_bits"}, &wsDeflate{}, ""},
		{[]string{`permessage-deflate; server_max_window_bits="10"; server_no_context_takeover; client_no_context_takeover`},
			&wsDeflate{serverBits: 10, serverNoTakeover: true, clientNoTakeover: true}, ""},
		{[]string{"permessage-deflate; server_max_window_bits=8; client_max_window_bits=9"}, &wsDeflate{serverBits: 8, clientBits: 9}, ""},
		{[]string{"permessage-deflate; server_max_window_bits"}, nil, "not 8 to 15"},
		{[]string{"permessage-deflate; server_max_window_bits=16"}, nil, "not 8 to 15"},
		{[]string{"permessage-deflate; client_max_window_bits=7"}, nil, "not 8 to 15"},
		{[]string{"permessage-deflate; client_max_window_bits=015"}, nil, "not 8 to 15"},
		{[]string{"permessage-deflate; server_no_context_takeover=1"}, nil, "takes no value"},
		{[]string{"permessage-deflate; server_no_context_takeover; server_no_context_takeover"}, nil, "repeated"},
		{[]string{"permessage-deflate; x-unknown"}, nil, "unknown parameter"},
		{[]string{"x-webkit-deflate-frame"}, nil, "not permessage-deflate"},
		{[]string{"permessage-deflate, permessage-deflate"}, nil, "more than one"},
		{[]string{"permessage-deflate", "x-other"}, nil, "more than one"},
	}
	for _, tt := range tests {
		got, err := parseWSExtensions(tt.in)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("%q: error %v, want %q", tt.in, err, tt.err)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%q: %+v %v, want %+v", tt.in, got, err, tt.want)
		}
	}
}

// TestWSInflater: the messages of a direction, with and without context
// takeover, whatever their size against the 32 KiB window.
func TestWSInflater(t *testing.T) {
	big := make([]byte, 100<<10)
	for i := range big {
		big[i] = "abcdefghij"[i*7%10] ^ byte(i/1000)
	}
	msgs := [][]byte{
		[]byte(`{"type":"response.create","input":"where do tests live?"}`),
		[]byte(`{"type":"response.create","input":"where do tests live?"}`), // all of it from the window
		nil,
		big,
		big[len(big)-40<<10:],                  // from a window filled by one message
		append(bytes.Clone(big[:20<<10]), 'x'), // far back: out of the window
		[]byte(`{"type":"response.create","input":"where do tests live?"}`),
	}
	for _, mode := range []string{"takeover", "no takeover", "final blocks"} {
		t.Run(mode, func(t *testing.T) {
			d := &wsRefDeflater{takeover: mode == "takeover", final: mode == "final blocks"}
			z := newWSInflater(mode != "no takeover")
			for i, m := range msgs {
				p := d.deflate(m)
				got, err := z.message(bytes.Clone(p), 1<<20)
				if err != nil || !bytes.Equal(got, m) {
					t.Fatalf("message %d: %d bytes %v, want %d", i, len(got), err, len(m))
				}
			}
		})
	}
	t.Run("takeover refers to the window", func(t *testing.T) {
		// The test is a test: the second message compresses to far less
		// than the first, and cannot be read without the first.
		d := &wsRefDeflater{takeover: true}
		first, second := d.deflate(msgs[0]), d.deflate(msgs[1])
		if len(second)*3 > len(first) {
			t.Fatalf("second message %d bytes compressed, first %d", len(second), len(first))
		}
		if got, err := newWSInflater(true).message(second, 1<<20); err == nil && bytes.Equal(got, msgs[1]) {
			t.Fatal("the second message inflates without the first")
		}
	})
	t.Run("errors", func(t *testing.T) {
		d := &wsRefDeflater{}
		bomb := d.deflate(make([]byte, 2<<20))
		valid := d.deflate(msgs[0])
		td := &wsRefDeflater{takeover: true}
		td.deflate(msgs[0])
		windowed := td.deflate(msgs[1]) // refers to a window this inflater has not got
		tests := []struct {
			name   string
			in     []byte
			limit  int
			tooBig bool
		}{
			{"bomb", bomb, 1 << 20, true},
			{"just over", valid, len(msgs[0]) - 1, true},
			{"reserved block type", []byte{0xff, 0xff, 0xff}, 1 << 20, false},
			{"truncated", valid[:len(valid)/2], 1 << 20, false},
			{"distance beyond the window", windowed, 1 << 20, false},
		}
		for _, tt := range tests {
			got, err := newWSInflater(true).message(bytes.Clone(tt.in), tt.limit)
			if err == nil || errors.Is(err, errWSTooLarge) != tt.tooBig {
				t.Errorf("%s: %d bytes, error %v; want too large %v", tt.name, len(got), err, tt.tooBig)
			}
		}
		if got, err := newWSInflater(true).message(bytes.Clone(valid), len(msgs[0])); err != nil || !bytes.Equal(got, msgs[0]) {
			t.Errorf("exactly at the limit: %q %v", got, err)
		}
	})
}

// wsDeflateMessages feeds b to a reader with permessage-deflate in
// pieces of n and returns what it emitted, and "fail: ..." at a failure.
func wsDeflateMessages(b []byte, n int, masked, takeover bool, limit int) []string {
	var got []string
	r := wsReader{max: limit, masked: masked, inflate: newWSInflater(takeover),
		emit: func(op byte, data []byte) { got = append(got, fmt.Sprintf("%d:%s", op, data)) },
		fail: func(err error) { got = append(got, "fail: "+err.Error()) }}
	for len(b) > 0 {
		k := min(n, len(b))
		r.Write(b[:k])
		b = b[k:]
	}
	return got
}

func TestWSReaderDeflate(t *testing.T) {
	cat := func(fs ...[]byte) []byte { return bytes.Join(fs, nil) }
	d := &wsRefDeflater{takeover: true}
	hello, hello2, big := d.deflate([]byte("hello hello")), d.deflate([]byte("hello hello")), d.deflate(bytes.Repeat([]byte("x"), 5000))
	rsv := func(f []byte, bits byte) []byte { f = bytes.Clone(f); f[0] |= bits; return f }
	tests := []struct {
		name   string
		in     []byte
		masked bool
		want   []string
	}{
		{"compressed, plain, compressed (window kept)", cat(deflateFrames(hello, wsText, 0, false), wsFrame(true, wsText, []byte("plain"), nil),
			deflateFrames(hello2, wsText, 0, false)), false, []string{"1:hello hello", "1:plain", "1:hello hello"}},
		{"client fragments and pings", cat(deflateFrames(hello, wsText, 2, true), deflateFrames(hello2, wsBinary, 1, true)), true,
			[]string{"1:hello hello", "2:hello hello"}},
		{"over max compressed stops", cat(wsFrame(true, wsText, []byte("ok"), nil), deflateFrames(make([]byte, 200), wsText, 0, false),
			wsFrame(true, wsText, []byte("after"), nil)), false, []string{"1:ok", "fail: compressed message over the capture bound: a message of over 100 bytes compressed"}},
		{"over max inflated stops", deflateFrames(big, wsText, 0, false), false,
			[]string{"fail: compressed message over the capture bound: a message inflates to over 100 bytes"}},
		{"uncompressed over max skipped", cat(wsFrame(true, wsText, make([]byte, 101), nil), wsFrame(true, wsText, []byte("ok"), nil)), false, []string{"1:ok"}},
		{"corrupt stops", cat(deflateFrames([]byte{0xff}, wsText, 0, false), wsFrame(true, wsText, []byte("after"), nil)), false,
			[]string{"fail: inflate a message of 1 bytes: flate: corrupt input before offset 1"}},
		{"rsv1 on a continuation stops", cat(wsFrame(false, wsText, []byte("a"), nil), rsv(wsFrame(true, 0, []byte("b"), nil), 0x40)), false, nil},
		{"rsv1 on a ping stops", cat(rsv(wsFrame(true, 0x9, nil, nil), 0x40), wsFrame(true, wsText, []byte("y"), nil)), false, nil},
		{"rsv2 stops", rsv(wsFrame(true, wsText, []byte("y"), nil), 0x20), false, nil},
	}
	for _, tt := range tests {
		in := tt.in
		for _, n := range []int{1, 3, len(in)} {
			if got := wsDeflateMessages(in, n, tt.masked, true, 100); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("%s, pieces of %d: got %q, want %q", tt.name, n, got, tt.want)
			}
		}
	}
	// Without the extension, RSV1 stops the reader as before.
	if got := wsMessages(deflateFrames(hello, wsText, 0, false), 100, false); got != nil {
		t.Errorf("no extension: %q", got)
	}
}

// wsDeflateRun is one connection through the proxy: the agent sends
// turns response.create messages, compressed by its deflater when it has
// one, and reads the events back; it returns what the proxy captured and
// checks that the bytes passed unchanged both ways.
func wsDeflateRun(t *testing.T, extensions string, clientTakeover bool, fragment int, turns int) []memory.Exchange {
	t.Helper()
	events := responsesEvents(t)
	h, ws := wsHarness(t, events, extensions, nil)
	ws.fragment = fragment
	conn, br, resp := wsDial(t, h.url, "/openai/v1/responses", http.Header{"Sec-WebSocket-Extensions": {"permessage-deflate; client_max_window_bits"}})
	if resp.StatusCode != http.StatusSwitchingProtocols {
		t.Fatalf("status %d", resp.StatusCode)
	}
	if got := resp.Header.Get("Sec-WebSocket-Extensions"); got != extensions {
		t.Fatalf("extensions answered %q, want %q unchanged", got, extensions)
	}
	var deflater *wsRefDeflater
	inflater := &wsRefInflater{takeover: true}
	if ws.deflate != nil {
		deflater = &wsRefDeflater{takeover: clientTakeover}
		inflater.takeover = !ws.deflate.serverNoTakeover
	}
	create := responseCreate(t)
	var exs []memory.Exchange
	for turn := range turns {
		var msg []byte
		if deflater != nil {
			msg = deflateFrames(deflater.deflate(create), wsText, fragment, true)
		} else {
			msg = clientFrame(true, wsText, create)
		}
		sent := msg
		for len(msg) > 0 { // in small pieces
			n := min(len(msg), 7)
			if _, err := conn.Write(msg[:n]); err != nil {
				t.Fatal(err)
			}
			msg = msg[n:]
		}
		var got []byte
		for len(got) < len(sent) {
			got = append(got, recv(t, ws.frames).raw...)
		}
		if !bytes.Equal(got, sent) {
			t.Fatalf("turn %d: the upstream got %d bytes, not the %d sent", turn, len(got), len(sent))
		}
		var read []byte
		for i := range events {
			m, raw, err := readMessage(br, inflater)
			read = append(read, raw...)
			if err != nil || !bytes.Equal(m, events[i]) {
				t.Fatalf("turn %d event %d: %q %v", turn, i, m, err)
			}
		}
		var wrote []byte
		for len(wrote) < len(read) {
			wrote = append(wrote, recv(t, ws.sent)...)
		}
		if !bytes.Equal(read, wrote) {
			t.Fatalf("turn %d: the agent read %d bytes, not the %d the upstream wrote", turn, len(read), len(wrote))
		}
		ex := h.sink.next(t)
		ex.StartedAt, ex.EndedAt = time.Time{}, time.Time{}
		exs = append(exs, ex)
	}
	if st := h.p.Stats(); st.Captured != int64(turns) || st.Unparsed != 0 || st.TooLarge != 0 {
		t.Errorf("stats %+v", st)
	}
	return exs
}

// TestWebSocketDeflateCaptured: over a compressed WebSocket, with and
// without context takeover either way, fragmented messages with control
// frames between them, the turns give the Exchanges the uncompressed
// connection gives, and the bytes pass unchanged both ways.
func TestWebSocketDeflateCaptured(t *testing.T) {
	want := wsDeflateRun(t, "", false, 0, 2)
	if want[0].User != "where do tests live?" || !reflect.DeepEqual(want[0], want[1]) {
		t.Fatalf("uncompressed run: %+v", want)
	}
	tests := []struct {
		name, extensions string
		clientTakeover   bool
		fragment         int
	}{
		{"takeover both ways", "permessage-deflate; client_max_window_bits=15", true, 0},
		{"takeover, fragments", "permessage-deflate", true, 9},
		{"no takeover", "permessage-deflate; server_no_context_takeover; client_no_context_takeover", false, 0},
		{"no takeover, fragments", "permessage-deflate; server_no_context_takeover; client_no_context_takeover", false, 5},
		{"server takeover only, small windows", "permessage-deflate; client_no_context_takeover; server_max_window_bits=10; client_max_window_bits=8", false, 64},
		{"client takeover only", "permessage-deflate; server_no_context_takeover", true, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := wsDeflateRun(t, tt.extensions, tt.clientTakeover, tt.fragment, 2); !reflect.DeepEqual(got, want) {
				t.Errorf("captured\n%+v\nwant\n%+v", got, want)
			}
		})
	}
}

// TestWebSocketDeflateStops: a decompression bomb, or data that is not
// DEFLATE, from either side, stops the capture of the connection, counted;
// the connection goes on, its bytes unchanged, and its later turns are
// not captured.
func TestWebSocketDeflateStops(t *testing.T) {
	events := responsesEvents(t)
	bomb := append(append([]byte(`{"type":"x","pad":"`), make([]byte, 3<<20)...), `"}`...)
	tests := []struct {
		name   string
		send   func(d *wsRefDeflater) []byte // the agent's message
		answer string                        // the upstream's, uncompressed
		tooBig bool
	}{
		{"bomb from the agent", func(d *wsRefDeflater) []byte { return deflateFrames(d.deflate(bomb), wsText, 0, true) }, "ack", true},
		{"corrupt from the agent", func(*wsRefDeflater) []byte { return deflateFrames([]byte{0xff, 0xff, 0xff}, wsText, 0, true) }, "bad deflate", false},
		{"corrupt from the upstream", func(d *wsRefDeflater) []byte {
			return deflateFrames(d.deflate([]byte("corrupt-event")), wsText, 0, true)
		}, "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, ws := wsHarness(t, events, "permessage-deflate; client_no_context_takeover; server_no_context_takeover", func(c *config.Capture) {
				c.MaxCaptureBytes = 1 << 20
			})
			conn, br, resp := wsDial(t, h.url, "/openai/v1/responses", nil)
			if resp.StatusCode != http.StatusSwitchingProtocols {
				t.Fatalf("status %d", resp.StatusCode)
			}
			d := &wsRefDeflater{}
			create := deflateFrames(d.deflate(responseCreate(t)), wsText, 0, true)
			if _, err := conn.Write(create); err != nil {
				t.Fatal(err)
			}
			if f := recv(t, ws.frames); !bytes.Equal(f.raw, create) {
				t.Fatal("create changed")
			}
			for range events {
				if _, _, err := readMessage(br, &wsRefInflater{}); err != nil {
					t.Fatal(err)
				}
			}
			h.sink.next(t) // a turn before the failure is captured
			bad := tt.send(d)
			if _, err := conn.Write(bad); err != nil {
				t.Fatal(err)
			}
			if f := recv(t, ws.frames); !bytes.Equal(f.raw, bad) {
				t.Fatal("the failing message changed")
			}
			f, err := readFrame(br)
			if err != nil {
				t.Fatal(err)
			}
			if tt.answer != "" && string(f.payload) != tt.answer {
				t.Fatalf("answer %q, want %q", f.payload, tt.answer)
			}
			if tt.answer == "" && (f.raw[0]&0x40 == 0 || !bytes.Equal(f.payload, []byte{0xff, 0xff, 0xff, 0xff})) {
				t.Fatalf("corrupt event %x", f.raw)
			}
			// The connection goes on: a turn passes, not captured.
			if _, err := conn.Write(deflateFrames(d.deflate(responseCreate(t)), wsText, 0, true)); err != nil {
				t.Fatal(err)
			}
			for i := range events {
				if m, _, err := readMessage(br, &wsRefInflater{}); err != nil || !bytes.Equal(m, events[i]) {
					t.Fatalf("event %d after the failure: %q %v", i, m, err)
				}
			}
			h.sink.none(t, h.p)
			st := h.p.Stats()
			if tt.tooBig && (st.TooLarge != 1 || st.Unparsed != 0) || !tt.tooBig && (st.Unparsed != 1 || st.TooLarge != 0) || st.Captured != 1 {
				t.Errorf("stats %+v", st)
			}
			if st.LastErrorKind != ErrKindCapture || !strings.Contains(st.LastError, "WebSocket") {
				t.Errorf("last error %q (%s)", st.LastError, st.LastErrorKind)
			}
		})
	}
}

// FuzzWSDeflate: any bytes read as frames of a permessage-deflate
// connection, cut anywhere, give the same messages (and failure) as whole,
// within the bound, and never a panic.
func FuzzWSDeflate(f *testing.F) {
	d := &wsRefDeflater{takeover: true}
	f.Add(deflateFrames(d.deflate([]byte(`{"type":"response.create"}`)), wsText, 3, true), 1, true, true)
	f.Add(append(deflateFrames(d.deflate([]byte("aaaaaaaaaa")), wsText, 0, false), deflateFrames(d.deflate([]byte("aaaaaaaaab")), wsBinary, 2, false)...), 5, false, true)
	f.Add(deflateFrames((&wsRefDeflater{}).deflate(make([]byte, 10000)), wsText, 0, false), 64, false, false)
	f.Add(deflateFrames([]byte{0xff, 0x00}, wsText, 0, false), 2, false, false)
	f.Add([]byte{0xc1, 0x03, 0x4b, 0x04, 0x00}, 1, false, true)
	const limit = 4096
	f.Fuzz(func(t *testing.T, b []byte, n int, masked, takeover bool) {
		if n < 1 {
			n = 1
		}
		whole := wsDeflateMessages(b, len(b)+1, masked, takeover, limit)
		if cut := wsDeflateMessages(b, n, masked, takeover, limit); !reflect.DeepEqual(cut, whole) {
			t.Errorf("pieces of %d: %q, whole: %q", n, cut, whole)
		}
		for i, m := range whole {
			if len(m) > limit+2 {
				t.Errorf("message %d: %d bytes, over the bound", i, len(m))
			}
			if strings.HasPrefix(m, "fail: ") && i != len(whole)-1 {
				t.Errorf("messages after a failure: %q", whole)
			}
		}
	})
}

// TestClientsCodexWebSocketDeflate: Codex 0.171's recorded handshake,
// which offers permessage-deflate, reaches the upstream unchanged; the
// upstream accepts it and Codex's recorded frames, compressed with context
// takeover, and the events compressed, give the Exchange the uncompressed
// connection gives.
func TestClientsCodexWebSocketDeflate(t *testing.T) {
	for _, dir := range clientDirs(t, "codex") {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			rec := readRecordedRequest(t, dir, "responses-ws-handshake.json")
			offer := rec.Headers.Get("Sec-Websocket-Extensions")
			if !strings.HasPrefix(offer, "permessage-deflate") {
				t.Fatalf("Codex offers %q", offer)
			}
			frames := bytes.Split(bytes.TrimSpace(readClientFile(t, dir, "responses-ws-frames.jsonl")), []byte("\n"))
			answer := readClientFile(t, dir, "responses-answer.sse")
			events := sseData(answer)
			var exs []memory.Exchange
			for _, ext := range []string{"", "permessage-deflate; client_max_window_bits=15"} {
				h, ws := wsHarness(t, events, ext, nil)
				hdr := http.Header{}
				for k, v := range rec.Headers {
					switch http.CanonicalHeaderKey(k) {
					case "Upgrade", "Connection", "Sec-Websocket-Version":
					default:
						hdr[k] = v
					}
				}
				conn, br, resp := wsDial(t, h.url, "/openai"+rec.Path, hdr)
				if resp.StatusCode != http.StatusSwitchingProtocols || resp.Header.Get("Sec-WebSocket-Extensions") != ext {
					t.Fatalf("handshake: status %d, extensions %q", resp.StatusCode, resp.Header.Get("Sec-WebSocket-Extensions"))
				}
				if up := recv(t, ws.header); up.Get("Sec-WebSocket-Extensions") != offer {
					t.Errorf("offer at the upstream %q, want %q", up.Get("Sec-WebSocket-Extensions"), offer)
				}
				deflater, inflater := &wsRefDeflater{takeover: true}, &wsRefInflater{takeover: true}
				for n, frame := range frames {
					msg := clientFrame(true, wsText, frame)
					if ext != "" {
						msg = deflateFrames(deflater.deflate(frame), wsText, 0, true)
					}
					if _, err := conn.Write(msg); err != nil {
						t.Fatal(err)
					}
					if f := recv(t, ws.frames); !bytes.Equal(f.raw, msg) {
						t.Errorf("frame %d at the upstream: %d bytes, want the %d sent", n, len(f.raw), len(msg))
					}
					for i := range events {
						if m, _, err := readMessage(br, inflater); err != nil || !bytes.Equal(m, events[i]) {
							t.Fatalf("frame %d, event %d: %q %v", n, i, m, err)
						}
					}
				}
				ex := h.sink.next(t)
				checkCodexExchange(t, ex, answer)
				h.sink.none(t, h.p) // the prewarm is no turn
				ex.StartedAt, ex.EndedAt = time.Time{}, time.Time{}
				exs = append(exs, ex)
			}
			if !reflect.DeepEqual(exs[0], exs[1]) {
				t.Errorf("compressed\n%+v\nuncompressed\n%+v", exs[1], exs[0])
			}
		})
	}
}
