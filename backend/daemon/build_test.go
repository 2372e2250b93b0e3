package daemon

import (
	"context"
	"testing"
	"time"

	"github.com/memtray/memtray/backend/httpapi"
)

// /api/health describes the binary (the UI's About section shows it).
func TestHealthBuild(t *testing.T) {
	t.Parallel()
	opts := Options{Config: testConfig(t), Version: "1.2.3",
		Build: httpapi.Build{Commit: "abc123", BuildDate: "2025-01-02T03:04:05Z", GoVersion: "go1.99", OS: "linux", Arch: "amd64"}}
	d, addr := serveWith(t, opts)
	h, ok := httpapi.Probe(context.Background(), addr, d.Token(), time.Second)
	if !ok || h.Build == nil {
		t.Fatalf("Probe = %+v, %v", h, ok)
	}
	want := opts.Build
	want.Version = "1.2.3" // from Options.Version
	if h.Version != "1.2.3" || *h.Build != want {
		t.Errorf("health: version %q build %+v, want %+v", h.Version, *h.Build, want)
	}
}
