package capture

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/memtray/memtray/backend/config"
	"github.com/memtray/memtray/backend/memory"
)

// timing is one request's time to first body byte and to its end.
type timing struct{ ttfb, total time.Duration }

// timedPost sends body to url and reads the answer, timing it.
func timedPost(client *http.Client, url string, body []byte) (timing, error) {
	start := time.Now()
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return timing{}, err
	}
	req.Header = claudeHeader()
	resp, err := client.Do(req)
	if err != nil {
		return timing{}, err
	}
	defer resp.Body.Close()
	br := bufio.NewReader(resp.Body)
	if _, err := br.Peek(1); err != nil {
		return timing{}, fmt.Errorf("first byte: %w", err)
	}
	ttfb := time.Since(start)
	if _, err := io.Copy(io.Discard, br); err != nil {
		return timing{}, err
	}
	return timing{ttfb, time.Since(start)}, nil
}

func pct(d []time.Duration, p float64) time.Duration {
	if len(d) == 0 {
		return 0
	}
	s := slices.Clone(d)
	slices.Sort(s)
	i := int(p * float64(len(s)-1))
	return s[i]
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// BenchmarkProxy measures what the proxy adds to a streamed answer, against
// a direct connection to the same upstream in the same run: each worker
// alternates a direct and a proxied request. Reported: time to first byte
// and total time, p50 and p99, direct and added (proxied minus direct),
// with 1 and 64 concurrent streams. Capture is on and a worker drains the
// queue, so the numbers include the tee, the parser and the hand-over.
func BenchmarkProxy(b *testing.B) {
	for _, streams := range []int{1, 64} {
		b.Run(fmt.Sprintf("streams=%d", streams), func(b *testing.B) {
			h := newHarness(b, harnessOpt{cfg: func(c *config.Capture) { c.QueueSize = 4096 },
				handler: func(context.Context, memory.Exchange) error { return nil }})
			h.up.reply(200, sseHeader(), readFile(b, "anthropic_tools.sse"))
			body := readFile(b, "claude_code_prompt.json")
			direct := h.up.srv.URL + "/v1/messages?beta=true"
			proxied := h.url + "/v1/messages?beta=true"
			// Warm both paths' connections.
			for range streams {
				timedPost(h.client, direct, body)
				timedPost(h.client, proxied, body)
			}
			var (
				mu     sync.Mutex
				dT, pT []timing
				next   atomic.Int64
				wg     sync.WaitGroup
				failed atomic.Value
			)
			b.ResetTimer()
			for w := range streams {
				wg.Go(func() {
					for i := next.Add(1); i <= int64(b.N); i = next.Add(1) {
						order := []string{direct, proxied}
						if (i+int64(w))%2 == 1 {
							order = []string{proxied, direct}
						}
						for _, u := range order {
							tm, err := timedPost(h.client, u, body)
							if err != nil {
								failed.Store(err)
								return
							}
							mu.Lock()
							if u == direct {
								dT = append(dT, tm)
							} else {
								pT = append(pT, tm)
							}
							mu.Unlock()
						}
					}
				})
			}
			wg.Wait()
			b.StopTimer()
			if err, _ := failed.Load().(error); err != nil {
				b.Fatal(err)
			}
			split := func(ts []timing) (ttfb, total []time.Duration) {
				for _, t := range ts {
					ttfb, total = append(ttfb, t.ttfb), append(total, t.total)
				}
				return
			}
			dF, dTot := split(dT)
			pF, pTot := split(pT)
			b.ReportMetric(ms(pct(dF, 0.5)), "ttfb-p50-direct-ms")
			b.ReportMetric(ms(pct(dF, 0.99)), "ttfb-p99-direct-ms")
			b.ReportMetric(ms(pct(pF, 0.5)-pct(dF, 0.5)), "ttfb-p50-added-ms")
			b.ReportMetric(ms(pct(pF, 0.99)-pct(dF, 0.99)), "ttfb-p99-added-ms")
			b.ReportMetric(ms(pct(pTot, 0.5)-pct(dTot, 0.5)), "total-p50-added-ms")
			b.ReportMetric(ms(pct(pTot, 0.99)-pct(dTot, 0.99)), "total-p99-added-ms")
			st := h.p.Stats()
			b.ReportMetric(float64(st.Dropped), "dropped")
		})
	}
}

// bigStream writes an Anthropic stream of about size bytes: message_start,
// then thinking deltas (never kept) or text deltas (kept, up to the bound),
// then message_stop. It is generated as it is written, never held whole.
func bigStream(w io.Writer, fl http.Flusher, size int, text bool) error {
	if _, err := io.WriteString(w, "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"model\":\"claude-big\",\"usage\":{\"input_tokens\":1}}}\n\n"); err != nil {
		return err
	}
	kind, field := "thinking_delta", "thinking"
	if text {
		kind, field = "text_delta", "text"
		if _, err := io.WriteString(w, "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n"); err != nil {
			return err
		}
	} else {
		io.WriteString(w, "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"thinking\",\"thinking\":\"\"}}\n\n")
	}
	chunk := bytes.Repeat([]byte("lorem ipsum dolor sit amet "), 150) // ~4 KB per event
	ev := []byte(fmt.Sprintf("event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":%q,%q:%q}}\n\n", kind, field, chunk))
	for sent := 0; sent < size; sent += len(ev) {
		if _, err := w.Write(ev); err != nil {
			return err
		}
		if sent%(1<<20) < len(ev) {
			fl.Flush()
		}
	}
	tail := "event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n"
	if !text {
		tail += "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":1,\"content_block\":{\"type\":\"text\",\"text\":\"short answer\"}}\n\n"
	}
	tail += "event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"},\"usage\":{\"output_tokens\":99}}\n\nevent: message_stop\ndata: {\"type\":\"message_stop\"}\n\n"
	_, err := io.WriteString(w, tail)
	return err
}

// TestStream50MBHeap streams 50 MB through the proxy (10 MB under -race)
// and reports the heap growth while it passes: it must stay near the
// capture bound, not grow with the stream. The numbers are reported, and
// only a gross growth (a stream held whole) fails.
func TestStream50MBHeap(t *testing.T) {
	if testing.Short() {
		t.Skip("short")
	}
	size := 50 << 20
	if raceEnabled {
		size = 10 << 20
	}
	for _, text := range []bool{false, true} {
		name := "thinking"
		if text {
			name = "text"
		}
		t.Run(name, func(t *testing.T) {
			h := newHarness(t, harnessOpt{cfg: func(c *config.Capture) { c.MaxCaptureBytes = 1 << 20 }})
			h.up.srv.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				io.Copy(io.Discard, r.Body)
				w.Header().Set("Content-Type", "text/event-stream")
				bigStream(w, w.(http.Flusher), size, text)
			})
			runtime.GC()
			var before runtime.MemStats
			runtime.ReadMemStats(&before)
			var peak atomic.Uint64
			stop := make(chan struct{})
			sampled := make(chan struct{})
			go func() {
				defer close(sampled)
				var m runtime.MemStats
				for {
					runtime.ReadMemStats(&m)
					if m.HeapInuse > peak.Load() {
						peak.Store(m.HeapInuse)
					}
					select {
					case <-stop:
						return
					case <-time.After(5 * time.Millisecond):
					}
				}
			}()
			start := time.Now()
			req, _ := http.NewRequest(http.MethodPost, h.url+"/v1/messages", bytes.NewReader(readFile(t, "claude_code_prompt.json")))
			resp, err := h.client.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			n, err := io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if err != nil {
				t.Fatal(err)
			}
			elapsed := time.Since(start)
			close(stop)
			<-sampled
			var after runtime.MemStats
			runtime.ReadMemStats(&after)
			growth := int64(peak.Load()) - int64(before.HeapInuse)
			st := h.p.Stats()
			t.Logf("%s: %d MB streamed in %v (%.0f MB/s); peak heap growth %.1f MB; allocated %.0f MB; captured %d, too large %d",
				name, n>>20, elapsed.Round(time.Millisecond), float64(n)/(1<<20)/elapsed.Seconds(),
				float64(growth)/(1<<20), float64(after.TotalAlloc-before.TotalAlloc)/(1<<20), st.Captured, st.TooLarge)
			if n < int64(size) {
				t.Errorf("got %d bytes", n)
			}
			if growth > int64(size)/2 {
				t.Errorf("heap grew %d MB for a %d MB stream", growth>>20, size>>20)
			}
			if text && st.TooLarge != 1 || !text && st.Captured != 1 {
				t.Errorf("stats %+v", st)
			}
			if !text {
				if ex := h.sink.next(t); ex.Assistant != "short answer" {
					t.Errorf("assistant %q", ex.Assistant)
				}
			}
		})
	}
}
