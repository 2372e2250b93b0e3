package daemon

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/memtray/memtray/backend/embed/ollamafake"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/memtray/memtray/backend/config"
	"github.com/memtray/memtray/backend/embed"
	"github.com/memtray/memtray/backend/httpapi"
	"github.com/memtray/memtray/backend/memory"
	"github.com/memtray/memtray/backend/noise"
	"github.com/memtray/memtray/backend/store"
)

// ollamaConfig is testConfig (the built-in embedder) with Ollama at host.
func ollamaConfig(t *testing.T, host string) config.Config {
	t.Helper()
	cfg := testConfig(t)
	cfg.Embedder.OllamaHost = host
	return cfg
}

// seed stores n memories embedded with the daemon's embedder and returns their texts.
func seed(t *testing.T, d *Daemon, n int) []string {
	t.Helper()
	ctx := context.Background()
	services := []string{"billing", "search", "auth", "mailer", "exporter"}
	texts := make([]string, n)
	for i := range texts {
		texts[i] = fmt.Sprintf("Seed note %d: the %s service listens on port %d and retries %d times.", i, services[i%len(services)], 8000+i, i%7)
	}
	vecs, err := d.Embedder().Embed(ctx, texts)
	if err != nil {
		t.Fatal(err)
	}
	ms := make([]memory.Memory, n)
	for i := range ms {
		ms[i] = memory.Memory{Text: texts[i], Project: "seed", Embedding: vecs[i], EmbeddingModel: d.Embedder().Model()}
	}
	if _, err := d.Store().PutBatch(ctx, ms); err != nil {
		t.Fatal(err)
	}
	return texts
}

// allMemories reads every record, embeddings included.
func allMemories(t *testing.T, d *Daemon) []memory.Memory {
	t.Helper()
	var out []memory.Memory
	err := d.Store().Iterate(context.Background(), store.Filter{IncludeSnoozed: true, IncludeSuperseded: true}, func(m memory.Memory) error {
		out = append(out, m)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// checkVectors fails unless every memory holds ref's vector of its text, labelled with ref's model.
func checkVectors(t *testing.T, ms []memory.Memory, ref memory.Embedder) {
	t.Helper()
	texts := make([]string, len(ms))
	for i, m := range ms {
		texts[i] = m.Text
	}
	want, err := ref.Embed(context.Background(), texts)
	if err != nil {
		t.Fatal(err)
	}
	bad := 0
	for i, m := range ms {
		if m.EmbeddingModel != ref.Model() || len(m.Embedding) != len(want[i]) || memory.Cosine(m.Embedding, want[i]) < 0.99999 {
			if bad++; bad <= 5 {
				t.Errorf("memory %s %q: model %q, %d dims, not %s's vector", m.ID, m.Text, m.EmbeddingModel, len(m.Embedding), ref.Model())
			}
		}
	}
	if bad > 0 {
		t.Fatalf("%d of %d memories do not hold %s's vector", bad, len(ms), ref.Model())
	}
}

// feedContext ends when the test ends, before the daemon stops (cleanups
// run last first), so an open event stream does not hold up its shutdown.
func feedContext(t *testing.T) context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	return ctx
}

// jobEvent decodes a job event of the feed.
func jobEvent(t *testing.T, e sseEvent) httpapi.Job {
	t.Helper()
	var j httpapi.Job
	if err := json.Unmarshal([]byte(e.Data), &j); err != nil {
		t.Fatalf("job event %s: %v", e.Data, err)
	}
	return j
}

func TestEmbedderInfo(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFakeOllama(t, 16, "nomic-embed-text:latest", "llama3.2:latest")
	d, addr := serve(t, ollamaConfig(t, f.URL()))
	c := httpapi.NewClient(addr, d.Token())
	info, err := c.EmbedderInfo(ctx, httpapi.EmbedderQuery{})
	if err != nil {
		t.Fatal(err)
	}
	if info.Model != embed.BuiltinModel || info.Provider != "builtin" || info.Dim != embed.BuiltinDim ||
		info.StoreModel != embed.BuiltinModel || info.StoreDim != embed.BuiltinDim || info.Builtin != embed.BuiltinModel ||
		info.ConfiguredProvider != "builtin" || info.ConfiguredModel != "nomic-embed-text" || info.Reason == "" {
		t.Fatalf("info = %+v", info)
	}
	o := info.Ollama
	if !o.Reachable || o.Version != "0.13.0" || o.Host != f.URL() || !o.HasConfigured || len(o.Models) != 2 ||
		o.Models[0].Name != "nomic-embed-text:latest" || !o.Models[0].Embedding || o.Models[0].Family != "nomic-bert" || o.Models[1].Embedding {
		t.Fatalf("ollama = %+v", o)
	}

	d2, addr2 := serve(t, ollamaConfig(t, ollamafake.ClosedURL(t)))
	info, err = httpapi.NewClient(addr2, d2.Token()).EmbedderInfo(ctx, httpapi.EmbedderQuery{})
	if err != nil {
		t.Fatal(err)
	}
	if o := info.Ollama; o.Reachable || !strings.Contains(o.Error, "is Ollama running?") || o.Models == nil || len(o.Models) != 0 || o.HasConfigured {
		t.Fatalf("ollama absent = %+v", o)
	}
}

// TestPullJob pulls a model through the API: the job's events arrive on
// the event stream in the order of Ollama's progress lines, a second pull
// waits its turn, a failing pull says why, a pull can be cancelled.
func TestPullJob(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFakeOllama(t, 16, "llama3.2:latest")
	f.Set(func(k *ollamafake.Knobs) { k.PullDelay = 20 * time.Millisecond })
	d, addr := serve(t, ollamaConfig(t, f.URL()))
	c := httpapi.NewClient(addr, d.Token())
	feed := openFeed(t, feedContext(t), addr, d.Token(), "")

	job, err := c.PullModel(ctx, httpapi.PullRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if job.Kind != httpapi.JobPull || job.Target != "nomic-embed-text" || job.State != httpapi.JobRunning || job.Unit != httpapi.UnitBytes {
		t.Fatalf("job = %+v", job)
	}
	if _, err := c.PullModel(ctx, httpapi.PullRequest{Model: "mxbai-embed-large"}); !errors.Is(err, httpapi.ErrJobRunning) {
		t.Fatalf("a second pull while one runs: %v, want ErrJobRunning", err)
	}

	var seen []httpapi.Job
	for {
		j := jobEvent(t, await(t, feed, httpapi.EventJob, nil))
		if j.ID != job.ID {
			t.Fatalf("event of another job: %+v", j)
		}
		seen = append(seen, j)
		if j.Finished() {
			break
		}
	}
	// The statuses follow Ollama's stream; the bytes only grow.
	var stream []string
	sc := bufio.NewScanner(bytes.NewReader(ollamafake.Testdata("pull_success.ndjson")))
	for sc.Scan() {
		var p embed.PullProgress
		json.Unmarshal(sc.Bytes(), &p)
		stream = append(stream, p.Status)
	}
	pos := 0
	var done, total int64
	for _, j := range seen {
		if j.Status != "" {
			for pos < len(stream) && stream[pos] != j.Status {
				pos++
			}
			if pos == len(stream) {
				t.Fatalf("status %q out of the stream's order (events %+v)", j.Status, seen)
			}
		}
		if j.Done < done || j.Total < total {
			t.Fatalf("progress went back: %d/%d after %d/%d", j.Done, j.Total, done, total)
		}
		done, total = j.Done, j.Total
	}
	last := seen[len(seen)-1]
	const layers = 274290656 + 11357 + 17 + 420
	if seen[0].Status != "" || len(seen) < 4 || last.State != httpapi.JobDone || last.Status != "success" ||
		last.Done != layers || last.Total != layers || !strings.Contains(last.Result, "ready") || last.FinishedAt == nil {
		t.Fatalf("events %+v", seen)
	}
	if !f.Has("nomic-embed-text") {
		t.Fatal("the model was not pulled")
	}
	if info, err := c.EmbedderInfo(ctx, httpapi.EmbedderQuery{}); err != nil || !info.Ollama.HasConfigured {
		t.Fatalf("after the pull: %+v, %v", info.Ollama, err)
	}
	if js, err := c.Jobs(ctx); err != nil || len(js) != 1 || js[0].ID != job.ID || js[0].State != httpapi.JobDone {
		t.Fatalf("Jobs = %+v, %v", js, err)
	}

	// A model the registry does not have: the stream's error fails the job.
	j2, err := c.PullModel(ctx, httpapi.PullRequest{Model: "no-such-model"})
	if err != nil {
		t.Fatal(err)
	}
	if j2, err = c.WaitJob(ctx, j2.ID, 10*time.Millisecond, nil); err != nil || j2.State != httpapi.JobFailed ||
		!strings.Contains(j2.Error, "file does not exist") {
		t.Fatalf("pull of an unknown model = %+v, %v", j2, err)
	}

	// Cancel a pull that stalls.
	f.Set(func(k *ollamafake.Knobs) { k.HangPull = true })
	j3, err := c.PullModel(ctx, httpapi.PullRequest{})
	if err != nil {
		t.Fatal(err)
	}
	await(t, feed, httpapi.EventJob, func(e sseEvent) bool { j := jobEvent(t, e); return j.ID == j3.ID && j.Status == "pulling manifest" })
	if _, err := c.CancelJob(ctx, j3.ID); err != nil {
		t.Fatal(err)
	}
	if j3, err = c.WaitJob(ctx, j3.ID, 10*time.Millisecond, nil); err != nil || j3.State != httpapi.JobCanceled {
		t.Fatalf("cancelled pull = %+v, %v", j3, err)
	}
	if _, err := c.Job(ctx, j2.ID); !errors.Is(err, memory.ErrNotFound) {
		t.Fatalf("a replaced job: %v, want ErrNotFound", err)
	}
}

// TestReembedWhileServing switches a store of the built-in model to an
// Ollama model of the same dimension (only the label tells them apart)
// while writers add memories through Add and the write pipeline and
// readers search: nothing fails, and afterwards every memory an Add
// returned is stored, and every memory, those written during the switch
// included, holds the new model's vector. The writers' texts near-repeat
// each other ("Writer 1 note 0" and "Writer 0 note 1" have the same
// tokens), so an Add may return the memory it reinforced instead of a new
// one: what is counted is the memories Add returned, not the calls. The
// model is all-minilm, which embeds queries like documents, so the fake's
// vectors let a query find its own text.
func TestReembedWhileServing(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFakeOllama(t, embed.BuiltinDim, "all-minilm:latest", "nomic-embed-text:latest")
	f.Set(func(k *ollamafake.Knobs) { k.EmbedDelay = 3 * time.Millisecond })
	cfgPath := filepath.Join(t.TempDir(), "config.json")
	if err := os.WriteFile(cfgPath, []byte("{\"recall\": {\"k\": 5}}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	d, addr := serveWith(t, Options{Config: ollamaConfig(t, f.URL()), Version: "test", ConfigPath: cfgPath})
	c := httpapi.NewClient(addr, d.Token())
	texts := seed(t, d, 400)
	feed := openFeed(t, feedContext(t), addr, d.Token(), "")

	job, err := c.Reembed(ctx, httpapi.ReembedRequest{Provider: "ollama", Model: "all-minilm"})
	if err != nil {
		t.Fatal(err)
	}
	if job.Kind != httpapi.JobReembed || job.Target != "ollama:all-minilm" || job.Unit != httpapi.UnitMemories {
		t.Fatalf("job = %+v", job)
	}
	if _, err := c.Reembed(ctx, httpapi.ReembedRequest{Provider: "builtin"}); !errors.Is(err, httpapi.ErrJobRunning) {
		t.Fatalf("a second re-embedding: %v, want ErrJobRunning", err)
	}

	stop := make(chan struct{})
	errs := make(chan error, 64)
	var added, searched atomic.Int64
	var returnedMu sync.Mutex
	returned := map[string]string{} // id → text of each memory an Add returned
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				m, err := c.Add(ctx, httpapi.AddRequest{Text: fmt.Sprintf("Writer %d note %d: deploys of the %d-th shard go through canary %d.", w, i, i, w)})
				if err != nil {
					errs <- fmt.Errorf("add: %w", err)
					return
				}
				returnedMu.Lock()
				returned[m.ID] = m.Text
				returnedMu.Unlock()
				added.Add(1)
			}
		})
	}
	wg.Go(func() {
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			doc := httpapi.Document{Name: fmt.Sprintf("runbook-%d.md", i), Project: "ops",
				Text: fmt.Sprintf("Runbook %d: restart the queue consumer %d with `systemctl restart consumer@%d` after a failover.", i, i, i)}
			if _, err := c.Ingest(ctx, httpapi.IngestRequest{Documents: []httpapi.Document{doc}}); err != nil {
				errs <- fmt.Errorf("ingest: %w", err)
				return
			}
		}
	})
	wg.Go(func() {
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			mode := []string{"hybrid", "vector"}[i%2]
			hits, err := c.Search(ctx, httpapi.SearchRequest{Query: "which port does the billing service listen on", Mode: mode})
			if err != nil {
				errs <- fmt.Errorf("%s search: %w", mode, err)
				return
			}
			if mode == "hybrid" && len(hits) == 0 {
				errs <- errors.New("hybrid search found nothing during the re-embedding")
				return
			}
			searched.Add(1)
		}
	})

	var progress []httpapi.Job
	for {
		j := jobEvent(t, await(t, feed, httpapi.EventJob, nil))
		progress = append(progress, j)
		if j.Finished() {
			break
		}
	}
	time.Sleep(150 * time.Millisecond) // writers keep going on the new model
	close(stop)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	final := progress[len(progress)-1]
	if final.State != httpapi.JobDone || !strings.Contains(final.Result, "re-embedded") {
		t.Fatalf("final = %+v", final)
	}
	prev := int64(-1)
	for _, j := range progress {
		if j.Status == "embedding" {
			if j.Done < prev || j.Total < 400 || j.Done > j.Total {
				t.Fatalf("progress %d/%d after %d", j.Done, j.Total, prev)
			}
			prev = j.Done
		}
	}
	if prev < 400 {
		t.Fatalf("the progress never reached the seeded memories: %+v", progress[len(progress)-2])
	}
	t.Logf("%d adds, %d searches during the re-embedding; %d progress events", added.Load(), searched.Load(), len(progress))
	if added.Load() == 0 || searched.Load() == 0 {
		t.Fatal("nothing was written or searched during the re-embedding")
	}

	const model = "ollama:all-minilm"
	info, err := c.EmbedderInfo(ctx, httpapi.EmbedderQuery{})
	if err != nil || info.Model != model || info.StoreModel != model || info.Dim != embed.BuiltinDim || !strings.Contains(info.Reason, "switched") {
		t.Fatalf("after the switch: %+v, %v", info, err)
	}
	ref, err := embed.NewOllama(embed.OllamaOptions{Host: f.URL(), Model: "all-minilm"})
	if err != nil {
		t.Fatal(err)
	}
	ms := allMemories(t, d)
	stored := make(map[string]memory.Memory, len(ms))
	storedText := make(map[string]bool, len(ms))
	for _, m := range ms {
		stored[m.ID], storedText[m.Text] = m, true
	}
	for id, text := range returned {
		if m, ok := stored[id]; !ok || m.Text != text {
			t.Errorf("Add returned memory %s %q; the store holds %q (found: %v)", id, text, m.Text, ok)
		}
	}
	for _, text := range texts {
		if !storedText[text] {
			t.Errorf("seeded memory %q lost", text)
		}
	}
	if len(ms) < 400+len(returned) {
		t.Fatalf("%d memories, want at least %d (400 seeded, %d returned by Add)", len(ms), 400+len(returned), len(returned))
	}
	t.Logf("%d adds returned %d memories (the others reinforced a near duplicate)", added.Load(), len(returned))
	checkVectors(t, ms, ref)

	// The content scorer's prototypes are the new model's.
	want, err := ref.Embed(ctx, noise.QualityPrototypes[:1])
	if err != nil {
		t.Fatal(err)
	}
	if got := d.Pipeline().Scorer().Prototypes().Quality[0]; memory.Cosine(got, want[0]) < 0.99999 {
		t.Fatal("the content scorer kept the old model's prototypes")
	}
	hits, err := c.Search(ctx, httpapi.SearchRequest{Query: texts[7], Mode: "vector", K: 1})
	if err != nil || len(hits) != 1 || hits[0].Memory.Text != texts[7] {
		t.Fatalf("vector search after the switch = %+v, %v", hits, err)
	}

	// The choice is saved; the file's own fields stay.
	var file struct {
		Recall   map[string]any    `json:"recall"`
		Embedder map[string]string `json:"embedder"`
	}
	data, _ := os.ReadFile(cfgPath)
	if err := json.Unmarshal(data, &file); err != nil || file.Embedder["provider"] != "ollama" ||
		file.Embedder["ollama_model"] != "all-minilm" || file.Recall["k"] != float64(5) {
		t.Fatalf("config file = %s (%v)", data, err)
	}
	if cv, err := c.Config(ctx); err != nil || cv.Config.Embedder.Provider != "ollama" {
		t.Fatalf("live config = %+v, %v", cv.Config.Embedder, err)
	}
}

// TestReembedCancel: a cancelled re-embedding leaves the store on its
// model, every vector and the daemon's embedder as they were.
func TestReembedCancel(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFakeOllama(t, 16, "nomic-embed-text:latest")
	f.Set(func(k *ollamafake.Knobs) { k.EmbedDelay = 40 * time.Millisecond })
	d, addr := serve(t, ollamaConfig(t, f.URL()))
	c := httpapi.NewClient(addr, d.Token())
	texts := seed(t, d, 300)
	feed := openFeed(t, feedContext(t), addr, d.Token(), "")
	job, err := c.Reembed(ctx, httpapi.ReembedRequest{Provider: "ollama", Model: "nomic-embed-text:latest"})
	if err != nil {
		t.Fatal(err)
	}
	await(t, feed, httpapi.EventJob, func(e sseEvent) bool { j := jobEvent(t, e); return j.Status == "embedding" && j.Done > 0 })
	if _, err := c.CancelJob(ctx, job.ID); err != nil {
		t.Fatal(err)
	}
	final, err := c.WaitJob(ctx, job.ID, 10*time.Millisecond, nil)
	if err != nil || final.State != httpapi.JobCanceled || final.Done >= final.Total {
		t.Fatalf("cancelled job = %+v, %v", final, err)
	}
	info, err := c.EmbedderInfo(ctx, httpapi.EmbedderQuery{})
	if err != nil || info.Model != embed.BuiltinModel || info.StoreModel != embed.BuiltinModel || info.Dim != embed.BuiltinDim {
		t.Fatalf("after cancel: %+v, %v", info, err)
	}
	if _, err := c.Add(ctx, httpapi.AddRequest{Text: "Added after the cancelled switch: the cache TTL is 90 seconds."}); err != nil {
		t.Fatal(err)
	}
	checkVectors(t, allMemories(t, d), embed.NewBuiltin())
	hits, err := c.Search(ctx, httpapi.SearchRequest{Query: texts[3], Mode: "vector", K: 1})
	if err != nil || len(hits) != 1 || hits[0].Memory.Text != texts[3] {
		t.Fatalf("vector search after cancel = %+v, %v", hits, err)
	}
}

// TestReembedRestartAndBack switches in-process, restarts on the new model,
// then switches back to the built-in model.
func TestReembedRestartAndBack(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFakeOllama(t, 24, "nomic-embed-text:latest")
	cfg := ollamaConfig(t, f.URL())
	d, err := Open(ctx, Options{Config: cfg})
	if err != nil {
		t.Fatal(err)
	}
	seed(t, d, 50)
	run := func(d *Daemon, req httpapi.ReembedRequest) httpapi.Job {
		t.Helper()
		j, err := d.Services().Embedders.Reembed(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		return waitJob(t, d, j)
	}
	if j := run(d, httpapi.ReembedRequest{Provider: "ollama"}); j.State != httpapi.JobDone {
		t.Fatalf("switch = %+v", j)
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}

	d, err = Open(ctx, Options{Config: cfg}) // the config still says builtin: the store's model wins
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if m := d.Embedder().Model(); m != "ollama:nomic-embed-text" {
		t.Fatalf("after a restart the daemon embeds with %s", m)
	}
	ref, _ := embed.NewOllama(embed.OllamaOptions{Host: f.URL()})
	checkVectors(t, allMemories(t, d), ref)
	if j := run(d, httpapi.ReembedRequest{Provider: "builtin"}); j.State != httpapi.JobDone {
		t.Fatalf("switch back = %+v", j)
	}
	if _, err := d.Memories().Add(ctx, httpapi.AddRequest{Text: "Added on the built-in model again: logs rotate daily."}); err != nil {
		t.Fatal(err)
	}
	checkVectors(t, allMemories(t, d), embed.NewBuiltin())
	if got := d.Pipeline().Scorer().Prototypes().Quality[0]; len(got) != embed.BuiltinDim {
		t.Fatalf("scorer prototypes of %d dims after switching back", len(got))
	}
}

// TestEmbedderErrors: what cannot be done is refused with a clear error
// and starts no job.
func TestEmbedderErrors(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d, addr := serve(t, ollamaConfig(t, ollamafake.ClosedURL(t)))
	c := httpapi.NewClient(addr, d.Token())
	_, err := c.Reembed(ctx, httpapi.ReembedRequest{Provider: "ollama"})
	if !errors.Is(err, memory.ErrUnavailable) || !strings.Contains(err.Error(), "is Ollama running?") {
		t.Fatalf("re-embed with Ollama absent: %v", err)
	}
	_, err = c.PullModel(ctx, httpapi.PullRequest{})
	if !errors.Is(err, memory.ErrUnavailable) || !strings.Contains(err.Error(), "is Ollama running?") {
		t.Fatalf("pull with Ollama absent: %v", err)
	}
	if _, err := c.Reembed(ctx, httpapi.ReembedRequest{Provider: "builtin"}); !errors.Is(err, memory.ErrInvalid) || !strings.Contains(err.Error(), "already uses") {
		t.Fatalf("re-embed to the store's own model: %v", err)
	}
	var fe *httpapi.FieldErrors
	if _, err := c.Reembed(ctx, httpapi.ReembedRequest{Provider: "bogus"}); !errors.As(err, &fe) || fe.Fields["provider"] == "" {
		t.Fatalf("re-embed with a bad provider: %v", err)
	}
	if _, err := c.Reembed(ctx, httpapi.ReembedRequest{Provider: "builtin", Model: "x"}); !errors.As(err, &fe) || fe.Fields["model"] == "" {
		t.Fatalf("re-embed builtin with a model: %v", err)
	}
	if _, err := c.PullModel(ctx, httpapi.PullRequest{Model: "two words"}); !errors.As(err, &fe) || fe.Fields["model"] == "" {
		t.Fatalf("pull of a bad name: %v", err)
	}
	if _, err := c.Job(ctx, "0123456789abcdef"); !errors.Is(err, memory.ErrNotFound) {
		t.Fatalf("unknown job: %v", err)
	}
	if js, err := c.Jobs(ctx); err != nil || len(js) != 0 {
		t.Fatalf("jobs after refusals = %+v, %v", js, err)
	}

	f := newFakeOllama(t, 16, "llama3.2:latest")
	d2, addr2 := serve(t, ollamaConfig(t, f.URL()))
	_, err = httpapi.NewClient(addr2, d2.Token()).Reembed(ctx, httpapi.ReembedRequest{Provider: "ollama"})
	if !errors.Is(err, memory.ErrNotFound) || !strings.Contains(err.Error(), "pull") {
		t.Fatalf("re-embed with a model Ollama lacks: %v", err)
	}
}
