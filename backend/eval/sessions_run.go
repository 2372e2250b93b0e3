package eval

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"time"

	"github.com/memtray/memtray/backend/config"
	"github.com/memtray/memtray/backend/daemon"
	"github.com/memtray/memtray/backend/httpapi"
	"github.com/memtray/memtray/backend/ingest"
	"github.com/memtray/memtray/backend/memory"
	"github.com/memtray/memtray/backend/search"
	"github.com/memtray/memtray/backend/store"
	"github.com/memtray/memtray/backend/transcript"
)

// SessionsK is the depth of the recall metric: a query is a hit when one of
// the first SessionsK memories the prompt hook gives covers the fact.
const SessionsK = 5

// sessionsIngestBatch is how many exchanges go to the daemon at once: a
// whole session in one request (the daemon reads a request's exchanges as
// all there is of their sessions), up to the most one request may hold.
const sessionsIngestBatch = httpapi.MaxIngestItems

// errReaderMissing: memtray has no reader for a session's format yet.
var errReaderMissing = errors.New("reader missing")

// SessionsOptions configures RunSessions.
type SessionsOptions struct {
	// TempDir is where the temporary data dir is created ("" = the
	// system's); it is removed at the end.
	TempDir string
	// Progress, if set, is told what the run is doing (one line each).
	Progress func(msg string)
	// Dump, if set, gets a readable listing for reading the run by hand:
	// each session's live memories with the facts and traps they cover,
	// the facts no memory covers, each with where its text went (the
	// statements of the session's decisions that held its keys and what
	// became of them, or that no captured text held them), and what each
	// unrelated prompt got.
	Dump io.Writer
	// Evidence, if set, gets a JSON line (EvidenceRecord) per recall asked:
	// every relevant query, every unrelated prompt with no project and in
	// each project, with the query-level evidence test's numbers; the dump
	// ends with their distributions side by side.
	Evidence io.Writer
	// ProbeIdentifiers, when set, asks the identifier probe
	// (IdentifierProbe) once every other figure is measured: prompts
	// naming a rare identifier one memory holds, asked in its project.
	ProbeIdentifiers bool
	// SweepDays, when above 0, lets that many days pass once every row is
	// measured, with the steward sweeping every hour as the daemon's
	// schedule does (its plan and apply, the default config), and then
	// measures the rows again (SessionsReport.AfterSweep); see sweep.
	SweepDays int
	// SweepApply lists the operations the sweeps apply; nil applies the
	// config's steward.auto_apply, what the scheduled sweep applies by
	// itself (merge and prune wait for the user then).
	SweepApply []string
	// SweepUse simulates, before the sweeps (once the first pass is
	// measured: its rows do not move), the implicit feedback of the
	// turns that would have followed the first pass's recalls
	// (recall.Service.Used; the set's sessions hold no memtray recall, so
	// no real turn follows one): UseNone (or "") none, the lower bound;
	// UseGold reinforces each memory of a query's first SessionsK that
	// covers the query's fact, the upper bound (the agent used every
	// right memory given and wrote what it names); UseTokens those of
	// them with a usable token (recall.UsableTokens) the query does not
	// hold, what the mechanism could see at best.
	SweepUse string
}

// The simulations of SessionsOptions.SweepUse.
const (
	UseNone   = "none"
	UseGold   = "gold"
	UseTokens = "tokens"
)

// RunSessions is `memtray eval sessions SET.json`: it ingests each session
// of the set, in order, into a real daemon opened in-process on a temporary
// data dir with the default config (built-in embedder, no judge; agent
// skills off, they are not memories and would read the user's home),
// through the daemon's entry point of `memtray ingest` (daemon.Ingest, a
// whole session per request, sessions in set order); then it scores
// the memories stored and asks every fact's queries the way the
// UserPromptSubmit hook does (daemon.Recall, floors on, a fresh recall
// session per query).
//
// A session's memories are the memories its ingest created or whose text it
// changed, still stored and not superseded once every session is in. A
// fact counts as covered only by memories of its own session: a later
// session's memory that happens to repeat it is not what this session
// taught memtray. Recall is asked with the project memtray gave most of the
// session's memories (else the project of its exchanges); a given memory of
// any session that covers the fact is a hit, and an uncovered fact's
// queries are misses without being asked. Unrelated prompts are asked with
// no project; an answer with no memory is a success.
//
// A set file that does not exist gives a report that says so (Skipped),
// not an error; so does a set none of whose session files exists. A
// session whose file is absent or whose agent has no reader yet is skipped
// and counted.
func RunSessions(ctx context.Context, path string, opts SessionsOptions) (*SessionsReport, error) {
	start := time.Now()
	set, err := LoadSessionSet(path)
	if errors.Is(err, fs.ErrNotExist) {
		return &SessionsReport{Set: path, Skipped: fmt.Sprintf("skipped: %s not found", path)}, nil
	}
	if err != nil {
		return nil, err
	}
	r := &sessionsRun{opts: opts, rep: &SessionsReport{Set: path}, progress: opts.Progress, unrelatedPrompts: set.UnrelatedPrompts}
	if r.progress == nil {
		r.progress = func(string) {}
	}
	if err := r.load(set, path); err != nil {
		return nil, err
	}
	if len(r.todo) == 0 && len(r.missing) > 0 && len(r.missing) == len(set.Sessions) {
		r.rep.Skipped = fmt.Sprintf("skipped: %s not found", r.missing[0])
		return r.rep, nil
	}
	if opts.SweepDays < 0 {
		return nil, fmt.Errorf("eval sessions: sweep days %d: want 0 or more", opts.SweepDays)
	}
	if !slices.Contains([]string{"", UseNone, UseGold, UseTokens}, opts.SweepUse) {
		return nil, fmt.Errorf("eval sessions: sweep use %q: want %s, %s or %s", opts.SweepUse, UseNone, UseGold, UseTokens)
	}
	clock := newSteppedClock()
	d, dir, err := openSessionsDaemon(ctx, opts.TempDir, clock)
	if err != nil {
		return nil, err
	}
	defer func() {
		d.Close()
		os.RemoveAll(dir)
	}()
	r.d, r.clock = d, clock
	for _, step := range []func(context.Context) error{r.ingest, r.score, r.unrelated} {
		if err := step(ctx); err != nil {
			return nil, err
		}
	}
	if opts.ProbeIdentifiers {
		if err := r.probeIdentifiers(ctx); err != nil {
			return nil, err
		}
	}
	r.rep.overall(r.all, r.covering, r.trapping)
	r.rep.Seconds = time.Since(start).Seconds()
	if opts.SweepDays > 0 {
		if err := r.afterSweep(ctx); err != nil {
			return nil, err
		}
	}
	return r.rep, nil
}

// sessionsRun is one run of RunSessions: its steps (load, ingest, score,
// unrelated) fill it in order.
type sessionsRun struct {
	opts     SessionsOptions
	rep      *SessionsReport
	progress func(string)
	d        *daemon.Daemon
	clock    *steppedClock
	// pass, when set, goes into every recall session id: the rows
	// measured again after the sweep must not find memories given to the
	// same query's session in the first pass.
	pass string

	unrelatedPrompts []string

	todo    []loadedSession // the sessions read, in set order
	missing []string        // session files not found

	touched         map[string][]string // session id -> the memories its ingest wrote
	exchangeProject map[string]string   // session id -> its exchanges' project
	final           map[string]memory.Memory

	all      map[string]memory.Memory // every session's live memories, once
	covering map[string]bool          // ... that cover a fact of a session that wrote them
	trapping map[string]bool          // ... that cover a trap of a session that wrote them

	evidence []EvidenceRecord // every recall asked (logEvidence)
	used     []string         // the memories simulateUse noted, once per recall

	trails map[string]*sessionTrail // session id -> what its ingest decided, for the dump
}

// loadedSession is a labelled session and its exchanges.
type loadedSession struct {
	ls  *LabelledSession
	exs []memory.Exchange // the valid ones
	// runs are exs cut where a skipped invalid exchange began a user turn
	// (ingest.SkipInvalid), sent one after the other.
	runs [][]memory.Exchange
}

// load reads every session file of the set, noting the sessions skipped
// (file absent, no reader for the agent) in the report.
func (r *sessionsRun) load(set *SessionSet, path string) error {
	for i := range set.Sessions {
		ls := &set.Sessions[i]
		file := filepath.Join(filepath.Dir(path), filepath.FromSlash(ls.File))
		exs, err := readSession(file, ls)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			r.missing = append(r.missing, file)
			r.rep.Sessions = append(r.rep.Sessions, SessionScore{ID: ls.ID, Agent: ls.Agent, Skipped: "file not found: " + file})
			continue
		case errors.Is(err, errReaderMissing):
			r.rep.Sessions = append(r.rep.Sessions, SessionScore{ID: ls.ID, Agent: ls.Agent, Skipped: "reader missing for " + ls.Agent})
			continue
		case err != nil:
			return fmt.Errorf("eval sessions: session %s: %w", ls.ID, err)
		}
		runs, skipped := ingest.SkipInvalid(exs)
		sc := SessionScore{ID: ls.ID, Agent: ls.Agent}
		if len(skipped) > 0 {
			exs = slices.Concat(runs...)
			for _, s := range skipped {
				sc.InvalidExchanges = append(sc.InvalidExchanges, s.String())
			}
			r.progress(fmt.Sprintf("session %s: %s", ls.ID, ingest.SkippedLine(skipped)))
		}
		r.todo = append(r.todo, loadedSession{ls, exs, runs})
		r.rep.Sessions = append(r.rep.Sessions, sc)
	}
	return nil
}

// ingest sends the sessions to the daemon in order, noting which memories
// each one wrote (created, or changed the text of).
func (r *sessionsRun) ingest(ctx context.Context) error {
	r.touched, r.exchangeProject, r.trails = map[string][]string{}, map[string]string{}, map[string]*sessionTrail{}
	prev, err := snapshot(ctx, r.d.Store())
	if err != nil {
		return err
	}
	for _, l := range r.todo {
		r.progress(fmt.Sprintf("ingesting %s: %d exchanges", l.ls.ID, len(l.exs)))
		trail := &sessionTrail{exs: l.exs}
		r.trails[l.ls.ID] = trail
		for _, run := range l.runs {
			for i := 0; i < len(run); i += sessionsIngestBatch {
				batch := run[i:min(i+sessionsIngestBatch, len(run))]
				resp, err := r.d.Feed().Ingest(ctx, httpapi.IngestRequest{Exchanges: batch})
				if err != nil {
					return fmt.Errorf("eval sessions: ingest %s: %w", l.ls.ID, err)
				}
				if r.opts.Dump != nil {
					trail.note(batch, resp.Decisions)
				}
			}
		}
		cur, err := snapshot(ctx, r.d.Store())
		if err != nil {
			return err
		}
		for id, m := range cur {
			if p, ok := prev[id]; !ok || p.Text != m.Text {
				r.touched[l.ls.ID] = append(r.touched[l.ls.ID], id)
			}
		}
		prev = cur
		r.exchangeProject[l.ls.ID] = mostCommon(l.exs, func(ex memory.Exchange) string { return ex.Project })
	}
	r.final = prev
	return nil
}

// score scores each session on its memories as they stand at the end, and
// asks every covered fact's queries the way the prompt hook asks them.
func (r *sessionsRun) score(ctx context.Context) error {
	r.all, r.covering, r.trapping = map[string]memory.Memory{}, map[string]bool{}, map[string]bool{}
	var asks []asked
	for _, l := range r.todo {
		sc := r.rep.session(l.ls.ID)
		live, project := r.liveMemories(l.ls.ID)
		texts := memoryTexts(live)
		covered := scoreSession(sc, l.ls, texts, len(l.exs), project)
		if r.opts.Dump != nil {
			mine := map[string]bool{}
			for _, m := range live {
				mine[m.ID] = true
			}
			state := memoryState(r.final, mine)
			dumpSession(r.opts.Dump, l.ls, live, covered, func(f Fact) string { return r.trails[l.ls.ID].went(f, state) })
		}
		for _, m := range live {
			r.all[m.ID] = m
			lower := lowerTexts([]string{m.Text})
			if slices.ContainsFunc(l.ls.Facts, func(f Fact) bool { return coversLower(lower[0], f.Keys) }) {
				r.covering[m.ID] = true
			}
			if slices.ContainsFunc(l.ls.Traps, func(t Trap) bool { return trapCoversLower(lower[0], t.Keys) }) {
				r.trapping[m.ID] = true
			}
		}
		asks = append(asks, asked{sc, l.ls, covered, project})
	}
	// Every probe before the first query that records accesses: each
	// probe finds the store as ingest left it.
	for _, a := range asks {
		if err := r.probe(ctx, a.sc, a.ls, a.covered, a.project); err != nil {
			return err
		}
		a.sc.RecallAt5Probe = ratio(a.sc.QueryHitsProbe, a.sc.Queries)
	}
	if err := r.elsewhere(ctx, asks); err != nil {
		return err
	}
	for _, a := range asks {
		r.progress(fmt.Sprintf("recall %s: %d queries", a.ls.ID, a.sc.Queries))
		if err := r.recall(ctx, a.sc, a.ls, a.covered, a.project); err != nil {
			return err
		}
		a.sc.RecallAt5 = ratio(a.sc.QueryHits, a.sc.Queries)
	}
	return nil
}

// asked is what a session's queries are asked with: its score, its labels,
// which of its facts are covered and its project.
type asked struct {
	sc      *SessionScore
	ls      *LabelledSession
	covered []bool
	project string
}

// probe asks the queries of a session's covered facts as recall does,
// recording no access (search.RecallRequest.Unrecorded), and counts the
// hits in the first SessionsK.
func (r *sessionsRun) probe(ctx context.Context, sc *SessionScore, ls *LabelledSession, covered []bool, project string) error {
	return r.ask(ctx, ls, covered, project, "", true, func(f Fact, _ string, got search.Recalled, hit bool) error {
		if hit {
			sc.QueryHitsProbe++
			if userPreference(f) {
				sc.UserPrefInProjectHits++
			}
		}
		return nil
	})
}

// userPreference reports whether a fact is a preference the user stated:
// how they like to work, which should follow them to every project.
func userPreference(f Fact) bool { return f.Where == WhereUser && f.Kind == KindPreference }

// userPrefQueries is the number of queries of a session's user
// preferences (userPreference), covered or not: the fixed query set of
// the user-preference rows, in which an uncovered preference's queries
// count as misses, as they do in R@5.
func userPrefQueries(ls *LabelledSession) int {
	n := 0
	for _, f := range ls.Facts {
		if userPreference(f) {
			n += len(f.Queries)
		}
	}
	return n
}

// elsewhere asks the queries of each session's covered user preferences
// (userPreference) from outside the session's project, as probes that
// record no access: once with no project, and once from each other
// project the sessions' memories went to, and counts the hits in the
// first SessionsK. The queries counted are every user preference's
// (userPrefQueries), so the rows' denominators do not move with coverage.
// The recall asks nothing else and records nothing, so every other figure
// stays as it is.
func (r *sessionsRun) elsewhere(ctx context.Context, asks []asked) error {
	projects := map[string]bool{}
	for _, a := range asks {
		if a.project != "" {
			projects[a.project] = true
		}
	}
	for _, a := range asks {
		sc := a.sc
		n := userPrefQueries(a.ls)
		if n == 0 {
			continue
		}
		sc.UserPrefQueries, sc.UserPrefNoProjectQueries = n, n
		prefs := slices.Clone(a.covered)
		for i, f := range a.ls.Facts {
			prefs[i] = prefs[i] && userPreference(f)
		}
		err := r.ask(ctx, a.ls, prefs, "", "noproject", true, func(_ Fact, _ string, _ search.Recalled, hit bool) error {
			if hit {
				sc.UserPrefNoProjectHits++
			}
			return nil
		})
		if err != nil {
			return err
		}
		for _, proj := range slices.Sorted(maps.Keys(projects)) {
			if proj == a.project {
				continue
			}
			sc.UserPrefOtherProjectQueries += n
			err := r.ask(ctx, a.ls, prefs, proj, "in-"+proj, true, func(_ Fact, _ string, _ search.Recalled, hit bool) error {
				if hit {
					sc.UserPrefOtherProjectHits++
				}
				return nil
			})
			if err != nil {
				return err
			}
		}
	}
	return nil
}

// liveMemories returns the memories a session wrote that are still stored
// and not superseded, and the project recall is asked with: the one
// memtray gave most of the memories it wrote, else its exchanges'.
func (r *sessionsRun) liveMemories(id string) ([]memory.Memory, string) {
	ids := r.touched[id]
	sort.Strings(ids)
	var live, written []memory.Memory
	for _, mid := range ids {
		m, ok := r.final[mid]
		if !ok {
			continue // deleted since
		}
		written = append(written, m)
		if !m.Superseded() {
			live = append(live, m)
		}
	}
	project := mostCommon(written, func(m memory.Memory) string { return m.Project })
	if project == "" {
		project = r.exchangeProject[id]
	}
	return live, project
}

// recall asks the queries of a session's covered facts, each in a recall
// session of its own, and counts the hits in the first SessionsK.
func (r *sessionsRun) recall(ctx context.Context, sc *SessionScore, ls *LabelledSession, covered []bool, project string) error {
	return r.ask(ctx, ls, covered, project, "", false, func(f Fact, q string, got search.Recalled, hit bool) error {
		if err := r.logEvidence(EvidenceRecord{Kind: EvidenceRelevant, Session: ls.ID, Fact: f.ID, Query: q, Project: project,
			Hit: hit, Given: len(got.Hits), Evidence: got.Evidence}); err != nil {
			return err
		}
		r.simulateUse(f, q, got)
		if hit {
			sc.QueryHits++
		} else if r.opts.Dump != nil {
			dumpMiss(r.opts.Dump, ls.ID, f, q, got, r.final)
		}
		return nil
	})
}

// ask asks each query of a session's covered facts the way the prompt
// hook asks it (floors on, a recall session of its own, the session's
// project), as a probe that records no access when probe is set, and
// hands each answer to got with whether one of its first SessionsK
// memories covers the fact. tag, when set, goes into the recall sessions'
// ids: a pass that asks the same queries again must not find its
// memories already given to the session of an earlier pass.
func (r *sessionsRun) ask(ctx context.Context, ls *LabelledSession, covered []bool, project, tag string, probe bool,
	got func(f Fact, q string, rec search.Recalled, hit bool) error) error {
	prefix := "eval"
	if probe {
		prefix = "eval-probe"
	}
	if tag != "" {
		prefix += "-" + tag
	}
	if r.pass != "" {
		prefix += "-" + r.pass
	}
	for i, f := range ls.Facts {
		if !covered[i] {
			continue
		}
		for j, q := range f.Queries {
			rec, err := r.d.Services().Recaller.Recall(ctx, search.RecallRequest{SessionID: fmt.Sprintf("%s-%s-%s-%d", prefix, ls.ID, f.ID, j+1),
				Prompt: q, Project: project, Event: search.EventPrompt, Unrecorded: probe, AllWithheld: !probe && r.opts.Dump != nil})
			if err != nil {
				return fmt.Errorf("eval sessions: recall %s %s: %w", ls.ID, f.ID, err)
			}
			if err := got(f, q, rec, hitCovers(hitTexts(rec.Hits), f.Keys, SessionsK)); err != nil {
				return err
			}
		}
	}
	return nil
}

// unrelated asks the set's unrelated prompts with no current project; an
// answer with no memory is a success.
func (r *sessionsRun) unrelated(ctx context.Context) error {
	o := &r.rep.Overall
	prompts := r.unrelatedPrompts
	r.progress(fmt.Sprintf("unrelated prompts: %d", len(prompts)))
	o.UnrelatedPrompts = len(prompts)
	for i, p := range prompts {
		got, err := r.d.Services().Recaller.Recall(ctx, search.RecallRequest{SessionID: fmt.Sprintf("eval-%sunrelated-%d", r.passTag(), i+1), Prompt: p, Event: search.EventPrompt})
		if err != nil {
			return fmt.Errorf("eval sessions: recall unrelated prompt %d: %w", i+1, err)
		}
		if err := r.logEvidence(EvidenceRecord{Kind: EvidenceUnrelated, Query: p, Given: len(got.Hits), Evidence: got.Evidence}); err != nil {
			return err
		}
		if len(got.Hits) == 0 {
			o.UnrelatedEmpty++
		}
		if r.opts.Dump != nil {
			dumpUnrelated(r.opts.Dump, p, got)
		}
	}
	o.UnrelatedEmptyRate = ratio(o.UnrelatedEmpty, o.UnrelatedPrompts)
	projects := map[string]bool{}
	for _, l := range r.todo {
		if _, p := r.liveMemories(l.ls.ID); p != "" {
			projects[p] = true
		}
	}
	for _, proj := range slices.Sorted(maps.Keys(projects)) {
		for i, p := range prompts {
			got, err := r.d.Services().Recaller.Recall(ctx, search.RecallRequest{SessionID: fmt.Sprintf("eval-%sunrelated-%s-%d", r.passTag(), proj, i+1), Prompt: p, Project: proj, Event: search.EventPrompt,
				AllWithheld: r.opts.Dump != nil})
			if err != nil {
				return fmt.Errorf("eval sessions: recall unrelated prompt %d in %s: %w", i+1, proj, err)
			}
			o.UnrelatedInProject++
			if err := r.logEvidence(EvidenceRecord{Kind: EvidenceUnrelatedInProject, Query: p, Project: proj, Given: len(got.Hits), Evidence: got.Evidence}); err != nil {
				return err
			}
			if len(got.Hits) == 0 {
				o.UnrelatedInProjectEmpty++
			} else if r.opts.Dump != nil {
				dumpUnrelatedInProject(r.opts.Dump, proj, p, got)
			}
		}
	}
	o.UnrelatedInProjectEmptyRate = ratio(o.UnrelatedInProjectEmpty, o.UnrelatedInProject)
	if r.opts.Dump != nil {
		dumpEvidenceDistributions(r.opts.Dump, r.evidence)
	}
	return nil
}

// scoreSession fills sc with the coverage, precision, traps and length
// figures of a session whose live memories have texts, and returns which
// facts are covered; it counts the queries (sc.Queries) but asks none.
func scoreSession(sc *SessionScore, ls *LabelledSession, texts []string, exchanges int, project string) []bool {
	covered := factCoverage(ls.Facts, texts)
	sc.Project = project
	sc.Exchanges = exchanges
	sc.UserTurns = ls.UserTurns
	sc.Facts = len(ls.Facts)
	for _, c := range covered {
		if c {
			sc.Covered++
		}
	}
	sc.Coverage = ratio(sc.Covered, sc.Facts)
	sc.Memories = len(texts)
	sc.MemoriesCovering = coveringMemories(ls.Facts, texts)
	sc.Precision = ratio(sc.MemoriesCovering, sc.Memories)
	sc.MemoriesPerTurn = ratio(sc.Memories, sc.UserTurns)
	sc.Traps = len(ls.Traps)
	sc.TrapsStored, sc.TrapMemories = trapsKept(ls.Traps, texts)
	sc.TrapsStoredSubstring = trapsKeptSubstring(ls.Traps, texts)
	sc.CoverageByWhere = coverageByWhere(ls.Facts, covered)
	lens := runeLengths(texts)
	sc.LengthP50, sc.LengthP90 = percentile(lens, 50), percentile(lens, 90)
	for i, f := range ls.Facts {
		sc.Queries += len(f.Queries)
		if !covered[i] {
			sc.Uncovered = append(sc.Uncovered, f.ID)
		}
	}
	return covered
}

// openSessionsDaemon opens a daemon on a new temporary data dir with the
// default config, the built-in embedder and no agent skills, on a
// steppedClock: its scores depend on what the run did, never on how long
// it took.
func openSessionsDaemon(ctx context.Context, tempDir string, clock *steppedClock) (*daemon.Daemon, string, error) {
	dir, err := os.MkdirTemp(tempDir, "memtray-eval-sessions-")
	if err != nil {
		return nil, "", fmt.Errorf("eval sessions: temporary data dir: %w", err)
	}
	cfg := config.Default()
	cfg.DataDir = dir
	cfg.Listen = "127.0.0.1:0"
	cfg.Embedder.Provider = "builtin"
	cfg.Recall.Skills = false
	// The sessions come from the set; the user's own live sessions under
	// ~/.claude and ~/.codex must not reach the temporary store.
	cfg.Capture.Transcripts.Enabled = false
	d, err := daemon.Open(ctx, daemon.Options{Config: cfg, Version: "eval", NewID: SeededIDs(), Clock: clock})
	if err != nil {
		os.RemoveAll(dir)
		return nil, "", fmt.Errorf("eval sessions: open daemon: %w", err)
	}
	return d, dir, nil
}

// readSession reads a session file in the format its agent names
// (transcript.ParseFormat: claude-code, codex, aider, cursor...) into
// exchanges. Aider and SpecStory histories, which name no working
// directory, get the set's project, as `memtray ingest --project` would
// give them: the sets keep copies of them in folders of their own (aider/,
// cursor/), whose names the histories would otherwise be filed under.
func readSession(path string, ls *LabelledSession) ([]memory.Exchange, error) {
	if _, err := os.Stat(path); err != nil {
		return nil, err
	}
	format, err := transcript.ParseFormat(ls.Agent)
	if err != nil {
		return nil, errReaderMissing
	}
	var opts transcript.Options
	if format == transcript.FormatAider || format == transcript.FormatSpecStory {
		opts.Project = ls.Project
	}
	exs, _, err := transcript.ParseFileAs(path, format, opts)
	if err != nil {
		return nil, err // it names the file
	}
	return exs, nil
}

// snapshot returns every stored memory (superseded and snoozed ones too)
// by id.
func snapshot(ctx context.Context, st *store.Store) (map[string]memory.Memory, error) {
	out := map[string]memory.Memory{}
	err := st.Iterate(ctx, store.Filter{IncludeSnoozed: true, IncludeSuperseded: true}, func(m memory.Memory) error {
		m.Embedding = nil
		out[m.ID] = m
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("eval sessions: list memories: %w", err)
	}
	return out, nil
}

// mostCommon returns the most frequent non-empty key of xs (the smallest
// on a tie), "" for none.
func mostCommon[T any](xs []T, key func(T) string) string {
	n := map[string]int{}
	for _, x := range xs {
		if k := key(x); k != "" {
			n[k]++
		}
	}
	best := ""
	for k, c := range n {
		if c > n[best] || (c == n[best] && k < best) {
			best = k
		}
	}
	return best
}

// hitTexts returns the texts of recall hits, best first.
func hitTexts(hits []memory.Hit) []string {
	out := make([]string, len(hits))
	for i := range hits {
		out[i] = hits[i].Memory.Text
	}
	return out
}
