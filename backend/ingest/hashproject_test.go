package ingest

import (
	"context"
	"testing"

	"github.com/memtray/memtray/backend/memory"
	"github.com/memtray/memtray/backend/store"
)

// TestExactDedupPerProject: the same statement said in two projects is
// two memories, one each (the second project's prompts reach its own: a
// reinforcement of the first project's would be out of their reach), and
// said again in one of them reinforces that project's; a memory written on
// purpose with no project (`memtray add`, MCP) is one of its own too. The
// store is on disk.
func TestExactDedupPerProject(t *testing.T) {
	const para = "The exporter in `export/csv.go` quotes every field because Excel splits unquoted fields at commas and semicolons."
	ctx := context.Background()
	p, st := newSeenFixture(t, memory.FixedClock{T: t0})
	turnOf := func(session, project, prompt string) Turn { return transcriptTurn(session, project, prompt, para) }
	steps := []struct {
		name, session, project string
		write                  bool // through Write (an add) instead of a session's turn
		want                   memory.Verdict
		count                  int
	}{
		{"first said in alpha", "s1", "alpha", false, memory.VerdictStored, 1},
		{"said in beta", "s2", "beta", false, memory.VerdictStored, 2},
		{"said again in alpha", "s3", "alpha", false, memory.VerdictDuplicate, 2},
		{"added with no project", "", "", true, memory.VerdictStored, 3},
		{"added again with no project", "", "", true, memory.VerdictDuplicate, 3},
	}
	for _, s := range steps {
		var dec memory.Decision
		if s.write {
			res, err := p.Write(ctx, WriteRequest{Memory: memory.Memory{Text: para, Source: memory.SourceCLI}})
			if err != nil {
				t.Fatalf("%s: %v", s.name, err)
			}
			dec = res.Decision
		} else {
			d, _, err := p.ProcessTurn(ctx, turnOf(s.session, s.project, "look at the csv code in "+s.session), nil, SessionState{Ended: true})
			if err != nil {
				t.Fatalf("%s: %v", s.name, err)
			}
			dec = d
		}
		if dec.Verdict != s.want || st.Count() != s.count {
			t.Errorf("%s: %s (%s), %d memories; want %s, %d", s.name, dec.Verdict, dec.Reason, st.Count(), s.want, s.count)
		}
	}
	h := memory.ContentHash(para)
	for project, reinforced := range map[string]int{"alpha": 1, "beta": 0, "": 1} {
		m, ok, err := st.FindByHash(ctx, h, project)
		if err != nil || !ok {
			t.Errorf("project %q: no memory holds the text (%v)", project, err)
			continue
		}
		if m.ReinforcedCount != reinforced {
			t.Errorf("project %q: reinforced %d times, want %d", project, m.ReinforcedCount, reinforced)
		}
	}
}

// TestRelabelKeepsOneCopyInProject: a session of no project stored a
// statement; a session of project shop said it too (shop's own memory,
// exact dedup being per project); the first session read again with its
// project shop does not file its memory there as a second copy of the
// same text: it is left of no project, shop keeps one.
func TestRelabelKeepsOneCopyInProject(t *testing.T) {
	const para = "The exporter in `export/csv.go` quotes every field because Excel splits unquoted fields at commas and semicolons."
	ctx := context.Background()
	p, st := newSeenFixture(t, memory.FixedClock{T: t0})
	turnOf := func(session, project string) Turn {
		return transcriptTurn(session, project, "look at the csv code in "+session, para)
	}
	for _, step := range []struct{ session, project string }{{"loose", ""}, {"shop-session", "shop"}, {"loose", "shop"}} {
		if _, _, err := p.ProcessTurn(ctx, turnOf(step.session, step.project), nil, SessionState{Ended: true}); err != nil {
			t.Fatal(err)
		}
	}
	n := map[string]int{}
	if err := st.Iterate(ctx, store.Filter{}, func(m memory.Memory) error { n[m.Project]++; return nil }); err != nil {
		t.Fatal(err)
	}
	if n["shop"] != 1 || n[""] != 1 || len(n) != 2 {
		t.Errorf("live memories by project %v, want one in shop and the one of no project left as it is", n)
	}
}
