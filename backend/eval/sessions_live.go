package eval

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/memtray/memtray/backend/config"
	"github.com/memtray/memtray/backend/daemon"
	"github.com/memtray/memtray/backend/feed"
	"github.com/memtray/memtray/backend/httpapi"
	"github.com/memtray/memtray/backend/ingest"
	"github.com/memtray/memtray/backend/memory"
	"github.com/memtray/memtray/backend/store"
	"github.com/memtray/memtray/backend/tail"
)

// LiveSessionScore compares, for one session, the live (not superseded)
// memories `memtray ingest` of its file leaves with those capture from
// the growing session file leaves.
type LiveSessionScore struct {
	ID    string `json:"id"`
	Agent string `json:"agent"`
	// Skipped says why the session was not compared (file absent, an
	// agent whose files are not captured live).
	Skipped string `json:"skipped,omitempty"`
	// Hooks are the Stop hooks fired (one per piece of the file written).
	Hooks int `json:"hooks"`
	// Ingest and Live count the live memories of each store; Equal those
	// with the same text in both (as a multiset).
	Ingest int `json:"ingest"`
	Live   int `json:"live"`
	Equal  int `json:"equal"`
	// OnlyIngest and OnlyLive are the texts found in one store only.
	OnlyIngest []string `json:"only_ingest,omitempty"`
	OnlyLive   []string `json:"only_live,omitempty"`
	// TailErrors are reads of the session file that failed; LastError the
	// newest.
	TailErrors int    `json:"tail_errors,omitempty"`
	LastError  string `json:"last_error,omitempty"`
	// Again is what ingesting the session file a second time into the
	// ingest store changed, AfterLive what ingesting it into the live
	// store changed (the history captured live, then imported): both
	// are 0 when every turn decided is replayed.
	Again     Rerun `json:"again"`
	AfterLive Rerun `json:"after_live"`

	// decisions of each daemon, oldest first, for the dump.
	ingestDecisions, liveDecisions []feed.DecisionEntry
}

// Rerun counts what a second run of the write pipeline on the same
// history changed: memories added, removed or changed in any field
// (reinforced, accessed, superseded, revised; their vectors left out),
// and turns decided again instead of replayed (ingest.StageReplay).
type Rerun struct {
	Memories int `json:"memories"`
	Turns    int `json:"turns"`
}

// String is how a table shows r: memories changed / turns decided again.
func (r Rerun) String() string {
	return fmt.Sprintf("%d/%d", r.Memories, r.Turns)
}

// add sums o into r.
func (r *Rerun) add(o Rerun) {
	r.Memories += o.Memories
	r.Turns += o.Turns
}

// LiveReport is the result of RunSessionsLive.
type LiveReport struct {
	Set string `json:"set"`
	// Skipped, when set, says why nothing was compared.
	Skipped  string             `json:"skipped,omitempty"`
	Sessions []LiveSessionScore `json:"sessions"`
	// Equal and Differing sum the sessions' equal memories and the texts
	// found in one store only.
	Equal     int `json:"equal"`
	Differing int `json:"differing"`
	// Again and AfterLive sum the sessions' (LiveSessionScore).
	Again     Rerun   `json:"again"`
	AfterLive Rerun   `json:"after_live"`
	Seconds   float64 `json:"seconds"`
}

// liveAgents are the agents whose session files capture reads live.
var liveAgents = []string{tail.AgentClaudeCode, tail.AgentCodex}

// RunSessionsLive is `memtray eval sessions --live SET.json`: for each
// Claude Code and Codex session of the set, it ingests the session file
// into a daemon on a temporary data dir as RunSessions does, and captures
// it live into a second daemon serving its HTTP API on loopback, whose
// capture from session files watches a temporary folder laid out as the
// agent's (projects/<dir>/<session>.jsonl, sessions/YYYY/MM/DD/rollout-
// *.jsonl): the file is written there a user turn at a time
// (tail.TurnChunks), a Stop hook is sent through the API after each piece
// (as `memtray hook` sends it) and SessionEnd after the last, each read
// waited for. Then it compares the texts of the two stores' live memories.
// Each session gets daemons of its own, so a difference is that session's.
//
// A set file that does not exist gives a report that says so, not an
// error; so does a session whose file is absent.
func RunSessionsLive(ctx context.Context, path string, opts SessionsOptions) (*LiveReport, error) {
	start := time.Now()
	set, err := LoadSessionSet(path)
	if errors.Is(err, fs.ErrNotExist) {
		return &LiveReport{Set: path, Skipped: fmt.Sprintf("skipped: %s not found", path)}, nil
	}
	if err != nil {
		return nil, err
	}
	progress := opts.Progress
	if progress == nil {
		progress = func(string) {}
	}
	rep := &LiveReport{Set: path}
	for i := range set.Sessions {
		ls := &set.Sessions[i]
		sc := LiveSessionScore{ID: ls.ID, Agent: ls.Agent}
		file := filepath.Join(filepath.Dir(path), filepath.FromSlash(ls.File))
		if !slices.Contains(liveAgents, ls.Agent) {
			sc.Skipped = "not captured live: " + ls.Agent
			rep.Sessions = append(rep.Sessions, sc)
			continue
		}
		if _, err := os.Stat(file); err != nil {
			sc.Skipped = "file not found: " + file
			rep.Sessions = append(rep.Sessions, sc)
			continue
		}
		progress(fmt.Sprintf("session %s: ingest, then live", ls.ID))
		if err := compareLive(ctx, &sc, ls, file, opts.TempDir); err != nil {
			return nil, fmt.Errorf("eval sessions --live: session %s: %w", ls.ID, err)
		}
		rep.Equal += sc.Equal
		rep.Differing += len(sc.OnlyIngest) + len(sc.OnlyLive)
		rep.Again.add(sc.Again)
		rep.AfterLive.add(sc.AfterLive)
		if opts.Dump != nil {
			dumpLive(opts.Dump, sc)
		}
		rep.Sessions = append(rep.Sessions, sc)
	}
	if len(rep.Sessions) > 0 && !slices.ContainsFunc(rep.Sessions, func(s LiveSessionScore) bool { return s.Skipped == "" }) {
		rep.Skipped = "skipped: no session of the set is captured live (Claude Code and Codex are), or none of their files was found"
	}
	rep.Seconds = time.Since(start).Seconds()
	return rep, nil
}

// compareLive fills sc for one session file.
func compareLive(ctx context.Context, sc *LiveSessionScore, ls *LabelledSession, file string, tempDir string) error {
	exs, err := readSession(file, ls)
	if err != nil {
		return err
	}
	d, dir, err := openSessionsDaemon(ctx, tempDir, newSteppedClock())
	if err != nil {
		return err
	}
	if _, err := ingestSession(ctx, d, exs); err != nil {
		d.Close()
		os.RemoveAll(dir)
		return err
	}
	want, err := liveMemoryTexts(ctx, d.Store())
	if err == nil {
		sc.ingestDecisions, err = decisions(ctx, d)
	}
	if err == nil {
		sc.Again, err = ingestAgain(ctx, d, exs)
	}
	d.Close()
	os.RemoveAll(dir)
	if err != nil {
		return err
	}
	got, err := captureLive(ctx, sc, ls, file, exs, tempDir)
	if err != nil {
		return err
	}
	sc.Ingest, sc.Live = len(want), len(got)
	sc.Equal, sc.OnlyIngest, sc.OnlyLive = diffTexts(want, got)
	return nil
}

// captureLive writes file into the session folder of a daemon serving on
// loopback, a user turn at a time with a Stop hook after each and
// SessionEnd at the end, and returns the texts of its live memories; then
// it ingests exs (the file read whole) into the same daemon and counts
// what that changed (sc.AfterLive).
func captureLive(ctx context.Context, sc *LiveSessionScore, ls *LabelledSession, file string, exs []memory.Exchange, tempDir string) ([]string, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("read session: %w", err)
	}
	chunks, err := tail.TurnChunks(ls.Agent, data)
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp(tempDir, "memtray-eval-live-")
	if err != nil {
		return nil, fmt.Errorf("temporary dir: %w", err)
	}
	defer os.RemoveAll(dir)
	cfg := config.Default()
	cfg.DataDir = filepath.Join(dir, "data")
	cfg.Listen = "127.0.0.1:0"
	cfg.Embedder.Provider = "builtin"
	cfg.Recall.Skills = false
	claude, codex := filepath.Join(dir, "claude", "projects"), filepath.Join(dir, "codex", "sessions")
	cfg.Capture.Transcripts.Enabled = true
	cfg.Capture.Transcripts.ClaudeCodeDirs = []string{claude}
	cfg.Capture.Transcripts.CodexDirs = []string{codex}
	// Only the hooks end turns: the watcher and the idle timer would end
	// them at moments that depend on the machine's speed.
	cfg.Capture.Transcripts.Poll = config.Duration(time.Hour)
	cfg.Capture.Transcripts.Idle = config.Duration(24 * time.Hour)
	var target string
	if ls.Agent == tail.AgentCodex {
		name := strings.TrimSuffix(filepath.Base(file), ".jsonl")
		if !strings.HasPrefix(name, "rollout-") {
			name = "rollout-" + name
		}
		target = filepath.Join(codex, "2026", "01", "01", name+".jsonl")
	} else {
		target = filepath.Join(claude, "-eval-"+ls.ID, filepath.Base(file))
	}
	if err := os.MkdirAll(filepath.Dir(target), 0o700); err != nil {
		return nil, fmt.Errorf("session folder: %w", err)
	}
	d, err := daemon.Open(ctx, daemon.Options{Config: cfg, Version: "eval", NewID: SeededIDs()})
	if err != nil {
		return nil, fmt.Errorf("open daemon: %w", err)
	}
	defer d.Close()
	sctx, stop := context.WithCancel(ctx)
	addrc, done := make(chan string, 1), make(chan error, 1)
	go func() { done <- d.Serve(sctx, func(a string) { addrc <- a }) }()
	defer func() { stop(); <-done }()
	var addr string
	select {
	case addr = <-addrc:
	case err := <-done:
		return nil, fmt.Errorf("serve: %w", err)
	}
	cl := httpapi.NewClient(addr, d.Token())
	f, err := os.OpenFile(target, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("session file: %w", err)
	}
	defer f.Close()
	session := "" // Codex's hooks name no session: the file's first lines do
	if ls.Agent == tail.AgentClaudeCode {
		session = strings.TrimSuffix(filepath.Base(target), ".jsonl")
	}
	hook := func(event string) error {
		got, err := cl.CaptureTranscript(ctx, httpapi.TranscriptRequest{Path: target, SessionID: session, Event: event, Agent: ls.Agent})
		if err != nil {
			return fmt.Errorf("%s hook: %w", event, err)
		}
		if !got.Queued {
			return fmt.Errorf("%s hook: the daemon's queue is full", event)
		}
		return waitTailed(ctx, d)
	}
	for _, c := range chunks {
		if _, err := f.Write(c); err != nil {
			return nil, fmt.Errorf("write session file: %w", err)
		}
		if err := hook(tail.EventStop); err != nil {
			return nil, err
		}
		sc.Hooks++
	}
	if err := hook(tail.EventSessionEnd); err != nil {
		return nil, err
	}
	st, _ := d.TailStats()
	sc.TailErrors, sc.LastError = st.Errors+st.Invalid, st.LastError
	if sc.liveDecisions, err = decisions(ctx, d); err != nil {
		return nil, err
	}
	texts, err := liveMemoryTexts(ctx, d.Store())
	if err != nil {
		return nil, err
	}
	if sc.AfterLive, err = ingestAgain(ctx, d, exs); err != nil {
		return nil, fmt.Errorf("ingest after live capture: %w", err)
	}
	return texts, nil
}

// ingestSession runs a session's exchanges through d's write pipeline, in
// the batches RunSessions sends, and returns the decisions.
func ingestSession(ctx context.Context, d *daemon.Daemon, exs []memory.Exchange) ([]memory.Decision, error) {
	var out []memory.Decision
	for i := 0; i < len(exs); i += sessionsIngestBatch {
		batch := exs[i:min(i+sessionsIngestBatch, len(exs))]
		got, err := d.Feed().Ingest(ctx, httpapi.IngestRequest{Exchanges: batch})
		if err != nil {
			return nil, fmt.Errorf("ingest: %w", err)
		}
		out = append(out, got.Decisions...)
	}
	return out, nil
}

// ingestAgain ingests exs into d once more and counts what that changed
// in its store and the decisions that were no replay.
func ingestAgain(ctx context.Context, d *daemon.Daemon, exs []memory.Exchange) (Rerun, error) {
	before, err := snapshot(ctx, d.Store())
	if err != nil {
		return Rerun{}, err
	}
	decs, err := ingestSession(ctx, d, exs)
	if err != nil {
		return Rerun{}, err
	}
	after, err := snapshot(ctx, d.Store())
	if err != nil {
		return Rerun{}, err
	}
	var r Rerun
	for id, m := range after {
		if b, ok := before[id]; !ok || !reflect.DeepEqual(b, m) {
			r.Memories++
		}
	}
	for id := range before {
		if _, ok := after[id]; !ok {
			r.Memories++
		}
	}
	for _, dec := range decs {
		if dec.Stage != ingest.StageReplay {
			r.Turns++
		}
	}
	return r, nil
}

// waitTailed waits until the daemon has read every session file handed
// over (a deadline of a few minutes, for a daemon that hangs).
func waitTailed(ctx context.Context, d *daemon.Daemon) error {
	deadline := time.Now().Add(5 * time.Minute)
	for {
		if st, _ := d.TailStats(); st.Queued == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return errors.New("the daemon did not read the session file within 5 minutes")
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(5 * time.Millisecond):
		}
	}
}

// decisions returns the decisions in a daemon's feed, oldest first.
func decisions(ctx context.Context, d *daemon.Daemon) ([]feed.DecisionEntry, error) {
	got, err := d.Feed().Decisions(ctx, 1<<20)
	if err != nil {
		return nil, fmt.Errorf("decisions: %w", err)
	}
	slices.Reverse(got)
	return got, nil
}

// liveMemoryTexts returns the texts of the stored memories that are not
// superseded (snoozed ones too), sorted.
func liveMemoryTexts(ctx context.Context, st *store.Store) ([]string, error) {
	all, err := snapshot(ctx, st)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, m := range all {
		if !m.Superseded() {
			out = append(out, m.Text)
		}
	}
	slices.Sort(out)
	return out, nil
}

// diffTexts compares two sorted multisets of texts: how many are in both,
// and the ones only in a or only in b.
func diffTexts(a, b []string) (equal int, onlyA, onlyB []string) {
	i, j := 0, 0
	for i < len(a) && j < len(b) {
		switch c := strings.Compare(a[i], b[j]); {
		case c == 0:
			equal++
			i++
			j++
		case c < 0:
			onlyA = append(onlyA, a[i])
			i++
		default:
			onlyB = append(onlyB, b[j])
			j++
		}
	}
	return equal, append(onlyA, a[i:]...), append(onlyB, b[j:]...)
}

// dumpLive writes the texts of a session found in one store only.
func dumpLive(w io.Writer, sc LiveSessionScore) {
	fmt.Fprintf(w, "=== session %s (%s): ingest %d, live %d, equal %d\n", sc.ID, sc.Agent, sc.Ingest, sc.Live, sc.Equal)
	for _, t := range sc.OnlyIngest {
		fmt.Fprintf(w, "- ingest only: %s\n", t)
	}
	for _, t := range sc.OnlyLive {
		fmt.Fprintf(w, "+ live only: %s\n", t)
	}
	if len(sc.OnlyIngest)+len(sc.OnlyLive) == 0 {
		return
	}
	for _, side := range []struct {
		name string
		decs []feed.DecisionEntry
	}{{"ingest", sc.ingestDecisions}, {"live", sc.liveDecisions}} {
		fmt.Fprintf(w, "--- %s decisions\n", side.name)
		for _, e := range side.decs {
			kept := 0
			for _, c := range e.Candidates {
				if c.Kept {
					kept++
				}
			}
			fmt.Fprintf(w, "%s (exchange %d) %s %s: %d/%d kept, %d memories: %.160s | %.120s\n", e.TurnLabel(), e.Turn, e.Verdict, e.Stage, kept, len(e.Candidates), len(e.MemoryIDs), e.Reason, strings.ReplaceAll(e.User, "\n", " "))
		}
	}
}

// WriteTable prints the comparison, one session a row.
func (r *LiveReport) WriteTable(w io.Writer) error {
	if r.Skipped != "" {
		_, err := fmt.Fprintln(w, r.Skipped)
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "session\tagent\thooks\tingest\tlive\tequal\tingest only\tlive only\tagain\tafter live\t")
	for _, s := range r.Sessions {
		if s.Skipped != "" {
			fmt.Fprintf(tw, "%s\t%s\t%s\t\t\t\t\t\t\n", s.ID, s.Agent, s.Skipped)
			continue
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\t%d\t%d\t%d\t%s\t%s\t\n", s.ID, s.Agent, s.Hooks, s.Ingest, s.Live, s.Equal, len(s.OnlyIngest), len(s.OnlyLive), s.Again, s.AfterLive)
		if s.TailErrors > 0 {
			fmt.Fprintf(tw, "\t%d failed reads; last: %s\t\t\t\t\t\t\t\n", s.TailErrors, s.LastError)
		}
	}
	fmt.Fprintf(tw, "all\t\t\t\t\t%d\t%d differing\t\t%s\t%s\t\n", r.Equal, r.Differing, r.Again, r.AfterLive)
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintf(w, "%.1f s\n", r.Seconds)
	return err
}
