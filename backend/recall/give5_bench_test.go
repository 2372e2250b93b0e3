package recall

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/memtray/memtray/backend/config"
	"github.com/memtray/memtray/backend/search"
)

// give5Texts are eight memories about the payment gateway's retries: the
// prompt's recall gives five of them (recall.k).
var give5Texts = []string{
	"The payment gateway retries failed charges three times with exponential backoff, set by retries in config/gateway.yaml.",
	"Payment gateway retries are configured in config/gateway.yaml: retries: 3 and backoff_ms: 200.",
	"The payment gateway's retry backoff starts at 200 ms and doubles; change backoff_ms in config/gateway.yaml.",
	"Retries of the payment gateway stop after the third failure; the gateway config's max_retries sets it.",
	"The payment gateway retry settings in config/gateway.yaml are read once at start; restart the gateway after changing retries.",
	"Payment gateway retries log each attempt at warn level with the charge id; the retries counter is in gateway metrics.",
	"The payment gateway does not retry declined cards, only timeouts and 5xx answers; see retries in config/gateway.yaml.",
	"Staging overrides the payment gateway retries with retries: 1 in config/gateway.staging.yaml to keep tests fast.",
}

// openGive5 returns the service over a real store on disk (t.TempDir)
// holding give5Texts, with the recall log on.
func openGive5(b *testing.B) *Service {
	b.Helper()
	cfg := config.Default()
	cfg.Recall.K, cfg.Recall.MaxChars = 5, 4000
	rec, built, st := openTexts(b, give5Texts, cfg)
	s, err := New(Options{Recaller: rec, Built: built, Log: st, Clock: &testClock{T: testNow}})
	if err != nil {
		b.Fatal(err)
	}
	return s
}

// BenchmarkRecallGive5 measures a prompt recall that gives five memories,
// end to end on a real store on disk: the search, recording the five as
// accessed (a store write), queueing the recall's log entry; each
// iteration is a new session, so each gives five. The log's writer
// writes in the background and the service is closed (the last batch
// written) within the timing. p50-ms and p99-ms are of the recalls alone
// (what the hook waits for).
func BenchmarkRecallGive5(b *testing.B) {
	s := openGive5(b)
	ctx := context.Background()
	took := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := range b.N {
		start := time.Now()
		out, err := s.Recall(ctx, search.RecallRequest{SessionID: fmt.Sprint("s", i), Prompt: prompt})
		took = append(took, time.Since(start))
		if err != nil {
			b.Fatal(err)
		}
		if len(out.Hits) != 5 || out.Warning != "" {
			b.Fatalf("recall %d gave %d memories (warning %q), want 5", i, len(out.Hits), out.Warning)
		}
	}
	if err := s.Close(); err != nil {
		b.Fatal(err)
	}
	b.StopTimer()
	slices.Sort(took)
	b.ReportMetric(float64(took[len(took)/2])/1e6, "p50-ms")
	b.ReportMetric(float64(took[len(took)*99/100])/1e6, "p99-ms")
}
