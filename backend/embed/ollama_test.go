package embed

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/memtray/memtray/backend/embed/ollamafake"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/memtray/memtray/backend/memory"
)

func newTestOllama(t *testing.T, host string, mod func(*OllamaOptions)) *Ollama {
	t.Helper()
	opts := OllamaOptions{Host: host, Timeout: 2 * time.Second, Backoff: time.Millisecond}
	if mod != nil {
		mod(&opts)
	}
	o, err := NewOllama(opts)
	if err != nil {
		t.Fatalf("NewOllama: %v", err)
	}
	return o
}

func texts(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("memory number %d about the build", i)
	}
	return out
}

func norm(v []float32) float64 {
	var s float64
	for _, x := range v {
		s += float64(x) * float64(x)
	}
	return math.Sqrt(s)
}

func TestNewOllamaDefaults(t *testing.T) {
	t.Setenv("OLLAMA_HOST", "127.0.0.1:5555")
	o, err := NewOllama(OllamaOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if o.Host() != "http://127.0.0.1:5555" || o.ModelName() != DefaultOllamaModel || o.Model() != "ollama:nomic-embed-text" ||
		o.BatchSize() != DefaultOllamaBatch || o.timeout != DefaultOllamaTimeout || o.retries != DefaultOllamaRetries || o.Dim() != 0 {
		t.Errorf("defaults: host %s model %s/%s batch %d timeout %s retries %d dim %d",
			o.Host(), o.ModelName(), o.Model(), o.BatchSize(), o.timeout, o.retries, o.Dim())
	}
	t.Setenv("OLLAMA_HOST", "")
	o, _ = NewOllama(OllamaOptions{Model: "Nomic-Embed-Text:latest"})
	if o.Host() != DefaultOllamaHost || o.Model() != "ollama:nomic-embed-text" {
		t.Errorf("host %s model %s", o.Host(), o.Model())
	}
	for _, bad := range []OllamaOptions{{Model: "a b"}, {Timeout: -1}, {BatchSize: -1}, {BatchSize: 5000}, {Retries: 50}, {Host: "gopher://x"}} {
		if _, err := NewOllama(bad); !errors.Is(err, memory.ErrInvalid) {
			t.Errorf("NewOllama(%+v) = %v, want ErrInvalid", bad, err)
		}
	}
}

func TestOllamaEmbed(t *testing.T) {
	cases := []struct {
		name      string
		setup     func(k *ollamafake.Knobs)
		opts      func(o *OllamaOptions)
		in        []string
		wantErr   error  // errors.Is target, when an error is expected
		errText   string // substring of the error, when an error is expected
		wantCalls int
		batches   []int
	}{
		{name: "success", in: texts(3), wantCalls: 1, batches: []int{3}},
		{name: "batching", in: texts(70), opts: func(o *OllamaOptions) { o.BatchSize = 32 }, wantCalls: 3, batches: []int{32, 32, 6}},
		{name: "empty call", in: nil, wantCalls: 0},
		{name: "retry 5xx then success", setup: func(k *ollamafake.Knobs) { k.Fail = 2 }, in: texts(2), wantCalls: 3},
		{name: "retry 503 then success", setup: func(k *ollamafake.Knobs) { k.Fail = 1; k.FailStatus = 503 }, in: texts(2), wantCalls: 2},
		{name: "5xx exhausts retries", setup: func(k *ollamafake.Knobs) { k.Fail = 10 }, in: texts(2),
			wantErr: memory.ErrUnavailable, errText: "after 3 attempts", wantCalls: 3},
		{name: "no retry on 400", setup: func(k *ollamafake.Knobs) { k.Fail = 10; k.FailStatus = 400 }, in: texts(2),
			errText: "rejected the request (400)", wantCalls: 1},
		{name: "no retry on 404 model missing", setup: func(k *ollamafake.Knobs) { k.Uninstall("nomic-embed-text") }, in: texts(2),
			wantErr: ErrModelNotFound, errText: "ollama pull nomic-embed-text", wantCalls: 1},
		{name: "404 recorded body", setup: func(k *ollamafake.Knobs) { k.Uninstall("nomic-embed-text"); k.Mode = "verbatim" }, in: texts(1),
			wantErr: ErrModelNotFound, errText: `model "nope" not found`, wantCalls: 1},
		{name: "404 other wording", setup: func(k *ollamafake.Knobs) { k.Uninstall("nomic-embed-text"); k.Mode = "notfound-v2" }, in: texts(1),
			wantErr: ErrModelNotFound, wantCalls: 1},
		{name: "malformed json", setup: func(k *ollamafake.Knobs) { k.Mode = "malformed" }, in: texts(1), errText: "malformed response", wantCalls: 1},
		{name: "NaN literal", setup: func(k *ollamafake.Knobs) { k.Mode = "nan" }, in: texts(1), errText: "malformed response", wantCalls: 1},
		{name: "value beyond float32", setup: func(k *ollamafake.Knobs) { k.Mode = "huge" }, in: texts(1), errText: "malformed response", wantCalls: 1},
		{name: "wrong vector count", setup: func(k *ollamafake.Knobs) { k.Mode = "wrongcount" }, in: texts(3), errText: "got 2 vectors for 3 texts", wantCalls: 1},
		{name: "zero vector", setup: func(k *ollamafake.Knobs) { k.Mode = "zero" }, in: texts(2), errText: "zero or unbounded length", wantCalls: 1},
		{name: "empty text", in: []string{"ok", "  "}, wantErr: memory.ErrInvalid, wantCalls: 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newFakeOllama(t)
			if c.setup != nil {
				f.Set(c.setup)
			}
			o := newTestOllama(t, f.URL(), c.opts)
			vecs, err := o.Embed(context.Background(), c.in)
			calls, batches := f.Calls()
			if calls != c.wantCalls {
				t.Errorf("embed requests = %d, want %d", calls, c.wantCalls)
			}
			if c.batches != nil && fmt.Sprint(batches) != fmt.Sprint(c.batches) {
				t.Errorf("batches = %v, want %v", batches, c.batches)
			}
			if c.wantErr != nil || c.errText != "" {
				if err == nil {
					t.Fatalf("no error, want %v %q", c.wantErr, c.errText)
				}
				if c.wantErr != nil && !errors.Is(err, c.wantErr) {
					t.Errorf("error %v is not %v", err, c.wantErr)
				}
				if !strings.Contains(err.Error(), c.errText) {
					t.Errorf("error %q lacks %q", err, c.errText)
				}
				return
			}
			if err != nil {
				t.Fatalf("Embed: %v", err)
			}
			if len(vecs) != len(c.in) {
				t.Fatalf("%d vectors for %d texts", len(vecs), len(c.in))
			}
			for i, v := range vecs {
				want := ollamafake.HashVector("search_document: "+c.in[i], 16) // nomic-embed-text's document prefix
				if len(v) != 16 || math.Abs(norm(v)-1) > 1e-5 {
					t.Fatalf("vector %d: dim %d norm %f", i, len(v), norm(v))
				}
				for j := range v {
					if math.Abs(float64(v[j]-want[j])) > 1e-5 {
						t.Fatalf("vector %d differs from the server's at %d", i, j)
					}
				}
			}
			if len(c.in) > 0 && o.Dim() != 16 {
				t.Errorf("Dim = %d after a call, want 16", o.Dim())
			}
		})
	}
}

func TestOllamaRecordedResponse(t *testing.T) {
	f := newFakeOllama(t)
	f.Set(func(k *ollamafake.Knobs) { k.Mode = "verbatim" })
	o := newTestOllama(t, f.URL(), nil)
	dim, err := o.Probe(context.Background())
	if err == nil {
		t.Fatalf("probe of one text got the two-vector recorded body without error (dim %d)", dim)
	}
	vecs, err := o.Embed(context.Background(), []string{"first", "second"})
	if err != nil {
		t.Fatal(err)
	}
	if o.Dim() != 8 || len(vecs) != 2 || math.Abs(norm(vecs[0])-1) > 1e-6 || math.Abs(norm(vecs[1])-1) > 1e-6 {
		t.Fatalf("dim %d, vectors %v", o.Dim(), vecs)
	}
	if vecs[1][0] != 0.5 {
		t.Errorf("vecs[1][0] = %v, want 0.5", vecs[1][0])
	}
}

func TestOllamaDimensionChange(t *testing.T) {
	f := newFakeOllama(t)
	o := newTestOllama(t, f.URL(), nil)
	if d, err := o.Probe(context.Background()); err != nil || d != 16 {
		t.Fatalf("Probe = %d, %v", d, err)
	}
	f.Set(func(k *ollamafake.Knobs) { k.Dim = 32 })
	_, err := o.Embed(context.Background(), texts(1))
	if !errors.Is(err, memory.ErrModelMismatch) || !strings.Contains(err.Error(), "from 16 to 32") {
		t.Fatalf("Embed after the dimension changed: %v", err)
	}
}

func TestOllamaTimeout(t *testing.T) {
	for _, retries := range []int{-1, 1} {
		t.Run(fmt.Sprint("retries ", retries), func(t *testing.T) {
			f := newFakeOllama(t)
			f.Set(func(k *ollamafake.Knobs) { k.HangEmbed = true })
			timeout := 150 * time.Millisecond
			o := newTestOllama(t, f.URL(), func(o *OllamaOptions) { o.Timeout = timeout; o.Retries = retries })
			attempts := max(retries, 0) + 1
			start := time.Now()
			_, err := o.Embed(context.Background(), texts(1))
			took := time.Since(start)
			if !errors.Is(err, memory.ErrUnavailable) || !strings.Contains(err.Error(), "no answer within 150ms") {
				t.Fatalf("error %v", err)
			}
			if took < time.Duration(attempts)*timeout || took > time.Duration(attempts)*timeout+time.Second {
				t.Errorf("returned after %s, want about %d x %s", took, attempts, timeout)
			}
			if calls, _ := f.Calls(); calls != attempts {
				t.Errorf("%d requests, want %d", calls, attempts)
			}
		})
	}
}

func TestOllamaAbsent(t *testing.T) {
	url := ollamafake.ClosedURL(t)
	o := newTestOllama(t, url, func(o *OllamaOptions) { o.Retries = 2 })
	start := time.Now()
	_, err := o.Embed(context.Background(), texts(1))
	if !errors.Is(err, memory.ErrUnavailable) {
		t.Fatalf("error %v is not ErrUnavailable", err)
	}
	for _, want := range []string{"is Ollama running?", "ollama serve", "embedder.provider to builtin", url, "after 3 attempts"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
	if took := time.Since(start); took > 2*time.Second {
		t.Errorf("took %s", took)
	}
	if _, err := o.HasModel(context.Background()); !errors.Is(err, memory.ErrUnavailable) {
		t.Errorf("HasModel: %v", err)
	}
	if err := o.Pull(context.Background(), nil); !errors.Is(err, memory.ErrUnavailable) {
		t.Errorf("Pull: %v", err)
	}
	if _, err := o.Version(context.Background()); !errors.Is(err, memory.ErrUnavailable) {
		t.Errorf("Version: %v", err)
	}
}

func TestOllamaCancelDuringBackoff(t *testing.T) {
	f := newFakeOllama(t)
	f.Set(func(k *ollamafake.Knobs) { k.Fail = 100 })
	o := newTestOllama(t, f.URL(), func(o *OllamaOptions) { o.Retries = 10; o.Backoff = time.Hour })
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := o.Embed(ctx, texts(1))
	if !errors.Is(err, context.DeadlineExceeded) || time.Since(start) > time.Second {
		t.Fatalf("error %v after %s", err, time.Since(start))
	}
	if calls, _ := f.Calls(); calls != 1 {
		t.Errorf("%d requests, want 1", calls)
	}
}

func TestOllamaHasModel(t *testing.T) {
	f := newFakeOllama(t)
	cases := []struct {
		model string
		want  bool
	}{
		{"nomic-embed-text", true},
		{"nomic-embed-text:latest", true},
		{"Nomic-Embed-Text", true},
		{"llama3.2", true},
		{"llama3.2:1b", false},
		{"mxbai-embed-large", false},
	}
	for _, c := range cases {
		o := newTestOllama(t, f.URL(), func(o *OllamaOptions) { o.Model = c.model })
		got, err := o.HasModel(context.Background())
		if err != nil || got != c.want {
			t.Errorf("HasModel(%q) = %v, %v; want %v", c.model, got, err, c.want)
		}
	}
	// A server that is not Ollama.
	other := httptest.NewServer(http.NotFoundHandler())
	defer other.Close()
	o := newTestOllama(t, other.URL, nil)
	if _, err := o.HasModel(context.Background()); !errors.Is(err, memory.ErrUnavailable) || !strings.Contains(err.Error(), "no Ollama API") {
		t.Errorf("HasModel on a non-Ollama server: %v", err)
	}
}

func TestOllamaVersion(t *testing.T) {
	f := newFakeOllama(t)
	o := newTestOllama(t, f.URL(), nil)
	v, err := o.Version(context.Background())
	if err != nil || v != "0.13.0" {
		t.Fatalf("Version = %q, %v", v, err)
	}
}

func TestOllamaPull(t *testing.T) {
	t.Run("success", func(t *testing.T) {
		f := newFakeOllama(t)
		f.Uninstall("nomic-embed-text")
		o := newTestOllama(t, f.URL(), nil)
		if has, err := o.HasModel(context.Background()); err != nil || has {
			t.Fatalf("HasModel before pull = %v, %v", has, err)
		}
		var got []PullProgress
		var bar bytes.Buffer
		draw := ProgressBar(&bar)
		err := o.Pull(context.Background(), func(p PullProgress) { got = append(got, p); draw(p) })
		if err != nil {
			t.Fatalf("Pull: %v", err)
		}
		// Every line of the stream arrives, in order, with its fields.
		var want []PullProgress
		sc := bufio.NewScanner(bytes.NewReader(ollamafake.Testdata("pull_success.ndjson")))
		for sc.Scan() {
			var p PullProgress
			if err := json.Unmarshal(sc.Bytes(), &p); err != nil {
				t.Fatal(err)
			}
			want = append(want, p)
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("progress\n got %v\nwant %v", got, want)
		}
		if has, err := o.HasModel(context.Background()); err != nil || !has {
			t.Errorf("HasModel after pull = %v, %v", has, err)
		}
		out := bar.String()
		for _, s := range []string{"pulling manifest\n", "pulling 970aa74c0a90 [", "  9% 25.2 MB/274.3 MB", "100% 274.3 MB/274.3 MB\n",
			"100% 17 B/17 B\n", "verifying sha256 digest\n", "writing manifest\n", "success\n"} {
			if !strings.Contains(out, s) {
				t.Errorf("progress bar output lacks %q:\n%s", s, out)
			}
		}
		if n := strings.Count(out, "\n"); n != 8 { // manifest, 4 layers, verifying, writing, success
			t.Errorf("progress output has %d lines, want 8:\n%s", n, out)
		}
	})
	t.Run("unknown model", func(t *testing.T) {
		f := newFakeOllama(t)
		o := newTestOllama(t, f.URL(), func(o *OllamaOptions) { o.Model = "no-such-model" })
		var got []PullProgress
		err := o.Pull(context.Background(), func(p PullProgress) { got = append(got, p) })
		if err == nil || !strings.Contains(err.Error(), "pull model manifest: file does not exist") || !strings.Contains(err.Error(), "no-such-model") {
			t.Fatalf("Pull: %v", err)
		}
		if len(got) != 1 || got[0].Status != "pulling manifest" {
			t.Errorf("progress %v", got)
		}
	})
	t.Run("invalid name", func(t *testing.T) {
		f := newFakeOllama(t)
		o := newTestOllama(t, f.URL(), func(o *OllamaOptions) { o.Model = ":x" })
		err := o.Pull(context.Background(), nil)
		if err == nil || !strings.Contains(err.Error(), "invalid model name") || !strings.Contains(err.Error(), "(400)") {
			t.Fatalf("Pull: %v", err)
		}
	})
	t.Run("stream cut", func(t *testing.T) {
		f := newFakeOllama(t)
		f.Uninstall("nomic-embed-text")
		f.Set(func(k *ollamafake.Knobs) { k.DropPull = true })
		o := newTestOllama(t, f.URL(), nil)
		err := o.Pull(context.Background(), nil)
		if !errors.Is(err, memory.ErrUnavailable) || !strings.Contains(err.Error(), "ended before success") {
			t.Fatalf("Pull: %v", err)
		}
	})
}

func TestRenderBar(t *testing.T) {
	cases := []struct {
		done, total int64
		want        string
	}{
		{0, 10, "\rreindex [>                             ]   0% 0/10 "},
		{5, 10, "\rreindex [===============>              ]  50% 5/10 "},
		{10, 10, "\rreindex [==============================] 100% 10/10\n"},
		{12, 10, "\rreindex [==============================] 100% 10/10\n"},
		{-3, 10, "\rreindex [>                             ]   0% 0/10 "},
		{7, 0, "\rreindex 7"},
	}
	for _, c := range cases {
		var b bytes.Buffer
		RenderBar(&b, "reindex", c.done, c.total)
		if b.String() != c.want {
			t.Errorf("RenderBar(%d, %d) = %q, want %q", c.done, c.total, b.String(), c.want)
		}
	}
	RenderBar(nil, "x", 1, 2) // no panic
	for n, want := range map[int64]string{999: "999 B", 1000: "1.0 kB", 274290656: "274.3 MB", 5e12: "5.0 TB"} {
		if got := formatBytes(n); got != want {
			t.Errorf("formatBytes(%d) = %q, want %q", n, got, want)
		}
	}
}

// FuzzCheckVectors feeds arbitrary "embeddings" JSON through the
// validation: it never panics, and what it accepts is finite and unit length.
func FuzzCheckVectors(f *testing.F) {
	f.Add([]byte(`[[0.1,0.2],[0.3,0.4]]`), 2)
	f.Add([]byte(`[[0,0]]`), 1)
	f.Add([]byte(`[[1e-45,1e-45]]`), 1)
	f.Add([]byte(`[[3e38,3e38,-3e38]]`), 1)
	f.Add([]byte(`[[1],[1,2]]`), 2)
	f.Fuzz(func(t *testing.T, data []byte, want int) {
		var embs [][]float32
		if json.Unmarshal(data, &embs) != nil {
			return
		}
		vecs, err := checkVectors(embs, want)
		if err != nil {
			return
		}
		for _, v := range vecs {
			if n := norm(v); math.Abs(n-1) > 1e-4 {
				t.Fatalf("norm %f for %v", n, v)
			}
		}
	})
}

// BenchmarkOllamaClient measures the client's own cost (request encoding,
// response decoding, checks, normalisation) against the fake server at
// nomic-embed-text's dimension, 32 texts per request.
func BenchmarkOllamaClient(b *testing.B) {
	f := newFakeOllama(b)
	f.Set(func(k *ollamafake.Knobs) { k.Dim = 768 })
	o, err := NewOllama(OllamaOptions{Host: f.URL()})
	if err != nil {
		b.Fatal(err)
	}
	in := texts(32)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := o.Embed(context.Background(), in); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(in))/1000, "µs/text")
}

// TestTaskPrefixes checks that models trained with task prefixes get them:
// documents through Embed, queries through EmbedQuery (also through the
// cache, which keeps queries apart from documents).
func TestTaskPrefixes(t *testing.T) {
	f := newFakeOllama(t)
	o := newTestOllama(t, f.URL(), nil) // nomic-embed-text
	ctx := context.Background()
	c := NewCached(o, 16)
	if _, err := c.Embed(ctx, []string{"the port is 8080"}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.EmbedQuery(ctx, "the port is 8080"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.EmbedQuery(ctx, "the port is 8080"); err != nil { // cached
		t.Fatal(err)
	}
	got := f.Inputs()
	want := []string{"search_document: the port is 8080", "search_query: the port is 8080"}
	if len(got) != len(want) || got[0] != want[0] || got[1] != want[1] {
		t.Fatalf("Ollama saw %q, want %q", got, want)
	}
	if p := (&Ollama{model: "library/nomic-embed-text:v1.5"}).prefixes(); p.Query != "search_query: " {
		t.Fatalf("tagged name: %+v", p)
	}
	if p := (&Ollama{model: "all-minilm"}).prefixes(); p != (TaskPrefix{}) {
		t.Fatalf("a model without prefixes got %+v", p)
	}
}
