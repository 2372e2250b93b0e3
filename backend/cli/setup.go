package cli

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/memtray/memtray/backend/config"
)

// SetupBackupSuffix names the copy setup keeps of a file before it first
// changes it.
const SetupBackupSuffix = ".memtray-backup"

// setupClients lists the agents `memtray setup` knows, in usage order.
var setupClients = []string{"claude-code", "cursor", "codex", "windsurf"}

// setupOptions is what a client's planner needs.
type setupOptions struct {
	home    string // the user's home directory
	binary  string // absolute path of the memtray binary written into configs
	listen  string // the daemon's address (proxy base URL)
	noProxy bool
	noHooks bool
	force   bool
	// hookTimeout is the agent-side timeout for a hook, in whole seconds:
	// a little above memtray's own hook deadline.
	hookTimeout int
}

// fileChange is one file's content before and after setup.
type fileChange struct {
	path    string
	existed bool
	before  []byte
	after   []byte // nil with remove
	remove  bool
	mode    fs.FileMode
	what    []string // what changes, one line each
}

func (c fileChange) changed() bool {
	if c.remove {
		return c.existed
	}
	return !c.existed || string(c.before) != string(c.after)
}

// setupPlan is what setup would do for one client.
type setupPlan struct {
	client string
	files  []fileChange
	notes  []string // what the client cannot do, and caveats
}

// setupRecord is <data dir>/setup/<client>.json: what setup changed, so
// that --undo can put it back.
type setupRecord struct {
	Client  string            `json:"client"`
	Updated time.Time         `json:"updated"`
	Files   []setupFileRecord `json:"files"`
}

// setupFileRecord is one file setup changed.
type setupFileRecord struct {
	Path string `json:"path"`
	// Existed says whether the file was there before setup first changed
	// it; Backup is then the copy of it.
	Existed bool   `json:"existed"`
	Backup  string `json:"backup,omitempty"`
	// SHA256 is the file's hash as setup last left it: undo refuses when
	// the file changed since (unless --force).
	SHA256 string `json:"sha256"`
}

func runSetup(env *Env, args []string) error {
	var c common
	fsf := newFlags("setup", env, &c, false)
	printOnly := fsf.Bool("print", false, "only show the change (a diff per file); change nothing")
	undo := fsf.Bool("undo", false, "restore the files setup changed from their backups")
	force := fsf.Bool("force", false, "with --undo: restore even files changed since setup; else: replace a base URL that points elsewhere")
	noProxy := fsf.Bool("no-proxy", false, "do not route the agent's API traffic through memtray's proxy")
	noHooks := fsf.Bool("no-hooks", false, "do not install hooks")
	home := fsf.String("home", "", "home directory whose configs to change (default $HOME)")
	binary := fsf.String("binary", "", "memtray binary path written into the configs (default: this program)")
	pos, err := parse(fsf, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("name one client: %s", strings.Join(setupClients, ", "))
	}
	client := pos[0]
	planner, ok := setupPlanners[client]
	if !ok {
		return usagef("unknown client %q: want one of %s", client, strings.Join(setupClients, ", "))
	}
	cfg, err := c.load()
	if err != nil {
		return err
	}
	o := setupOptions{home: *home, listen: cfg.Listen, noProxy: *noProxy, noHooks: *noHooks, force: *force}
	if o.home == "" {
		if o.home, err = os.UserHomeDir(); err != nil {
			return fmt.Errorf("find the home directory: %w (pass --home)", err)
		}
	}
	if o.home, err = filepath.Abs(o.home); err != nil {
		return fmt.Errorf("home: %w", err)
	}
	o.hookTimeout = int(math.Ceil(time.Duration(cfg.Recall.HookTimeout).Seconds())) + 1
	recordPath := filepath.Join(cfg.DataDir, "setup", client+".json")
	if *undo {
		return setupUndo(env, client, recordPath, *printOnly, *force)
	}
	var warn []string
	if o.binary, warn, err = setupBinary(*binary); err != nil {
		return err
	}
	plan, err := planner(o)
	if err != nil {
		return err
	}
	plan.client = client
	plan.notes = append(warn, plan.notes...)
	return setupApply(env, plan, recordPath, *printOnly)
}

var setupPlanners = map[string]func(setupOptions) (setupPlan, error){
	"claude-code": planClaudeCode,
	"cursor":      planCursor,
	"codex":       planCodex,
	"windsurf":    planWindsurf,
}

// setupBinary resolves the memtray path the configs will run.
func setupBinary(flagValue string) (string, []string, error) {
	var warn []string
	p := flagValue
	if p == "" {
		exe, err := os.Executable()
		if err != nil {
			return "", nil, fmt.Errorf("find this program's path: %w (pass --binary)", err)
		}
		if r, err := filepath.EvalSymlinks(exe); err == nil {
			exe = r
		}
		p = exe
		if tmp := os.TempDir(); tmp != "" && strings.HasPrefix(p, filepath.Clean(tmp)+string(filepath.Separator)) {
			warn = append(warn, fmt.Sprintf("this memtray runs from a temporary directory (%s), as with `go run`: the agent will not find it later; pass --binary PATH", p))
		}
	}
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", nil, fmt.Errorf("binary path %q: %w", p, err)
	}
	return abs, warn, nil
}

// readConfigFile reads a file setup may change; a missing file is empty.
// Symlinks are followed, so a dotfiles link keeps pointing at its target.
func readConfigFile(path string) (fileChange, error) {
	fc := fileChange{path: path, mode: 0o600}
	target := path
	if r, err := filepath.EvalSymlinks(path); err == nil {
		target = r
	}
	info, err := os.Stat(target)
	if errors.Is(err, fs.ErrNotExist) {
		return fc, nil
	}
	if err != nil {
		return fc, fmt.Errorf("read %s: %w", path, err)
	}
	if !info.Mode().IsRegular() {
		return fc, fmt.Errorf("%s is not a regular file", path)
	}
	data, err := os.ReadFile(target)
	if err != nil {
		return fc, fmt.Errorf("read %s: %w", path, err)
	}
	fc.existed, fc.before, fc.after, fc.mode = true, data, data, info.Mode().Perm()
	return fc, nil
}

// writeConfigFile replaces path's target atomically, keeping mode.
func writeConfigFile(path string, data []byte, mode fs.FileMode) error {
	target := path
	if r, err := filepath.EvalSymlinks(path); err == nil {
		target = r
	}
	return config.WriteFileAtomic(target, data, mode)
}

func sha(data []byte) string {
	h := sha256.Sum256(data)
	return hex.EncodeToString(h[:])
}

func loadSetupRecord(path string) (setupRecord, bool, error) {
	var rec setupRecord
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return rec, false, nil
	}
	if err != nil {
		return rec, false, fmt.Errorf("read setup record: %w", err)
	}
	if err := json.Unmarshal(data, &rec); err != nil {
		return rec, false, fmt.Errorf("setup record %s: %w", path, err)
	}
	return rec, true, nil
}

func saveSetupRecord(path string, rec setupRecord) error {
	rec.Updated = time.Now().UTC().Truncate(time.Second)
	data, err := json.MarshalIndent(rec, "", "  ")
	if err != nil {
		return fmt.Errorf("encode setup record: %w", err)
	}
	return config.WriteFileAtomic(path, append(data, '\n'), 0o600)
}

// setupApply shows the plan and, unless printOnly, carries it out: a
// backup of each existing file before its first change, the record, then
// each file written atomically.
func setupApply(env *Env, plan setupPlan, recordPath string, printOnly bool) error {
	w := env.Stdout
	var changes []fileChange
	for _, f := range plan.files {
		if f.changed() {
			changes = append(changes, f)
		}
	}
	fmt.Fprintf(w, "memtray setup %s\n", plan.client)
	for _, f := range plan.files {
		state := "up to date"
		if f.changed() {
			state = "to change"
			if !printOnly {
				state = "changed"
			}
		}
		fmt.Fprintf(w, "  %s (%s)\n", f.path, state)
		for _, s := range f.what {
			fmt.Fprintf(w, "    - %s\n", s)
		}
	}
	for _, f := range changes {
		fmt.Fprint(w, unifiedDiff(f.path, f.existed, f.before, f.after))
	}
	if len(plan.notes) > 0 {
		fmt.Fprintln(w, "notes:")
		for _, n := range plan.notes {
			fmt.Fprintf(w, "  - %s\n", n)
		}
	}
	switch {
	case len(changes) == 0:
		fmt.Fprintf(w, "%s is already set up: nothing to change.\n", plan.client)
		return nil
	case printOnly:
		fmt.Fprintln(w, "--print: nothing was changed.")
		return nil
	}

	rec, _, err := loadSetupRecord(recordPath)
	if err != nil {
		return err
	}
	rec.Client = plan.client
	index := map[string]int{}
	for i, f := range rec.Files {
		index[f.Path] = i
	}
	for _, f := range changes {
		i, known := index[f.path]
		if !known {
			fr := setupFileRecord{Path: f.path, Existed: f.existed}
			if f.existed {
				fr.Backup = f.path + SetupBackupSuffix
				if err := config.WriteFileAtomic(fr.Backup, f.before, f.mode); err != nil {
					return fmt.Errorf("back up %s: %w", f.path, err)
				}
			}
			rec.Files = append(rec.Files, fr)
			i = len(rec.Files) - 1
			index[f.path] = i
		}
		rec.Files[i].SHA256 = sha(f.after)
	}
	if err := saveSetupRecord(recordPath, rec); err != nil {
		return err
	}
	for _, f := range changes {
		if err := writeConfigFile(f.path, f.after, f.mode); err != nil {
			return fmt.Errorf("%w (backups and the record of what setup did are in %s)", err, recordPath)
		}
	}
	var backups []string
	for _, f := range rec.Files {
		if f.Backup != "" {
			backups = append(backups, f.Backup)
		}
	}
	fmt.Fprintf(w, "changed %d file(s).", len(changes))
	if len(backups) > 0 {
		fmt.Fprintf(w, " Backups: %s.", strings.Join(backups, ", "))
	}
	fmt.Fprintf(w, " Undo with `memtray setup %s --undo`. Restart the agent to pick the change up.\n", plan.client)
	return nil
}

// setupUndo restores what setup changed: each file from its backup, or
// removed when setup created it. A file changed since setup stops the undo
// before anything changes, unless force.
func setupUndo(env *Env, client, recordPath string, printOnly, force bool) error {
	rec, ok, err := loadSetupRecord(recordPath)
	if err != nil {
		return err
	}
	if !ok || len(rec.Files) == 0 {
		return fmt.Errorf("nothing to undo: memtray setup %s has changed nothing with this data dir (no %s)", client, recordPath)
	}
	var changes []fileChange
	var changedSince []string
	for _, fr := range rec.Files {
		cur, err := readConfigFile(fr.Path)
		if err != nil {
			return err
		}
		if !cur.existed || sha(cur.before) != fr.SHA256 {
			changedSince = append(changedSince, fr.Path)
		}
		fc := cur
		if fr.Existed {
			backup, err := os.ReadFile(fr.Backup)
			if err != nil {
				return fmt.Errorf("read the backup of %s: %w", fr.Path, err)
			}
			if info, err := os.Stat(fr.Backup); err == nil {
				fc.mode = info.Mode().Perm()
			}
			fc.after, fc.what = backup, []string{"restore " + fr.Backup}
		} else {
			fc.after, fc.remove, fc.what = nil, true, []string{"remove (setup created it)"}
		}
		changes = append(changes, fc)
	}
	if len(changedSince) > 0 && !force {
		return fmt.Errorf("%s changed since setup: undo would lose those changes; nothing was restored (--force restores the backups anyway)", strings.Join(changedSince, ", "))
	}
	w := env.Stdout
	fmt.Fprintf(w, "memtray setup %s --undo\n", client)
	for _, f := range changes {
		fmt.Fprintf(w, "  %s: %s\n", f.path, strings.Join(f.what, "; "))
	}
	for _, f := range changes {
		fmt.Fprint(w, unifiedDiff(f.path, f.existed, f.before, f.after))
	}
	if printOnly {
		fmt.Fprintln(w, "--print: nothing was changed.")
		return nil
	}
	for i, f := range changes {
		fr := rec.Files[i]
		if f.remove {
			if err := os.Remove(f.path); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return fmt.Errorf("undo %s: %w", f.path, err)
			}
			continue
		}
		if err := writeConfigFile(f.path, f.after, f.mode); err != nil {
			return fmt.Errorf("undo %s: %w", f.path, err)
		}
		if err := os.Remove(fr.Backup); err != nil {
			return fmt.Errorf("remove the backup %s: %w", fr.Backup, err)
		}
	}
	if err := os.Remove(recordPath); err != nil {
		return fmt.Errorf("remove the setup record: %w", err)
	}
	fmt.Fprintf(w, "restored %d file(s). Restart the agent to pick the change up.\n", len(changes))
	return nil
}

// hookCommand is the shell command an agent runs for one hook event.
func hookCommand(binary, event string) string {
	return shellQuote(binary) + " hook " + event
}

// shellQuote quotes a path for the shell the agent runs hooks with, when
// it needs quoting.
func shellQuote(p string) string {
	safe := true
	for _, r := range p {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("/._-+:@\\", r)) {
			safe = false
			break
		}
	}
	if safe {
		return p
	}
	if runtime.GOOS == "windows" {
		return `"` + p + `"`
	}
	return "'" + strings.ReplaceAll(p, "'", `'\''`) + "'"
}

// isMemtrayHook reports whether command is a memtray hook for event (any
// binary path): setup updates such an entry instead of adding a second.
func isMemtrayHook(command, event string) bool {
	if !strings.HasSuffix(command, " hook "+event) {
		return false
	}
	bin := strings.Trim(strings.TrimSuffix(command, " hook "+event), `"' `)
	base := strings.ToLower(filepath.Base(strings.ReplaceAll(bin, `\`, "/")))
	return strings.HasPrefix(base, "memtray")
}
