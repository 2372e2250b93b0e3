package mcp

import (
	"fmt"
	"sort"
	"strings"
)

// topN is how many projects and kinds memory_status names; the rest are summed.
const topN = 10

// Count is a name and how many memories it has.
type Count struct {
	Name  string `json:"name"`
	Count int    `json:"count"`
}

// Rest sums what a bounded list left out.
type Rest struct {
	Names    int `json:"names"`
	Memories int `json:"memories"`
}

// StatusResult is memory_status's structured answer: bounded however large
// the store (the top projects and kinds, the rest summed).
type StatusResult struct {
	Version    string  `json:"version,omitempty"`
	Total      int     `json:"total"`
	Snoozed    int     `json:"snoozed"`
	Superseded int     `json:"superseded"`
	Projects   []Count `json:"projects"`
	// ProjectCount is how many projects there are; OtherProjects sums
	// those not listed.
	ProjectCount  int     `json:"project_count"`
	OtherProjects Rest    `json:"other_projects"`
	Kinds         []Count `json:"kinds"`
	OtherKinds    Rest    `json:"other_kinds"`
	StoreDir      string  `json:"store_dir,omitempty"`
	StoreBytes    int64   `json:"store_bytes"`
	Embedder      string  `json:"embedder,omitempty"`
	Capture       string  `json:"capture,omitempty"`
}

// summarize bounds a Status for the agent.
func summarize(st Status) StatusResult {
	r := StatusResult{Version: oneLine(st.Version, 40), Total: st.Total, Snoozed: st.Snoozed, Superseded: st.Superseded,
		ProjectCount: len(st.ByProject), StoreDir: oneLine(st.StoreDir, 200), StoreBytes: st.StoreBytes,
		Embedder: oneLine(st.Embedder, 80), Capture: oneLine(st.Capture, 80)}
	r.Projects, r.OtherProjects = top(st.ByProject, topN)
	r.Kinds, r.OtherKinds = top(st.ByKind, topN)
	return r
}

// top returns the n largest counts (ties by name) and sums the rest.
func top(m map[string]int, n int) ([]Count, Rest) {
	all := make([]Count, 0, len(m))
	for k, v := range m {
		all = append(all, Count{Name: k, Count: v})
	}
	sort.Slice(all, func(i, j int) bool {
		if all[i].Count != all[j].Count {
			return all[i].Count > all[j].Count
		}
		return all[i].Name < all[j].Name
	})
	var rest Rest
	if len(all) > n {
		for _, c := range all[n:] {
			rest.Names++
			rest.Memories += c.Count
		}
		all = all[:n]
	}
	for i := range all {
		all[i].Name = oneLine(all[i].Name, 60)
	}
	return all, rest
}

// statusText is the compact answer: at most about 35 lines whatever the store.
func statusText(r StatusResult) string {
	var b strings.Builder
	fmt.Fprintf(&b, "memtray %s: %d %s (%d snoozed, %d superseded)\n", r.Version, r.Total, plural(r.Total, "memory", "memories"), r.Snoozed, r.Superseded)
	fmt.Fprintf(&b, "store: %s (%s)\n", r.StoreDir, size(r.StoreBytes))
	fmt.Fprintf(&b, "embedder: %s\n", r.Embedder)
	fmt.Fprintf(&b, "capture: %s\n", r.Capture)
	fmt.Fprintf(&b, "projects (%d):\n", r.ProjectCount)
	counts(&b, r.Projects, r.OtherProjects, "project", "projects", "(no project)")
	fmt.Fprintf(&b, "kinds:\n")
	counts(&b, r.Kinds, r.OtherKinds, "kind", "kinds", "(none)")
	return strings.TrimSuffix(b.String(), "\n")
}

func counts(b *strings.Builder, cs []Count, rest Rest, one, many, empty string) {
	if len(cs) == 0 {
		b.WriteString("  none\n")
	}
	for _, c := range cs {
		name := c.Name
		if name == "" {
			name = empty
		}
		fmt.Fprintf(b, "  %-24s %d\n", name, c.Count)
	}
	if rest.Names > 0 {
		fmt.Fprintf(b, "  %-24s %d\n", fmt.Sprintf("%d more %s", rest.Names, plural(rest.Names, one, many)), rest.Memories)
	}
}

// oneLine folds white space (a name with line breaks stays one line) and clips.
func oneLine(s string, n int) string {
	return clip(strings.Join(strings.Fields(s), " "), n)
}

func size(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}
