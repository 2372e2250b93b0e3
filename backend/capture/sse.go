package capture

import "bytes"

// sseParser is an incremental Server-Sent Events parser: Write feeds it
// bytes in whatever pieces the network delivers, and it calls emit once per
// complete event (at the blank line that ends it). It follows the
// text/event-stream rules that matter here: LF, CRLF and CR line ends (also
// split across writes), "event:" and "data:" fields (data possibly over
// several lines, joined by "\n"), one optional space after the colon,
// comment lines starting with ":", other fields ignored, and an event
// without a blank line at the end of the stream discarded.
//
// Memory is bounded by max: a line or an event's data longer than max is
// skipped (the event is not emitted) and counted in overflows, and the
// parser resynchronises at the next line end. Garbage never makes it fail.
type sseParser struct {
	max  int
	emit func(event string, data []byte)

	line    []byte // an incomplete line carried over from the last Write
	skip    bool   // the current line is over max: drop it up to its end
	afterCR bool   // the last Write ended in '\r': a leading '\n' ends nothing
	event   string
	data    []byte
	hasData bool
	drop    bool // the current event lost a line: do not emit it

	overflows int // events dropped for exceeding max
}

// newSSEParser returns a parser that keeps at most max bytes of one line
// or one event's data and calls emit for each event.
func newSSEParser(max int, emit func(event string, data []byte)) *sseParser {
	return &sseParser{max: max, emit: emit}
}

// Write feeds b to the parser. It never fails and never keeps b.
func (p *sseParser) Write(b []byte) {
	if p.afterCR && len(b) > 0 && b[0] == '\n' {
		b = b[1:]
	}
	p.afterCR = false
	for len(b) > 0 {
		i := bytes.IndexAny(b, "\r\n")
		if i < 0 {
			p.carry(b)
			return
		}
		seg := b[:i]
		if b[i] == '\r' {
			if i+1 < len(b) {
				if b[i+1] == '\n' {
					i++
				}
			} else {
				p.afterCR = true
			}
		}
		b = b[i+1:]
		switch {
		case p.skip:
			p.skip = false
			p.drop = true
		case len(p.line) > 0:
			if len(p.line)+len(seg) > p.max {
				p.drop = true
			} else {
				p.line = append(p.line, seg...)
				p.field(p.line)
			}
			p.line = p.line[:0]
		default:
			p.field(seg)
		}
	}
}

// carry keeps the start of a line that continues in the next Write.
func (p *sseParser) carry(b []byte) {
	if p.skip {
		return
	}
	if len(p.line)+len(b) > p.max {
		p.skip = true
		p.line = p.line[:0]
		return
	}
	p.line = append(p.line, b...)
}

// field handles one complete line.
func (p *sseParser) field(line []byte) {
	if len(line) == 0 {
		p.dispatch()
		return
	}
	if line[0] == ':' {
		return
	}
	name, value := line, []byte(nil)
	if i := bytes.IndexByte(line, ':'); i >= 0 {
		name, value = line[:i], line[i+1:]
		if len(value) > 0 && value[0] == ' ' {
			value = value[1:]
		}
	}
	switch string(name) {
	case "event":
		p.event = string(value)
	case "data":
		if p.drop {
			return
		}
		if len(p.data)+len(value)+1 > p.max {
			p.drop = true
			p.data = p.data[:0]
			return
		}
		p.data = append(p.data, value...)
		p.data = append(p.data, '\n')
		p.hasData = true
	}
}

// dispatch ends the current event at a blank line.
func (p *sseParser) dispatch() {
	switch {
	case p.drop:
		p.overflows++
	case p.hasData:
		event := p.event
		if event == "" {
			event = "message"
		}
		p.emit(event, p.data[:len(p.data)-1])
	}
	p.event, p.data, p.hasData, p.drop = "", p.data[:0], false, false
	if cap(p.data) > 64<<10 {
		p.data = nil // do not pin one huge event's buffer for the whole stream
	}
}
