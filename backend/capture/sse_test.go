package capture

import (
	"bytes"
	"reflect"
	"strings"
	"testing"
)

type sseEvent struct{ name, data string }

// parseAll feeds b to a parser in pieces of size n (0: whole) and returns
// the events and the overflow count.
func parseAll(b []byte, n, max int) ([]sseEvent, int) {
	var out []sseEvent
	p := newSSEParser(max, func(name string, data []byte) {
		out = append(out, sseEvent{name, string(data)})
	})
	if n <= 0 {
		p.Write(b)
	} else {
		for len(b) > 0 {
			k := min(n, len(b))
			p.Write(b[:k])
			b = b[k:]
		}
	}
	return out, p.overflows
}

func TestSSEParser(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want []sseEvent
	}{
		{"lf", "event: a\ndata: 1\n\nevent: b\ndata: 2\n\n", []sseEvent{{"a", "1"}, {"b", "2"}}},
		{"crlf", "event: a\r\ndata: 1\r\n\r\ndata: 2\r\n\r\n", []sseEvent{{"a", "1"}, {"message", "2"}}},
		{"cr", "event: a\rdata: 1\r\r", []sseEvent{{"a", "1"}}},
		{"multi-line data", "data: one\ndata:two\ndata:  three\n\n", []sseEvent{{"message", "one\ntwo\n three"}}},
		{"comments and unknown fields", ": keep-alive\nid: 7\nretry: 10\nevent: ping\ndata: {}\nfoo\n\n", []sseEvent{{"ping", "{}"}}},
		{"empty data", "data\n\ndata:\n\n", []sseEvent{{"message", ""}, {"message", ""}}},
		{"no data no event", "event: lonely\n\n: c\n\n", nil},
		{"unterminated last event dropped", "data: 1\n\ndata: 2\n", []sseEvent{{"message", "1"}}},
		{"blank lines between", "\n\n\ndata: x\n\n\n", []sseEvent{{"message", "x"}}},
		{"colon in value", "data: {\"a\":\"b:c\"}\n\n", []sseEvent{{"message", `{"a":"b:c"}`}}},
		{"event name reset", "event: a\ndata: 1\n\ndata: 2\n\n", []sseEvent{{"a", "1"}, {"message", "2"}}},
		{"done marker", "data: [DONE]\n\n", []sseEvent{{"message", "[DONE]"}}},
	}
	for _, tt := range tests {
		// Every split of the input gives the same events.
		for n := 0; n <= len(tt.in); n++ {
			got, _ := parseAll([]byte(tt.in), n, 1<<10)
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("%s, pieces of %d: got %q, want %q", tt.name, n, got, tt.want)
				break
			}
		}
	}
}

func TestSSEParserSplitCRLFAcrossWrites(t *testing.T) {
	var got []sseEvent
	p := newSSEParser(100, func(n string, d []byte) { got = append(got, sseEvent{n, string(d)}) })
	for _, piece := range []string{"data: a\r", "\ndata: b\r", "\n\r", "\n"} {
		p.Write([]byte(piece))
	}
	if want := []sseEvent{{"message", "a\nb"}}; !reflect.DeepEqual(got, want) {
		t.Errorf("got %q", got)
	}
}

func TestSSEParserBounded(t *testing.T) {
	huge := "data: " + strings.Repeat("x", 5000) + "\n\n"
	many := strings.Repeat("data: 0123456789\n", 100) + "\n"
	in := "data: small\n\n" + huge + many + "data: after\n\n"
	for _, n := range []int{0, 1, 7, 4096} {
		got, over := parseAll([]byte(in), n, 512)
		want := []sseEvent{{"message", "small"}, {"message", "after"}}
		if !reflect.DeepEqual(got, want) || over != 2 {
			t.Errorf("pieces of %d: got %q, overflows %d", n, got, over)
		}
	}
	// The parser keeps no more than about max bytes whatever it is fed.
	p := newSSEParser(1024, func(string, []byte) {})
	chunk := bytes.Repeat([]byte("data: yyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyy"), 1000)
	for range 100 {
		p.Write(chunk)
	}
	if cap(p.line) > 2048 || cap(p.data) > 2048 {
		t.Errorf("parser holds line %d, data %d bytes", cap(p.line), cap(p.data))
	}
}

func TestSSEParserGarbage(t *testing.T) {
	in := []byte("\x00\xff\xfe:\r\r\n\n\ndata\x00: \xff\n\nevent:\ndata:\x80\n\n")
	got, _ := parseAll(in, 3, 64)
	if len(got) != 1 || got[0].data != "\x80" {
		t.Errorf("got %q", got)
	}
}
