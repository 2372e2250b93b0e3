package mcp

import (
	"fmt"
	"strings"
	"testing"

	"github.com/memtray/memtray/backend/memory"
)

func TestStatusTextBounded(t *testing.T) {
	cases := []struct {
		name             string
		projects, kinds  int
		wantProjectsRest int
	}{
		{"empty", 0, 0, 0},
		{"few", 3, 2, 0},
		{"exactly ten", 10, 10, 0},
		{"many", 5000, 40, 4990},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			st := Status{ByProject: map[string]int{}, ByKind: map[string]int{}, Version: "v",
				StoreDir: "/data/store\nwith a break", Embedder: "builtin", Capture: "on"}
			for i := range c.projects {
				// Names with line breaks and great length stay one short line.
				st.ByProject[fmt.Sprintf("project\n%d %s", i, strings.Repeat("x", 300))] = i + 1
				st.Total += i + 1
			}
			for i := range c.kinds {
				st.ByKind[fmt.Sprintf("kind-%d", i)] = 1
			}
			r := summarize(st)
			txt := statusText(r)
			lines := strings.Split(txt, "\n")
			if len(lines) > 40 {
				t.Fatalf("%d lines:\n%s", len(lines), txt)
			}
			for _, l := range lines {
				if len([]rune(l)) > 240 {
					t.Fatalf("line of %d runes: %q", len([]rune(l)), l)
				}
			}
			if r.OtherProjects.Names != c.wantProjectsRest || len(r.Projects) > topN || len(r.Kinds) > topN {
				t.Fatalf("summary: %+v", r)
			}
			if c.projects > topN && (!strings.Contains(txt, "more projects") || r.Projects[0].Count != c.projects) {
				t.Fatalf("top project or rest missing:\n%s", txt)
			}
		})
	}
}

func TestOutcome(t *testing.T) {
	for v, want := range map[string]string{"stored": "created", "updated": "updated", "merged": "updated", "skipped-duplicate": "duplicate", "rejected": "rejected"} {
		if got := outcome(memoryVerdict(v)); got != want {
			t.Errorf("outcome(%s) = %s, want %s", v, got, want)
		}
	}
}

func memoryVerdict(s string) memory.Verdict { return memory.Verdict(s) }
