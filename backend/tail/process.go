package tail

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
)

// process reads j's file from its cursor and captures the turns that have
// ended, a chunk at a time, saving the cursor after each.
func (t *Tailer) process(ctx context.Context, j job) error {
	f, err := os.Open(j.req.Path)
	if errors.Is(err, os.ErrNotExist) {
		t.forget(j.req.Path)
		return nil // a session file removed: nothing left to read
	}
	if err != nil {
		return fmt.Errorf("open transcript: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return fmt.Errorf("stat transcript: %w", err)
	}
	if !fi.Mode().IsRegular() {
		return fmt.Errorf("transcript %s is not a regular file", j.req.Path)
	}
	id, err := readIdentity(f, fi)
	if err != nil {
		return err
	}
	t.mu.Lock()
	var c Cursor
	old, ok := t.tracked[j.req.Path]
	if ok {
		c = *old
		c.Seen = maps.Clone(old.Seen) // counted on below; the tracked copy changes at commit
	}
	t.mu.Unlock()
	if ok {
		same, err := c.sameFile(f, id, fi.Size())
		if err != nil {
			return err
		}
		if !same {
			t.log.Info("transcript truncated or replaced: reading it again from the start", "file", j.req.Path)
			c = Cursor{Resets: c.Resets + 1}
			t.mu.Lock()
			t.stats.Resets++
			t.mu.Unlock()
		}
	}
	if c.Path == "" {
		c.Path, c.Agent = j.req.Path, j.req.Agent
		if c.Agent == "" {
			c.Agent = AgentClaudeCode
		}
	}
	if c.HeadLen < HeadBytes || c.HeadHash == "" {
		c.HeadLen, c.HeadHash = id.headLen, id.headHash
	}
	c.Dev, c.Ino = id.dev, id.ino
	fm, ok := formats[c.Agent]
	if !ok {
		return fmt.Errorf("transcript %s: %s session files are not read yet", c.Path, c.Agent)
	}
	size := fi.Size()
	if t.takeLoaded(j.req.Path) && c.Offset > 0 && c.Offset <= size {
		t.resume(ctx, f, c, fm, j.req)
	}
	for {
		c.parsed = nil
		if ok, err := t.pendingGrew(f, &c, fm, j.final, size); err != nil || ok {
			if err != nil {
				return err
			}
			break
		}
		data, more, skip, err := t.readLines(f, c.Offset, size)
		if err != nil {
			return err
		}
		if skip > 0 {
			t.fail(fmt.Errorf("transcript %s: the line at byte %d is longer than %d bytes: skipped", c.Path, c.Offset, t.opts.MaxChunk))
			c.Offset, c.LineEnd = skip, max(c.LineEnd, skip)
			continue
		}
		if len(data) == 0 {
			break
		}
		end := c.Offset + int64(len(data))
		// A turn not ended yet is read again from its start at an event
		// that may end it (an event that cannot reads only the new lines:
		// pendingGrew); the lines an earlier read found no prompt in are
		// not decoded again (a long turn would cost its size at each poll).
		from := 0
		if c.noBoundaryFrom == c.Offset && c.noBoundaryTo > c.Offset && c.noBoundaryTo <= end {
			from = int(c.noBoundaryTo - c.Offset)
		}
		// The turns before the last prompt have ended; what the lines
		// after the last of their responses carry (a compaction summary,
		// a command) is the next turn's, read with it.
		cut := lastBoundary(data, fm.boundary, from)
		if cut == 0 {
			c.noBoundaryFrom, c.noBoundaryTo = c.Offset, end
		}
		cut = heldFrom(data[:cut], fm)
		if cut == 0 && more {
			cut = len(data) // a turn longer than a chunk: take what there is
		}
		done, err := t.parse(fm, &c, j.req, data[:cut])
		if err != nil {
			return err
		}
		if !more && cut < len(data) && j.final {
			held := cut + heldFrom(data[cut:], fm)
			rest, err := t.parse(fm, &c, j.req, data[cut:held])
			if err != nil {
				return err
			}
			// Stop fires when the agent stops answering; a last response
			// that called a tool is still waiting for its result (or the
			// line that ends it is not written yet): leave it to the
			// next event or the idle timer, which ends it. The session's
			// end ends it too.
			// A prompt not answered yet stays pending, whatever the
			// event: its answer may still come (a resumed session).
			last := len(rest.exchanges) - 1
			if last >= 0 && (j.req.Event != EventStop || len(rest.exchanges[last].ToolCalls) == 0) {
				done = done.join(rest)
				cut = held
			}
		}
		if err := t.capture(ctx, &c, done); err != nil {
			return err
		}
		c.Offset += int64(cut)
		c.LineEnd = max(c.LineEnd, end, c.Offset)
		c.Exchanges += len(done.exchanges)
		c.UserTurns += done.prompts
		if err := t.commit(&c, fi, size); err != nil {
			return err
		}
		if !more {
			break
		}
	}
	if j.req.Event == EventIdle {
		c.IdleDone = fi.ModTime()
	}
	return t.commit(&c, fi, size)
}

// pendingGrew reads, for an event that does not end the pending turn (not
// final), only the lines after those an earlier read found no prompt in
// (Cursor.noBoundaryTo), where the loop of process would read the whole
// turn again from c.Offset for nothing: a long turn would cost its size at
// every poll. ok is true when none of the new lines may begin a turn
// either: the turn is still pending, and c is moved on as process moves it
// then (noBoundaryTo and LineEnd at the end of the new lines). ok is false
// when a new line may begin a turn, or when the mark does not apply (then
// process reads from c.Offset as before).
func (t *Tailer) pendingGrew(f *os.File, c *Cursor, fm format, final bool, size int64) (ok bool, err error) {
	if final || c.noBoundaryFrom != c.Offset || c.noBoundaryTo <= c.Offset || c.noBoundaryTo > size || size-c.Offset > int64(t.opts.MaxChunk) {
		return false, nil
	}
	data, _, _, err := t.readLines(f, c.noBoundaryTo, size)
	if err != nil {
		return false, err
	}
	for pos, end := 0, 0; pos < len(data); pos = end {
		end = lineEnd(data, pos)
		if fm.boundary(bytes.TrimSpace(data[pos:end])) {
			return false, nil
		}
	}
	c.noBoundaryTo += int64(len(data))
	c.LineEnd = max(c.LineEnd, c.noBoundaryTo, c.Offset)
	return true, nil
}

// commit saves c and makes it the file's cursor.
func (t *Tailer) commit(c *Cursor, fi os.FileInfo, size int64) error {
	c.Size, c.ModTime = size, fi.ModTime()
	if err := t.cursors.save(c); err != nil {
		return err
	}
	cp := *c
	t.mu.Lock()
	t.tracked[c.Path] = &cp
	t.mu.Unlock()
	return nil
}

// forget drops a removed file's cursor.
func (t *Tailer) forget(path string) {
	t.mu.Lock()
	_, ok := t.tracked[path]
	delete(t.tracked, path)
	t.mu.Unlock()
	if ok {
		os.Remove(t.cursors.file(path))
	}
}

// readLines reads the complete lines from off on, at most MaxChunk bytes
// of them; more says that the chunk was cut short by MaxChunk. A line
// longer than MaxChunk is reported with skip, the offset after it (0
// while its end is not written yet).
func (t *Tailer) readLines(f *os.File, off, size int64) (data []byte, more bool, skip int64, err error) {
	if off >= size {
		return nil, false, 0, nil
	}
	n := min(size-off, int64(t.opts.MaxChunk))
	t.readBytes.Add(n)
	buf := make([]byte, n)
	if _, err := f.ReadAt(buf, off); err != nil && !errors.Is(err, io.EOF) {
		return nil, false, 0, fmt.Errorf("read transcript %s: %w", f.Name(), err)
	}
	if i := bytes.LastIndexByte(buf, '\n'); i >= 0 {
		return buf[:i+1], n == int64(t.opts.MaxChunk) && off+n < size, 0, nil
	}
	if n < int64(t.opts.MaxChunk) {
		return nil, false, 0, nil // a half-written last line: next time
	}
	for pos := off + n; pos < size; {
		m := min(size-pos, 1<<20)
		t.readBytes.Add(m)
		if _, err := f.ReadAt(buf[:m], pos); err != nil && !errors.Is(err, io.EOF) {
			return nil, false, 0, fmt.Errorf("read transcript %s: %w", f.Name(), err)
		}
		if i := bytes.IndexByte(buf[:m], '\n'); i >= 0 {
			return nil, false, pos + int64(i) + 1, nil
		}
		pos += m
	}
	return nil, false, 0, nil
}

// maxResumeBytes bounds what resume reads of a file before its cursor: a
// longer one is not resumed (the pipeline keeps less of a session's
// recent turns than that in any case).
const maxResumeBytes = 32 << 20

// takeLoaded reports whether path's cursor was read from disk and its
// turns before it are not resumed yet, and marks them resumed.
func (t *Tailer) takeLoaded(path string) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	ok := t.loaded[path]
	delete(t.loaded, path)
	return ok
}

// resume hands the ended turns of f before c's offset (captured by an
// earlier process) to Options.Resume, numbered as their capture numbered
// them: read from the start of the file with c's labels, all in one
// call (the pipeline reads again only those the session's next turns can
// reach). Nothing is counted or recorded; a failure is logged.
func (t *Tailer) resume(ctx context.Context, f *os.File, c Cursor, fm format, req Request) {
	if t.opts.Resume == nil {
		return
	}
	if c.Offset > maxResumeBytes {
		t.log.Info("transcript resumed past its first bytes: its earlier turns are not read again", "file", c.Path, "offset", c.Offset)
		return
	}
	buf := make([]byte, c.Offset)
	t.readBytes.Add(c.Offset)
	if _, err := f.ReadAt(buf, 0); err != nil && !errors.Is(err, io.EOF) {
		t.log.Warn("transcript's earlier turns not read again", "file", c.Path, "err", err)
		return
	}
	sc := Cursor{Path: c.Path, Agent: c.Agent, SessionID: c.SessionID, Project: c.Project, Headless: c.Headless, CWD: c.CWD}
	r, err := t.parse(fm, &sc, req, buf)
	if err != nil {
		t.log.Warn("transcript's earlier turns not read again", "file", c.Path, "err", err)
		return
	}
	if turns := splitTurns(r.exchanges); len(turns) > 0 {
		if err := t.opts.Resume(ctx, turns); err != nil {
			t.log.Warn("a transcript's earlier turns not read again", "file", c.Path, "turns", len(turns), "err", err)
		}
	}
}
