// Package agentsetup connects agents to memtray: it writes memtray's MCP
// server, recall hooks and proxy base URL into Claude Code's, Cursor's,
// Codex's and Windsurf's own config files, merging with what is there and
// changing only memtray's own entries.
//
// Env.Plan reads the files and says what setup would change (a unified
// diff and a line per change for each file), writing nothing;
// Plan.Apply carries it out: a backup of each existing file before its
// first change, a record under <data dir>/setup/<client>.json, each file
// replaced atomically. Env.PlanUndo is the undo's own preview: a file still
// as setup left it is restored from its backup (or removed when setup
// created it); from a file changed since, only memtray's entries are
// removed. Env.Status says whether an agent is installed and set up. Run is
// `memtray setup`: the same, reported as text.
package agentsetup

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/memtray/memtray/backend/config"
)

// BackupSuffix names the copy setup keeps of a file before it first
// changes it.
const BackupSuffix = ".memtray-backup"

// RecordDir, in the data dir, holds a record per client of what setup
// changed (<client>.json), which undo reads.
const RecordDir = "setup"

// Sentinel errors.
var (
	// ErrUnknownClient: the name is not one of Clients'.
	ErrUnknownClient = errors.New("unknown client")
	// ErrNothingToUndo: there is no record of setup for the client.
	ErrNothingToUndo = errors.New("nothing to undo")
	// ErrStale: the files are not as the plan a request names saw them.
	ErrStale = errors.New("the files changed since the preview")
)

// Env is what setup works on and writes: whose configs, which memtray the
// agents are to run, the daemon they are to reach, and where the records
// go.
type Env struct {
	// Home is the user's home directory (absolute), whose configs change.
	Home string
	// Binary is the absolute path of the memtray the configs run (see
	// Binary); an undo does not need it.
	Binary string
	// Listen is the daemon's address, for the proxy base URL.
	Listen string
	// DataDir holds the records (RecordDir).
	DataDir string
	// HookTimeout is the agent-side timeout of a hook, in whole seconds
	// (see HookTimeout).
	HookTimeout int
	// Notes come first among a setup plan's notes (Binary's warnings).
	Notes []string
	// Flags are memtray's own flags (--data-dir DIR, --config FILE) that
	// every command setup writes (hooks, MCP servers) carries, and the undo
	// hint repeats, so that the agents reach this data dir's daemon: see
	// Flags.
	Flags []string
}

// Flags is what Env.Flags holds for a memtray run with dataDir and
// configFile: --config when configFile is not the default config
// (config.DefaultPath), --data-dir when dataDir is not the one that config
// gives by itself (a --data-dir flag or $MEMTRAY_DATA_DIR chose it). The
// agents run memtray without this process's flags and environment, so
// anything that chose another data dir or config must be spelt out. Both
// paths are made absolute.
func Flags(dataDir, configFile string) ([]string, error) {
	return flags(dataDir, configFile, func(cfgAbs string) (string, error) {
		base, err := config.Load(cfgAbs)
		return base.DataDir, err
	})
}

// FlagsFor is Flags for a caller that has read the config file already:
// fileDataDir is the data dir the file gives by itself (config.Load's
// DataDir, before a --data-dir flag or $MEMTRAY_DATA_DIR), and the file
// is not read again.
func FlagsFor(dataDir, configFile, fileDataDir string) ([]string, error) {
	return flags(dataDir, configFile, func(string) (string, error) { return fileDataDir, nil })
}

// flags is Flags, with the data dir of the config file (at its absolute
// path) from fileDataDir, asked only when dataDir is set.
func flags(dataDir, configFile string, fileDataDir func(cfgAbs string) (string, error)) ([]string, error) {
	var out []string
	if configFile == "" {
		configFile = config.DefaultPath()
	}
	cfgAbs, err := filepath.Abs(configFile)
	if err != nil {
		return nil, fmt.Errorf("config path %q: %w", configFile, err)
	}
	if defAbs, err := filepath.Abs(config.DefaultPath()); err != nil || filepath.Clean(defAbs) != filepath.Clean(cfgAbs) {
		out = append(out, "--config", cfgAbs)
	}
	if dataDir == "" {
		return out, nil
	}
	dataAbs, err := filepath.Abs(dataDir)
	if err != nil {
		return nil, fmt.Errorf("data dir %q: %w", dataDir, err)
	}
	baseDir, err := fileDataDir(cfgAbs)
	if err != nil {
		return nil, err
	}
	if baseAbs, err := filepath.Abs(baseDir); err != nil || filepath.Clean(baseAbs) != filepath.Clean(dataAbs) {
		out = append(out, "--data-dir", dataAbs)
	}
	return out, nil
}

// checkFlags validates Env.Flags: pairs of --data-dir or --config and an
// absolute path without control characters (it goes into shell commands
// and config files).
func checkFlags(flags []string) error {
	if len(flags)%2 != 0 {
		return fmt.Errorf("setup: memtray flags %q: want pairs of a flag and its value", flags)
	}
	for i := 0; i < len(flags); i += 2 {
		name, v := flags[i], flags[i+1]
		if name != "--data-dir" && name != "--config" {
			return fmt.Errorf("setup: memtray flag %q: only --data-dir and --config are carried into the agents' configs", name)
		}
		if !filepath.IsAbs(v) {
			return fmt.Errorf("setup: %s %q is not an absolute path", name, v)
		}
		if strings.ContainsFunc(v, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
			return fmt.Errorf("setup: %s %q holds a control character", name, v)
		}
	}
	return nil
}

// Options are the choices of one setup.
type Options struct {
	// NoProxy leaves the agent's API base URL alone.
	NoProxy bool
	// NoHooks installs no hooks.
	NoHooks bool
	// Force replaces a base URL that points elsewhere.
	Force bool
}

// HookTimeout is the agent-side timeout for memtray's hooks, in whole
// seconds: a little above memtray's own hook deadline d.
func HookTimeout(d time.Duration) int {
	return int(math.Ceil(d.Seconds())) + 1
}

// RecordPath is the record of setup for client.
func (e Env) RecordPath(client string) string {
	return filepath.Join(e.DataDir, RecordDir, client+".json")
}

// check validates e for a setup (withBinary) or an undo.
func (e Env) check(withBinary bool) error {
	switch {
	case e.Home == "" || !filepath.IsAbs(e.Home):
		return fmt.Errorf("setup: the home directory %q is not an absolute path", e.Home)
	case e.DataDir == "":
		return errors.New("setup: no data directory for the records")
	case e.Listen == "":
		return errors.New("setup: no daemon address for the proxy")
	case withBinary && (e.Binary == "" || !filepath.IsAbs(e.Binary)):
		return fmt.Errorf("setup: the memtray binary %q is not an absolute path", e.Binary)
	case withBinary && e.HookTimeout <= 0:
		return fmt.Errorf("setup: hook timeout %ds is not positive", e.HookTimeout)
	}
	return checkFlags(e.Flags)
}

func (e Env) options(o Options) setupOptions {
	return setupOptions{home: e.Home, binary: e.Binary, listen: e.Listen, noProxy: o.NoProxy,
		noHooks: o.NoHooks, force: o.Force, hookTimeout: e.HookTimeout, flags: e.Flags}
}

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
	// flags are memtray's flags every command written carries (Env.Flags).
	flags []string
}

// mcpArgs is the MCP server's arguments: mcp and o's flags.
func (o setupOptions) mcpArgs() []string {
	return append([]string{"mcp"}, o.flags...)
}

// mcpCommand is the MCP server's command line, for the listing.
func (o setupOptions) mcpCommand() string {
	parts := []string{shellQuote(o.binary)}
	for _, a := range o.mcpArgs() {
		parts = append(parts, shellQuote(a))
	}
	return strings.Join(parts, " ")
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
	// setEnv holds the env values setup sets in this file, for the record.
	setEnv map[string]string
	// hooks are the hook commands setup writes in this file, for the record.
	hooks []string
	// hookPos is where each memtray hook (by agent event) sits in this
	// hooks file after the change (Codex's trust entries name it).
	hookPos map[string]codexHookPos
	// trust are the keys of the Codex trust entries setup writes in this
	// file, for the record (undo takes them out of a changed file).
	trust []string
}

// setHookPos records where the hook want of agentEvent sits.
func (c *fileChange) setHookPos(agentEvent string, at codexHookPos, want hookEntry) {
	if c.hookPos == nil {
		c.hookPos = map[string]codexHookPos{}
	}
	at.command, at.timeout = want.Command, want.Timeout
	c.hookPos[agentEvent] = at
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

// setupRecordVersion is written into a new record. A record from before
// it (version 0) does not list the env values setup set: undo then takes
// the proxy base URL of the current config for the one setup sets.
const setupRecordVersion = 1

// setupRecord is <data dir>/setup/<client>.json: what setup changed, so
// that --undo can put it back.
type setupRecord struct {
	Version int               `json:"version,omitempty"`
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
	// SHA256 is the file's hash as setup last left it: undo restores the
	// backup only when the file is still that (or with --force); else it
	// removes memtray's entries from the file as it is now.
	SHA256 string `json:"sha256"`
	// Env holds the env values setup set in the file: undo of a changed
	// file removes each only while it still holds that value.
	Env map[string]string `json:"env,omitempty"`
	// Hooks holds the hook commands setup wrote in the file: undo of a
	// changed file removes those (and any memtray-named binary's hooks),
	// so a renamed binary's hooks go too.
	Hooks []string `json:"hooks,omitempty"`
	// Trust holds the keys of the Codex trust entries ([hooks.state])
	// setup wrote in the file: undo of a changed file removes those.
	Trust []string `json:"trust,omitempty"`
}

// planSetup makes client's plan with o, writing nothing.
func planSetup(client string, o setupOptions) (setupPlan, error) {
	planner, ok := setupPlanners[client]
	if !ok {
		return setupPlan{}, unknownClient(client)
	}
	plan, err := planner(o)
	if err != nil {
		return plan, err
	}
	plan.client = client
	return plan, nil
}

func unknownClient(name string) error {
	return fmt.Errorf("%w %q: want one of %s", ErrUnknownClient, name, strings.Join(Names(), ", "))
}

var setupPlanners = map[string]func(setupOptions) (setupPlan, error){
	"claude-code": planClaudeCode,
	"cursor":      planCursor,
	"codex":       planCodex,
	"windsurf":    planWindsurf,
}

// Binary resolves the memtray path the configs will run: flagValue made
// absolute, or (empty) this program's own path with symlinks resolved,
// with a warning when that is a temporary directory.
func Binary(flagValue string) (string, []string, error) {
	var warn []string
	p := flagValue
	if p == "" {
		exe, err := config.Executable()
		if err != nil {
			return "", nil, fmt.Errorf("%w (pass --binary)", err)
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

// writeSetupListing shows the plan: each file's state and what changes,
// the diffs, the notes.
func writeSetupListing(w io.Writer, plan setupPlan, printOnly bool) {
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
}

// setupApply carries the plan out: a backup of each existing file before
// its first change, the record, then each file written atomically.
func setupApply(plan setupPlan, recordPath string, flags []string) (Result, error) {
	res := Result{Client: plan.client}
	var changes []fileChange
	for _, f := range plan.files {
		if f.changed() {
			changes = append(changes, f)
		}
	}
	if len(changes) == 0 {
		res.Message = fmt.Sprintf("%s is already set up: nothing to change.", plan.client)
		return res, nil
	}

	rec, _, err := loadSetupRecord(recordPath)
	if err != nil {
		return res, err
	}
	if len(rec.Files) == 0 {
		rec.Version = setupRecordVersion
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
				fr.Backup = f.path + BackupSuffix
				if err := config.WriteFileAtomic(fr.Backup, f.before, f.mode); err != nil {
					return res, fmt.Errorf("back up %s: %w", f.path, err)
				}
			}
			rec.Files = append(rec.Files, fr)
			i = len(rec.Files) - 1
			index[f.path] = i
		}
		rec.Files[i].SHA256 = sha(f.after)
		for k, v := range f.setEnv {
			if rec.Files[i].Env == nil {
				rec.Files[i].Env = map[string]string{}
			}
			rec.Files[i].Env[k] = v
		}
		for _, h := range f.hooks {
			if !slices.Contains(rec.Files[i].Hooks, h) {
				rec.Files[i].Hooks = append(rec.Files[i].Hooks, h)
			}
		}
		for _, k := range f.trust {
			if !slices.Contains(rec.Files[i].Trust, k) {
				rec.Files[i].Trust = append(rec.Files[i].Trust, k)
			}
		}
	}
	if err := saveSetupRecord(recordPath, rec); err != nil {
		return res, err
	}
	for _, f := range changes {
		if err := writeConfigFile(f.path, f.after, f.mode); err != nil {
			return res, fmt.Errorf("%w (backups and the record of what setup did are in %s)", err, recordPath)
		}
		res.Changed = append(res.Changed, f.path)
	}
	for _, f := range rec.Files {
		if f.Backup != "" {
			res.Backups = append(res.Backups, f.Backup)
		}
	}
	var msg strings.Builder
	fmt.Fprintf(&msg, "changed %d file(s).", len(changes))
	if len(res.Backups) > 0 {
		fmt.Fprintf(&msg, " Backups: %s.", strings.Join(res.Backups, ", "))
	}
	fmt.Fprintf(&msg, " Undo with `%s`. Restart the agent to pick the change up.", UndoCommand(plan.client, flags))
	res.Message = msg.String()
	return res, nil
}

// SetupCommand is the command that sets client up with flags (Env.Flags:
// the data dir and config of the daemon its agent is to reach).
func SetupCommand(client string, flags []string) string {
	parts := []string{"memtray", "setup", client}
	for _, f := range flags {
		parts = append(parts, shellQuote(f))
	}
	return strings.Join(parts, " ")
}

// ShellQuote quotes p for a POSIX shell when it needs it.
func ShellQuote(p string) string { return shellQuote(p) }

// UndoCommand is the command that undoes client's setup made with flags
// (Env.Flags): the record is in that data dir.
func UndoCommand(client string, flags []string) string {
	parts := []string{"memtray", "setup", client, "--undo"}
	for _, f := range flags {
		parts = append(parts, shellQuote(f))
	}
	return strings.Join(parts, " ")
}

// undoFile is what undo does with one file setup changed.
type undoFile struct {
	fileChange
	rec     setupFileRecord
	state   string // how the file stands, for the listing
	restore bool   // from the backup (or removed: setup created it)
}

// undoPlan is what undo would do for one client.
type undoPlan struct {
	client     string
	recordPath string
	files      []undoFile
	notes      []string
}

// planUndo plans taking memtray out of the files setup changed. A file still as
// setup left it (or any, with force) is restored from its backup, or
// removed when setup created it. From a file changed since (agents rewrite
// their configs all the time) only memtray's entries are removed, the rest
// staying as it is now, and the backup is kept. Every file is read and
// planned before anything is written: a malformed one stops the undo with
// nothing changed.
//
// binary, when set, is the memtray the undo runs as: its hook commands
// count as memtray's too (a record written before setup recorded them).
func planUndo(client, recordPath, listen, binary string, flags []string, force bool) (undoPlan, error) {
	up := undoPlan{client: client, recordPath: recordPath}
	if _, ok := setupPlanners[client]; !ok {
		return up, unknownClient(client)
	}
	rec, ok, err := loadSetupRecord(recordPath)
	if err != nil {
		return up, err
	}
	if !ok || len(rec.Files) == 0 {
		return up, fmt.Errorf("%w: no record of `memtray setup %s` in this data dir (no %s): it was undone already, or set up with another --data-dir or --config (the hint setup printed names them)", ErrNothingToUndo, client, recordPath)
	}
	var files []undoFile
	var notes []string
	for _, fr := range rec.Files {
		cur, err := readConfigFile(fr.Path)
		if err != nil {
			return up, err
		}
		f := undoFile{fileChange: cur, rec: fr}
		unchanged := cur.existed && sha(cur.before) == fr.SHA256
		var backup []byte
		var backupErr error
		if fr.Existed {
			backup, backupErr = os.ReadFile(fr.Backup)
		}
		switch {
		case (unchanged || force) && fr.Existed && backupErr == nil:
			if info, err := os.Stat(fr.Backup); err == nil {
				f.mode = info.Mode().Perm()
			}
			f.after, f.restore = backup, true
			f.state = "unchanged since setup: restore " + fr.Backup
			if !unchanged {
				f.state = "changed since setup, --force: restore " + fr.Backup
			}
		case (unchanged || force) && !fr.Existed:
			f.after, f.remove, f.restore = nil, true, true
			f.state = "unchanged since setup, which created it: remove"
			if !unchanged {
				f.state = "changed since setup, which created it, --force: remove"
			}
		case force:
			return up, fmt.Errorf("--force: read the backup of %s: %w (nothing was changed)", fr.Path, backupErr)
		case !cur.existed:
			f.state = "gone since setup: nothing to undo"
		default:
			f.state = "changed since setup: remove only memtray's entries"
			if unchanged {
				f.state = "unchanged since setup, but its backup is unreadable: remove only memtray's entries"
			} else if fr.Backup != "" && backupErr == nil {
				f.state += "; the backup " + fr.Backup + " stays"
			}
			prior := jsonPrior{created: !fr.Existed}
			if fr.Existed {
				if backupErr != nil {
					prior.unknown = true
					notes = append(notes, fmt.Sprintf("%s: the backup %s cannot be read (%v): containers memtray's entries leave empty are kept", fr.Path, fr.Backup, backupErr))
				} else if len(bytes.TrimSpace(backup)) == 0 {
					prior.backup = map[string]any{}
				} else if json.Unmarshal(backup, &prior.backup) != nil {
					prior.unknown = true
				}
			}
			var stripNotes []string
			if strings.HasSuffix(fr.Path, ".toml") {
				f.fileChange, err = stripCodexTOML(cur, !fr.Existed, fr.Trust)
			} else {
				own := slices.Clone(fr.Hooks)
				if binary != "" {
					for _, s := range setupHookSpecs(client) {
						own = append(own, s.command(binary, flags))
					}
				}
				f.fileChange, stripNotes, err = stripJSON(cur, setupHookSpecs(client), own, undoEnv(client, rec, fr, listen, prior), prior)
			}
			if err != nil {
				return up, err
			}
			notes = append(notes, stripNotes...)
			if len(f.what) == 0 {
				f.state = "changed since setup: memtray's entries are already gone, nothing to change"
			}
		}
		files = append(files, f)
	}

	up.files, up.notes = files, notes
	return up, nil
}

// writeUndoListing shows the undo plan: each file's state and what
// changes, the diffs, the notes.
func writeUndoListing(w io.Writer, up undoPlan) {
	fmt.Fprintf(w, "memtray setup %s --undo\n", up.client)
	var changes []undoFile
	for _, f := range up.files {
		fmt.Fprintf(w, "  %s (%s)\n", f.path, f.state)
		for _, s := range f.what {
			fmt.Fprintf(w, "    - %s\n", s)
		}
		if f.changed() {
			changes = append(changes, f)
		}
	}
	for _, f := range changes {
		fmt.Fprint(w, unifiedDiff(f.path, f.existed, f.before, f.after))
	}
	if len(up.notes) > 0 {
		fmt.Fprintln(w, "notes:")
		for _, n := range up.notes {
			fmt.Fprintf(w, "  - %s\n", n)
		}
	}
}

// undoApply carries the undo plan out: each file written or removed, the
// backups of restored files removed, then the record.
func undoApply(up undoPlan) (Result, error) {
	res := Result{Client: up.client}
	var changes []undoFile
	for _, f := range up.files {
		if f.changed() {
			changes = append(changes, f)
		}
	}
	var kept []string
	for _, f := range up.files {
		if !f.restore && f.rec.Backup != "" {
			if _, err := os.Stat(f.rec.Backup); err == nil {
				kept = append(kept, f.rec.Backup)
			}
		}
	}
	for _, f := range changes {
		if f.remove {
			if err := os.Remove(f.path); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return res, fmt.Errorf("undo %s: %w", f.path, err)
			}
			res.Changed = append(res.Changed, f.path)
			continue
		}
		if err := writeConfigFile(f.path, f.after, f.mode); err != nil {
			return res, fmt.Errorf("undo %s: %w", f.path, err)
		}
		res.Changed = append(res.Changed, f.path)
	}
	for _, f := range up.files {
		if f.restore && f.rec.Backup != "" {
			if err := os.Remove(f.rec.Backup); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return res, fmt.Errorf("remove the backup %s: %w", f.rec.Backup, err)
			}
		}
	}
	if err := os.Remove(up.recordPath); err != nil {
		return res, fmt.Errorf("remove the setup record: %w", err)
	}
	res.Backups = kept
	var msg strings.Builder
	if len(changes) == 0 {
		fmt.Fprintf(&msg, "memtray's entries are already gone: nothing was changed; the setup record is removed.")
	} else {
		fmt.Fprintf(&msg, "undone: %d file(s) changed.", len(changes))
	}
	if len(kept) > 0 {
		fmt.Fprintf(&msg, " Kept the backup(s) of the files as they were before setup: %s (delete them when no longer needed).", strings.Join(kept, ", "))
	}
	if len(changes) > 0 {
		fmt.Fprint(&msg, " Restart the agent to pick the change up.")
	}
	res.Message = msg.String()
	return res, nil
}

// setupHookSpecs is the hooks setup installs for client.
func setupHookSpecs(client string) []hookSpec {
	switch client {
	case "claude-code":
		return claudeHooks
	case "codex":
		return codexHooks
	}
	return nil
}

// undoEnv is the env values setup set in fr's file: the record's, and for
// a record from before they were recorded, Claude Code's proxy base URL of
// the current config unless the file held that value before setup.
func undoEnv(client string, rec setupRecord, fr setupFileRecord, listen string, prior jsonPrior) map[string]string {
	env := map[string]string{}
	for k, v := range fr.Env {
		env[k] = v
	}
	const key = "ANTHROPIC_BASE_URL"
	if rec.Version < setupRecordVersion && client == "claude-code" && filepath.Base(fr.Path) == "settings.json" && env[key] == "" {
		url := "http://" + listen
		root, _ := prior.backup.(map[string]any)
		if before, _ := root["env"].(map[string]any); before[key] != url {
			env[key] = url
		}
	}
	return env
}

// hookCommand is the shell command an agent runs for one hook event:
// memtray's flags (Env.Flags) follow the event.
func hookCommand(binary, event string, flags []string) string {
	var b strings.Builder
	b.WriteString(shellQuote(binary) + " hook " + event)
	for _, f := range flags {
		b.WriteString(" " + shellQuote(f))
	}
	return b.String()
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

// hookBinary splits a hook command for event into the binary (as
// written, quotes and all) and the flags after the event: "BIN hook EVENT"
// then nothing or flags ("--…").
func hookBinary(command, event string) (bin, flags string, ok bool) {
	sep := " hook " + event
	for end := len(command); end > 0; {
		i := strings.LastIndex(command[:end], sep)
		if i < 0 {
			return "", "", false
		}
		rest := command[i+len(sep):]
		if rest == "" || strings.HasPrefix(rest, " --") {
			return command[:i], strings.TrimSpace(rest), true
		}
		end = i
	}
	return "", "", false
}

// isMemtrayHook reports whether command is a memtray hook for event (any
// binary path, any memtray flags after the event): setup updates such an
// entry instead of adding a second.
func isMemtrayHook(command, event string) bool {
	bin, _, ok := hookBinary(command, event)
	if !ok {
		return false
	}
	bin = strings.Trim(bin, `"' `)
	base := strings.ToLower(filepath.Base(strings.ReplaceAll(bin, `\`, "/")))
	return strings.HasPrefix(base, "memtray")
}

// isOwnHook reports whether command is memtray's hook for event: a
// memtray-named binary's (isMemtrayHook), or one of own, the exact commands
// setup writes or wrote (a renamed binary).
func isOwnHook(command, event string, own ...string) bool {
	if isMemtrayHook(command, event) {
		return true
	}
	_, _, ok := hookBinary(command, event)
	return ok && slices.Contains(own, command)
}
