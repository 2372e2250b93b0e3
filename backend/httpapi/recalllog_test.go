package httpapi_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/memtray/memtray/backend/config"
	"github.com/memtray/memtray/backend/embed"
	"github.com/memtray/memtray/backend/httpapi"
	"github.com/memtray/memtray/backend/memory"
	"github.com/memtray/memtray/backend/recall"
	"github.com/memtray/memtray/backend/search"
	"github.com/memtray/memtray/backend/store"
)

// serveRecall serves the API over a real recall service and store, with
// memories about a gateway's retries, and returns a client of it.
func serveRecall(t *testing.T) *httpapi.Client {
	t.Helper()
	ctx := context.Background()
	now := time.Date(2026, 5, 6, 7, 8, 9, 0, time.UTC)
	clock := memory.FixedClock{T: now}
	emb := embed.NewBuiltin()
	st, err := store.Open(ctx, store.Options{Dir: t.TempDir(), Model: emb.Model(), Dim: emb.Dim(), Clock: clock})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	for i, text := range []string{
		"The payment gateway retries failed charges three times with exponential backoff, set in config/gateway.yaml.",
		"Payment gateway retries are configured in config/gateway.yaml: retries: 3 and backoff_ms: 200.",
	} {
		vecs, err := emb.Embed(ctx, []string{text})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := st.Put(ctx, memory.Memory{ID: fmt.Sprint("m", i), Text: text, Kind: memory.KindFact, Embedding: vecs[0], CreatedAt: now}); err != nil {
			t.Fatal(err)
		}
	}
	cfg := config.Default()
	svc, err := recall.New(recall.Options{Recaller: search.NewRecaller(search.New(st, emb, cfg.Search, clock), st, cfg.Recall, clock),
		Built: cfg.Recall, Log: st, Clock: clock, Location: time.UTC})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = svc.Close() }) // before the store closes
	srv := httptest.NewServer(httpapi.New(httpapi.Services{Recaller: svc, RecallLog: svc}, httpapi.Options{Token: "tok"}))
	t.Cleanup(srv.Close)
	return httpapi.NewClient(strings.TrimPrefix(srv.URL, "http://"), "tok")
}

func TestRecallLogAPI(t *testing.T) {
	ctx := context.Background()
	c := serveRecall(t)
	for i, p := range []string{"how are the payment gateway retries configured?", "how do I bake sourdough bread"} {
		if _, err := c.Recall(ctx, search.RecallRequest{SessionID: fmt.Sprint("s", i), Prompt: p}); err != nil {
			t.Fatal(err)
		}
	}
	log, err := c.RecallLog(ctx, store.RecallLogQuery{})
	if err != nil {
		t.Fatal(err)
	}
	if len(log) != 2 || log[1].SessionID != "s0" || len(log[1].Given) == 0 || len(log[0].Given) != 0 {
		t.Fatalf("log: %+v", log)
	}
	if one, err := c.RecallLog(ctx, store.RecallLogQuery{SessionID: "s1", Limit: 1, Before: log[0].Seq + 1}); err != nil || len(one) != 1 || one[0].Seq != log[0].Seq {
		t.Errorf("one session's newest: %+v, %v", one, err)
	}
	st, err := c.RecallLogStats(ctx, 7)
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Days) != 7 || st.Days[6].Date != "2026-05-06" || st.Recalls != 2 || st.Gave != 1 || st.Empty != 1 || len(st.Top) == 0 {
		t.Errorf("stats: %+v", st)
	}
	for _, path := range []string{
		"/api/recall/log?limit=0", "/api/recall/log?limit=1001", "/api/recall/log?limit=x",
		"/api/recall/log?before=0", "/api/recall/log?before=-1", "/api/recall/log?session=" + strings.Repeat("s", 300),
		"/api/recall/stats?days=0", "/api/recall/stats?days=31", "/api/recall/stats?days=x",
	} {
		t.Run(path, func(t *testing.T) {
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+c.Addr()+path, nil)
			req.Header.Set("Authorization", "Bearer tok")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusBadRequest {
				t.Errorf("status %d, want 400", resp.StatusCode)
			}
		})
	}
	if _, err := c.RecallLogStats(ctx, 31); !errors.Is(err, memory.ErrInvalid) {
		t.Errorf("31 days through the client: %v, want ErrInvalid", err)
	}
}

// TestClearRecallLogAPI: DELETE /api/recall/log empties the log and says
// how many recalls went; a second clear finds none.
func TestClearRecallLogAPI(t *testing.T) {
	ctx := context.Background()
	c := serveRecall(t)
	for i := range 2 {
		if _, err := c.Recall(ctx, search.RecallRequest{SessionID: fmt.Sprint("s", i), Prompt: "how are the payment gateway retries configured?"}); err != nil {
			t.Fatal(err)
		}
	}
	for _, want := range []int{2, 0} {
		if n, err := c.ClearRecallLog(ctx); err != nil || n != want {
			t.Errorf("cleared %d, %v; want %d", n, err, want)
		}
	}
	if log, err := c.RecallLog(ctx, store.RecallLogQuery{}); err != nil || len(log) != 0 {
		t.Errorf("log after clear: %d entries, %v", len(log), err)
	}
}
