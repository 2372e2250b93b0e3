package tail

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// DefaultPoll is how often Watch looks at the session folders.
const DefaultPoll = 30 * time.Second

// maxScanFiles bounds the files one Scan looks at per folder.
const maxScanFiles = 100000

// Watch runs Scan at once and then every poll until ctx ends: it catches
// the sessions whose hooks did not fire (the daemon was down, hooks not
// installed) and ends the turns of files gone quiet.
func (t *Tailer) Watch(ctx context.Context, poll time.Duration) {
	if poll <= 0 {
		poll = DefaultPoll
	}
	tick := time.NewTicker(poll)
	defer tick.Stop()
	for {
		t.Scan()
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// Scan queues the session files that changed since their cursor (by size
// and modification time), the new ones modified after capture from
// transcripts was enabled, and the files whose last turn is pending and
// that have been idle for Options.Idle. It returns how many it queued.
func (t *Tailer) Scan() int {
	n := 0
	now := t.opts.Now()
	for agent, roots := range t.opts.Roots {
		if _, ok := formats[agent]; !ok {
			continue // not readable yet (see formats)
		}
		for _, root := range roots {
			for _, path := range sessionFiles(agent, root) {
				fi, err := os.Stat(path)
				if err != nil || !fi.Mode().IsRegular() {
					continue
				}
				if j, ok := t.scanJob(agent, path, fi, now); ok && t.enqueue(j) {
					n++
				}
			}
		}
	}
	return n
}

// scanJob decides whether a file found by Scan needs reading.
func (t *Tailer) scanJob(agent, path string, fi os.FileInfo, now time.Time) (job, bool) {
	t.mu.Lock()
	c, tracked := t.tracked[path]
	var cc Cursor
	if tracked {
		cc = *c
	}
	t.mu.Unlock()
	req := Request{Path: path, Agent: agent, Event: EventPoll}
	switch {
	case !tracked:
		// History (files untouched since capture was enabled) is
		// `memtray ingest`'s to import, on request.
		return job{req: req}, fi.ModTime().After(t.since)
	case fi.Size() != cc.Size || !fi.ModTime().Equal(cc.ModTime):
		return job{req: req}, true
	case cc.pending() && now.Sub(fi.ModTime()) >= t.opts.Idle && !cc.IdleDone.Equal(fi.ModTime()):
		req.Event = EventIdle
		return job{req: req, final: true}, true
	}
	return job{}, false
}

// sessionFiles lists an agent's session files under root, symbolic links
// resolved (the form Submit keys cursors by): Claude Code's
// <root>/<project>/<session>.jsonl, Codex's <root>/**/rollout-*.jsonl.
func sessionFiles(agent, root string) []string {
	real, err := filepath.EvalSymlinks(root)
	if err != nil {
		return nil
	}
	var out []string
	switch agent {
	case AgentClaudeCode:
		matches, _ := filepath.Glob(filepath.Join(real, "*", "*.jsonl"))
		out = matches
	case AgentCodex:
		filepath.WalkDir(real, func(path string, d fs.DirEntry, err error) error {
			if err != nil || len(out) >= maxScanFiles {
				return filepath.SkipDir
			}
			if d.Type().IsRegular() && strings.HasPrefix(d.Name(), "rollout-") && strings.HasSuffix(d.Name(), ".jsonl") {
				out = append(out, path)
			}
			return nil
		})
	}
	if len(out) > maxScanFiles {
		out = out[:maxScanFiles]
	}
	return out
}
