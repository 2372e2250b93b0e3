package main

import (
	"bufio"
	"crypto/sha1"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
)

// The server side of RFC 6455, as much as the fake Responses API needs:
// the handshake, reading the client's (masked) frames, text and close,
// answering pings, and writing unmasked text frames. No extensions
// (permessage-deflate is not offered back, so the client sends plain frames).

// wsConn is one accepted WebSocket.
type wsConn struct {
	conn net.Conn
	rw   *bufio.ReadWriter
}

// isWebSocket says whether r asks for a WebSocket upgrade.
func isWebSocket(r *http.Request) bool {
	return headerHas(r.Header, "Connection", "upgrade") && strings.EqualFold(r.Header.Get("Upgrade"), "websocket")
}

func headerHas(h http.Header, name, token string) bool {
	for _, v := range h.Values(name) {
		for _, t := range strings.Split(v, ",") {
			if strings.EqualFold(strings.TrimSpace(t), token) {
				return true
			}
		}
	}
	return false
}

// acceptWebSocket answers the handshake with 101 and takes the connection over.
func acceptWebSocket(w http.ResponseWriter, r *http.Request) (*wsConn, error) {
	key := r.Header.Get("Sec-WebSocket-Key")
	if key == "" || r.Header.Get("Sec-WebSocket-Version") != "13" {
		return nil, errors.New("websocket: need Sec-WebSocket-Key and version 13")
	}
	hj, ok := w.(http.Hijacker)
	if !ok {
		return nil, errors.New("websocket: connection cannot be hijacked")
	}
	conn, rw, err := hj.Hijack()
	if err != nil {
		return nil, fmt.Errorf("websocket: hijack: %w", err)
	}
	sum := sha1.Sum([]byte(key + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"))
	fmt.Fprintf(rw, "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: %s\r\n\r\n",
		base64.StdEncoding.EncodeToString(sum[:]))
	if err := rw.Flush(); err != nil {
		conn.Close()
		return nil, fmt.Errorf("websocket: handshake: %w", err)
	}
	return &wsConn{conn: conn, rw: rw}, nil
}

// Close closes the connection (after a close frame, best effort).
func (c *wsConn) Close() error {
	c.writeFrame(0x8, nil) //nolint:errcheck // closing anyway
	return c.conn.Close()
}

// ReadText returns the next text (or binary) message, reassembling
// fragments and answering pings; io.EOF at a close frame.
func (c *wsConn) ReadText() ([]byte, error) {
	var msg []byte
	for {
		fin, op, payload, err := c.readFrame()
		if err != nil {
			return nil, err
		}
		switch op {
		case 0x8: // close
			return nil, io.EOF
		case 0x9: // ping
			if err := c.writeFrame(0xA, payload); err != nil {
				return nil, err
			}
			continue
		case 0xA: // pong
			continue
		}
		msg = append(msg, payload...)
		if len(msg) > 64<<20 {
			return nil, errors.New("websocket: message over 64 MiB")
		}
		if fin {
			return msg, nil
		}
	}
}

func (c *wsConn) readFrame() (fin bool, op byte, payload []byte, err error) {
	var h [2]byte
	if _, err = io.ReadFull(c.rw, h[:]); err != nil {
		return
	}
	fin, op = h[0]&0x80 != 0, h[0]&0x0f
	if h[0]&0x70 != 0 {
		return false, 0, nil, errors.New("websocket: RSV bits set (no extension was agreed)")
	}
	masked := h[1]&0x80 != 0
	n := uint64(h[1] & 0x7f)
	switch n {
	case 126:
		var b [2]byte
		if _, err = io.ReadFull(c.rw, b[:]); err != nil {
			return
		}
		n = uint64(binary.BigEndian.Uint16(b[:]))
	case 127:
		var b [8]byte
		if _, err = io.ReadFull(c.rw, b[:]); err != nil {
			return
		}
		n = binary.BigEndian.Uint64(b[:])
	}
	if n > 64<<20 {
		return false, 0, nil, errors.New("websocket: frame over 64 MiB")
	}
	var mask [4]byte
	if masked {
		if _, err = io.ReadFull(c.rw, mask[:]); err != nil {
			return
		}
	}
	payload = make([]byte, n)
	if _, err = io.ReadFull(c.rw, payload); err != nil {
		return
	}
	if masked {
		for i := range payload {
			payload[i] ^= mask[i%4]
		}
	}
	return fin, op, payload, nil
}

// WriteText sends one unmasked text frame.
func (c *wsConn) WriteText(b []byte) error { return c.writeFrame(0x1, b) }

func (c *wsConn) writeFrame(op byte, b []byte) error {
	hdr := []byte{0x80 | op}
	switch n := len(b); {
	case n < 126:
		hdr = append(hdr, byte(n))
	case n < 1<<16:
		hdr = append(hdr, 126, byte(n>>8), byte(n))
	default:
		hdr = append(hdr, 127)
		hdr = binary.BigEndian.AppendUint64(hdr, uint64(n))
	}
	if _, err := c.rw.Write(hdr); err != nil {
		return err
	}
	if _, err := c.rw.Write(b); err != nil {
		return err
	}
	return c.rw.Flush()
}
