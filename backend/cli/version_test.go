package cli

import (
	"context"
	"encoding/json"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/memtray/memtray/backend/httpapi"
)

func TestBuildFallback(t *testing.T) {
	stamped := &debug.BuildInfo{GoVersion: "go1.99", Main: debug.Module{Version: "v1.2.3"}, Settings: []debug.BuildSetting{
		{Key: "vcs.revision", Value: "abc123"}, {Key: "vcs.time", Value: "2025-01-02T03:04:05Z"}, {Key: "vcs.modified", Value: "true"}}}
	clean := &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: []debug.BuildSetting{
		{Key: "vcs.revision", Value: "def456"}, {Key: "vcs.modified", Value: "false"}}}
	cases := []struct {
		name                  string
		version, commit, date string
		info                  *debug.BuildInfo
		want                  httpapi.Build
	}{
		{"nothing known", "dev", "unknown", "unknown", nil,
			httpapi.Build{Version: "dev", Commit: "unknown", BuildDate: "unknown", GoVersion: runtime.Version()}},
		{"ldflags win", "1.0.0", "feed", "2024-05-06T07:08:09Z", stamped,
			httpapi.Build{Version: "1.0.0", Commit: "feed", BuildDate: "2024-05-06T07:08:09Z", GoVersion: "go1.99"}},
		{"vcs stamp fills the defaults", "dev", "unknown", "unknown", stamped,
			httpapi.Build{Version: "v1.2.3", Commit: "abc123-dirty", BuildDate: "2025-01-02T03:04:05Z", GoVersion: "go1.99"}},
		{"devel module, no vcs.time", "dev", "unknown", "unknown", clean,
			httpapi.Build{Version: "dev", Commit: "def456", BuildDate: "unknown", GoVersion: runtime.Version()}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tc.want.OS, tc.want.Arch = runtime.GOOS, runtime.GOARCH
			if got := build(tc.version, tc.commit, tc.date, tc.info); got != tc.want {
				t.Errorf("got %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

func TestVersionCommand(t *testing.T) {
	isolate(t)
	ctx := context.Background()
	code, out, errs := run(t, ctx, "", "version")
	if code != 0 || !strings.HasPrefix(out, "memtray ") || !strings.Contains(out, "commit:") ||
		!strings.Contains(out, runtime.GOOS+"/"+runtime.GOARCH) {
		t.Errorf("version: %d %q %q", code, out, errs)
	}
	code, out, errs = run(t, ctx, "", "version", "--json")
	var b httpapi.Build
	if err := json.Unmarshal([]byte(out), &b); code != 0 || err != nil {
		t.Fatalf("version --json: %d %v %q %q", code, err, out, errs)
	}
	if want := Build(); b != want {
		t.Errorf("version --json: %+v, want %+v", b, want)
	}
	if code, _, errs := run(t, ctx, "", "version", "sideways"); code != 2 || !strings.Contains(errs, "unknown argument") {
		t.Errorf("version sideways: %d %q", code, errs)
	}
}
