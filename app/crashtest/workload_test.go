package crashtest

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/memtray/memtray/backend/httpapi"
	"github.com/memtray/memtray/backend/memory"
	"github.com/memtray/memtray/backend/steward"
	"github.com/memtray/memtray/backend/store"
)

// Activities the harness drives a daemon through, one or two at a time,
// with background adds and deletes always going on.
const (
	actIngest  = "ingest"  // POST /api/ingest bursts of exchanges
	actAdds    = "adds"    // POST /api/memories from several clients at once
	actImport  = "import"  // POST /api/import of a few hundred records
	actSteward = "steward" // import a group, plan, apply, sometimes undo
	actReembed = "reembed" // POST /api/embedder/reembed, the job followed to its end
)

var activities = []string{actIngest, actAdds, actImport, actSteward, actReembed}

// Projects keep what each activity writes apart, so that each can be
// checked: the steward only ever plans a group it imported itself.
const (
	projAdds    = "crash-adds"
	projIngest  = "crash-ingest"
	projImport  = "crash-import"
	stewardProj = "crash-steward-"
)

// ledger is what one daemon life was asked and what it acknowledged (an
// HTTP 2xx answer read whole). Ops are appended before their request is
// sent; acked is set after the answer was read.
type ledger struct {
	mu       sync.Mutex
	adds     []*addOp
	deletes  []*deleteOp
	ingests  []*ingestOp
	imports  []*importOp
	stewards []*stewardOp
	reembeds []*reembedOp
	// refused lists the errors the daemon answered while it was alive
	// (not those of the kill).
	refused []string
}

type addOp struct {
	req   httpapi.AddRequest
	acked bool
	got   memory.Memory
}

type deleteOp struct {
	id    string
	noise bool // POST /api/memories/{id}/noise rather than DELETE
	acked bool
}

type ingestOp struct {
	tokens []string // one per exchange group: every memory formed holds one
	acked  bool
	resp   httpapi.IngestResponse
}

type importOp struct {
	recs  []memory.Memory // as sent (without embeddings)
	model string          // the file's embedding model
	acked bool
	rep   store.ImportReport
}

type stewardOp struct {
	project   string
	plan      *steward.Plan // nil until the plan was answered
	applied   bool          // apply acknowledged
	res       steward.Result
	undoSent  bool
	undone    bool // undo acknowledged
	applySent bool
}

type reembedOp struct {
	from, to string // store models ("ollama:crash-a")
	job      httpapi.Job
	started  bool // the job was accepted
	done     bool // the job was seen done
	ended    string
}

func (l *ledger) add(f func()) {
	l.mu.Lock()
	defer l.mu.Unlock()
	f()
}

// life is one run of the daemon, from its start to its kill.
type life struct {
	p      *proc
	led    *ledger
	rng    *lockedRand
	ctx    context.Context
	cancel context.CancelFunc
	killed atomic.Bool
	once   sync.Once
	armed  sync.Once
	// target is the phase whose start arms the kill, delay after it.
	target string
	delay  time.Duration
	// phases records how long the finished ones took and, for those the
	// kill cut, how long they had run.
	mu       sync.Mutex
	finished map[string][]time.Duration
	cut      map[string]time.Duration
	running  map[string][]time.Time // phase -> start times of its running instances
}

func newLife(p *proc, rng *lockedRand, target string, delay time.Duration) *life {
	ctx, cancel := context.WithCancel(context.Background())
	return &life{p: p, led: &ledger{}, rng: rng, ctx: ctx, cancel: cancel, target: target, delay: delay,
		finished: map[string][]time.Duration{}, cut: map[string]time.Duration{}, running: map[string][]time.Time{}}
}

// phase marks the start of a phase of an activity: the kill is armed at
// the target phase. The returned function marks its end.
func (l *life) phase(name string) func() {
	start := time.Now()
	l.mu.Lock()
	l.running[name] = append(l.running[name], start)
	l.mu.Unlock()
	if name == l.target {
		l.arm()
	}
	return func() {
		l.mu.Lock()
		defer l.mu.Unlock()
		if i := slices.Index(l.running[name], start); i >= 0 {
			l.running[name] = slices.Delete(l.running[name], i, i+1)
		}
		if !l.killed.Load() {
			l.finished[name] = append(l.finished[name], time.Since(start))
		}
	}
}

// arm schedules the kill delay from now.
func (l *life) arm() {
	l.armed.Do(func() { time.AfterFunc(l.delay, l.kill) })
}

// kill sends SIGKILL to the daemon and stops the workers.
func (l *life) kill() {
	l.once.Do(func() {
		l.mu.Lock()
		for ph, starts := range l.running {
			for _, st := range starts {
				l.cut[ph] = max(l.cut[ph], time.Since(st))
			}
		}
		l.mu.Unlock()
		l.killed.Store(true)
		l.p.kill()
		l.cancel()
	})
}

// refused records an error answered while the daemon was alive; errors
// after the kill are the kill's.
func (l *life) refused(what string, err error) {
	if err == nil || l.killed.Load() || errors.Is(err, context.Canceled) {
		return
	}
	// A request cut by the kill can fail just before the flag is seen.
	if errors.Is(err, memory.ErrUnavailable) {
		time.Sleep(50 * time.Millisecond)
		if l.killed.Load() {
			return
		}
	}
	l.led.add(func() { l.led.refused = append(l.led.refused, what+": "+err.Error()) })
}

// alive reports whether the workers should go on.
func (l *life) alive() bool { return l.ctx.Err() == nil }

// rctx is a request context: the life's, bounded.
func (l *life) rctx() (context.Context, context.CancelFunc) {
	return context.WithTimeout(l.ctx, 2*time.Minute)
}

// lockedRand is a rand.Rand for several goroutines.
type lockedRand struct {
	mu sync.Mutex
	r  *rand.Rand
}

func (r *lockedRand) IntN(n int) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.r.IntN(n)
}

func (r *lockedRand) Float64() float64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.r.Float64()
}

func (r *lockedRand) hexID() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var b [16]byte
	for i := range b {
		b[i] = byte(r.r.Uint32())
	}
	return hex.EncodeToString(b[:])
}

// texts makes the harness's texts: each holds a unique token ("qx<n>k")
// and random pseudo-words, so that no two are near duplicates unless made
// so on purpose.
type texts struct {
	n     atomic.Int64
	vocab []string
}

func newTexts(start int64) *texts {
	syl := []string{"ba", "ko", "ri", "mu", "te", "la", "zo", "vi", "ne", "da", "fu", "se", "po", "gi", "ha", "ju"}
	var vocab []string
	for _, a := range syl {
		for _, b := range syl {
			for _, c := range syl {
				vocab = append(vocab, a+b+c)
			}
		}
	}
	t := &texts{vocab: vocab}
	t.n.Store(start)
	return t
}

// token returns a new unique token.
func (t *texts) token() string { return fmt.Sprintf("qx%dk", t.n.Add(1)) }

// words returns n random words.
func (t *texts) words(rng *lockedRand, n int) string {
	w := make([]string, n)
	for i := range w {
		w[i] = t.vocab[rng.IntN(len(t.vocab))]
	}
	return strings.Join(w, " ")
}

// sentence is a unique text about tok.
func (t *texts) sentence(rng *lockedRand, tok string) string {
	return fmt.Sprintf("The %s %s service %s because %s; see %s.", tok, t.words(rng, 3), t.words(rng, 4), t.words(rng, 6), tok)
}

var (
	kinds = []memory.Kind{memory.KindFact, memory.KindDecision, memory.KindConvention, memory.KindPattern}
	types = []memory.Type{memory.TypeProject, memory.TypeReference, memory.TypeFeedback}
)

// addLoop adds memories (and now and then deletes one, or marks it noise)
// until the life ends or stop is closed.
func (h *harness) addLoop(l *life, stop <-chan struct{}, deletes bool) {
	var mine []string
	for l.alive() {
		select {
		case <-stop:
			return
		default:
		}
		if deletes && len(mine) > 3 && l.rng.IntN(10) == 0 {
			i := l.rng.IntN(len(mine))
			op := &deleteOp{id: mine[i], noise: l.rng.IntN(3) == 0}
			mine = append(mine[:i], mine[i+1:]...)
			l.led.add(func() { l.led.deletes = append(l.led.deletes, op) })
			ctx, cancel := l.rctx()
			var err error
			if op.noise {
				err = l.p.client.MarkNoise(ctx, op.id)
			} else {
				err = l.p.client.Delete(ctx, op.id)
			}
			cancel()
			if err != nil {
				l.refused("delete", err)
				continue
			}
			l.led.add(func() { op.acked = true })
			continue
		}
		tok := h.texts.token()
		op := &addOp{req: httpapi.AddRequest{Text: h.texts.sentence(l.rng, tok), Kind: string(kinds[l.rng.IntN(len(kinds))]),
			Type: string(types[l.rng.IntN(len(types))]), Project: projAdds, Source: "crashtest",
			Importance: float64(1+l.rng.IntN(9)) / 10}}
		l.led.add(func() { l.led.adds = append(l.led.adds, op) })
		ctx, cancel := l.rctx()
		m, err := l.p.client.Add(ctx, op.req)
		cancel()
		if err != nil {
			l.refused("add", err)
			continue
		}
		l.led.add(func() { op.acked, op.got = true, m })
		mine = append(mine, m.ID)
	}
}

// adds is the adds activity: four clients adding at once for a while.
func (h *harness) adds(l *life) {
	end := l.phase(actAdds)
	defer end()
	stop := make(chan struct{})
	time.AfterFunc(time.Duration(200+l.rng.IntN(600))*time.Millisecond, func() { close(stop) })
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() { h.addLoop(l, stop, false) })
	}
	wg.Wait()
}

// ingest sends one to three bursts of exchanges: most form a memory of
// their own, some repeat an earlier one of the burst (a duplicate
// reinforces it) or extend it with a new path (an update supersedes it).
func (h *harness) ingest(l *life) {
	for b := 0; b < 1+l.rng.IntN(3) && l.alive(); b++ {
		op := &ingestOp{}
		var exs []memory.Exchange
		var prev []string // replies of this burst
		session := l.rng.hexID()
		for i := 0; i < 20+l.rng.IntN(40); i++ {
			var reply string
			switch r := l.rng.IntN(10); {
			case r == 0 && len(prev) > 0:
				reply = prev[l.rng.IntN(len(prev))]
			case r == 1 && len(prev) > 0:
				reply = prev[l.rng.IntN(len(prev))] + " Also in pkg/" + h.texts.words(l.rng, 1) + ".go."
			default:
				tok := h.texts.token()
				op.tokens = append(op.tokens, tok)
				reply = fmt.Sprintf("The %s %s handler in internal/%s/%s.go %s because %s; the limit %s is %d bytes.",
					tok, h.texts.words(l.rng, 2), h.texts.words(l.rng, 1), h.texts.words(l.rng, 1), h.texts.words(l.rng, 3),
					h.texts.words(l.rng, 6), tok, 1024*(1+l.rng.IntN(64)))
			}
			prev = append(prev, reply)
			exs = append(exs, memory.Exchange{SessionID: session, Turn: i + 1, UserTurns: i + 1, Project: projIngest, Source: "api",
				User: "Why does " + h.texts.words(l.rng, 3) + " fail?", Assistant: reply})
		}
		l.led.add(func() { l.led.ingests = append(l.led.ingests, op) })
		end := l.phase(actIngest)
		ctx, cancel := l.rctx()
		resp, err := l.p.client.Ingest(ctx, httpapi.IngestRequest{Exchanges: exs})
		cancel()
		end()
		if err != nil {
			l.refused("ingest", err)
			return
		}
		l.led.add(func() { op.acked, op.resp = true, resp })
	}
}

// exportFile encodes recs as an export stream of model (vectors from the
// fake model; any other model name makes the daemon re-embed them).
func exportFile(model string, recs []memory.Memory) []byte {
	name := strings.TrimPrefix(model, "ollama:")
	dim, ok := fakeModels[name]
	if !ok {
		dim = 8
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.Encode(store.ExportHeader{Format: store.ExportFormat, Version: store.ExportVersion, EmbeddingModel: model, Dim: dim,
		Count: len(recs), ExportedAt: time.Now().UTC()})
	for _, m := range recs {
		if ok {
			m.Embedding = fakeVec(name, m.Text)
		} else {
			m.Embedding = make([]float32, dim)
			m.Embedding[len(m.Text)%dim] = 1
		}
		enc.Encode(m)
	}
	enc.Encode(map[string]any{"end": true, "count": len(recs)})
	return b.Bytes()
}

// importRecs imports recs through POST /api/import, with the store's
// model's vectors or (half the time) another model's, to be re-embedded.
func (h *harness) importRecs(l *life, recs []memory.Memory, phase string) (*importOp, bool) {
	op := &importOp{recs: recs, model: h.state.model}
	if l.rng.IntN(2) == 0 {
		op.model = "ollama:crash-elsewhere"
	}
	l.led.add(func() { l.led.imports = append(l.led.imports, op) })
	end := l.phase(phase)
	ctx, cancel := l.rctx()
	rep, err := l.p.client.Import(ctx, bytes.NewReader(exportFile(op.model, recs)))
	cancel()
	end()
	if err != nil {
		l.refused("import", err)
		return op, false
	}
	l.led.add(func() { op.acked, op.rep = true, rep })
	return op, true
}

// importRecords is the import activity: a few hundred new records (more
// than one of the store's import batches), with their ids, dates and fields.
func (h *harness) importRecords(l *life) {
	now := time.Now().UTC().Truncate(time.Second)
	var recs []memory.Memory
	for i := 0; i < 100+l.rng.IntN(600); i++ {
		tok := h.texts.token()
		at := now.Add(-time.Duration(l.rng.IntN(1000)) * time.Hour)
		recs = append(recs, memory.Memory{ID: l.rng.hexID(), Text: h.texts.sentence(l.rng, tok), Kind: kinds[l.rng.IntN(len(kinds))],
			Type: types[l.rng.IntN(len(types))], Project: projImport, Source: "import-test", Importance: float64(1+l.rng.IntN(9)) / 10,
			CreatedAt: at, UpdatedAt: at})
	}
	h.importRecs(l, recs, actImport)
}

// stewardGroup is a fresh project for one steward run: pairs of near
// duplicates to merge, stale memories to decay and unimportant old ones
// to prune.
func (h *harness) stewardGroup(l *life, project string) []memory.Memory {
	now := time.Now().UTC().Truncate(time.Second)
	day := 24 * time.Hour
	var recs []memory.Memory
	n := 10 + l.rng.IntN(40)
	for i := 0; i < n; i++ {
		tok := h.texts.token()
		text := fmt.Sprintf("The %s %s worker %s", tok, h.texts.words(l.rng, 8), tok)
		a := memory.Memory{ID: l.rng.hexID(), Text: text, Kind: memory.KindFact, Type: memory.TypeProject, Project: project,
			Source: "import-test", Importance: 0.5, AccessCount: 1, CreatedAt: now.Add(-20 * day), UpdatedAt: now.Add(-20 * day),
			LastAccessed: now.Add(-2 * day)}
		b := a
		b.ID, b.Text, b.AccessCount, b.LastAccessed = l.rng.hexID(), text+".", 0, time.Time{}
		b.CreatedAt, b.UpdatedAt = now.Add(-25*day), now.Add(-25*day)
		recs = append(recs, a, b)
	}
	for i := 0; i < n; i++ {
		old := now.Add(-200 * day)
		imp := 0.5
		if i%2 == 1 {
			imp = 0.02 // pruned
		}
		tok := h.texts.token()
		recs = append(recs, memory.Memory{ID: l.rng.hexID(), Text: fmt.Sprintf("An old note on %s: %s", tok, h.texts.words(l.rng, 9)),
			Kind: memory.KindFact, Type: memory.TypeProject, Project: project, Source: "import-test", Importance: imp,
			CreatedAt: old, UpdatedAt: old})
	}
	return recs
}

// stewardRun imports a fresh group, plans the steward on it, applies the
// plan and, now and then, undoes the run.
func (h *harness) stewardRun(l *life) {
	project := fmt.Sprintf("%s%d", stewardProj, h.texts.n.Add(1))
	if _, ok := h.importRecs(l, h.stewardGroup(l, project), "steward-import"); !ok {
		return
	}
	op := &stewardOp{project: project}
	l.led.add(func() { l.led.stewards = append(l.led.stewards, op) })
	end := l.phase("steward-plan")
	ctx, cancel := l.rctx()
	plan, err := l.p.client.StewardPlan(ctx, steward.PlanOptions{Project: project, Ops: []string{"merge", "decay_stale", "prune"}, FullMerge: true})
	cancel()
	end()
	if err != nil {
		l.refused("steward plan", err)
		return
	}
	l.led.add(func() { op.plan = plan })
	l.led.add(func() { op.applySent = true })
	end = l.phase("steward-apply")
	ctx, cancel = l.rctx()
	res, err := l.p.client.StewardApply(ctx, httpapi.ApplyRequest{PlanID: plan.ID})
	cancel()
	end()
	if err != nil {
		l.refused("steward apply", err)
		return
	}
	l.led.add(func() { op.applied, op.res = true, res })
	if len(res.Applied) == 0 || l.rng.IntN(3) != 0 {
		return
	}
	l.led.add(func() { op.undoSent = true })
	end = l.phase("steward-undo")
	ctx, cancel = l.rctx()
	_, err = l.p.client.StewardUndo(ctx, httpapi.UndoRequest{RunID: res.RunID})
	cancel()
	end()
	if err != nil {
		l.refused("steward undo", err)
		return
	}
	l.led.add(func() { op.undone = true })
}

// reembed switches the store to the other fake model and follows the job.
func (h *harness) reembed(l *life) {
	ctx, cancel := l.rctx()
	info, err := l.p.client.EmbedderInfo(ctx, httpapi.EmbedderQuery{})
	cancel()
	if err != nil {
		l.refused("embedder info", err)
		return
	}
	from := info.StoreModel
	to := "crash-a"
	if from == "ollama:crash-a" {
		to = "crash-b"
	}
	op := &reembedOp{from: from, to: "ollama:" + to}
	l.led.add(func() { l.led.reembeds = append(l.led.reembeds, op) })
	end := l.phase(actReembed)
	defer end()
	ctx, cancel = l.rctx()
	defer cancel()
	j, err := l.p.client.Reembed(ctx, httpapi.ReembedRequest{Provider: "ollama", Model: to})
	if err != nil {
		l.refused("reembed", err)
		return
	}
	l.led.add(func() { op.started, op.job = true, j })
	for l.alive() {
		j, err = l.p.client.Job(ctx, j.ID)
		if err != nil {
			l.refused("reembed job", err)
			return
		}
		if j.Finished() {
			l.led.add(func() { op.job, op.ended, op.done = j, j.State, j.State == httpapi.JobDone })
			if j.State != httpapi.JobDone {
				l.refused("reembed job", fmt.Errorf("job %s: %s", j.State, j.Error))
			}
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// run drives activity act.
func (h *harness) run(l *life, act string) {
	switch act {
	case actIngest:
		h.ingest(l)
	case actAdds:
		h.adds(l)
	case actImport:
		h.importRecords(l)
	case actSteward:
		h.stewardRun(l)
	case actReembed:
		h.reembed(l)
	}
}
