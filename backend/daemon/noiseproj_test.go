package daemon

import (
	"context"
	"math"
	"strings"
	"testing"

	"github.com/memtray/memtray/backend/feed"
	"github.com/memtray/memtray/backend/httpapi"
	"github.com/memtray/memtray/backend/memory"
)

func TestNoiseProjection(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cfg := testConfig(t)
	cfg.Ingest.NoiseRebuildEvery = 1 // one noise verdict makes a learned prototype
	d, addr := serve(t, cfg)
	c := httpapi.NewClient(addr, d.Token())

	kinds := func(p httpapi.NoiseProjection) map[string]int {
		m := map[string]int{}
		for _, pt := range p.Points {
			m[pt.Kind]++
			if math.IsNaN(pt.X) || math.IsNaN(pt.Y) || pt.Label == "" || len([]rune(pt.Label)) > feed.ProjectionLabel {
				t.Errorf("bad point %+v", pt)
			}
		}
		return m
	}

	// An empty log: the prototypes alone.
	p, err := c.NoiseProjection(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if k := kinds(p); k[httpapi.PointQuality] == 0 || k[httpapi.PointNoise] == 0 || len(k) != 2 {
		t.Fatalf("empty log: kinds %v", k)
	}
	if p.Explained[0] <= 0 || p.Explained[0] < p.Explained[1] || p.Explained[0]+p.Explained[1] > 1+1e-9 {
		t.Fatalf("explained %v", p.Explained)
	}

	var exs []memory.Exchange
	for i, a := range []string{
		"Staging deploys need `DEPLOY_ENV=staging` because the default config points at production; never deploy from a laptop.",
		"The billing service retries webhooks 5 times with exponential backoff capped at 10 minutes, then parks them in the dead letter queue.",
		"I looked through the files and everything seems to be in order now; let me know if there is anything else you would like me to do.",
		"Sure! Done. Let me know if you need anything else.",
		"The API key is sk-ant-api03-" + strings.Repeat("Xq7vR2mK9pLw4Zt8", 6) + "AA and the tests pass now.",
	} {
		exs = append(exs, memory.Exchange{SessionID: "s", Turn: i + 1, UserTurns: i + 1, User: "tell me", Assistant: a})
	}
	resp, err := c.Ingest(ctx, httpapi.IngestRequest{Exchanges: exs})
	if err != nil {
		t.Fatal(err)
	}
	var stored string
	for _, dec := range resp.Decisions {
		if dec.Verdict == memory.VerdictStored && len(dec.MemoryIDs) > 0 && stored == "" {
			stored = dec.MemoryIDs[0]
		}
	}
	if stored == "" {
		t.Fatalf("nothing stored: %+v", resp.Decisions)
	}
	if err := c.MarkNoise(ctx, stored); err != nil {
		t.Fatal(err)
	}

	p, err = c.NoiseProjection(ctx)
	if err != nil {
		t.Fatal(err)
	}
	k := kinds(p)
	for _, want := range []string{httpapi.PointQuality, httpapi.PointNoise, httpapi.PointLearned, httpapi.PointStored, httpapi.PointRejected} {
		if k[want] == 0 {
			t.Errorf("no %s point: %v", want, k)
		}
	}
	if k[httpapi.PointStored]+k[httpapi.PointRejected] != len(exs) {
		t.Errorf("%d exchange points for %d exchanges: %v", k[httpapi.PointStored]+k[httpapi.PointRejected], len(exs), k)
	}
	scored := 0
	for _, pt := range p.Points {
		if strings.Contains(pt.Label, "sk-ant-api03") {
			t.Errorf("label not redacted: %q", pt.Label)
		}
		if pt.Score != nil {
			scored++
		}
	}
	if scored == 0 {
		t.Error("no exchange point has a content score")
	}
	// The same state projects the same way.
	again, err := c.NoiseProjection(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for i := range p.Points {
		if again.Points[i].X != p.Points[i].X || again.Points[i].Y != p.Points[i].Y {
			t.Fatalf("point %d moved: %+v then %+v", i, p.Points[i], again.Points[i])
		}
	}
}
