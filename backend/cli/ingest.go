package cli

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/memtray/memtray/backend/agentsetup"
	"github.com/memtray/memtray/backend/httpapi"
	"github.com/memtray/memtray/backend/ingest"
	"github.com/memtray/memtray/backend/memory"
	"github.com/memtray/memtray/backend/transcript"
)

// ingestBatchBytes bounds the text of one request (the API takes at most
// httpapi.MaxIngestBody).
const ingestBatchBytes = 24 << 20

// exchangeOverhead is what an exchange's JSON adds to its text, roughly.
const exchangeOverhead = 512

// ingestBatches cuts exchanges into requests. The daemon reads a request's
// exchanges as all there is of their sessions (turns are distilled knowing
// what the session said later, a headless session is judged by the turns
// it reaches), so a request holds whole sessions; only a session larger
// than a request (httpapi.MaxIngestItems exchanges or maxBytes of text) is
// cut, and then between two user turns.
func ingestBatches(exs []memory.Exchange, maxBytes int) [][]memory.Exchange {
	var out [][]memory.Exchange
	start, size := 0, 0
	lastCut := -1 // the last place in the current batch where a session or turn starts
	for i, ex := range exs {
		n := ex.Size() + exchangeOverhead
		if i > start && (ex.SessionID != exs[i-1].SessionID || ingest.StartsTurn(ex)) {
			lastCut = i
		}
		if i > start && (i-start >= httpapi.MaxIngestItems || size+n > maxBytes) {
			cut := i
			if lastCut > start {
				cut = lastCut
			}
			out = append(out, exs[start:cut])
			start, size, lastCut = cut, 0, -1
			for _, e := range exs[start:i] {
				size += e.Size() + exchangeOverhead
			}
		}
		size += n
	}
	if start < len(exs) {
		out = append(out, exs[start:])
	}
	return out
}

// maxIngestFile bounds one input file.
const maxIngestFile = 256 << 20

// IngestReport is what `memtray ingest` prints for one input.
type IngestReport struct {
	File string `json:"file"`
	// As is how the input was read: an agent's session format
	// (claude-code, codex, aider, specstory), exchanges or document.
	As string `json:"as"`
	// Transcript is the parser's account of an agent's session.
	Transcript *transcript.Stats `json:"transcript,omitempty"`
	Exchanges  int               `json:"exchanges"`
	// Skipped lists the exchanges left out because they failed validation
	// (ingest.Validate): the rest of the input was ingested.
	Skipped []ingest.Skipped `json:"skipped,omitempty"`
	// Warning says why the input yielded nothing to ingest.
	Warning string `json:"warning,omitempty"`
	// Verdicts counts decisions by verdict; RejectedBy rejections by stage.
	Verdicts   map[string]int `json:"verdicts"`
	RejectedBy map[string]int `json:"rejected_by"`
	// Memories counts memories written (stored or updated); Duplicates the
	// exchanges that only reinforced a memory already there.
	Memories   int `json:"memories"`
	Duplicates int `json:"duplicates"`
	// Distinct counts the memories those writes went to: fewer than
	// Memories when a turn wrote again a memory an earlier one wrote
	// (the same statement said twice). It is what `memtray list` can show.
	Distinct int `json:"distinct_memories"`
	// written is the set Distinct counts.
	written map[string]struct{}
	// Refiled counts the memories of no project filed under the input's
	// project: an input ingested before when its project could not be
	// told (memory.Decision.Refiled).
	Refiled int `json:"refiled,omitempty"`
	// RefiledUnder names the projects they were filed under, sorted.
	RefiledUnder []string `json:"refiled_under,omitempty"`
	// Decisions lists every decision (--details).
	Decisions []memory.Decision `json:"decisions,omitempty"`
}

// errNothingToIngest: no input yielded an exchange or a document.
var errNothingToIngest = errors.New("nothing to ingest: no input yielded an exchange or a document")

// ingestAs lists the values of --as.
const ingestAs = "auto, transcript, claude-code, codex, aider, specstory, exchanges or document"

func runIngest(env *Env, args []string) error {
	var c common
	fs := newFlags("ingest", env, &c, true)
	as := fs.String("as", "auto", "read inputs as: auto (an agent session if the content is one (Claude Code, Codex, Aider, SpecStory), else a document; an unrecognised .jsonl yields nothing), "+
		"transcript (any agent session), claude-code, codex, aider, specstory, exchanges (JSONL of exchange objects), document")
	project := fs.String("project", "", "project of the memories (default: a session's working directory, else the repository or folder the history sits in, for Aider/SpecStory histories, exchanges and documents)")
	headless := fs.Bool("headless", false, "the sessions are headless (print mode, codex exec)")
	sidechains := fs.Bool("sidechains", false, "include the subagent conversations of Claude Code sessions (and their subagents/ files)")
	details := fs.Bool("details", false, "print every decision")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) == 0 {
		return usagef("give FILE... to ingest, or - for stdin")
	}
	var forced transcript.Format
	switch *as {
	case "auto", "transcript", "exchanges", "document":
	default:
		f, err := transcript.ParseFormat(*as) // also "cursor", "claude"
		if err != nil {
			return usagef("--as must be %s", ingestAs)
		}
		forced = f
	}
	opts := transcript.Options{Project: *project, Headless: *headless, Sidechains: *sidechains}
	// Check every input before anything is sent (it exists, can be read,
	// its format is known), cheaply: only stdin is kept. Each file is read,
	// parsed and sent in its turn, and let go before the next, so a history
	// of gigabytes takes the memory of its largest file, not of all of them.
	var inputs []ingestInput
	candidates := 0
	for _, name := range pos {
		in, err := checkIngestInput(env, name, *as, forced)
		if err != nil {
			return &invalidInputError{name: name, err: err, inputs: len(pos)}
		}
		if in.warning != "" {
			fmt.Fprintf(env.Stderr, "memtray ingest: warning: %s: %s\n", name, in.warning)
		} else {
			candidates++
		}
		inputs = append(inputs, in)
	}
	if candidates == 0 {
		return errNothingToIngest
	}
	if err := validateInputs(inputs, *project, opts); err != nil {
		return err
	}
	return c.with(env, func(svc httpapi.Services) error {
		var reports []IngestReport
		yielded := 0
		for i := range inputs {
			in := &inputs[i]
			req, runs, skipped, stats, err := in.load(env.Stderr, *project, opts)
			if err != nil {
				return partialIngest(err, inputs[:i], c.flagsForHint())
			}
			in.data = nil // stdin's: parsed, let go
			if in.warning != "" && stats != nil {
				fmt.Fprintf(env.Stderr, "memtray ingest: warning: %s: %s\n", in.name, in.warning)
			}
			if in.warning == "" {
				yielded++
			}
			rep := IngestReport{File: in.name, As: in.as, Transcript: stats, Exchanges: len(req.Exchanges), Skipped: skipped, Warning: in.warning,
				Verdicts: map[string]int{}, RejectedBy: map[string]int{}}
			var decs []memory.Decision
			for _, run := range runs {
				for _, batch := range ingestBatches(run, ingestBatchBytes) {
					resp, err := svc.Feed.Ingest(env.Ctx, httpapi.IngestRequest{Exchanges: batch})
					if err != nil {
						return partialIngest(fmt.Errorf("%s: %w", in.name, err), inputs[:i], c.flagsForHint())
					}
					decs = append(decs, resp.Decisions...)
				}
			}
			if len(req.Documents) > 0 {
				resp, err := svc.Feed.Ingest(env.Ctx, httpapi.IngestRequest{Documents: req.Documents})
				if err != nil {
					return partialIngest(fmt.Errorf("%s: %w", in.name, err), inputs[:i], c.flagsForHint())
				}
				decs = append(decs, resp.Decisions...)
			}
			for _, d := range decs {
				rep.add(d)
			}
			if *details {
				rep.Decisions = decs
			}
			reports = append(reports, rep)
			if !c.json {
				// As each input is done: a day's history takes minutes.
				writeIngestReport(env.Stdout, rep, *details)
			}
		}
		if yielded == 0 {
			return errNothingToIngest
		}
		if c.json {
			return printJSON(env.Stdout, reports)
		}
		writeIngestTotal(env.Stdout, reports, c.flagsForHint())
		return nil
	})
}

// add counts decision d: its verdict, the stage that rejected it, the
// memories it wrote (and which) or the duplicate it was.
func (r *IngestReport) add(d memory.Decision) {
	r.Verdicts[string(d.Verdict)]++
	r.addRefiled(d)
	switch d.Verdict {
	case memory.VerdictRejected:
		r.RejectedBy[d.Stage]++
	case memory.VerdictStored, memory.VerdictUpdated:
		r.Memories += len(d.MemoryIDs)
		if r.written == nil {
			r.written = map[string]struct{}{}
		}
		for _, id := range d.MemoryIDs {
			r.written[id] = struct{}{}
		}
		r.Distinct = len(r.written)
	case memory.VerdictMerged, memory.VerdictDuplicate:
		r.Duplicates++
	}
}

// writtenNote says how many memories the writes went to, when some went to
// the same one: "memories written 41" beside a `memtray list` of 38 reads
// as memories lost.
func writtenNote(writes, distinct int) string {
	if distinct == 0 || distinct >= writes {
		return ""
	}
	return fmt.Sprintf(" (%d distinct: later turns said some again)", distinct)
}

// addRefiled counts the memories d filed under its project.
func (r *IngestReport) addRefiled(d memory.Decision) {
	if d.Refiled == 0 {
		return
	}
	r.Refiled += d.Refiled
	if p := d.RefiledUnder; p != "" && !slices.Contains(r.RefiledUnder, p) {
		r.RefiledUnder = append(r.RefiledUnder, p)
		slices.Sort(r.RefiledUnder)
	}
}

// refiledNote is the summary line's account of the memories re-filed:
// they were of no project, an earlier ingest of the same input having
// had none.
func (r *IngestReport) refiledNote() string {
	if r.Refiled == 0 {
		return ""
	}
	under := ""
	if len(r.RefiledUnder) > 0 {
		under = " under " + strings.Join(r.RefiledUnder, ", ")
	}
	noun := "memories"
	if r.Refiled == 1 {
		noun = "memory"
	}
	return fmt.Sprintf(", re-filed %d %s%s (ingested before with no project)", r.Refiled, noun, under)
}

// detectBytes is how much of a file's head format detection reads (as
// transcript.Detect does).
const detectBytes = 1 << 20

// ingestInput is one input of `memtray ingest`, checked but not yet read
// whole (except stdin, which cannot be read twice).
type ingestInput struct {
	name string
	// as is how it is read: a transcript format, exchanges, document, or
	// unknown (with a warning).
	as      string
	format  transcript.Format
	data    []byte // stdin's content; nil for a file
	warning string
}

// checkIngestInput checks an input cheaply before anything is sent: the
// file exists and can be read, is not a directory, not too large, and its
// format is detected from its head (as: --as; forced: the format --as
// names).
func checkIngestInput(env *Env, name, as string, forced transcript.Format) (ingestInput, error) {
	in := ingestInput{name: name, as: as, format: forced}
	var head []byte
	size := int64(-1)
	if name == "-" {
		data, err := readInput(env, name)
		if err != nil {
			return in, err
		}
		in.data, head, size = data, data, int64(len(data))
	} else {
		h, n, err := readHead(name, detectBytes)
		if err != nil {
			return in, err
		}
		head, size = h, n
	}
	switch as {
	case "auto", "transcript":
		f, err := transcript.Detect(head)
		switch {
		case err == nil:
			in.format = f
		case as == "transcript" || strings.EqualFold(filepath.Ext(name), ".jsonl"):
			in.warning = "format not recognised: not a Claude Code, Codex, Aider or SpecStory session"
		default:
			in.as = "document"
		}
	}
	switch {
	case in.warning != "":
		in.as = "unknown"
	case in.format != "":
		in.as = string(in.format)
	case in.as == "document":
		if size > ingest.MaxTextBytes {
			return in, fmt.Errorf("%s: a document must be at most 1 MiB of UTF-8 text; it holds %d bytes (cut it into parts, or give an agent's session file as it is)", name, size)
		}
		if err := documentError(name, head); err != nil {
			return in, err
		}
	}
	return in, nil
}

// readHead opens a file input (openInput's checks) and returns its first
// max bytes and its size.
func readHead(name string, max int) ([]byte, int64, error) {
	f, size, err := openInput(name)
	if err != nil {
		return nil, 0, err
	}
	defer f.Close()
	head, err := io.ReadAll(io.LimitReader(f, int64(max)))
	if err != nil {
		return nil, 0, fmt.Errorf("read %s: %w", name, err)
	}
	return head, size, nil
}

// openInput opens a file input of `memtray ingest` and checks it before
// a byte is read: not a directory (the message says which of its files to
// give) and not larger than maxIngestFile. It returns the open file, which
// the caller closes, and its size. readHead and readInput both open their
// files through it.
func openInput(name string) (*os.File, int64, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, 0, err
	}
	fi, err := f.Stat()
	switch {
	case err != nil:
		err = fmt.Errorf("read %s: %w", name, err)
	case fi.IsDir():
		err = fmt.Errorf("%s is a directory: give the session files in it (memtray ingest %s)", name, sessionGlob(name))
	case fi.Size() > maxIngestFile:
		err = errTooLarge(name)
	}
	if err != nil {
		f.Close()
		return nil, 0, err
	}
	return f, fi.Size(), nil
}

// errTooLarge is the error of an input larger than maxIngestFile.
func errTooLarge(name string) error {
	return fmt.Errorf("%s: larger than %d MiB", name, maxIngestFile>>20)
}

// load reads the input whole and parses it into the request that ingests
// it (project: --project), with the parser's account of an agent's
// session. An input with a warning yields an empty request; a session
// without an exchange gets one.
//
// An exchange that fails ingest.Validate is left out and listed in
// skipped; the others are returned in req.Exchanges and, cut where a
// skipped exchange began a user turn, in runs (ingest.SkipInvalid), to be
// sent run by run.
func (in *ingestInput) load(notes io.Writer, project string, opts transcript.Options) (req httpapi.IngestRequest, runs [][]memory.Exchange, skipped []ingest.Skipped, stats *transcript.Stats, err error) {
	if in.warning != "" {
		return req, nil, nil, nil, nil
	}
	data := in.data
	if data == nil {
		if data, err = readFile(in.name); err != nil {
			return req, nil, nil, nil, err
		}
	}
	switch {
	case in.format != "":
		exs, st, err := transcript.ParseBytes(in.name, data, in.format, opts)
		if err != nil {
			return req, nil, nil, nil, err // names the file
		}
		req.Exchanges, stats = exs, &st
		if len(exs) == 0 {
			in.warning = "no exchange: " + st.Empty()
		} else if st.Project == "" {
			// Not an error, but what it makes belongs to no project: its
			// user preferences are recalled in every project, the rest
			// only where no project is current.
			why := st.ProjectNote
			if why == "" {
				why = "the session names no working directory, and stdin has no folder"
			}
			fmt.Fprintf(notes, "memtray ingest: note: %s: no project found (%s): "+
				"its memories belong to no project (its user preferences are recalled in every project, the rest only outside projects); pass --project NAME to file them under one\n", in.name, why)
		} else if st.ProjectNote != "" {
			fmt.Fprintf(notes, "memtray ingest: note: %s: %s (--project NAME files it under another)\n", in.name, st.ProjectNote)
		}
	case in.as == "exchanges":
		exs, err := parseExchanges(data, documentProject(in.name, project))
		if err != nil {
			return req, nil, nil, nil, fmt.Errorf("%s: %w", in.name, err)
		}
		if n := countNoProject(exs); n > 0 {
			fmt.Fprintf(notes, "memtray ingest: note: %s: %s of no project (stdin has no folder): "+
				"their memories belong to no project (their user preferences are recalled in every project, the rest only outside projects); pass --project NAME to file them under one\n", in.name, nOf(n, "exchange"))
		}
		// Counted over the whole input, the prompts of a session
		// without user_turns are numbered in every batch sent, not
		// only in the one that holds its start (ingest.CountPrompts).
		req.Exchanges = ingest.CountPrompts(exs)
	case in.as == "document":
		if err := documentError(in.name, data); err != nil {
			return req, nil, nil, nil, err
		}
		docName := filepath.Base(in.name)
		if in.name == "-" {
			docName = "stdin"
		}
		req.Documents = []httpapi.Document{{Name: docName, Text: string(data), Project: documentProject(in.name, project)}}
	}
	runs, skipped = ingest.SkipInvalid(req.Exchanges)
	if len(skipped) > 0 {
		req.Exchanges = slices.Concat(runs...)
		if len(req.Exchanges) == 0 && in.warning == "" {
			in.warning = "no valid exchange: " + ingest.SkippedLine(skipped)
		}
	}
	return req, runs, skipped, stats, nil
}

// documentProject is the project of a document input: --project, else the
// repository (or, outside one, the folder) holding the file, as an Aider
// history's; "" for stdin, which has no place.
func documentProject(name, flag string) string {
	if flag != "" || name == "-" {
		return flag
	}
	abs, err := filepath.Abs(name)
	if err != nil {
		return ""
	}
	return transcript.ProjectName(filepath.Dir(abs))
}

// flagsForHint are the --data-dir and --config a command suggested to the
// user needs to reach the same store as this one: " --data-dir DIR", or
// "" for the defaults. It reads the config file once.
func (c *common) flagsForHint() string {
	cfg, fileDataDir, err := c.loadFile()
	if err != nil {
		return ""
	}
	flags, err := agentsetup.FlagsFor(cfg.DataDir, cfg.File, fileDataDir)
	if err != nil {
		return ""
	}
	var b strings.Builder
	for _, f := range flags {
		b.WriteString(" " + agentsetup.ShellQuote(f))
	}
	return b.String()
}

// nOf is n and the noun, plural unless n is 1 ("1 turn", "3 turns").
func nOf(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// writeIngestTotal sums the reports up, when there are several, and says
// where to look at the result (with flags, the data dir and config of the
// store it went into).
func writeIngestTotal(w io.Writer, reports []IngestReport, flags string) {
	if len(reports) > 1 {
		var memories, duplicates, rejected, refiled int
		written := map[string]struct{}{}
		for _, r := range reports {
			memories += r.Memories
			for id := range r.written {
				written[id] = struct{}{}
			}
			duplicates += r.Duplicates
			rejected += r.Verdicts[string(memory.VerdictRejected)]
			refiled += r.Refiled
		}
		more := ""
		if refiled > 0 {
			more = fmt.Sprintf(", re-filed %d", refiled)
		}
		fmt.Fprintf(w, "total: %d inputs, memories written %d%s, duplicates avoided %d, rejected %d%s\n", len(reports), memories, writtenNote(memories, len(written)), duplicates, rejected, more)
	}
	if !wroteAny(reports) {
		// "see them" of nothing: say where the reasons are instead.
		fmt.Fprintf(w, "nothing was stored: why each exchange was rejected, with `memtray ingest%s --details FILE...` or in the window's Live feed\n", flags)
		return
	}
	fmt.Fprintf(w, "see them with `memtray list%s` or `memtray search%s QUERY`, why each was kept or rejected with `memtray decisions%s`, or in the window's Memories and Live feed\n",
		flags, flags, flags)
}

// wroteAny says whether any report wrote a memory or found one already
// there (a duplicate reinforces it): something `memtray list` shows.
func wroteAny(reports []IngestReport) bool {
	for _, r := range reports {
		if r.Memories > 0 || r.Duplicates > 0 {
			return true
		}
	}
	return false
}

// readInput reads a file (openInput's checks), or stdin for "-", whole
// and bounded by maxIngestFile.
func readInput(env *Env, name string) ([]byte, error) {
	if name != "-" {
		return readFile(name)
	}
	return readAllBounded(env.Stdin, name)
}

// readFile reads a file input whole (openInput's checks), bounded by
// maxIngestFile.
func readFile(name string) ([]byte, error) {
	f, _, err := openInput(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readAllBounded(f, name)
}

// readAllBounded reads r (the input name) whole, failing when it holds
// more than maxIngestFile.
func readAllBounded(r io.Reader, name string) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r, maxIngestFile+1))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", name, err)
	}
	if len(data) > maxIngestFile {
		return nil, errTooLarge(name) // stdin, or a file that grew
	}
	return data, nil
}

// sessionGlob is the shell pattern naming the session files under dir:
// the depth and extension (.jsonl or .md) most of them have, within four
// levels (~/.claude/projects/*/*.jsonl, ~/.codex/sessions/*/*/*/*.jsonl,
// .specstory/history/*.md), leaving out Claude Code's subagents/ folders
// (--sidechains reads those) and memory/ files (import-claude's); dir/*
// when it holds none.
func sessionGlob(dir string) string {
	type kind struct {
		depth int
		ext   string
	}
	seen := map[kind]int{}
	best, bestN := kind{1, ""}, 0
	visited := 0
	filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if visited++; visited > 20000 {
			return filepath.SkipAll // a home or root directory: what was seen is enough
		}
		if err != nil {
			return nil // unreadable: not where the sessions are
		}
		rel, _ := filepath.Rel(dir, path)
		depth := len(strings.Split(rel, string(filepath.Separator)))
		switch {
		case d.IsDir() && path != dir && (depth >= 4 || d.Name() == "subagents" || d.Name() == "memory"):
			return filepath.SkipDir
		case d.IsDir() || !d.Type().IsRegular():
			return nil
		}
		ext := strings.ToLower(filepath.Ext(path))
		if ext != ".jsonl" && ext != ".md" {
			return nil
		}
		k := kind{depth, ext}
		if seen[k]++; seen[k] > bestN || (seen[k] == bestN && k.ext == ".jsonl" && best.ext != ".jsonl") {
			best, bestN = k, seen[k]
		}
		return nil
	})
	return filepath.Join(dir, strings.Repeat("*"+string(filepath.Separator), best.depth-1)+"*"+best.ext)
}

// parseExchanges reads JSON Lines of memory.Exchange objects; unknown
// fields and malformed lines are errors naming the line. An exchange
// without a project gets project (--project, else the folder of the file:
// documentProject); one without a source gets memory.SourceTranscript:
// exchanges are a session's record, read from a file like an agent's
// session, so what they make reaches other projects as a session's
// memories do (search.scope), not as a memory added on purpose.
func parseExchanges(data []byte, project string) ([]memory.Exchange, error) {
	var out []memory.Exchange
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
	n := 0
	for sc.Scan() {
		n++
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		var ex memory.Exchange
		dec := json.NewDecoder(bytes.NewReader(line))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&ex); err != nil {
			return nil, fmt.Errorf("line %d: %w", n, err)
		}
		if ex.Project == "" {
			ex.Project = project
		}
		if ex.Source == "" {
			ex.Source = memory.SourceTranscript
		}
		out = append(out, ex)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("line %d: %w", n+1, err)
	}
	if len(out) == 0 {
		return nil, errors.New("no exchanges")
	}
	return out, nil
}

// countNoProject counts the exchanges of no project.
func countNoProject(exs []memory.Exchange) int {
	n := 0
	for _, ex := range exs {
		if ex.Project == "" {
			n++
		}
	}
	return n
}

// shownSkips is how many skipped exchanges the report names without
// --details.
const shownSkips = 3

func writeIngestReport(w io.Writer, r IngestReport, details bool) {
	fmt.Fprintf(w, "%s (%s)\n", r.File, r.As)
	if t := r.Transcript; t != nil {
		sessions := ""
		if t.Sessions > 1 {
			sessions = fmt.Sprintf("%d sessions, first ", t.Sessions)
		}
		fmt.Fprintf(w, "  %s session: %s, %s, %s, %ssession %s, project %q\n",
			t.Format, nOf(t.Lines, "line"), nOf(t.UserPrompts, "user prompt"), nOf(t.ToolLoops, "tool-loop iteration"), sessions, t.SessionID, t.Project)
		if t.Cut > 0 {
			fmt.Fprintf(w, "  oversize content cut in %s (tool results to %d KiB, texts to 1 MiB; marked in the text)\n", nOf(t.Cut, "exchange"), memory.MaxToolResultBytes>>10)
		}
	}
	if r.Warning != "" {
		fmt.Fprintf(w, "  warning: %s\n", r.Warning)
	}
	if n := len(r.Skipped); n > 0 && r.Exchanges > 0 { // none valid: the warning says so
		line := ingest.SkippedLine(r.Skipped)
		if !details && n > shownSkips {
			shown := make([]string, shownSkips)
			for i, s := range r.Skipped[:shownSkips] {
				shown[i] = s.String()
			}
			line = fmt.Sprintf("skipped %d exchanges: %s; and %d more (--details lists them)", n, strings.Join(shown, "; "), n-shownSkips)
		}
		fmt.Fprintf(w, "  %s (the rest of the file was ingested)\n", line)
	}
	// The pipeline decides a user turn with its tool-loop iterations once:
	// the verdicts count turns, not exchanges.
	decided := 0
	for _, n := range r.Verdicts {
		decided += n
	}
	switch {
	case r.As == "document":
		fmt.Fprint(w, "  document: ")
	case decided != r.Exchanges:
		fmt.Fprintf(w, "  exchanges %d, decided as %s: ", r.Exchanges, nOf(decided, "turn"))
	default:
		fmt.Fprintf(w, "  exchanges %d: ", r.Exchanges)
	}
	var parts []string
	for _, v := range []memory.Verdict{memory.VerdictStored, memory.VerdictUpdated, memory.VerdictMerged, memory.VerdictDuplicate, memory.VerdictRejected} {
		if n := r.Verdicts[string(v)]; n > 0 {
			parts = append(parts, fmt.Sprintf("%s %d", v, n))
		}
	}
	fmt.Fprintln(w, strings.Join(parts, ", "))
	if len(r.RejectedBy) > 0 {
		stages := make([]string, 0, len(r.RejectedBy))
		for s := range r.RejectedBy {
			stages = append(stages, s)
		}
		order := append(slices.Clone(ingest.PreJudgeStages), ingest.StageJudge, ingest.StageChunk)
		slices.SortFunc(stages, func(a, b string) int { return slices.Index(order, a) - slices.Index(order, b) })
		parts = parts[:0]
		for _, s := range stages {
			parts = append(parts, fmt.Sprintf("%s %d", s, r.RejectedBy[s]))
		}
		fmt.Fprintf(w, "  rejected by: %s\n", strings.Join(parts, ", "))
	}
	fmt.Fprintf(w, "  memories written %d%s, duplicates avoided %d%s\n", r.Memories, writtenNote(r.Memories, r.Distinct), r.Duplicates, r.refiledNote())
	for _, d := range r.Decisions {
		fmt.Fprintf(w, "    %-13s %-18s %-10s %s | %s\n", d.TurnLabel(), d.Verdict, d.Stage, oneLineWholeIDs(d.Reason, 70), oneLine(d.Preview, 60))
	}
}

// runDecisions is `memtray decisions [--limit N]`: the running daemon's
// recent write-pipeline decisions, newest first.
func runDecisions(env *Env, args []string) error {
	var c common
	fs := newFlags("decisions", env, &c, true)
	limit := fs.Int("limit", 20, "how many decisions, newest first")
	if _, err := parse(fs, args); err != nil {
		return err
	}
	if *limit < 1 || *limit > 10000 {
		return usagef("--limit must be within 1..10000")
	}
	return c.with(env, func(svc httpapi.Services) error {
		ds, err := svc.Feed.Decisions(env.Ctx, *limit)
		if err != nil {
			return err
		}
		if c.json {
			return printJSON(env.Stdout, ds)
		}
		if len(ds) == 0 {
			fmt.Fprintln(env.Stdout, "no decisions yet (the log lives in the running daemon)")
			return nil
		}
		for _, d := range ds {
			fmt.Fprintf(env.Stdout, "%s  %-18s %-10s %s | %s\n", d.ID, d.Verdict, d.Stage, oneLineWholeIDs(d.Reason, 60), oneLine(d.Preview, 50))
		}
		return nil
	})
}

// runKeep is `memtray keep DECISION_ID`: store a rejected exchange.
func runKeep(env *Env, args []string) error {
	c, id, err := parseID(env, "keep", args, true)
	if err != nil {
		return err
	}
	return c.with(env, func(svc httpapi.Services) error {
		d, err := svc.Feed.Keep(env.Ctx, id)
		if err != nil {
			return err
		}
		if c.json {
			return printJSON(env.Stdout, d)
		}
		fmt.Fprintf(env.Stdout, "%s: %s (%s)\n", d.Verdict, strings.Join(d.MemoryIDs, ", "), d.Reason)
		return nil
	})
}

// runMarkNoise is `memtray mark-noise MEMORY_ID`: move a memory to the
// trash (restorable) and teach the noise model its text.
func runMarkNoise(env *Env, args []string) error {
	c, id, err := parseID(env, "mark-noise", args, false)
	if err != nil {
		return err
	}
	return c.with(env, func(svc httpapi.Services) error {
		if err := svc.Feed.MarkNoise(env.Ctx, id); err != nil {
			return err
		}
		fmt.Fprintf(env.Stdout, "moved %s to the trash; the noise model learns from it (`memtray trash restore%s %s` brings it back and unlearns it)\n", id, c.flagsForHint(), id)
		return nil
	})
}
