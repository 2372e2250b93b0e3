package tail

import (
	"bytes"
	"context"
	"errors"
	"fmt"

	"github.com/memtray/memtray/backend/memory"
	"github.com/memtray/memtray/backend/project"
	"github.com/memtray/memtray/backend/transcript"
)

// region is what one stretch of complete lines holds.
type region struct {
	exchanges []memory.Exchange
	prompts   int // real user prompts in it
}

func (r region) join(o region) region {
	return region{exchanges: append(r.exchanges, o.exchanges...), prompts: r.prompts + o.prompts}
}

// lastBoundary is the offset in data of the last line after the first
// that may begin a turn (0: none). The lines that begin before from are
// known to hold none (a read of the same stretch found none): they are
// not looked at again.
func lastBoundary(data []byte, boundary func([]byte) bool, from int) int {
	end := len(data)
	for end > 0 {
		start := bytes.LastIndexByte(data[:end-1], '\n') + 1
		if start == 0 || start < from {
			return 0
		}
		if boundary(bytes.TrimSpace(data[start:end])) {
			return start
		}
		end = start
	}
	return 0
}

// parse reads complete lines that begin at c.Offset (or right after the
// stretch parsed before them) and labels their exchanges the way a read of
// the whole file would: the session, project and headless flag of the
// file's first read, turns and user turns numbered on from the cursor's.
func (t *Tailer) parse(fm format, c *Cursor, req Request, data []byte) (region, error) {
	if len(bytes.TrimSpace(data)) == 0 {
		return region{}, nil
	}
	exs, st, err := fm.parse(bytes.NewReader(data), transcript.Options{SessionID: c.SessionID, Project: c.Project, Headless: c.Headless})
	if errors.Is(err, transcript.ErrNotTranscript) {
		return region{}, nil // only lines that are not JSON objects: nothing in them
	}
	if err != nil {
		return region{}, fmt.Errorf("read transcript %s: %w", c.Path, err)
	}
	// The labels come from the file's first lines; the hook's and the
	// file name are for a file whose lines name no session.
	if c.SessionID == "" && (st.SessionID != "" || len(exs) > 0) {
		c.SessionID = firstOf(st.SessionID, req.SessionID, transcript.SessionIDFromPath(c.Path))
	}
	if c.CWD == "" && (st.CWD != "" || len(exs) > 0) {
		c.CWD = firstOf(st.CWD, req.CWD)
	}
	if c.Project == "" && (st.Project != "" || len(exs) > 0) {
		c.Project = st.Project
		if c.Project == "" && c.CWD != "" {
			c.Project = transcript.ProjectName(c.CWD)
		}
	}
	if c.CWD != "" && c.Project == project.DirName(c.CWD) {
		c.Project = transcript.ProjectName(c.CWD) // a label of the rule before repositories
	}
	c.Headless = c.Headless || st.Headless
	base, turns := c.Exchanges, c.UserTurns
	if p := c.parsed; p != nil {
		base += len(p.exchanges)
		turns += p.prompts
	}
	for i := range exs {
		ex := &exs[i]
		ex.SessionID, ex.Project = c.SessionID, c.Project
		ex.Headless = ex.Headless || c.Headless
		ex.Turn += base
		ex.UserTurns += turns
	}
	r := region{exchanges: exs, prompts: st.UserPrompts}
	c.parsed = &r
	return r, nil
}

func firstOf(s ...string) string {
	for _, v := range s {
		if v != "" {
			return v
		}
	}
	return ""
}

// splitTurns groups exchanges into turns: each begins with an exchange
// that is not a tool-loop iteration (or the first one).
func splitTurns(exs []memory.Exchange) [][]memory.Exchange {
	var out [][]memory.Exchange
	for i, ex := range exs {
		if i == 0 || !ex.ToolLoop {
			out = append(out, nil)
		}
		out[len(out)-1] = append(out[len(out)-1], ex)
	}
	return out
}

// capture hands the turns of r to the sink, one at a time, skipping those
// stored already, and records each turn stored.
func (t *Tailer) capture(ctx context.Context, c *Cursor, r region) error {
	for _, turn := range splitTurns(r.exchanges) {
		fp := Fingerprint(turn[0])
		if c.Seen == nil {
			c.Seen = map[string]int{}
		}
		c.Seen[fp]++
		key := occurrenceKey(fp, c.Seen[fp])
		if err := t.ledger.wait(ctx, c.SessionID, key); err != nil { // the proxy's copy decides
			return err
		}
		seen, err := t.ledger.has(c.SessionID, key)
		if err != nil {
			return err
		}
		if seen {
			t.count(func(s *Stats) { s.Duplicates++ })
			continue
		}
		if t.opts.Allow != nil && !t.opts.Allow(turn[0], c.CWD) {
			t.count(func(s *Stats) { s.NotAllowed++ })
			continue
		}
		if err := t.opts.Sink(ctx, turn); err != nil {
			if !errors.Is(err, memory.ErrInvalid) {
				return fmt.Errorf("store a turn of %s: %w", c.Path, err)
			}
			t.log.Warn("a turn of a transcript was refused by the write pipeline: skipped", "file", c.Path, "turn", turn[0].Turn, "err", err)
			t.count(func(s *Stats) { s.Invalid++ })
		} else {
			t.count(func(s *Stats) { s.Turns++; s.Exchanges += len(turn) })
		}
		if err := t.ledger.add(c.SessionID, key); err != nil {
			return err
		}
	}
	return nil
}

// occurrenceKey names the n-th turn of a session that begins with
// fingerprint fp (from 1) in the ledger: fp itself for the first (the
// key of ledgers written before turns were counted), fp and n for the
// next ones, which are other turns of the session, never the first read
// again. The session file's path counts n in the file (Cursor.Seen), the
// capture proxy in the request's history (memory.Exchange.Occurrence;
// TurnKey), so a turn either took is skipped by the other.
func occurrenceKey(fp string, n int) string {
	if n <= 1 {
		return fp
	}
	return hashHex(fmt.Appendf(nil, "%s#%d", fp, n))[:32]
}

func (t *Tailer) count(f func(*Stats)) {
	t.mu.Lock()
	f(&t.stats)
	t.mu.Unlock()
}
