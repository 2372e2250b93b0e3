package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/memtray/memtray/backend/capture"
	"github.com/memtray/memtray/backend/daemon"
	"github.com/memtray/memtray/backend/httpapi"
	"github.com/memtray/memtray/backend/search"
	"github.com/memtray/memtray/backend/steward"
)

// Options configures one load run.
type Options struct {
	// Sessions is how many agent sessions stream at once.
	Sessions int
	// Duration bounds the run.
	Duration time.Duration
	// Pace is how the fake provider streams.
	Pace Pace
	// SlowEmbed, when set, makes the daemon embed with a fake Ollama that
	// takes this long per request: the write pipeline falls behind.
	SlowEmbed time.Duration
	// QueueSize is capture.queue_size (0: the default).
	QueueSize int
	// Daemon makes the command that runs `memtray ARGS...`.
	Daemon func(args ...string) *exec.Cmd
	// Log receives progress lines.
	Log io.Writer
}

// Latency is a distribution's percentiles, in milliseconds.
type Latency struct {
	N   int     `json:"n"`
	P50 float64 `json:"p50_ms"`
	P99 float64 `json:"p99_ms"`
	Max float64 `json:"max_ms"`
}

func latency(d []time.Duration) Latency {
	if len(d) == 0 {
		return Latency{}
	}
	s := slices.Clone(d)
	slices.Sort(s)
	at := func(p float64) float64 { return ms(s[int(p*float64(len(s)-1))]) }
	return Latency{N: len(s), P50: at(0.5), P99: at(0.99), Max: ms(s[len(s)-1])}
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// Side is one way to the provider (through memtray's proxy, or direct).
type Side struct {
	Requests int     `json:"requests"`
	Failed   int     `json:"failed"`
	PerSec   float64 `json:"requests_per_s"`
	TTFB     Latency `json:"ttfb"`
	Total    Latency `json:"total"`
}

// Report is what one run measured.
type Report struct {
	Sessions  int     `json:"sessions"`
	Seconds   float64 `json:"seconds"`
	SlowEmbed string  `json:"slow_embed,omitempty"`
	Proxied   Side    `json:"proxied"`
	Direct    Side    `json:"direct"`
	// Added is proxied minus direct, and Ratio proxied over direct, at p50
	// and p99, for the time to first byte and the whole answer.
	AddedTTFB  Latency    `json:"added_ttfb"`
	AddedTotal Latency    `json:"added_total"`
	RatioTTFB  [2]float64 `json:"ratio_ttfb_p50_p99"`
	RatioTotal [2]float64 `json:"ratio_total_p50_p99"`
	// The API beside the load: recall, search, steward plans.
	Recall  Latency `json:"recall"`
	Search  Latency `json:"search"`
	Plan    Latency `json:"steward_plan"`
	APIErrs int     `json:"api_errors"`
	// The daemon process: peak and last resident memory (VmHWM, VmRSS).
	PeakRSSMB float64 `json:"peak_rss_mb"`
	RSSMB     float64 `json:"rss_mb"`
	// The capture queue: exchanges queued, handled by the pipeline,
	// dropped (queue full), and the daemon's memories at the end.
	Captured int64 `json:"captured"`
	Handled  int64 `json:"handled"`
	Dropped  int64 `json:"dropped"`
	Memories int   `json:"memories"`
	// FirstFailure describes the first failed agent request, if any.
	FirstFailure string `json:"first_failure,omitempty"`
}

// Run starts a daemon on a fresh data dir in a temporary folder, with the
// fake provider (and, for SlowEmbed, a fake Ollama), runs the load and
// returns what it measured.
func Run(ctx context.Context, o Options) (Report, error) {
	rep := Report{Sessions: o.Sessions}
	if o.Sessions < 1 || o.Duration <= 0 || o.Daemon == nil {
		return rep, errors.New("load: sessions, duration and daemon are required")
	}
	logf := func(format string, args ...any) {
		if o.Log != nil {
			fmt.Fprintf(o.Log, format+"\n", args...)
		}
	}
	prov, err := startProvider(o.Pace)
	if err != nil {
		return rep, fmt.Errorf("fake provider: %w", err)
	}
	defer prov.close()
	dir, err := os.MkdirTemp("", "memtray-load-")
	if err != nil {
		return rep, err
	}
	defer os.RemoveAll(dir)
	cfg := map[string]any{"capture": map[string]any{"anthropic_upstream": prov.url}, "embedder": map[string]any{"provider": "builtin"},
		"steward": map[string]any{"every": "0s"}}
	if o.QueueSize > 0 {
		cfg["capture"].(map[string]any)["queue_size"] = o.QueueSize
	}
	if o.SlowEmbed > 0 {
		ol, err := startOllama(o.SlowEmbed)
		if err != nil {
			return rep, fmt.Errorf("fake ollama: %w", err)
		}
		defer ol.close()
		cfg["embedder"] = map[string]any{"provider": "ollama", "ollama_host": ol.url, "timeout": "60s"}
		rep.SlowEmbed = o.SlowEmbed.String()
	}
	cfgPath := filepath.Join(dir, "config.json")
	b, _ := json.Marshal(cfg)
	if err := os.WriteFile(cfgPath, b, 0o600); err != nil {
		return rep, err
	}
	dataDir := filepath.Join(dir, "data")
	d, err := startDaemon(o.Daemon("serve", "--config", cfgPath, "--data-dir", dataDir, "--listen", "127.0.0.1:0"))
	if err != nil {
		return rep, err
	}
	defer d.stop()
	logf("daemon pid %d on %s (data %s); provider %s", d.cmd.Process.Pid, d.addr, dataDir, prov.url)
	tok, err := daemon.ReadToken(dataDir)
	if err != nil {
		return rep, fmt.Errorf("daemon token: %w", err)
	}
	client := httpapi.NewClient(d.addr, tok)

	runCtx, cancel := context.WithTimeout(ctx, o.Duration)
	defer cancel()
	agents := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4 * o.Sessions, DisableCompression: true}}
	defer agents.CloseIdleConnections()
	var (
		mu                         sync.Mutex
		pTTFB, pTotal, dTTFB, dTot []time.Duration
		pFail, dFail               int
		firstFailure               string
		wg                         sync.WaitGroup
	)
	fail := func(proxied bool, err error) {
		mu.Lock()
		defer mu.Unlock()
		if proxied {
			pFail++
		} else {
			dFail++
		}
		if firstFailure == "" {
			firstFailure = err.Error()
		}
	}
	start := time.Now()
	for s := range o.Sessions {
		wg.Go(func() {
			session := fmt.Sprintf("%08x-load-%04d-0000-000000000000", time.Now().UnixNano()&0xffffffff, s)
			for turn := 0; runCtx.Err() == nil; turn++ {
				// Alternate the two ways so both see the same load.
				order := []bool{true, false}
				if (s+turn)%2 == 1 {
					order = []bool{false, true}
				}
				for _, proxied := range order {
					base := prov.url
					if proxied {
						base = "http://" + d.addr
					}
					id := fmt.Sprintf("s%d-t%d-%t", s, turn, proxied)
					ttfb, total, err := agentRequest(runCtx, agents, base, session, s, turn, id, o.Pace.Deltas)
					if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
						return // the run ended mid-request: not a failure
					}
					if err != nil {
						fail(proxied, fmt.Errorf("%s: %w", map[bool]string{true: "proxied", false: "direct"}[proxied], err))
						continue
					}
					mu.Lock()
					if proxied {
						pTTFB, pTotal = append(pTTFB, ttfb), append(pTotal, total)
					} else {
						dTTFB, dTot = append(dTTFB, ttfb), append(dTot, total)
					}
					mu.Unlock()
				}
			}
		})
	}
	// The API beside the load.
	var recallT, searchT, planT []time.Duration
	var apiErrs atomic.Int64
	loop := func(every time.Duration, into *[]time.Duration, call func(i int) error) {
		wg.Go(func() {
			for i := 0; runCtx.Err() == nil; i++ {
				t0 := time.Now()
				err := call(i)
				if runCtx.Err() != nil {
					return
				}
				if err != nil {
					apiErrs.Add(1)
					logf("api error: %v", err)
				} else {
					mu.Lock()
					*into = append(*into, time.Since(t0))
					mu.Unlock()
				}
				select {
				case <-runCtx.Done():
				case <-time.After(every):
				}
			}
		})
	}
	loop(100*time.Millisecond, &recallT, func(i int) error {
		_, err := client.Recall(runCtx, search.RecallRequest{SessionID: fmt.Sprintf("load-recall-%d", i), Project: fmt.Sprintf("svc%d", i%97),
			Prompt: fmt.Sprintf("how is the retry budget configured in svc%d and why?", i%97)})
		return err
	})
	loop(100*time.Millisecond, &searchT, func(i int) error {
		_, err := client.Search(runCtx, httpapi.SearchRequest{Query: fmt.Sprintf("RETRY_MAX payment gateway svc%d", i%97), K: 10})
		return err
	})
	loop(time.Second, &planT, func(int) error {
		_, err := client.StewardPlan(runCtx, steward.PlanOptions{})
		return err
	})
	// Resident memory, sampled (the peak is the kernel's VmHWM).
	wg.Go(func() {
		for runCtx.Err() == nil {
			if hwm, rss, err := procMemory(d.cmd.Process.Pid); err == nil {
				mu.Lock()
				rep.PeakRSSMB, rep.RSSMB = hwm, rss
				mu.Unlock()
			}
			select {
			case <-runCtx.Done():
			case <-time.After(500 * time.Millisecond):
			}
		}
	})
	wg.Wait()
	elapsed := time.Since(start)
	if hwm, rss, err := procMemory(d.cmd.Process.Pid); err == nil {
		rep.PeakRSSMB, rep.RSSMB = hwm, rss
	}
	rep.Seconds = elapsed.Seconds()
	rep.Proxied = Side{Requests: len(pTotal), Failed: pFail, PerSec: float64(len(pTotal)) / elapsed.Seconds(), TTFB: latency(pTTFB), Total: latency(pTotal)}
	rep.Direct = Side{Requests: len(dTot), Failed: dFail, PerSec: float64(len(dTot)) / elapsed.Seconds(), TTFB: latency(dTTFB), Total: latency(dTot)}
	rep.AddedTTFB = Latency{P50: rep.Proxied.TTFB.P50 - rep.Direct.TTFB.P50, P99: rep.Proxied.TTFB.P99 - rep.Direct.TTFB.P99}
	rep.AddedTotal = Latency{P50: rep.Proxied.Total.P50 - rep.Direct.Total.P50, P99: rep.Proxied.Total.P99 - rep.Direct.Total.P99}
	rep.RatioTTFB = [2]float64{ratio(rep.Proxied.TTFB.P50, rep.Direct.TTFB.P50), ratio(rep.Proxied.TTFB.P99, rep.Direct.TTFB.P99)}
	rep.RatioTotal = [2]float64{ratio(rep.Proxied.Total.P50, rep.Direct.Total.P50), ratio(rep.Proxied.Total.P99, rep.Direct.Total.P99)}
	rep.Recall, rep.Search, rep.Plan = latency(recallT), latency(searchT), latency(planT)
	rep.APIErrs = int(apiErrs.Load())
	rep.FirstFailure = firstFailure
	// The queue's counters once the load is over.
	cctx, ccancel := context.WithTimeout(ctx, 30*time.Second)
	defer ccancel()
	if cs, err := client.Capture(cctx); err == nil {
		var st capture.Stats
		if json.Unmarshal(cs.Stats, &st) == nil {
			rep.Captured, rep.Handled, rep.Dropped = st.Captured, st.Handled, st.Dropped
		}
	} else {
		return rep, fmt.Errorf("capture stats: %w", err)
	}
	if st, err := client.Stats(cctx); err == nil {
		rep.Memories = st.Store.Count
	}
	return rep, nil
}

func ratio(a, b float64) float64 {
	if b <= 0 {
		return 0
	}
	return float64(int(a/b*1000+0.5)) / 1000
}

// agentRequest sends one turn of a Claude Code session to base (memtray's
// proxy or the provider) and reads the stream, checking it is byte for
// byte the provider's answer. It returns the time to the first byte of the
// body and to its end.
func agentRequest(ctx context.Context, c *http.Client, base, session string, s, turn int, id string, deltas int) (time.Duration, time.Duration, error) {
	body := requestBody(session, s, turn, id)
	t0 := time.Now()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+"/v1/messages?beta=true", bytes.NewReader(body))
	if err != nil {
		return 0, 0, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Anthropic-Version", "2023-06-01")
	req.Header.Set("Anthropic-Beta", "claude-code-20250219,interleaved-thinking-2025-05-14")
	req.Header.Set("X-Api-Key", "sk-ant-load-test-not-a-key")
	req.Header.Set("User-Agent", "claude-cli/2.0.0 (external, cli)")
	req.Header.Set("X-Load-Id", id)
	resp, err := c.Do(req)
	if err != nil {
		return 0, 0, err
	}
	defer resp.Body.Close()
	br := bufio.NewReaderSize(resp.Body, 4096)
	if _, err := br.Peek(1); err != nil {
		return 0, 0, fmt.Errorf("status %d, no body: %w", resp.StatusCode, err)
	}
	ttfb := time.Since(t0)
	got, err := io.ReadAll(br)
	total := time.Since(t0)
	if err != nil {
		return 0, 0, err
	}
	if resp.StatusCode != http.StatusOK {
		return 0, 0, fmt.Errorf("status %d: %.200s", resp.StatusCode, got)
	}
	if want := answerBytes(id, deltas); !bytes.Equal(got, want) {
		return 0, 0, fmt.Errorf("answer differs from the provider's (%d bytes, want %d)", len(got), len(want))
	}
	return ttfb, total, nil
}

// requestBody is a Claude Code request: its system prompt with the working
// directory, the last turns of the conversation and the new prompt.
func requestBody(session string, s, turn int, id string) []byte {
	var msgs []map[string]any
	for t := max(0, turn-3); t < turn; t++ {
		prev := fmt.Sprintf("s%d-t%d-true", s, t)
		msgs = append(msgs,
			map[string]any{"role": "user", "content": []map[string]any{{"type": "text", "text": prompt(s, t)}}},
			map[string]any{"role": "assistant", "content": []map[string]any{{"type": "text", "text": answerText(prev)}}})
	}
	msgs = append(msgs, map[string]any{"role": "user", "content": []map[string]any{{"type": "text", "text": prompt(s, turn) + " [" + id + "]"}}})
	b, _ := json.Marshal(map[string]any{
		"model": "claude-sonnet-4-5", "max_tokens": 32000, "stream": true,
		"system": []map[string]any{{"type": "text", "text": "You are Claude Code, Anthropic's official CLI for Claude.\n\n<env>\nWorking directory: /home/dev/src/svc" +
			strconv.Itoa(s%97) + "\nIs directory a git repo: Yes\nPlatform: linux\n</env>\n" + strings.Repeat("Follow the repository's conventions. ", 40)}},
		"messages": msgs,
		"metadata": map[string]string{"user_id": "user_0123456789abcdef_account_00000000-0000-0000-0000-000000000000_session_" + session},
	})
	return b
}

func prompt(s, turn int) string {
	return fmt.Sprintf("Session %d, turn %d: where is the retry budget of the payment client configured in this service, and why is it that value?", s, turn)
}

// procMemory reads a process's peak and current resident memory in MB
// from /proc/PID/status (VmHWM, VmRSS).
func procMemory(pid int) (hwm, rss float64, err error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, 0, err
	}
	for _, l := range strings.Split(string(b), "\n") {
		f := strings.Fields(l)
		if len(f) < 2 {
			continue
		}
		kb, _ := strconv.ParseFloat(f[1], 64)
		switch f[0] {
		case "VmHWM:":
			hwm = kb / 1024
		case "VmRSS:":
			rss = kb / 1024
		}
	}
	if hwm == 0 {
		return 0, 0, errors.New("no VmHWM in /proc status")
	}
	return hwm, rss, nil
}

// runningDaemon is a `memtray serve` subprocess.
type runningDaemon struct {
	cmd    *exec.Cmd
	addr   string
	stderr *bytes.Buffer
	done   chan error
}

// startDaemon starts cmd and waits for it to say where it serves.
func startDaemon(cmd *exec.Cmd) (*runningDaemon, error) {
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	d := &runningDaemon{cmd: cmd, stderr: &bytes.Buffer{}, done: make(chan error, 1)}
	cmd.Stderr = &lockedWriter{w: d.stderr}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start daemon: %w", err)
	}
	addrc := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if _, rest, ok := strings.Cut(sc.Text(), "serving on http://"); ok {
				addrc <- strings.Fields(rest)[0]
			}
		}
		d.done <- cmd.Wait()
	}()
	select {
	case d.addr = <-addrc:
		return d, nil
	case err := <-d.done:
		return nil, fmt.Errorf("daemon exited: %v: %s", err, d.stderr)
	case <-time.After(60 * time.Second):
		cmd.Process.Kill()
		return nil, fmt.Errorf("daemon did not start within a minute: %s", d.stderr)
	}
}

// stop asks the daemon to end (SIGTERM) and kills it after 20 s.
func (d *runningDaemon) stop() {
	d.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-d.done:
	case <-time.After(20 * time.Second):
		d.cmd.Process.Kill()
		<-d.done
	}
}

// lockedWriter serialises writes to w.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
