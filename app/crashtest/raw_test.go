package crashtest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/memtray/memtray/backend/daemon"
	"github.com/memtray/memtray/backend/memory"
	"github.com/memtray/memtray/backend/store"
)

// copyStore copies the killed daemon's store (nobody holds it between a
// kill and the next start) to a fresh folder under root, for rawCheck.
func copyStore(in *install, root string) (string, error) {
	src := filepath.Join(in.dataDir, daemon.StoreDir)
	if _, err := os.Stat(src); err != nil {
		return "", nil // killed before the store existed
	}
	dst, err := os.MkdirTemp(root, "store-copy-")
	if err != nil {
		return "", err
	}
	if err := os.CopyFS(filepath.Join(dst, "store"), os.DirFS(src)); err != nil {
		return "", fmt.Errorf("copy the store: %w", err)
	}
	return filepath.Join(dst, "store"), nil
}

// rawCheck opens the copy of the store as it was at the kill with package
// store itself and checks what the daemon's API cannot show: that the
// reconciled text index (bleve) and the vector index (rebuilt from the
// records at open) find every record by its token and by its own vector,
// and nothing that is gone. now is what the daemon, started on the
// original, answered; both opened the same bytes, so they must agree.
func (h *harness) rawCheck(ctx context.Context, dir string, prev, now state, v *verdict) {
	s, err := store.Open(ctx, store.Options{Dir: dir})
	if err != nil {
		v.fail("the store (a copy made after the kill) does not open: %v", err)
		return
	}
	defer s.Close()
	info := s.Info()
	if info.Model != now.model || info.Count != len(now.live) {
		v.fail("the store opened here holds %d memories of %s, the daemon %d of %s", info.Count, info.Model, len(now.live), now.model)
	}
	for _, w := range info.Warnings {
		if !(strings.HasPrefix(w, "unfinished re-embedding") && h.stagePending) {
			v.fail("the store warns at open: %s", w)
		}
	}
	all := store.Filter{IncludeSnoozed: true, IncludeSuperseded: true}
	n := 0
	err = s.Iterate(ctx, all, func(m memory.Memory) error {
		n++
		want, ok := now.live[m.ID]
		if !ok {
			v.fail("the store holds %s, which the daemon did not export", m.ID)
		} else if d := sameContent(want, m); d != "" {
			v.fail("memory %s differs between the store and the daemon's export: %s", m.ID, d)
		}
		return nil
	})
	if err != nil {
		v.fail("iterate: %v", err)
	}
	if n != len(now.live) {
		v.fail("iterate gives %d memories, the daemon exported %d", n, len(now.live))
	}
	byToken := map[string][]string{}
	var fresh, old []memory.Memory
	for id, m := range now.live {
		for _, t := range tokenRE.FindAllString(m.Text, -1) {
			byToken[t] = append(byToken[t], id)
		}
		if _, ok := prev.live[id]; ok {
			old = append(old, m)
		} else {
			fresh = append(fresh, m)
		}
	}
	pick := func(ms []memory.Memory, k int) []memory.Memory {
		for i := range ms {
			j := i + h.rng.IntN(len(ms)-i)
			ms[i], ms[j] = ms[j], ms[i]
		}
		return ms[:min(k, len(ms))]
	}
	for _, m := range append(pick(fresh, 250), pick(old, 60)...) {
		tok := tokenRE.FindString(m.Text)
		ts, err := bm25Search(ctx, s, tok, 20, all)
		if err != nil {
			v.fail("text search %s: %v", tok, err)
			continue
		}
		found := map[string]bool{}
		for _, sc := range ts {
			found[sc.ID] = true
			if _, ok := now.live[sc.ID]; !ok {
				v.fail("the text index finds %s for %s, which is not a memory", sc.ID, tok)
			}
		}
		for _, id := range byToken[tok] {
			if !found[id] {
				v.fail("the text index misses memory %s for %s", id, tok)
			}
		}
		vs, err := s.VectorSearch(ctx, m.Embedding, 3, all)
		if err != nil {
			v.fail("vector search %s: %v", m.ID, err)
			continue
		}
		if len(vs) == 0 || vs[0].Score < 0.9999 || (vs[0].ID != m.ID && memory.Cosine(now.live[vs[0].ID].Embedding, m.Embedding) < 0.9999) {
			v.fail("the vector index does not find memory %s by its own vector: %v", m.ID, vs)
		}
	}
	// Gone memories are found by no index.
	for id, m := range prev.live {
		if _, ok := now.live[id]; ok {
			continue
		}
		for _, tok := range tokenRE.FindAllString(m.Text, -1) {
			if len(byToken[tok]) > 0 {
				continue
			}
			ts, err := bm25Search(ctx, s, tok, 5, all)
			if err == nil && len(ts) > 0 {
				v.fail("the text index still finds %v for %s of memory %s, which is gone", ts, tok, id)
			}
		}
	}
	for id, t := range now.trash {
		if _, ok := prev.trash[id]; ok {
			continue
		}
		for _, tok := range tokenRE.FindAllString(t.Memory.Text, -1) {
			if len(byToken[tok]) > 0 {
				continue
			}
			ts, err := bm25Search(ctx, s, tok, 5, all)
			if err == nil && len(ts) > 0 {
				v.fail("the text index still finds %v for %s of trashed memory %s", ts, tok, id)
			}
		}
	}
	v.rawRepaired = info.RepairedOnOpen
}

// bm25Search is a BM25 search for free text, each analysed term at weight 1.
func bm25Search(ctx context.Context, st *store.Store, q string, n int, f store.Filter) ([]store.Scored, error) {
	var terms []store.Term
	for _, w := range st.Analyze(q) {
		terms = append(terms, store.Term{Text: w, Boost: 1})
	}
	return st.TextSearchTerms(ctx, terms, n, f)
}
