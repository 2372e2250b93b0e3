package embed

import (
	"context"
	"fmt"
	"github.com/memtray/memtray/backend/memory"
	"math"
	"reflect"
	"testing"
	"time"
)

func cos(a, b []float32) float64 {
	var s float64
	for i := range a {
		s += float64(a[i]) * float64(b[i])
	}
	return s
}

func TestBuiltinBasics(t *testing.T) {
	b := NewBuiltin()
	if b.Dim() != BuiltinDim || b.Model() != BuiltinModel {
		t.Fatalf("Dim/Model = %d/%q", b.Dim(), b.Model())
	}
	texts := []string{"Hello world", "", "   ,,, ", "ünïcødé wörds ok"}
	v1, err := b.Embed(context.Background(), texts)
	if err != nil {
		t.Fatal(err)
	}
	v2, _ := b.Embed(context.Background(), texts)
	if !reflect.DeepEqual(v1, v2) {
		t.Fatal("not deterministic")
	}
	for i, v := range v1 {
		if len(v) != BuiltinDim {
			t.Fatalf("text %d: len %d", i, len(v))
		}
		var n float64
		for _, x := range v {
			n += float64(x) * float64(x)
		}
		// Texts with no token: the lexical part is zero; the semantic
		// part's norm sits on its flag coordinate.
		want := 1.0
		if i == 1 || i == 2 {
			want = semanticShare
			if v[BuiltinDim-1] == 0 {
				t.Errorf("text %d: the no-known-word flag is not set", i)
			}
		}
		if math.Abs(n-want) > 1e-5 {
			t.Errorf("text %d: squared norm %v, want %v", i, n, want)
		}
	}
}

func TestLexicalBasics(t *testing.T) {
	b := NewLexical()
	if b.Dim() != LexicalDim || b.Model() != LexicalModel {
		t.Fatalf("Dim/Model = %d/%q", b.Dim(), b.Model())
	}
	vs, err := b.Embed(context.Background(), []string{"Hello world", ""})
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []float64{1, 0} {
		var n float64
		for _, x := range vs[i] {
			n += float64(x) * float64(x)
		}
		if math.Abs(n-want) > 1e-5 {
			t.Errorf("text %d: squared norm %v, want %v", i, n, want)
		}
	}
	// The built-in vector's lexical part is the lexical vector, scaled.
	full := NewBuiltin().EmbedOne("Hello world")
	scale := float32(math.Sqrt(1 - semanticShare))
	for i, x := range vs[0] {
		if math.Abs(float64(full[i]-scale*x)) > 1e-6 {
			t.Fatalf("coordinate %d: %v, want %v", i, full[i], scale*x)
		}
	}
}

// TestBuiltinMeaning: the semantic part brings paraphrases closer than
// unrelated texts of the same lexical overlap (none), which the lexical
// embedder alone cannot.
func TestBuiltinMeaning(t *testing.T) {
	b := NewBuiltin()
	dot := func(x, y []float32) float64 {
		var s float64
		for i := range x {
			s += float64(x[i]) * float64(y[i])
		}
		return s
	}
	cases := []struct{ q, near, far string }{
		{"the customer got a second bill", "an invoice was issued twice", "the parrot sang in the garden"},
		{"which database do we use", "we store everything in postgresql tables", "the bicycle has a flat tyre"},
		{"the program crashed", "the application terminated with a segmentation fault", "she painted the fence blue"},
	}
	for _, c := range cases {
		q := b.EmbedOne(c.q)
		if n, f := dot(q, b.EmbedOne(c.near)), dot(q, b.EmbedOne(c.far)); n <= f {
			t.Errorf("%q: paraphrase %.3f <= unrelated %.3f", c.q, n, f)
		}
	}
}

func TestBuiltinRejectsInvalidUTF8(t *testing.T) {
	if _, err := NewBuiltin().Embed(context.Background(), []string{"ok", "bad \xff"}); err == nil {
		t.Fatal("want an error for invalid UTF-8")
	}
}

func TestBuiltinCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := NewBuiltin().Embed(ctx, []string{"x"}); err == nil {
		t.Fatal("want an error for a cancelled context")
	}
}

func TestBuiltinSimilarity(t *testing.T) {
	b := NewBuiltin()
	base := "Never update wallets.total by hand in coinbox: append a row to wallet_entries and refresh the cached total inside the same transaction."
	cases := []struct {
		name     string
		a, other string
		min, max float64
	}{
		{"near duplicate", base, "Never update wallets.total by hand: append a row to wallet_entries and refresh the cached total in the same transaction.", 0.8, 1.01},
		{"identifier query", "wallet_entries", base, 0.15, 1},
		{"camelCase parts", "requireWorkspaceRole", "call require workspace role before mutating", 0.3, 1},
		{"unrelated", base, "Priya is the harbor tech lead and works from the IST timezone.", -0.2, 0.15},
		{"plural", "invoices generated", "invoice generation", 0.3, 1},
	}
	for _, c := range cases {
		s := cos(b.EmbedOne(c.a), b.EmbedOne(c.other))
		if s < c.min || s > c.max {
			t.Errorf("%s: cosine %.3f not in [%.2f, %.2f]", c.name, s, c.min, c.max)
		}
	}
}

func TestSplitIdent(t *testing.T) {
	cases := map[string][]string{
		"requireWorkspaceRole":   {"require", "workspace", "role"},
		"HTTPServer":             {"http", "server"},
		"httpx.WriteProblem":     {"httpx", "write", "problem"},
		"HARBOR_DB_MAX_CONNS":    {"harbor", "db", "max", "conns"},
		"internal/carriers/x.go": {"internal", "carriers", "x", "go"},
		"HBR-E1042":              {"hbr", "e1042"},
		"plain":                  {"plain"},
	}
	for in, want := range cases {
		if got := splitIdent(in, nil); !reflect.DeepEqual(got, want) {
			t.Errorf("splitIdent(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestStem(t *testing.T) {
	cases := map[string]string{
		"invoices": "invoic", "invoice": "invoic", "queries": "query", "passes": "pass",
		"caching": "cach", "cached": "cach", "cache": "cach", "running": "run", "status": "status",
	}
	for in, want := range cases {
		if got := stem(in); got != want {
			t.Errorf("stem(%q) = %q, want %q", in, got, want)
		}
	}
}

// benchTexts are deterministic short memory-like texts.
func benchTexts(n int) []string {
	words := []string{"invoice", "ledger", "shipment", "carrier", "label", "webhook", "retry",
		"postgres", "redis", "lock", "timeout", "HARBOR_DB_MAX_CONNS", "getFlag", "snapshot",
		"compactor", "tenant", "quota", "token", "rotate", "deploy", "the", "and", "is", "never"}
	out := make([]string, n)
	x := uint32(12345)
	for i := range out {
		s := ""
		for k := 0; k < 20; k++ {
			x = x*1664525 + 1013904223
			s += words[int(x>>16)%len(words)] + " "
		}
		out[i] = fmt.Sprintf("%s%d.", s, i)
	}
	return out
}

// BenchmarkBuiltinEmbed measures texts a second, the lexical embedder
// alone next to the built-in one (lexical + word vectors; the vectors are
// loaded before the timer starts: see wordvec's BenchmarkLoadBuiltin).
func BenchmarkBuiltinEmbed(b *testing.B) {
	texts := benchTexts(1000)
	for _, emb := range []memory.Embedder{NewLexical(), NewBuiltin()} {
		b.Run(emb.Model(), func(b *testing.B) {
			if _, err := emb.Embed(context.Background(), texts[:1]); err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			start := time.Now()
			n := 0
			for i := 0; i < b.N; i++ {
				if _, err := emb.Embed(context.Background(), texts[i%10*100:i%10*100+100]); err != nil {
					b.Fatal(err)
				}
				n += 100
			}
			b.ReportMetric(float64(n)/time.Since(start).Seconds(), "texts/s")
		})
	}
}
