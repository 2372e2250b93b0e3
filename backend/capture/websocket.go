package capture

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// WebSockets. An agent may open a WebSocket through the proxy (Codex
// opens one on GET /v1/responses before it falls back to HTTPS). The
// ReverseProxy passes the upgrade to the upstream and, on its 101 answer,
// joins the two connections: frames flow unchanged both ways, closing one
// side closes the other, hop-by-hop headers are handled as for any
// upgrade (Connection: Upgrade and Upgrade are kept, the others dropped).
//
// On /openai/v1/responses (the Responses API over WebSocket) the turns are
// captured: each text message {"type":"response.create",...} from the
// agent is a request body (the same fields as a POST /v1/responses), and
// the response.* events the upstream sends back, one per text message,
// are parsed as the events of the HTTPS stream, up to response.completed
// (or response.failed, error). A response.create with "generate": false
// (Codex's prewarm, sent when the socket opens) runs no model: no turn.
// A turn is handed over as the HTTPS one is; a response.create sent
// before the previous turn ended drops that turn (counted unparsed).
// Compressed connections (permessage-deflate, which Codex offers) are
// captured too: the capture tee inflates its copy (websocket_deflate.go).
// Not captured: other WebSocket paths, and connections with another
// extension or parameters permessage-deflate does not define: they pass
// through and the log says so.

// WebSocket opcodes (RFC 6455 section 5.2).
const (
	wsContinuation = 0x0
	wsText         = 0x1
	wsBinary       = 0x2
	wsClose        = 0x8
)

// switched handles an upstream's 101 Switching Protocols answer: it counts
// it and, for a WebSocket on the Responses API, wraps the connection to
// capture the turns it carries.
func (p *Proxy) switched(resp *http.Response) {
	req := resp.Request
	if !strings.EqualFold(strings.TrimSpace(resp.Header.Get("Upgrade")), "websocket") {
		p.log.Info("capture: protocol switch passed through, not captured", "path", req.URL.Path, "upgrade", resp.Header.Get("Upgrade"))
		return
	}
	p.websockets.Add(1)
	rwc, ok := resp.Body.(io.ReadWriteCloser)
	if !ok {
		return // the ReverseProxy answers 502
	}
	why := ""
	var deflate *wsDeflate
	if req.Context().Value(wsKey{}) == nil {
		why = "only the Responses API is captured over WebSocket"
	} else if d, err := parseWSExtensions(resp.Header.Values("Sec-WebSocket-Extensions")); err != nil {
		why = err.Error()
	} else {
		deflate = d
	}
	if why != "" {
		p.log.Info("capture: WebSocket passed through, its turns are not captured", "path", req.URL.Path, "reason", why)
		return
	}
	p.log.Debug("capture: WebSocket opened, capturing its Responses API turns", "path", req.URL.Path, "compressed", deflate != nil)
	c := &wsConn{rwc: rwc, p: p}
	c.fromAgent = wsReader{max: p.max, masked: true, emit: c.agentMessage, fail: c.captureFailed}
	c.fromUpstream = wsReader{max: p.max, emit: c.upstreamMessage, fail: c.captureFailed}
	if deflate != nil {
		c.fromAgent.inflate = newWSInflater(!deflate.clientNoTakeover)
		c.fromUpstream.inflate = newWSInflater(!deflate.serverNoTakeover)
	}
	resp.Body = c
}

// wsConn is the upstream's side of a WebSocket: the ReverseProxy writes
// the agent's bytes to it and reads the upstream's from it, one goroutine
// each; both pass unchanged, and a copy goes to a frame reader until
// capture of the connection stops.
type wsConn struct {
	rwc                     io.ReadWriteCloser
	p                       *Proxy
	fromAgent, fromUpstream wsReader    // each used by one goroutine only
	stopped                 atomic.Bool // capture of the connection stopped

	mu   sync.Mutex
	turn *wsTurn // the turn in progress, if any
}

// wsTurn is one response.create and the events answering it.
type wsTurn struct {
	req     []byte
	started time.Time
	parser  *responsesParser
}

// Read returns the upstream's bytes unchanged.
func (c *wsConn) Read(b []byte) (int, error) {
	n, err := c.rwc.Read(b)
	if n > 0 && !c.stopped.Load() {
		c.fromUpstream.Write(b[:n])
	}
	return n, err
}

// Write passes the agent's bytes to the upstream unchanged.
func (c *wsConn) Write(b []byte) (int, error) {
	if !c.stopped.Load() {
		c.fromAgent.Write(b)
	}
	return c.rwc.Write(b)
}

// captureFailed stops the capture of the connection at a message that
// cannot be read (too large once inflated, not valid DEFLATE): the turn in
// progress is dropped, the failure counted and logged, once per
// connection; the bytes keep flowing.
func (c *wsConn) captureFailed(err error) {
	if !c.stopped.CompareAndSwap(false, true) {
		return
	}
	c.mu.Lock()
	c.turn = nil
	c.mu.Unlock()
	p := c.p
	if errors.Is(err, errWSTooLarge) {
		p.tooLarge.Add(1)
	} else {
		p.unparsed.Add(1)
	}
	err = fmt.Errorf("capture: WebSocket: %w", err)
	p.setErr(ErrKindCapture, err)
	p.log.Warn("capture: WebSocket no longer captured, it passes through", "err", err)
}

// Close closes the upstream connection; a turn still in progress is not
// captured.
func (c *wsConn) Close() error {
	c.mu.Lock()
	c.turn = nil
	c.mu.Unlock()
	return c.rwc.Close()
}

// agentMessage starts a turn at a response.create.
func (c *wsConn) agentMessage(op byte, data []byte) {
	if op != wsText {
		return
	}
	var head struct {
		Type     string `json:"type"`
		Generate *bool  `json:"generate"`
	}
	if json.Unmarshal(data, &head) != nil || head.Type != "response.create" {
		return
	}
	if head.Generate != nil && !*head.Generate {
		return // Codex's prewarm: the model is not run, there is no turn
	}
	p := c.p
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.turn != nil {
		p.unparsed.Add(1)
		p.log.Debug("capture: WebSocket turn replaced before it ended, not captured")
		c.turn = nil
	}
	if !p.Enabled() {
		p.pausedSkipped.Add(1)
		return
	}
	c.turn = &wsTurn{req: bytes.Clone(data), started: p.clock.Now(), parser: newResponsesParser(p.max)}
}

// upstreamMessage feeds an event to the turn in progress and hands the
// turn over at its end.
func (c *wsConn) upstreamMessage(op byte, data []byte) {
	if op != wsText {
		return
	}
	c.mu.Lock()
	t := c.turn
	if t == nil {
		c.mu.Unlock()
		return
	}
	t.parser.event("", data)
	a := t.parser.result()
	if !a.done && !a.tooLarge {
		c.mu.Unlock()
		return
	}
	c.turn = nil
	c.mu.Unlock()
	p := c.p
	if a.tooLarge {
		p.tooLarge.Add(1)
		return
	}
	p.enqueue(&pending{api: apiResponses, req: t.req, started: t.started, ended: p.clock.Now(), sse: true, parser: t.parser})
}

// wsReader is an incremental reader of the frames of one direction of a
// WebSocket: Write feeds it bytes in whatever pieces the network
// delivers, and it calls emit with each complete data message (text or
// binary, fragments joined, unmasked, inflated). A message over max bytes
// is skipped; control frames are skipped; a frame that breaks the protocol
// (a continuation outside a message, a data frame inside one, a reserved
// opcode or bit, a length over 2^63) or a close frame stops it for good.
// With inflate set (permessage-deflate), a message whose first frame has
// RSV1 set is inflated; one over max bytes, compressed or inflated, or not
// valid DEFLATE stops it and is reported to fail. It never keeps b.
type wsReader struct {
	max     int
	masked  bool // frames from a client are masked (and must be)
	emit    func(op byte, data []byte)
	inflate *wsInflater     // permessage-deflate was negotiated
	fail    func(err error) // a compressed message could not be read

	hdr  []byte // the frame header read so far
	left uint64 // payload bytes of the current frame still to come
	mask [4]byte
	pos  uint64 // payload bytes of the current frame read so far
	ctl  bool   // the current frame is a control frame (its payload is skipped)
	fin  bool   // the current frame ends its message

	op   byte // the opcode of the message in progress; 0 when none
	z    bool // the message in progress is compressed (RSV1)
	msg  []byte
	over bool // the message in progress went over max
	done bool // stopped: a close frame, a protocol or inflate error
}

// Write feeds b to the reader.
func (r *wsReader) Write(b []byte) {
	for len(b) > 0 && !r.done {
		if r.left == 0 { // between frames, or in a header
			b = r.header(b)
			continue
		}
		n := uint64(len(b))
		if n > r.left {
			n = r.left
		}
		if !r.ctl && !r.over {
			if len(r.msg)+int(n) > r.max {
				r.over, r.msg = true, nil
			} else {
				start := len(r.msg)
				r.msg = append(r.msg, b[:n]...)
				if r.masked {
					for i := start; i < len(r.msg); i++ {
						r.msg[i] ^= r.mask[(r.pos+uint64(i-start))%4]
					}
				}
			}
		}
		r.pos += n
		r.left -= n
		b = b[n:]
		if r.left == 0 {
			r.frameEnd()
		}
	}
}

// header reads header bytes from b; at a complete header it starts the
// frame. It returns what is left of b.
func (r *wsReader) header(b []byte) []byte {
	if r.hdr == nil {
		r.hdr = make([]byte, 0, 14)
	}
	need := func() int {
		if len(r.hdr) < 2 {
			return 2
		}
		n := 2 + wsExtLen(r.hdr[1]&0x7f)
		if r.hdr[1]&0x80 != 0 {
			n += 4
		}
		return n
	}
	for len(r.hdr) < need() && len(b) > 0 {
		r.hdr = append(r.hdr, b[0])
		b = b[1:]
	}
	if len(r.hdr) < need() {
		return b
	}
	h := r.hdr
	r.hdr = nil
	r.fin = h[0]&0x80 != 0
	op := h[0] & 0x0f
	masked := h[1]&0x80 != 0
	length := uint64(h[1] & 0x7f)
	i := 2
	switch length {
	case 126:
		length = uint64(binary.BigEndian.Uint16(h[2:4]))
		i = 4
	case 127:
		length = binary.BigEndian.Uint64(h[2:10])
		i = 10
	}
	rsv1 := h[0]&0x40 != 0
	if masked != r.masked || length>>63 != 0 || h[0]&0x30 != 0 || (rsv1 && (r.inflate == nil || op == wsContinuation || op >= 0x8)) {
		// A direction with the wrong masking, an impossible length or a
		// reserved bit not negotiated (RSV1 is permessage-deflate's, on
		// the first frame of a data message only): not understood.
		r.stop()
		return nil
	}
	if masked {
		copy(r.mask[:], h[i:i+4])
	}
	r.left, r.pos = length, 0
	r.ctl = op >= 0x8
	switch {
	case op == wsClose:
		r.stop()
		return nil
	case r.ctl:
		if op > 0xa || length > 125 || !r.fin {
			r.stop()
			return nil
		}
	case op == wsContinuation:
		if r.op == 0 {
			r.stop()
			return nil
		}
	case op == wsText || op == wsBinary:
		if r.op != 0 {
			r.stop()
			return nil
		}
		r.op, r.z, r.msg, r.over = op, rsv1, r.msg[:0], false
	default:
		r.stop()
		return nil
	}
	if length == 0 {
		r.frameEnd()
	}
	return b
}

// wsExtLen is the number of extended payload length bytes for a 7-bit
// length field.
func wsExtLen(l byte) int {
	switch l {
	case 126:
		return 2
	case 127:
		return 8
	}
	return 0
}

// frameEnd ends the current frame, and its message if it was the last.
func (r *wsReader) frameEnd() {
	if r.ctl || !r.fin {
		return
	}
	op, msg, over, z := r.op, r.msg, r.over, r.z
	r.op, r.over, r.z = 0, false, false
	if z {
		// A compressed message must be inflated, even one not captured,
		// for the window the next ones refer to: one too large stops.
		var err error
		if over {
			err = fmt.Errorf("%w: a message of over %d bytes compressed", errWSTooLarge, r.max)
		} else {
			msg, err = r.inflate.message(msg, r.max)
		}
		if err != nil {
			r.stop()
			if r.fail != nil {
				r.fail(err)
			}
			return
		}
	}
	if !over && r.emit != nil {
		r.emit(op, msg)
	}
	r.msg = r.msg[:0]
	if cap(r.msg) > 64<<10 {
		r.msg = nil // do not keep a large message's buffer for the next
	}
}

// stop ends the reading of this direction.
func (r *wsReader) stop() {
	r.done, r.msg, r.hdr, r.inflate = true, nil, nil, nil
}

// wsKey marks, in its context, a WebSocket upgrade on the Responses API,
// whose turns are captured.
type wsKey struct{}

// responsesWebSocket reports whether r asks for a WebSocket on the
// Responses API.
func responsesWebSocket(r *http.Request) bool {
	return r.Method == http.MethodGet && r.URL.Path == "/openai/v1/responses" &&
		headerHasToken(r.Header["Connection"], "upgrade") &&
		strings.EqualFold(strings.TrimSpace(r.Header.Get("Upgrade")), "websocket")
}

// headerHasToken reports whether a comma-separated header holds token,
// ignoring case.
func headerHasToken(values []string, token string) bool {
	for _, v := range values {
		for t := range strings.SplitSeq(v, ",") {
			if strings.EqualFold(strings.TrimSpace(t), token) {
				return true
			}
		}
	}
	return false
}
