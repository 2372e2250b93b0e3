package team

import (
	"math"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestCursorText(t *testing.T) {
	tests := []struct {
		text string
		want Cursor
		err  string
	}{
		{text: "", want: Cursor{}},
		{text: "c1:0", want: Cursor{}},
		{text: "c1:740", want: Cursor{Xmin: 740}},
		{text: "c1:740:740,745,9000", want: Cursor{Xmin: 740, Done: []uint64{740, 745, 9000}}},
		{text: "c1:18446744073709551615", want: Cursor{Xmin: math.MaxUint64}},
		{text: "c2:1", err: "does not start"},
		{text: "c1:", err: "bad xmin"},
		{text: "c1:-1", err: "bad xmin"},
		{text: "c1:007", err: "bad xmin"},
		{text: "c1:5:4", err: "ascend"},
		{text: "c1:5:6,6", err: "ascend"},
		{text: "c1:5:7,6", err: "ascend"},
		{text: "c1:5:", err: "bad transaction id"},
		{text: "c1:5:6,,7", err: "bad transaction id"},
		{text: "c1:5:6:7", err: "bad transaction id"},
	}
	for _, tt := range tests {
		t.Run(tt.text, func(t *testing.T) {
			var c Cursor
			err := c.UnmarshalText([]byte(tt.text))
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Errorf("UnmarshalText: %v, want an error with %q", err, tt.err)
				}
				return
			}
			if err != nil || c.Xmin != tt.want.Xmin || !slices.Equal(c.Done, tt.want.Done) {
				t.Fatalf("UnmarshalText: %+v, %v; want %+v", c, err, tt.want)
			}
			back, _ := c.MarshalText()
			if tt.text != "" && string(back) != tt.text {
				t.Errorf("MarshalText: %q, want %q", back, tt.text)
			}
		})
	}
}

// FuzzCursor: any text decodes or fails cleanly; what decodes is a valid
// cursor whose text form decodes to itself.
func FuzzCursor(f *testing.F) {
	for _, s := range []string{"", "c1:0", "c1:740:740,745", "c1:9:10,11,12", "c1:5:4", "c2:x", "c1:18446744073709551616"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var c Cursor
		if err := c.UnmarshalText([]byte(s)); err != nil {
			return
		}
		for i, d := range c.Done {
			if d < c.Xmin || (i > 0 && d <= c.Done[i-1]) {
				t.Fatalf("%q decoded to an invalid cursor %+v", s, c)
			}
		}
		text, _ := c.MarshalText()
		var again Cursor
		if err := again.UnmarshalText(text); err != nil || again.Xmin != c.Xmin || !slices.Equal(again.Done, c.Done) {
			t.Fatalf("%q: round trip %q gave %+v, %v", s, text, again, err)
		}
	})
}

func TestDecodeVector(t *testing.T) {
	v := []float32{1, -0.25, 3.5e-8, 0}
	got, err := DecodeVector(EncodeVector(v), 4)
	if err != nil || !slices.Equal(got, v) {
		t.Fatalf("round trip: %v, %v", got, err)
	}
	tests := []struct {
		name string
		b    []byte
		dim  int
	}{
		{"short", EncodeVector(v)[:15], 4},
		{"long", append(EncodeVector(v), 0), 4},
		{"dimension zero", nil, 0},
		{"dimension too big", make([]byte, 4*(maxDim+1)), maxDim + 1},
		{"NaN", EncodeVector([]float32{float32(math.NaN())}), 1},
		{"infinity", EncodeVector([]float32{float32(math.Inf(-1))}), 1},
	}
	for _, tt := range tests {
		if _, err := DecodeVector(tt.b, tt.dim); err == nil {
			t.Errorf("%s: decoded", tt.name)
		}
	}
}

// FuzzDecodeVector: bytes from the database decode to dim finite values
// that encode back to the same bytes, or fail.
func FuzzDecodeVector(f *testing.F) {
	f.Add(EncodeVector([]float32{1, 2, 3}), 3)
	f.Add([]byte{0, 0, 0xc0, 0x7f}, 1) // NaN
	f.Add([]byte{1, 2, 3}, 1)
	f.Fuzz(func(t *testing.T, b []byte, dim int) {
		v, err := DecodeVector(b, dim)
		if err != nil {
			return
		}
		if len(v) != dim {
			t.Fatalf("%d values for dimension %d", len(v), dim)
		}
		for _, x := range v {
			if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
				t.Fatalf("a non-finite value %v", x)
			}
		}
		if string(EncodeVector(v)) != string(b) {
			t.Fatal("the encoding differs from the bytes decoded")
		}
	})
}

// FuzzValidateMemory: a row read back from the database is accepted only
// when it is well formed.
func FuzzValidateMemory(f *testing.F) {
	f.Add("m1", "a fact", "fact", "project", 0.5, "")
	f.Add("", "", "nonsense", "x", math.NaN(), "bad id!")
	f.Add("id-1", "  spaced   text ", "decision", "", 1.0, "old_1")
	f.Fuzz(func(t *testing.T, id, text, kind, typ string, importance float64, supersedes string) {
		m := mem(id, text)
		m.Kind, m.Type, m.Importance, m.Supersedes = memoryKindOf(kind), memoryTypeOf(typ), importance, supersedes
		m.Source = supersedes // any string: PostgreSQL must be able to store it
		if err := m.Validate(); err != nil {
			return
		}
		if !idPattern.MatchString(m.ID) || strings.TrimSpace(m.Text) == "" || m.Importance < 0 || m.Importance > 1 || math.IsNaN(m.Importance) {
			t.Fatalf("accepted %+v", m)
		}
		for _, s := range []string{m.Text, m.Source, m.Project} {
			if !utf8.ValidString(s) || strings.ContainsRune(s, 0) {
				t.Fatalf("accepted a string PostgreSQL refuses: %q", s)
			}
		}
		if m.Kind != "" && !m.Kind.Valid() {
			t.Fatalf("accepted kind %q", m.Kind)
		}
	})
}
