package capture

import (
	"bytes"
	"compress/flate"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
)

// Compressed WebSockets (RFC 7692, permessage-deflate). When the upstream's
// 101 answer accepts permessage-deflate, the frames still pass unchanged
// both ways (nothing is re-encoded, the handshake is not touched); only
// the copy the capture tee reads is inflated. A message whose first frame
// has RSV1 set is compressed: its payload (all fragments joined), followed
// by 0x00 0x00 0xff 0xff, is a raw DEFLATE stream. With context takeover
// (the default; "server_no_context_takeover" and
// "client_no_context_takeover" turn it off for one direction) the LZ77
// window carries over from one compressed message to the next of the same
// direction, so each direction keeps the last 32 KiB it inflated and
// inflates the next message with it as the dictionary
// (flate.NewReaderDict). That is simpler than one flate stream read across
// messages, which would have to stop reading exactly at each message's end
// (reading on fails the stream for good) and which ends at a block with
// BFINAL set, which RFC 7692 allows at the end of a message. The window
// bits ("server_max_window_bits", "client_max_window_bits", 8 to 15) are
// checked; a 32 KiB window covers any smaller one for inflation.
//
// A compressed message inflating to more than MaxCaptureBytes (a
// decompression bomb, or just too large to capture), or whose data is not
// valid DEFLATE, stops the capture of that connection: counted (TooLarge,
// Unparsed), logged once, the turn in progress dropped; the bytes keep
// flowing untouched. An extension other than permessage-deflate, or
// parameters it does not define, leave the connection uncaptured (logged).

// wsWindow is the largest LZ77 window of permessage-deflate (15 bits).
const wsWindow = 32 << 10

// wsDeflateEnd is what inflating a message appends to its payload: the
// empty stored block RFC 7692 has the sender strip (0x00 0x00 0xff 0xff),
// then an empty stored block with BFINAL set, so that a whole message ends
// the stream with io.EOF and a truncated one fails.
var wsDeflateEnd = []byte{0x00, 0x00, 0xff, 0xff, 0x01, 0x00, 0x00, 0xff, 0xff}

// errWSTooLarge marks a compressed message over the capture bound.
var errWSTooLarge = errors.New("compressed message over the capture bound")

// wsDeflate holds the permessage-deflate parameters a server accepted.
type wsDeflate struct {
	serverNoTakeover, clientNoTakeover bool
	serverBits, clientBits             int // 8 to 15; 0 when not stated (15)
}

// parseWSExtensions reads the Sec-WebSocket-Extensions values of a 101
// answer. No extension gives nil; permessage-deflate with the parameters
// of RFC 7692 gives them; anything else (another extension, two of them,
// an unknown, repeated or malformed parameter) an error saying why the
// connection cannot be captured.
func parseWSExtensions(values []string) (*wsDeflate, error) {
	var exts []string
	for _, v := range values {
		for e := range strings.SplitSeq(v, ",") {
			if e = strings.TrimSpace(e); e != "" {
				exts = append(exts, e)
			}
		}
	}
	switch len(exts) {
	case 0:
		return nil, nil
	case 1:
	default:
		return nil, fmt.Errorf("websocket extensions %q: more than one negotiated", strings.Join(exts, ", "))
	}
	parts := strings.Split(exts[0], ";")
	if name := strings.TrimSpace(parts[0]); !strings.EqualFold(name, "permessage-deflate") {
		return nil, fmt.Errorf("websocket extension %q: not permessage-deflate", name)
	}
	d := &wsDeflate{}
	seen := map[string]bool{}
	for _, p := range parts[1:] {
		name, value, hasValue := strings.Cut(p, "=")
		name = strings.ToLower(strings.TrimSpace(name))
		value = strings.TrimSpace(value)
		if len(value) >= 2 && value[0] == '"' && value[len(value)-1] == '"' {
			value = value[1 : len(value)-1]
		}
		if seen[name] {
			return nil, fmt.Errorf("permessage-deflate: parameter %q repeated", name)
		}
		seen[name] = true
		switch name {
		case "server_no_context_takeover", "client_no_context_takeover":
			if hasValue {
				return nil, fmt.Errorf("permessage-deflate: parameter %s takes no value, got %q", name, value)
			}
			if name == "server_no_context_takeover" {
				d.serverNoTakeover = true
			} else {
				d.clientNoTakeover = true
			}
		case "server_max_window_bits", "client_max_window_bits":
			bits := 0
			if hasValue || name == "server_max_window_bits" {
				n, err := strconv.Atoi(value)
				if err != nil || n < 8 || n > 15 || len(value) > 2 {
					return nil, fmt.Errorf("permessage-deflate: %s=%q is not 8 to 15", name, value)
				}
				bits = n
			}
			if name == "server_max_window_bits" {
				d.serverBits = bits
			} else {
				d.clientBits = bits
			}
		default:
			return nil, fmt.Errorf("permessage-deflate: unknown parameter %q", name)
		}
	}
	return d, nil
}

// wsInflater inflates the compressed messages of one direction of a
// WebSocket; it is used by one goroutine.
type wsInflater struct {
	takeover bool   // the window carries over between messages
	window   []byte // the last wsWindow bytes inflated (takeover only)
	fr       io.ReadCloser
	src      bytes.Reader
	out      []byte
}

// newWSInflater returns an inflater for a direction with or without
// context takeover.
func newWSInflater(takeover bool) *wsInflater {
	return &wsInflater{takeover: takeover}
}

// message inflates the payload of one compressed message (fragments
// joined) and returns it; the result is valid until the next call. It
// fails when the data is not valid DEFLATE, or inflates to more than limit
// bytes (errWSTooLarge); the inflater must not be used after a failure.
// payload may be appended to (its spare capacity is overwritten).
func (z *wsInflater) message(payload []byte, limit int) ([]byte, error) {
	z.src.Reset(append(payload, wsDeflateEnd...))
	var dict []byte
	if z.takeover {
		dict = z.window
	}
	if z.fr == nil {
		z.fr = flate.NewReaderDict(&z.src, dict)
	} else if err := z.fr.(flate.Resetter).Reset(&z.src, dict); err != nil {
		return nil, fmt.Errorf("inflate: reset: %w", err)
	}
	out := z.out[:0]
	for {
		if len(out) == cap(out) {
			out = slices.Grow(out, min(max(len(out), 4<<10), limit+1-len(out)))
		}
		n, err := z.fr.Read(out[len(out):cap(out)])
		out = out[:len(out)+n]
		if len(out) > limit {
			z.out = nil
			return nil, fmt.Errorf("%w: a message inflates to over %d bytes", errWSTooLarge, limit)
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("inflate a message of %d bytes: %w", len(payload), err)
		}
	}
	if z.takeover {
		z.keep(out)
	}
	z.out = out
	if cap(out) > 64<<10 {
		z.out = nil // do not keep a large message's buffer for the next
	}
	return out, nil
}

// keep appends out to the window, of which it keeps the last wsWindow
// bytes.
func (z *wsInflater) keep(out []byte) {
	if z.window == nil {
		z.window = make([]byte, 0, wsWindow)
	}
	if len(out) >= wsWindow {
		z.window = append(z.window[:0], out[len(out)-wsWindow:]...)
		return
	}
	if drop := len(z.window) + len(out) - wsWindow; drop > 0 {
		z.window = append(z.window[:0], z.window[drop:]...)
	}
	z.window = append(z.window, out...)
}
