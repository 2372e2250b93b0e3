package cli

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memtray/memtray/backend/daemon"
	"github.com/memtray/memtray/backend/embed"
	"github.com/memtray/memtray/backend/httpapi"
	"github.com/memtray/memtray/backend/store"
)

// TestListHidesSuperseded: `memtray list` lists the current versions only
// (what recall reads); --superseded lists the old versions too, marked.
func TestListHidesSuperseded(t *testing.T) {
	dir := isolate(t)
	ctx := context.Background()
	dd := "--data-dir=" + dir
	code, out, errs := run(t, ctx, "", "add", dd, "--project", "web", "--json", "The dev server listens on port 5173.")
	if code != 0 {
		t.Fatalf("add: %d %s", code, errs)
	}
	var old struct{ ID string }
	if err := json.Unmarshal([]byte(out), &old); err != nil || old.ID == "" {
		t.Fatalf("add --json printed %q (%v)", out, err)
	}
	st, err := store.Open(ctx, store.Options{Dir: filepath.Join(dir, daemon.StoreDir), Model: embed.BuiltinModel, Dim: embed.BuiltinDim, AllowModelChange: true})
	if err != nil {
		t.Fatal(err)
	}
	m, err := st.Get(ctx, old.ID)
	if err != nil {
		t.Fatal(err)
	}
	m.ID, m.Text, m.ContentHash = "", "The dev server listens on port 5174.", ""
	next, err := st.Supersede(ctx, old.ID, m)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}

	for _, tc := range []struct {
		args      []string
		total     int
		oldListed bool
	}{
		{nil, 1, false},
		{[]string{"--superseded"}, 2, true},
	} {
		code, out, errs := run(t, ctx, "", append([]string{"list", dd, "--json"}, tc.args...)...)
		var res httpapi.ListResponse
		if code != 0 || json.Unmarshal([]byte(out), &res) != nil {
			t.Fatalf("list %v: %d %q %s", tc.args, code, out, errs)
		}
		listed := map[string]bool{}
		for _, lm := range res.Memories {
			listed[lm.ID] = true
		}
		if res.Total != tc.total || !listed[next.ID] || listed[old.ID] != tc.oldListed {
			t.Errorf("list %v: total %d, listed %v; want total %d, %s listed, %s listed %v", tc.args, res.Total, listed, tc.total, next.ID, old.ID, tc.oldListed)
		}
		code, out, _ = run(t, ctx, "", append([]string{"list", dd}, tc.args...)...)
		if marked := strings.Contains(out, "[superseded by "+next.ID+"] The dev server listens on port 5173."); code != 0 || marked != tc.oldListed {
			t.Errorf("list %v: the old version marked %v, want %v:\n%s", tc.args, marked, tc.oldListed, out)
		}
	}
}

// TestListEmptyProjectNamesProjects: `memtray list --project P` of a
// project the store does not hold names the projects it does, so that a
// name spelt otherwise can be corrected; a project with memories lists
// them and nothing more.
func TestListEmptyProjectNamesProjects(t *testing.T) {
	dir := isolate(t)
	ctx := context.Background()
	dd := "--data-dir=" + dir
	for _, a := range [][]string{
		{"--project", "web", "The dev server listens on port 5173."},
		{"--project", "web", "Releases are tagged vMAJOR.MINOR.PATCH from main only."},
		{"--project", "api", "The API rate limit is 600 requests per minute per token."},
	} {
		if code, _, errs := run(t, ctx, "", append([]string{"add", dd}, a...)...); code != 0 {
			t.Fatalf("add %v: %d %s", a, code, errs)
		}
	}
	code, out, errs := run(t, ctx, "", "list", dd, "--project", "webapp")
	if want := `no memories in project "webapp"; the store's projects: web (2), api (1)`; code != 0 || !strings.Contains(out, want) {
		t.Errorf("list of a project with no memories: exit %d, out %q (err %q); want %q", code, out, errs, want)
	}
	if code, out, _ := run(t, ctx, "", "list", dd, "--project", "web"); code != 0 || strings.Contains(out, "no memories") || !strings.Contains(out, "2 of 2") {
		t.Errorf("list of a project with memories: exit %d, out %q", code, out)
	}
}
