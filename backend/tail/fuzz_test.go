package tail

import (
	"context"
	"os"
	"testing"
)

// FuzzTail appends arbitrary bytes to a session file in two writes, with
// a hook after each: the tailer must neither fail nor panic, and its
// cursor must stay within the file, at a line boundary.
func FuzzTail(f *testing.F) {
	data, err := os.ReadFile("testdata/session.jsonl")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(data, len(data)/2)
	f.Add([]byte("{\"type\":\"user\"}\n{not json\n\n"), 3)
	f.Add([]byte(`{"type":"user","message":{"role":"user","content":"x"}}`+"\n"+`{"type":"assistant","message":{"id":"m","role":"assistant","content":[{"type":"text","text":"y"}]}}`+"\n"), 10)
	f.Add([]byte("\xff\xfe\n\x00\n"), 1)
	f.Fuzz(func(t *testing.T, data []byte, split int) {
		if len(data) > 1<<16 {
			return
		}
		split = min(max(split, 0), len(data))
		r := newRig(t)
		path := r.session("fuzz")
		appendTo(t, path, data[:split])
		for _, ev := range []string{EventPreCompact, EventStop} {
			if ok, err := r.tl.Submit(Request{Path: path, Event: ev}); !ok || err != nil {
				t.Fatalf("submit: %v %v", ok, err)
			}
			r.tl.Drain(context.Background()) // a line the parser refuses is an error, not a crash
			appendTo(t, path, data[split:])
			split = len(data)
		}
		c, ok := r.tl.Cursor(path)
		if !ok {
			return
		}
		if c.Offset < 0 || c.Offset > c.LineEnd || c.LineEnd > int64(len(data)) {
			t.Fatalf("cursor %+v out of a file of %d bytes", c, len(data))
		}
		if c.LineEnd > 0 && data[c.LineEnd-1] != '\n' || c.Offset > 0 && data[c.Offset-1] != '\n' {
			t.Fatalf("cursor %+v not at a line boundary", c)
		}
	})
}
