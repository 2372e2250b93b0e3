package status

import (
	"testing"

	"github.com/memtray/memtray/backend/httpapi"
)

func TestCaptureSummary(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   *httpapi.CaptureState
		want string
	}{
		{"unknown", nil, "unknown"},
		{"off", &httpapi.CaptureState{}, "off (the proxy forwards but keeps nothing)"},
		{"on", &httpapi.CaptureState{Enabled: true}, "on"},
		{"one excluded", &httpapi.CaptureState{Enabled: true, ExcludeProjects: []string{"a"}}, "on (1 project excluded)"},
		{"two excluded", &httpapi.CaptureState{Enabled: true, ExcludeProjects: []string{"a", "b"}}, "on (2 projects excluded)"},
	} {
		if got := captureSummary(tc.in); got != tc.want {
			t.Errorf("%s: got %q, want %q", tc.name, got, tc.want)
		}
	}
}
