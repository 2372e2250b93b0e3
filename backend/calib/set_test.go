package calib

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestBuiltinSet(t *testing.T) {
	s := Builtin()
	var with, without int
	for _, p := range s.Prompts {
		if p.Relevant == "" {
			without++
		} else {
			with++
		}
	}
	if len(s.Groups) < 30 || with < 30 || without < 30 || len(s.Version) != 12 {
		t.Fatalf("%d groups, %d prompts with and %d without a memory, version %q", len(s.Groups), with, without, s.Version)
	}
	if n := 4*len(s.Groups) + len(s.Prompts); n > 300 {
		t.Fatalf("%d texts: keep the set small enough to embed in seconds", n)
	}
}

// validSet is a minimal set ParseSet accepts, for edits.
func validSet() map[string]any {
	var groups, prompts []map[string]any
	for i := range minGroups {
		id := string(rune('a' + i))
		groups = append(groups, map[string]any{"id": id, "topic": []string{"x", "y"}[i%2],
			"memory": "m " + id, "near": "n " + id, "paraphrase": "p " + id, "related": "r " + id})
		prompts = append(prompts, map[string]any{"text": "q " + id, "relevant": id},
			map[string]any{"text": "u " + id, "relevant": ""})
	}
	return map[string]any{"groups": groups, "prompts": prompts}
}

func TestParseSet(t *testing.T) {
	for _, tt := range []struct {
		name string
		edit func(s map[string]any)
		want string // "" accepts
	}{
		{"valid", func(map[string]any) {}, ""},
		{"unknown field", func(s map[string]any) { s["extra"] = 1 }, "unknown field"},
		{"few groups", func(s map[string]any) { s["groups"] = s["groups"].([]map[string]any)[:3] }, "groups, want"},
		{"repeated id", func(s map[string]any) { s["groups"].([]map[string]any)[1]["id"] = "a" }, "empty or repeated"},
		{"no topic", func(s map[string]any) { s["groups"].([]map[string]any)[1]["topic"] = " " }, "no topic"},
		{"one topic", func(s map[string]any) {
			for _, g := range s["groups"].([]map[string]any) {
				g["topic"] = "x"
			}
		}, "topics"},
		{"empty text", func(s map[string]any) { s["groups"].([]map[string]any)[2]["near"] = "" }, "near: empty"},
		{"long text", func(s map[string]any) { s["groups"].([]map[string]any)[2]["related"] = strings.Repeat("w", maxText+1) }, "bytes"},
		{"unknown relevant", func(s map[string]any) { s["prompts"].([]map[string]any)[0]["relevant"] = "zz" }, "unknown relevant"},
		{"few negatives", func(s map[string]any) {
			for _, p := range s["prompts"].([]map[string]any) {
				p["relevant"] = "a"
			}
		}, "without"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := validSet()
			tt.edit(s)
			data, err := json.Marshal(s)
			if err != nil {
				t.Fatal(err)
			}
			_, err = ParseSet(data)
			if tt.want == "" && err != nil || tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)) {
				t.Fatalf("err %v, want %q", err, tt.want)
			}
		})
	}
	if _, err := ParseSet([]byte("{")); err == nil {
		t.Fatal("truncated JSON accepted")
	}
}

func FuzzParseSet(f *testing.F) {
	data, _ := json.Marshal(validSet())
	f.Add(data)
	f.Add([]byte(`{"groups":[],"prompts":[]}`))
	f.Add([]byte(`{"groups":[{"id":"a"}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := ParseSet(data)
		if err != nil {
			return
		}
		if err := s.check(); err != nil {
			t.Fatalf("accepted a set its check refuses: %v", err)
		}
	})
}
