package embed

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/memtray/memtray/backend/embed/openaifake"
	"github.com/memtray/memtray/backend/memory"
)

// newOpenAI makes an OpenAI embedder for the fake, with its waits recorded
// instead of slept.
func newOpenAI(t *testing.T, opts OpenAIOptions) (*OpenAI, *[]time.Duration) {
	t.Helper()
	if opts.Model == "" {
		opts.Model = "voyage-4-nano"
	}
	if opts.Timeout == 0 {
		opts.Timeout = 5 * time.Second
	}
	o, err := NewOpenAI(opts)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	waits := &[]time.Duration{}
	o.sleep = func(ctx context.Context, d time.Duration) error {
		mu.Lock()
		*waits = append(*waits, d)
		mu.Unlock()
		return ctx.Err()
	}
	return o, waits
}

// TestOpenAIRecordedRequest: what memtray sends is byte for byte the
// recorded request, with and without dimensions, and the fake accepts it.
func TestOpenAIRecordedRequest(t *testing.T) {
	cases := []struct {
		file  string
		model string
		dims  int
		texts []string
	}{
		{"embeddings_request.json", "voyage-4-nano", 0,
			[]string{"The deploy script lives in scripts/deploy.sh", "Use pnpm, not npm, in this repository"}},
		{"embeddings_request_dimensions.json", "text-embedding-3-small", 8,
			[]string{"The deploy script lives in scripts/deploy.sh"}},
	}
	for _, c := range cases {
		t.Run(c.file, func(t *testing.T) {
			f := openaifake.New(t, openaifake.Options{Models: []string{c.model}, Shortenable: true})
			o, _ := newOpenAI(t, OpenAIOptions{URL: f.URL(), Model: c.model, Dimensions: c.dims})
			vecs, err := o.Embed(context.Background(), c.texts)
			if err != nil {
				t.Fatal(err)
			}
			if len(vecs) != len(c.texts) || (c.dims > 0 && o.Dim() != c.dims) || (c.dims == 0 && o.Dim() != 16) {
				t.Fatalf("got %d vectors of dim %d", len(vecs), o.Dim())
			}
			reqs := f.Requests()
			if len(reqs) != 1 || reqs[0].Method != http.MethodPost || reqs[0].Path != "/v1/embeddings" || reqs[0].Auth != "" {
				t.Fatalf("requests = %+v", reqs)
			}
			if want := bytes.TrimSpace(openaifake.Testdata(c.file)); !bytes.Equal(reqs[0].Body, want) {
				t.Fatalf("request body\n%s\nwant the recorded\n%s", reqs[0].Body, want)
			}
		})
	}
}

// TestOpenAIRecordedAnswers: OpenAI's answer and llama-server's (data out
// of index order) give the same vectors, normalised, in index order.
func TestOpenAIRecordedAnswers(t *testing.T) {
	texts := []string{"The deploy script lives in scripts/deploy.sh", "Use pnpm, not npm, in this repository"}
	var got [][][]float32
	for _, mode := range []string{"verbatim", "llamacpp"} {
		f := openaifake.New(t, openaifake.Options{})
		f.Set(func(k *openaifake.Knobs) { k.Mode = mode })
		o, _ := newOpenAI(t, OpenAIOptions{URL: f.URL()})
		vecs, err := o.Embed(context.Background(), texts)
		if err != nil {
			t.Fatalf("%s: %v", mode, err)
		}
		got = append(got, vecs)
	}
	// embeddings_response.json's first vector is (0.5, -0.5, 0.25 x6 with
	// signs), length sqrt(0.875).
	if want := float32(0.5 / math.Sqrt(0.875)); math.Abs(float64(got[0][0][0]-want)) > 1e-6 {
		t.Fatalf("first value %v, want %v", got[0][0][0], want)
	}
	for i := range got[0] {
		if !slices.Equal(got[0][i], got[1][i]) {
			t.Fatalf("vector %d: OpenAI's %v, llama-server's %v", i, got[0][i], got[1][i])
		}
	}
}

// TestOpenAIBatching: texts go BatchSize at a time and come back in order,
// whatever order the server lists them in.
func TestOpenAIBatching(t *testing.T) {
	for _, mode := range []string{"", "reversed", "noindex"} {
		t.Run("mode "+mode, func(t *testing.T) {
			f := openaifake.New(t, openaifake.Options{Dim: 12})
			f.Set(func(k *openaifake.Knobs) { k.Mode = mode })
			o, _ := newOpenAI(t, OpenAIOptions{URL: f.URL(), BatchSize: 3})
			texts := make([]string, 8)
			for i := range texts {
				texts[i] = fmt.Sprintf("memory number %d about the build", i)
			}
			// Without indexes ("noindex") the order listed is the order.
			vecs, err := o.Embed(context.Background(), texts)
			if err != nil {
				t.Fatal(err)
			}
			if b := f.Batches(); !slices.Equal(b, []int{3, 3, 2}) {
				t.Fatalf("batches %v, want [3 3 2]", b)
			}
			for i, v := range vecs {
				if !slices.Equal(v, openaifake.HashVector(texts[i], 12)) {
					t.Fatalf("vector %d is not text %d's", i, i)
				}
			}
		})
	}
}

// TestOpenAIErrors: every failure is a clear error of the right kind, and
// only transient ones are retried.
func TestOpenAIErrors(t *testing.T) {
	cases := []struct {
		name     string
		model    string
		path     string // replaces the fake's /v1
		set      func(k *openaifake.Knobs)
		is       error
		contains string
		requests int // embeddings requests made, 0: not checked
	}{
		{name: "unknown model", model: "text-embedding-4", is: ErrModelNotServed, contains: "does not exist", requests: 1},
		{name: "garbage", set: func(k *openaifake.Knobs) { k.Mode = "garbage" }, contains: "not JSON", requests: 1},
		{name: "truncated", set: func(k *openaifake.Knobs) { k.Mode = "truncated" }, contains: "not JSON"},
		{name: "empty data", set: func(k *openaifake.Knobs) { k.Mode = "empty" }, contains: "no data"},
		{name: "error with 200", set: func(k *openaifake.Knobs) { k.Mode = "error200" }, contains: "server said: Loading model"},
		{name: "a vector too few", set: func(k *openaifake.Knobs) { k.Mode = "wrongcount" }, contains: "got 2 vectors for 3 texts"},
		{name: "duplicate index", set: func(k *openaifake.Knobs) { k.Mode = "dupindex" }, contains: "appears twice"},
		{name: "index out of range", set: func(k *openaifake.Knobs) { k.Mode = "badindex" }, contains: "outside 0..2"},
		{name: "beyond float32", set: func(k *openaifake.Knobs) { k.Mode = "huge" }, contains: "non-finite"},
		{name: "zero vector", set: func(k *openaifake.Knobs) { k.Mode = "zero" }, contains: "zero"},
		{name: "bad request not retried", set: func(k *openaifake.Knobs) { k.Fail, k.FailStatus = 5, 400 },
			contains: "rejected the request (400): This model does not support specifying dimensions.", requests: 1},
		{name: "server errors retried then given up", set: func(k *openaifake.Knobs) { k.Fail = 5 },
			is: memory.ErrUnavailable, contains: "after 3 attempts", requests: 3},
		{name: "loading", set: func(k *openaifake.Knobs) { k.Fail, k.FailStatus = 5, 503 },
			is: memory.ErrUnavailable, contains: "server error 503: Loading model"},
		{name: "no /v1", path: "/", is: memory.ErrUnavailable, contains: "the URL usually ends in /v1", requests: 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := openaifake.New(t, openaifake.Options{})
			if c.set != nil {
				f.Set(c.set)
			}
			url := f.URL()
			if c.path != "" {
				url = strings.TrimSuffix(url, "/v1") + c.path
			}
			o, _ := newOpenAI(t, OpenAIOptions{URL: url, Model: cmp(c.model, "voyage-4-nano")})
			_, err := o.Embed(context.Background(), []string{"one", "two", "three"})
			if err == nil || (c.is != nil && !errors.Is(err, c.is)) || !strings.Contains(err.Error(), c.contains) {
				t.Fatalf("err = %v; want %v containing %q", err, c.is, c.contains)
			}
			if c.requests > 0 {
				if n := len(f.Requests()); n != c.requests {
					t.Fatalf("%d requests, want %d", n, c.requests)
				}
			}
			if o.Dim() != 0 {
				t.Fatalf("dim %d learned from a failure", o.Dim())
			}
		})
	}
}

func cmp(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// TestOpenAIRetryAfter: a 429 or 503 with Retry-After waits what it asks
// (seconds or a date), capped at a minute; without it, the backoff.
func TestOpenAIRetryAfter(t *testing.T) {
	cases := []struct {
		name       string
		status     int
		retryAfter string
		want       func(time.Duration) bool
	}{
		{"429 seconds", 429, "3", func(d time.Duration) bool { return d == 3*time.Second }},
		{"503 seconds", 503, "1", func(d time.Duration) bool { return d == time.Second }},
		{"429 too long", 429, "7200", func(d time.Duration) bool { return d == maxRetryAfter }},
		{"429 date", 429, time.Now().Add(10 * time.Second).UTC().Format(http.TimeFormat),
			func(d time.Duration) bool { return d > 5*time.Second && d <= 10*time.Second }},
		{"429 without", 429, "", func(d time.Duration) bool { return d > 0 && d <= DefaultOllamaBackoff<<1 }},
		{"429 garbage", 429, "soon", func(d time.Duration) bool { return d > 0 && d <= DefaultOllamaBackoff<<1 }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := openaifake.New(t, openaifake.Options{})
			f.Set(func(k *openaifake.Knobs) { k.Fail, k.FailStatus, k.RetryAfter = 2, c.status, c.retryAfter })
			o, waits := newOpenAI(t, OpenAIOptions{URL: f.URL()})
			if _, err := o.Embed(context.Background(), []string{"a text"}); err != nil {
				t.Fatal(err)
			}
			if len(*waits) != 2 || !c.want((*waits)[0]) || !c.want((*waits)[1]) {
				t.Fatalf("waits %v", *waits)
			}
			if n := len(f.Requests()); n != 3 {
				t.Fatalf("%d requests, want 3", n)
			}
		})
	}
}

// TestOpenAIRateLimitGivesUp: a server that keeps answering 429 ends in
// an error naming its message, after the retries.
func TestOpenAIRateLimitGivesUp(t *testing.T) {
	f := openaifake.New(t, openaifake.Options{})
	f.Set(func(k *openaifake.Knobs) { k.Fail, k.FailStatus, k.RetryAfter = 100, 429, "1" })
	o, waits := newOpenAI(t, OpenAIOptions{URL: f.URL(), Retries: 4})
	_, err := o.Embed(context.Background(), []string{"a text"})
	if !errors.Is(err, memory.ErrUnavailable) || !strings.Contains(err.Error(), "Rate limit reached") || !strings.Contains(err.Error(), "after 5 attempts") {
		t.Fatalf("err = %v", err)
	}
	if len(*waits) != 4 {
		t.Fatalf("waits %v", *waits)
	}
}

// TestOpenAIDimensions: a server that ignores dimensions is refused, one
// that honours them gives that length, and a dimension that changes
// between calls is a model mismatch.
func TestOpenAIDimensions(t *testing.T) {
	f := openaifake.New(t, openaifake.Options{Dim: 16})
	o, _ := newOpenAI(t, OpenAIOptions{URL: f.URL(), Dimensions: 8})
	_, err := o.Embed(context.Background(), []string{"a text"})
	if !errors.Is(err, ErrDimensions) || !errors.Is(err, memory.ErrModelMismatch) || !strings.Contains(err.Error(), "16 dimensions, embedder.dimensions asks for 8") {
		t.Fatalf("err = %v", err)
	}

	f2 := openaifake.New(t, openaifake.Options{Dim: 16, Shortenable: true})
	o2, _ := newOpenAI(t, OpenAIOptions{URL: f2.URL(), Dimensions: 8})
	if d, err := o2.Probe(context.Background()); err != nil || d != 8 {
		t.Fatalf("probe = %d, %v", d, err)
	}

	o3, _ := newOpenAI(t, OpenAIOptions{URL: f.URL()})
	if d, err := o3.Probe(context.Background()); err != nil || d != 16 {
		t.Fatalf("probe = %d, %v", d, err)
	}
	f.Set(func(k *openaifake.Knobs) { k.Dim = 24 })
	if _, err := o3.Embed(context.Background(), []string{"another"}); !errors.Is(err, memory.ErrModelMismatch) || !strings.Contains(err.Error(), "from 16 to 24") {
		t.Fatalf("err = %v", err)
	}
}

// TestOpenAIKey: the key comes from the named variable as a bearer token;
// a wrong key is a clear error, an unset variable refused up front.
func TestOpenAIKey(t *testing.T) {
	f := openaifake.New(t, openaifake.Options{Key: "sk-test-123"})
	t.Setenv("MEMTRAY_TEST_OPENAI_KEY", "sk-test-123")
	o, _ := newOpenAI(t, OpenAIOptions{URL: f.URL(), KeyEnv: "MEMTRAY_TEST_OPENAI_KEY"})
	if _, err := o.Probe(context.Background()); err != nil {
		t.Fatal(err)
	}
	if r := f.Requests(); r[0].Auth != "Bearer sk-test-123" {
		t.Fatalf("auth %q", r[0].Auth)
	}

	t.Setenv("MEMTRAY_TEST_OPENAI_KEY", "sk-wrong")
	o, _ = newOpenAI(t, OpenAIOptions{URL: f.URL(), KeyEnv: "MEMTRAY_TEST_OPENAI_KEY"})
	_, err := o.Probe(context.Background())
	if err == nil || !strings.Contains(err.Error(), "not authorized (401): Incorrect API key") || !strings.Contains(err.Error(), "$MEMTRAY_TEST_OPENAI_KEY") {
		t.Fatalf("err = %v", err)
	}
	o, _ = newOpenAI(t, OpenAIOptions{URL: f.URL()})
	if _, err := o.Probe(context.Background()); err == nil || !strings.Contains(err.Error(), "set embedder.openai_key_env") {
		t.Fatalf("err = %v", err)
	}

	for _, bad := range []OpenAIOptions{
		{URL: f.URL(), Model: "m", KeyEnv: "MEMTRAY_TEST_UNSET_KEY"},
		{URL: f.URL(), Model: "m", KeyEnv: "NOT-A-NAME"},
		{URL: "http://example.com/v1", Model: "m", KeyEnv: "MEMTRAY_TEST_OPENAI_KEY"},
		{URL: "ftp://127.0.0.1/v1", Model: "m"},
		{URL: "http://user:pw@127.0.0.1/v1", Model: "m"},
		{URL: f.URL()},
		{URL: f.URL(), Model: "m", Dimensions: -1},
		{URL: f.URL(), Model: "m", BatchSize: 5000},
		{URL: f.URL(), Model: "bad\nname"},
	} {
		if _, err := NewOpenAI(bad); !errors.Is(err, memory.ErrInvalid) {
			t.Errorf("NewOpenAI(%+v) = %v, want ErrInvalid", bad, err)
		}
	}
	if _, err := NewOpenAI(OpenAIOptions{URL: "https://api.openai.com/v1", Model: "text-embedding-3-small", KeyEnv: "MEMTRAY_TEST_OPENAI_KEY"}); err != nil {
		t.Errorf("https with a key: %v", err)
	}
}

// TestOpenAIUnreachable: a closed port and a hanging server are
// ErrUnavailable, retried, and say so.
func TestOpenAIUnreachable(t *testing.T) {
	o, waits := newOpenAI(t, OpenAIOptions{URL: openaifake.ClosedURL(t)})
	_, err := o.Embed(context.Background(), []string{"a"})
	if !errors.Is(err, memory.ErrUnavailable) || !isUnreachable(err) || !strings.Contains(err.Error(), "is the server running?") || len(*waits) != 2 {
		t.Fatalf("err = %v, waits %v", err, *waits)
	}

	f := openaifake.New(t, openaifake.Options{})
	f.Set(func(k *openaifake.Knobs) { k.Hang = true })
	o, _ = newOpenAI(t, OpenAIOptions{URL: f.URL(), Timeout: 50 * time.Millisecond, Retries: -1})
	_, err = o.Embed(context.Background(), []string{"a"})
	if !errors.Is(err, memory.ErrUnavailable) || !isUnreachable(err) || !strings.Contains(err.Error(), "no answer within 50ms") {
		t.Fatalf("err = %v", err)
	}

	if _, err := o.Embed(context.Background(), []string{"a", " "}); !errors.Is(err, memory.ErrInvalid) {
		t.Fatalf("empty text: %v", err)
	}
}

// TestOpenAICancelDuringWait: ending the caller's context ends a retry wait.
func TestOpenAICancelDuringWait(t *testing.T) {
	f := openaifake.New(t, openaifake.Options{})
	f.Set(func(k *openaifake.Knobs) { k.Fail, k.FailStatus, k.RetryAfter = 100, 429, "30" })
	o, err := NewOpenAI(OpenAIOptions{URL: f.URL(), Model: "voyage-4-nano"})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		for len(f.Requests()) == 0 {
			time.Sleep(time.Millisecond)
		}
		cancel()
	}()
	if _, err := o.Embed(ctx, []string{"a"}); !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v", err)
	}
}

func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2026, 11, 27, 5, 0, 0, 0, time.UTC)
	cases := map[string]time.Duration{
		"":                              0,
		"0":                             0,
		"-3":                            0,
		"2":                             2 * time.Second,
		"0.5":                           500 * time.Millisecond,
		"NaN":                           0,
		"1e9":                           maxRetryAfter,
		"Fri, 27 Nov 2026 05:00:20 GMT": 20 * time.Second,
		"Fri, 27 Nov 2026 04:00:00 GMT": 0,
		"Sat, 28 Nov 2026 05:00:00 GMT": maxRetryAfter,
		"tomorrow":                      0,
	}
	for in, want := range cases {
		if got := parseRetryAfter(in, now); got != want {
			t.Errorf("parseRetryAfter(%q) = %s, want %s", in, got, want)
		}
	}
}

func TestErrorMessage(t *testing.T) {
	cases := []struct {
		body   []byte
		status int
		want   string
	}{
		{openaifake.Testdata("error_model_not_found.json"), 404, "The model `text-embedding-4` does not exist or you do not have access to it."},
		{openaifake.Testdata("error_model_not_found_vllm.json"), 404, "The model `bge-m3` does not exist."},
		{openaifake.Testdata("error_loading.json"), 503, "Loading model"},
		{openaifake.Testdata("garbage.html"), 502, "Bad Gateway"},
		{[]byte(`{"error":"model not loaded"}`), 400, "model not loaded"},
		{[]byte(`{"detail":"Not Found"}`), 404, "Not Found"},
		{[]byte("plain\ntext\x00 answer"), 500, "plain text answer"},
		{nil, 418, "I'm a teapot"},
		{[]byte(strings.Repeat("x", 1000)), 500, strings.Repeat("x", 300) + "…"},
	}
	for _, c := range cases {
		if got := ErrorMessage(c.body, c.status); got != c.want {
			t.Errorf("ErrorMessage(%.40q) = %q, want %q", c.body, got, c.want)
		}
	}
	for _, m := range []string{"The model `x` does not exist.", "Model not found", "could not load model x"} {
		if !looksLikeModelError(m) {
			t.Errorf("%q is not a model error", m)
		}
	}
}

func TestParseEmbeddings(t *testing.T) {
	ok := `{"data":[{"embedding":[3,4],"index":1},{"embedding":[1,0],"index":0}]}`
	vecs, err := ParseEmbeddings([]byte(ok), 2, 2)
	if err != nil || !slices.Equal(vecs[0], []float32{1, 0}) || !slices.Equal(vecs[1], []float32{0.6, 0.8}) {
		t.Fatalf("= %v, %v", vecs, err)
	}
	bad := map[string]string{
		``:            "not JSON",
		`[]`:          "wrong type",
		`{"data":{}}`: "wrong type",
		`{"data":[{"embedding":"AAAA","index":0}]}`:                            "wrong type",
		`{"data":[{"embedding":[],"index":0}]}`:                                "empty",
		`{"data":[{"embedding":[1],"index":0},{"embedding":[1,2]}]}`:           "have no index",
		`{"data":[{"embedding":[1],"index":0},{"embedding":[1,2],"index":1}]}`: "dimension",
		`{"data":[{"embedding":[1],"index":-1}]}`:                              "outside",
		`{"data":[],"error":{"message":"busy"}}`:                               "server said: busy",
		`{"data":[{"embedding":[1],"index":0}]} trailing`:                      "not JSON",
	}
	for body, want := range bad {
		if _, err := ParseEmbeddings([]byte(body), 1+strings.Count(body, "},{"), 0); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseEmbeddings(%s) = %v, want %q", body, err, want)
		}
	}
}

// FuzzParseEmbeddings: never panics; whatever it accepts is want finite,
// unit vectors of one dimension (dim when asked).
func FuzzParseEmbeddings(f *testing.F) {
	for _, name := range []string{"embeddings_response.json", "embeddings_response_llamacpp.json", "error_loading.json", "garbage.html", "models.json"} {
		f.Add(openaifake.Testdata(name), 2, 0)
	}
	f.Add([]byte(`{"data":[{"embedding":[1e39],"index":0}]}`), 1, 1)
	f.Add([]byte(`{"data":[{"embedding":[0,0],"index":0}]}`), 1, 2)
	f.Add([]byte(`{"data":[{"embedding":[1,2]},{"embedding":[3,4]}]}`), 2, 2)
	f.Fuzz(func(t *testing.T, body []byte, want, dim int) {
		if want < 1 || want > 64 || dim < 0 || dim > 64 {
			return
		}
		vecs, err := ParseEmbeddings(body, want, dim)
		if err != nil {
			return
		}
		if len(vecs) != want {
			t.Fatalf("%d vectors for %d", len(vecs), want)
		}
		for _, v := range vecs {
			if len(v) != len(vecs[0]) || (dim > 0 && len(v) != dim) {
				t.Fatalf("dimensions %d and %d (dim %d)", len(v), len(vecs[0]), dim)
			}
			var sum float64
			for _, x := range v {
				if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
					t.Fatalf("non-finite %v", x)
				}
				sum += float64(x) * float64(x)
			}
			if math.Abs(sum-1) > 1e-3 {
				t.Fatalf("length² %v", sum)
			}
		}
	})
}

// TestOpenAIModels lists the served models, and a server without the
// route is an error that still counts as an answer.
func TestOpenAIModels(t *testing.T) {
	f := openaifake.New(t, openaifake.Options{Models: []string{"b-model", "a-model"}})
	o, _ := newOpenAI(t, OpenAIOptions{URL: f.URL(), Model: "a-model"})
	ms, err := o.Models(context.Background())
	if err != nil || !slices.Equal(ms, []string{"a-model", "b-model"}) {
		t.Fatalf("= %v, %v", ms, err)
	}
	f.Set(func(k *openaifake.Knobs) { k.NoModelsRoute = true })
	if _, err := o.Models(context.Background()); err == nil || isUnreachable(err) {
		t.Fatalf("err = %v", err)
	}
}

func TestInspectOpenAI(t *testing.T) {
	f := openaifake.New(t, openaifake.Options{Dim: 24})
	cfg := embCfg("openai", "")
	cfg.OpenAIURL, cfg.OpenAIModel = f.URL(), "voyage-4-nano"
	st := InspectOpenAI(context.Background(), cfg, time.Second)
	if !st.Reachable || st.Dim != 24 || st.Error != "" || !slices.Equal(st.Models, []string{"voyage-4-nano"}) || st.URL != f.URL() {
		t.Fatalf("state = %+v", st)
	}
	cfg.OpenAIModel = "nope"
	st = InspectOpenAI(context.Background(), cfg, time.Second)
	if !st.Reachable || st.Dim != 0 || !strings.Contains(st.Error, "not served") {
		t.Fatalf("state = %+v", st)
	}
	cfg.OpenAIURL = openaifake.ClosedURL(t)
	st = InspectOpenAI(context.Background(), cfg, time.Second)
	if st.Reachable || st.Error == "" {
		t.Fatalf("state = %+v", st)
	}
	cfg.OpenAIURL = "nonsense://"
	if st = InspectOpenAI(context.Background(), cfg, time.Second); st.Reachable || !strings.Contains(st.Error, "http") {
		t.Fatalf("state = %+v", st)
	}
}
