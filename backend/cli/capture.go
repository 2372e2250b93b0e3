package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/memtray/memtray/backend/config"
	"github.com/memtray/memtray/backend/httpapi"
	"github.com/memtray/memtray/backend/search"
	"github.com/memtray/memtray/backend/transcript"
)

// runCapture shows or changes the capture switch and the excluded projects.
func runCapture(env *Env, args []string) error {
	var c common
	fs := newFlags("capture", env, &c, true)
	var exclude, include multiFlag
	fs.Var(&exclude, "exclude", "never capture this project (name or absolute directory); repeatable")
	fs.Var(&include, "include", "capture this excluded project again; repeatable")
	pauseFor := fs.Duration("for", 0, "with off: pause for this long (e.g. 1h), then capture turns itself back on")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	var u httpapi.CaptureUpdate
	switch {
	case len(pos) == 0 || (len(pos) == 1 && pos[0] == "status"):
	case len(pos) == 1 && pos[0] == "off" && *pauseFor != 0:
		d := config.Duration(*pauseFor)
		u.PauseFor = &d
	case len(pos) == 1 && (pos[0] == "on" || pos[0] == "off"):
		on := pos[0] == "on"
		u.Enabled = &on
	default:
		return usagef("want on, off or status, not %q", strings.Join(pos, " "))
	}
	if *pauseFor != 0 && u.PauseFor == nil {
		return usagef("--for goes with off")
	}
	u.Exclude, u.Include = exclude, include
	return c.with(env, func(svc httpapi.Services) error {
		var st httpapi.CaptureState
		var err error
		if u.Enabled == nil && u.PauseFor == nil && len(u.Exclude) == 0 && len(u.Include) == 0 {
			st, err = svc.Settings.Capture(env.Ctx)
		} else {
			st, err = svc.Settings.SetCapture(env.Ctx, u)
		}
		if err != nil {
			return err
		}
		if c.json {
			return printJSON(env.Stdout, st)
		}
		printCapture(env.Stdout, st)
		if _, ok := svc.Settings.(*httpapi.Client); !ok {
			fmt.Fprintln(env.Stdout, "(no daemon runs: the change applies when it starts)")
		}
		return nil
	})
}

// printCapture writes the capture state in a few lines.
func printCapture(w io.Writer, st httpapi.CaptureState) {
	state := "on"
	if !st.Enabled {
		state = "off (the proxy forwards, nothing is kept)"
		if st.PausedUntil != nil {
			state = "paused until " + st.PausedUntil.Local().Format("15:04 Jan 2") + " (the proxy forwards, nothing is kept)"
		}
	}
	fmt.Fprintf(w, "capture:    %s\nupstreams:  anthropic %s, openai %s\n", state, st.Anthropic, st.OpenAI)
	if len(st.ExcludeProjects) > 0 {
		fmt.Fprintf(w, "excluded:   %s\n", strings.Join(st.ExcludeProjects, ", "))
	}
	var s struct {
		Requests, Captured, Dropped, NotCapturedStatus, UpstreamErrors, TooLarge, Excluded, Handled,
		HandlerErrors, HandlerPanics int64
		LastError string `json:"last_error"`
	}
	if json.Unmarshal(st.Stats, &s) == nil && s.Requests > 0 {
		fmt.Fprintf(w, "proxy:      %d requests, %d exchanges captured, %d handled, %d dropped (queue full), %d excluded, %d errors\n",
			s.Requests, s.Captured, s.Handled, s.Dropped, s.Excluded, s.HandlerErrors+s.HandlerPanics+s.UpstreamErrors)
		if s.LastError != "" {
			fmt.Fprintf(w, "last error: %s\n", s.LastError)
		}
	}
}

// runRecall shows what an agent would receive for a prompt: the same
// recall the hooks run, recorded like theirs (use --session to test
// exclusion across calls).
func runRecall(env *Env, args []string) error {
	var c common
	fs := newFlags("recall", env, &c, true)
	session := fs.String("session", "", "session id (default: a new one per call)")
	project := fs.String("project", "", "current project (default: the current directory's git repository, else its name)")
	k := fs.Int("k", 0, "at most this many memories (default recall.k)")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) == 0 {
		return usagef("a prompt is required")
	}
	req := search.RecallRequest{SessionID: *session, Prompt: strings.Join(pos, " "), Project: *project, K: *k}
	projectFrom := "--project"
	if wd, err := os.Getwd(); err == nil {
		req.CWD = wd
		if req.Project == "" {
			req.Project = transcript.ProjectName(wd)
			projectFrom = "the current directory"
		}
	}
	if req.SessionID == "" {
		req.SessionID = fmt.Sprintf("cli-%d", os.Getpid())
	}
	return c.with(env, func(svc httpapi.Services) error {
		out, err := svc.Recaller.Recall(env.Ctx, req)
		if err != nil {
			return err
		}
		if c.json {
			return printJSON(env.Stdout, out)
		}
		if out.Context == "" {
			fmt.Fprintf(env.Stdout, "nothing to recall: %s\n", out.Skipped)
			if req.Project != "" {
				// Recall stays in its project: say which one was asked, so
				// that a store holding the answer in another project does
				// not read as one holding nothing.
				fmt.Fprintf(env.Stdout, "asked as project %q (from %s); `--project P` asks as another project\n", req.Project, projectFrom)
			}
			return nil
		}
		fmt.Fprintln(env.Stdout, out.Context)
		if out.Warning != "" {
			fmt.Fprintf(env.Stderr, "warning: %s\n", out.Warning)
		}
		return nil
	})
}

// multiFlag is a repeatable string flag.
type multiFlag []string

func (m *multiFlag) String() string { return strings.Join(*m, ",") }

func (m *multiFlag) Set(v string) error {
	if strings.TrimSpace(v) == "" {
		return fmt.Errorf("empty value")
	}
	if strings.HasPrefix(v, "~/") {
		if home, err := os.UserHomeDir(); err == nil {
			v = filepath.Join(home, v[2:])
		}
	}
	*m = append(*m, v)
	return nil
}
