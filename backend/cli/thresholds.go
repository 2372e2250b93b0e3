package cli

import (
	"fmt"
	"io"

	"github.com/memtray/memtray/backend/httpapi"
)

// printThresholds lists the similarity thresholds in effect with their
// source (`memtray stats`): "calibrated", "default", or "config" with the
// calibrated value it overrides.
func printThresholds(w io.Writer, s httpapi.Stats) {
	if len(s.Thresholds) == 0 {
		return
	}
	fmt.Fprintln(w, "thresholds:")
	for _, t := range s.Thresholds {
		src := t.Source
		if t.Source == "config" && t.Calibrated > 0 {
			src = fmt.Sprintf("config (calibrated %.3f)", t.Calibrated)
		}
		fmt.Fprintf(w, "  %-28s %.3f  %s\n", t.Name, t.Value, src)
	}
}
