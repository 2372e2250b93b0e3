package crashtest

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strings"

	"github.com/memtray/memtray/backend/httpapi"
	"github.com/memtray/memtray/backend/memory"
	"github.com/memtray/memtray/backend/steward"
	"github.com/memtray/memtray/backend/store"
)

// state is what a daemon holds, as read over its API right after a start.
type state struct {
	model string                   // the store's embedding model
	live  map[string]memory.Memory // with embeddings
	trash map[string]store.TrashedMemory
}

func emptyState(model string) state {
	return state{model: model, live: map[string]memory.Memory{}, trash: map[string]store.TrashedMemory{}}
}

// verdict is what verify found.
type verdict struct {
	problems []string // broken invariants
	lost     int      // acknowledged memories missing or altered
	repaired int      // index entries the store repaired at open
	// rawRepaired is what a copy of the store, opened by rawCheck, repaired.
	rawRepaired int
	warnings    []string // the store's open warnings (allowed ones)
	acked       int      // acknowledged writes checked
	searched    int      // memories looked up by search
}

func (v *verdict) fail(format string, args ...any) {
	if len(v.problems) < 60 {
		v.problems = append(v.problems, fmt.Sprintf(format, args...))
	}
}

func (v *verdict) lose(format string, args ...any) {
	v.lost++
	v.fail("LOST: "+format, args...)
}

// read reads a started daemon's state: stats, the whole export and the trash.
func read(ctx context.Context, c *httpapi.Client) (state, httpapi.Stats, error) {
	st, err := c.Stats(ctx)
	if err != nil {
		return state{}, st, fmt.Errorf("stats: %w", err)
	}
	var buf bytes.Buffer
	if err := c.Export(ctx, &buf); err != nil {
		return state{}, st, fmt.Errorf("export: %w", err)
	}
	f, err := store.ParseExport(&buf)
	if err != nil {
		return state{}, st, fmt.Errorf("the export does not parse: %w", err)
	}
	s := emptyState(f.Header.EmbeddingModel)
	for _, m := range f.Records {
		s.live[m.ID] = m
	}
	tr, err := c.Trash(ctx)
	if err != nil {
		return state{}, st, fmt.Errorf("trash: %w", err)
	}
	for _, m := range tr {
		s.trash[m.Memory.ID] = m
	}
	return s, st, nil
}

// sameContent says how b differs from a in what a memory says and is:
// text, kind, type, project, source, importance, pin, creation, links and
// hash (not in counters, which reads and reinforcement move).
func sameContent(a, b memory.Memory) string {
	var d []string
	check := func(name string, ok bool) {
		if !ok {
			d = append(d, name)
		}
	}
	check("id", a.ID == b.ID)
	check("text", a.Text == b.Text)
	check("kind", a.Kind == b.Kind)
	check("type", a.Type == b.Type)
	check("project", a.Project == b.Project)
	check("source", a.Source == b.Source)
	check("importance", math.Abs(a.Importance-b.Importance) < 1e-9)
	check("pinned", a.Pinned == b.Pinned)
	check("created_at", a.CreatedAt.Equal(b.CreatedAt))
	check("supersedes", a.Supersedes == b.Supersedes)
	check("superseded_by", a.SupersededBy == b.SupersededBy)
	check("extends_source", a.ExtendsSource == b.ExtendsSource)
	check("content_hash", a.ContentHash == "" || b.ContentHash == "" || a.ContentHash == b.ContentHash)
	if len(d) == 0 {
		return ""
	}
	return strings.Join(d, ", ")
}

var tokenRE = regexp.MustCompile(`\bqx[0-9]+k\b`)

// verify checks a freshly started daemon against the state verified at
// the previous start and the ledger of the life killed since. It returns
// the state now.
func (h *harness) verify(ctx context.Context, p *proc, prev state, led *ledger) (state, verdict) {
	var v verdict
	now, st, err := read(ctx, p.client)
	if err != nil {
		v.fail("%v", err)
		return prev, v
	}
	if led == nil {
		led = &ledger{}
	}
	v.repaired = st.Store.RepairedOnOpen

	// The embedding model: the old one, the new one once a switch was
	// acknowledged, either while one was cut; every vector of it.
	want := []string{prev.model}
	for _, op := range led.reembeds {
		switch {
		case op.done:
			want = []string{op.to}
		default:
			want = append(want, op.to)
		}
	}
	if !slices.Contains(want, now.model) {
		v.fail("the store's model is %s, want one of %v", now.model, want)
	}
	if st.Store.Model != now.model || st.Embedder != now.model {
		v.fail("the store says %s, the export %s and the daemon embeds with %s", st.Store.Model, now.model, st.Embedder)
	}
	for _, w := range st.Store.Warnings {
		if strings.HasPrefix(w, "unfinished re-embedding") && h.stagePending {
			v.warnings = append(v.warnings, w)
			continue
		}
		v.fail("the store warns at open: %s", w)
	}
	name := strings.TrimPrefix(now.model, "ollama:")
	if _, ok := fakeModels[name]; !ok {
		v.fail("the store's model %q is none of the fake Ollama's", now.model)
	} else {
		bad := 0
		for _, m := range now.live {
			if m.EmbeddingModel != now.model || memory.Cosine(m.Embedding, fakeVec(name, m.Text)) < 0.9999 {
				if bad++; bad <= 3 {
					v.fail("memory %s holds a vector of %q (%d dims) that is not %s's of its text", m.ID, m.EmbeddingModel, len(m.Embedding), now.model)
				}
			}
		}
		if bad > 3 {
			v.fail("%d memories in all hold a vector that is not %s's", bad, now.model)
		}
	}
	if st.Store.Count != len(now.live) {
		v.fail("stats count %d memories, the export %d", st.Store.Count, len(now.live))
	}

	// Invariants of the records.
	hashes := map[string]string{}
	for id, m := range now.live {
		if other, ok := hashes[m.ContentHash]; ok {
			v.fail("memories %s and %s hold the same text %q", id, other, m.Text)
		}
		hashes[m.ContentHash] = id
		if _, ok := now.trash[id]; ok {
			v.fail("memory %s is both live and in the trash", id)
		}
		if m.Supersedes != "" {
			if old, ok := now.live[m.Supersedes]; !ok || old.SupersededBy != id {
				v.fail("memory %s supersedes %s, which does not say it was superseded (half an update)", id, m.Supersedes)
			}
		}
		if m.SupersededBy != "" {
			if nw, ok := now.live[m.SupersededBy]; !ok || nw.Supersedes != id {
				v.fail("memory %s is superseded by %s, which does not supersede it (half an update)", id, m.SupersededBy)
			}
		}
	}

	// What this life may have changed, and what it must have.
	// A delete moves the memory to the trash (restorable), and so does
	// marking it as noise. One in flight at the kill did either all of
	// that or nothing.
	deleted := map[string]*deleteOp{}
	for _, op := range led.deletes {
		deleted[op.id] = op
		if !op.acked {
			continue
		}
		_, live := now.live[op.id]
		_, trashed := now.trash[op.id]
		switch {
		case live:
			v.fail("memory %s is still there after its delete was acknowledged", op.id)
		case !trashed && op.noise:
			v.lose("memory %s is not in the trash after it was marked as noise (a noise mark is restorable)", op.id)
		case !trashed:
			v.lose("memory %s is not in the trash after its delete was acknowledged (a delete is restorable)", op.id)
		}
	}
	addsByText := map[string]*addOp{}
	for _, op := range led.adds {
		addsByText[op.req.Text] = op
	}
	imported, importedByID := map[string]memory.Memory{}, map[string]memory.Memory{}
	for _, op := range led.imports {
		for _, m := range op.recs {
			imported[m.Text], importedByID[m.ID] = m, m
		}
	}
	var ingestTokens []string
	for _, op := range led.ingests {
		ingestTokens = append(ingestTokens, op.tokens...)
	}
	stewardTouched := map[string]bool{} // ids whose content a steward run of this life may change
	for _, op := range led.stewards {
		if op.plan == nil || !op.applySent {
			continue
		}
		for _, a := range op.plan.Actions {
			stewardTouched[a.ID] = true
			for _, id := range a.MergedIDs {
				stewardTouched[id] = true
			}
		}
	}

	// Every memory of the previous start is there unchanged, unless this
	// life deleted it.
	for id, old := range prev.live {
		m, ok := now.live[id]
		if !ok {
			if _, del := deleted[id]; !del {
				v.lose("memory %s (%s) %q is gone", id, old.Project, old.Text)
			}
			continue
		}
		if d := sameContent(old, m); d != "" {
			v.lose("memory %s (%s) changed: %s", id, old.Project, d)
		}
	}
	for id := range prev.trash {
		if _, ok := now.trash[id]; !ok {
			v.fail("memory %s left the trash", id)
		}
	}

	// Every new memory comes from a request of this life, as it was asked.
	for id, m := range now.live {
		if _, ok := prev.live[id]; ok {
			continue
		}
		switch {
		case addsByText[m.Text] != nil:
			op := addsByText[m.Text]
			r := op.req
			if string(m.Kind) != r.Kind || string(m.Type) != r.Type || m.Project != r.Project || m.Source != r.Source || math.Abs(m.Importance-r.Importance) > 1e-9 {
				v.fail("added memory %s is not as asked: %+v vs %+v", id, m, r)
			}
			if op.acked && op.got.ID != id {
				v.fail("added memory %s: the add was answered with id %s", id, op.got.ID)
			}
		case imported[m.Text].Text != "":
			if !stewardTouched[id] {
				if d := sameContent(imported[m.Text], m); d != "" {
					v.fail("imported memory %s is not as in the file: %s", id, d)
				}
			}
		case stewardTouched[id]:
			// a merge survivor whose kept text is its partner's
		case m.Project == projIngest && slices.ContainsFunc(tokenRE.FindAllString(m.Text, -1), func(t string) bool { return slices.Contains(ingestTokens, t) }):
		default:
			v.fail("memory %s (%s) %q comes from no request of this life", id, m.Project, m.Text)
		}
	}

	// Every acknowledged write is there.
	for _, op := range led.adds {
		if !op.acked {
			continue
		}
		v.acked++
		m, ok := now.live[op.got.ID]
		if !ok {
			if _, del := deleted[op.got.ID]; !del {
				v.lose("acknowledged add %s %q is gone", op.got.ID, op.got.Text)
			}
			continue
		}
		if d := sameContent(op.got, m); d != "" {
			v.lose("acknowledged add %s changed: %s", op.got.ID, d)
		}
	}
	for _, op := range led.ingests {
		if !op.acked {
			continue
		}
		for _, dec := range op.resp.Decisions {
			for _, id := range dec.MemoryIDs {
				v.acked++
				if _, ok := now.live[id]; !ok {
					v.lose("memory %s of an acknowledged ingest (%s) is gone", id, dec.Verdict)
				}
			}
		}
	}
	for _, op := range led.imports {
		if !op.acked {
			continue
		}
		if op.rep.Imported != len(op.recs) {
			v.fail("an import of %d new records reported %d imported", len(op.recs), op.rep.Imported)
		}
		for _, r := range op.recs {
			v.acked++
			_, live := now.live[r.ID]
			_, trashed := now.trash[r.ID]
			if !live && !(trashed && stewardTouched[r.ID]) {
				v.lose("imported memory %s %q of an acknowledged import is gone", r.ID, r.Text)
			}
		}
	}

	// Steward runs: each wholly applied or not at all; an acknowledged
	// apply applied, an acknowledged undo undone.
	explainedTrash := map[string]bool{}
	for _, op := range led.stewards {
		if op.plan == nil {
			continue
		}
		h.checkRun(&v, op, now, importedByID, explainedTrash)
	}
	for id := range now.trash {
		if _, del := deleted[id]; del {
			continue // this life deleted it or marked it as noise
		}
		if _, ok := prev.trash[id]; !ok && !explainedTrash[id] {
			v.fail("memory %s went to the trash, but no steward run or delete of this life trashed it", id)
		}
	}

	// The indexes agree with the records: each memory is found by its
	// token (BM25) and by its text (vector), trashed and deleted ones not.
	h.checkSearch(ctx, p.client, &v, prev, now)
	return now, v
}

// checkRun classifies a steward run's actions as applied or not.
func (h *harness) checkRun(v *verdict, op *stewardOp, now state, importedByID map[string]memory.Memory, explained map[string]bool) {
	actions := op.plan.Actions
	if op.applied {
		actions = op.res.Applied
	}
	if len(actions) == 0 {
		return
	}
	byID := map[string][]steward.Action{}
	var order []string
	for _, a := range actions {
		if _, ok := byID[a.ID]; !ok {
			order = append(order, a.ID)
		}
		byID[a.ID] = append(byID[a.ID], a)
	}
	applied, notApplied := 0, 0
	var odd []string
	for _, id := range order {
		acts := byID[id]
		last := acts[len(acts)-1]
		_, live := now.live[id]
		_, trashed := now.trash[id]
		var yes, no bool
		switch {
		case last.Op == steward.OpMerge:
			loser := last.MergedIDs[0]
			_, lLive := now.live[loser]
			_, lTrashed := now.trash[loser]
			m := now.live[id]
			yes = live && lTrashed && !lLive && m.Text == last.KeptText
			no = live && lLive && !lTrashed && m.Text == importedByID[id].Text
			if yes {
				explained[loser] = true
			}
		case last.After.Trashed:
			yes, no = trashed && !live, live && !trashed
			if yes {
				explained[id] = true
			}
		default:
			m := now.live[id]
			yes = live && math.Abs(m.Importance-last.After.Importance) < 1e-9
			no = live && math.Abs(m.Importance-acts[0].Before.Importance) < 1e-9
		}
		switch {
		case yes:
			applied++
		case no:
			notApplied++
		default:
			odd = append(odd, fmt.Sprintf("%s %s (live %v, trashed %v)", last.Op, id, live, trashed))
		}
	}
	if len(odd) > 0 {
		v.fail("steward run on %s: %d actions neither applied nor not: %v", op.project, len(odd), odd[:min(3, len(odd))])
	}
	switch {
	case applied > 0 && notApplied > 0:
		v.fail("steward run on %s is half applied: %d of %d actions", op.project, applied, applied+notApplied)
	case op.undone && applied > 0:
		v.fail("steward run on %s: the undo was acknowledged, but the run is still applied", op.project)
	case op.applied && !op.undoSent && notApplied > 0:
		v.fail("steward run on %s: the apply was acknowledged, but nothing of it is in the store", op.project)
	}
	if applied > 0 {
		h.totals.stewardApplied++
	} else if op.applySent {
		h.totals.stewardNotApplied++
	}
}

// checkSearch looks every new memory (up to a sample) and a sample of the
// older ones up by their token through the daemon's search (BM25 alone:
// the composite ranking of a vector search weighs importance and kind, so
// it is no probe of the index; rawCheck looks at the vector index).
func (h *harness) checkSearch(ctx context.Context, c *httpapi.Client, v *verdict, prev, now state) {
	var fresh, old []memory.Memory
	for id, m := range now.live {
		if m.Superseded() {
			continue
		}
		if _, ok := prev.live[id]; ok {
			old = append(old, m)
		} else {
			fresh = append(fresh, m)
		}
	}
	pick := func(ms []memory.Memory, n int) []memory.Memory {
		for i := range ms {
			j := i + h.rng.IntN(len(ms)-i)
			ms[i], ms[j] = ms[j], ms[i]
		}
		return ms[:min(n, len(ms))]
	}
	check := append(pick(fresh, 120), pick(old, 30)...)
	// Tokens of memories no longer searchable must find nothing.
	var gone []string
	for id, m := range prev.live {
		if _, ok := now.live[id]; !ok {
			gone = append(gone, tokenRE.FindAllString(m.Text, -1)...)
		}
	}
	for _, t := range now.trash {
		gone = append(gone, tokenRE.FindAllString(t.Memory.Text, -1)...)
	}
	byToken := map[string][]string{} // token -> live searchable ids holding it
	for id, m := range now.live {
		if m.Superseded() {
			continue
		}
		for _, t := range tokenRE.FindAllString(m.Text, -1) {
			byToken[t] = append(byToken[t], id)
		}
	}
	for _, m := range check {
		v.searched++
		toks := tokenRE.FindAllString(m.Text, -1)
		if len(toks) == 0 {
			v.fail("memory %s has no token: %q", m.ID, m.Text)
			continue
		}
		hits, err := c.Search(ctx, httpapi.SearchRequest{Query: toks[0], Mode: "bm25", K: 10})
		if err != nil {
			v.fail("bm25 search for %s: %v", toks[0], err)
			continue
		}
		ids := map[string]bool{}
		for _, hit := range hits {
			ids[hit.Memory.ID] = true
			if _, ok := now.live[hit.Memory.ID]; !ok {
				v.fail("bm25 search for %s found %s, which is not a live memory", toks[0], hit.Memory.ID)
			}
		}
		for _, id := range byToken[toks[0]] {
			if !ids[id] {
				v.fail("bm25 search for %s misses memory %s (%s) %q", toks[0], id, now.live[id].Project, now.live[id].Text)
			}
		}
	}
	slices.Sort(gone)
	gone = slices.Compact(gone)
	for i, t := range gone {
		if i >= 40 {
			break
		}
		if len(byToken[t]) > 0 {
			continue // a live memory shares it (a merge survivor, an update)
		}
		hits, err := c.Search(ctx, httpapi.SearchRequest{Query: t, Mode: "bm25", K: 5})
		if err != nil {
			v.fail("bm25 search for %s: %v", t, err)
			continue
		}
		for _, hit := range hits {
			if strings.Contains(hit.Memory.Text, t) {
				v.fail("bm25 search for %s of a deleted or trashed memory finds %s", t, hit.Memory.ID)
			}
		}
	}
}
