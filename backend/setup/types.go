package setup

import (
	"errors"
	"time"
)

var (
	// ErrStalePreview: an apply or undo whose preview no longer matches the
	// files (changed since, or the change would now differ). It answers
	// 409 with the code "stale_preview": preview again.
	ErrStalePreview = errors.New("the config files changed since the preview")
	// ErrConflict: the files are in a state setup will not work on (a
	// malformed config, nothing to undo). It answers 409 "setup_conflict".
	ErrConflict = errors.New("setup cannot proceed")
)

// List is what GET /api/setup returns.
type List struct {
	Clients []Agent `json:"clients"`
	// Binary is the memtray the agents' configs run (this program).
	Binary string `json:"binary"`
	// Proxy is the proxy base URL setup writes.
	Proxy string `json:"proxy"`
	// Home is the home directory whose configs setup changes.
	Home string `json:"home"`
	// CLIFlags are what `memtray setup` in a terminal needs to reach this
	// daemon's data dir and config (--data-dir, --config, shell-quoted);
	// none for the defaults.
	CLIFlags []string `json:"cli_flags"`
}

// Agent is one agent and how it stands.
type Agent struct {
	// Name is the agent's name in routes and on the command line.
	Name  string `json:"name"`
	Label string `json:"label"`
	// Hooks and Proxy say whether setup installs recall hooks and the
	// proxy base URL for this agent (else only the MCP server).
	Hooks bool `json:"hooks"`
	Proxy bool `json:"proxy"`
	// Detected says the agent is installed (its config directory exists).
	Detected bool `json:"detected"`
	// Configured says memtray set the agent up and it was not undone.
	Configured bool `json:"configured"`
	// Updated is when setup last changed its files.
	Updated time.Time    `json:"updated,omitzero"`
	Files   []FileStatus `json:"files"`
	// Problem says why the record of setup cannot be read.
	Problem string `json:"problem,omitempty"`
	// NeedReview lists memtray's hooks (by the agent's event name) the
	// agent will not run until the user trusts them (Codex's hook review);
	// ReviewHint says how.
	NeedReview []string `json:"need_review,omitempty"`
	ReviewHint string   `json:"review_hint,omitempty"`
}

// FileStatus is one config file of an agent.
type FileStatus struct {
	Path   string `json:"path"`
	Exists bool   `json:"exists"`
	// Backup is the copy setup kept of the file as it was before.
	Backup string `json:"backup,omitempty"`
}

// PlanOptions is what POST /api/setup/{client}/preview takes.
type PlanOptions struct {
	// NoProxy leaves the agent's API base URL alone.
	NoProxy bool `json:"no_proxy,omitempty"`
	// NoHooks installs no hooks.
	NoHooks bool `json:"no_hooks,omitempty"`
}

// Preview is a planned setup or undo: the exact change to each file.
type Preview struct {
	Client string `json:"client"`
	// Undo says it takes memtray out.
	Undo bool `json:"undo"`
	// Options are the preview's options (a setup's): apply with the same.
	Options PlanOptions `json:"options"`
	Files   []File      `json:"files"`
	// Notes are what the agent cannot do, and caveats.
	Notes []string `json:"notes"`
	// Changes counts the files the apply would write or remove.
	Changes int `json:"changes"`
}

// File is one file of a preview.
type File struct {
	Path string `json:"path"`
	// Existed says whether the file is there now.
	Existed bool `json:"existed"`
	// Changed says whether the apply writes or removes it; Remove that it
	// removes it.
	Changed bool `json:"changed"`
	Remove  bool `json:"remove,omitempty"`
	// State is how the file stands ("to change", "up to date", or the
	// undo's "unchanged since setup: restore …").
	State string `json:"state"`
	// What lists the changes, one line each.
	What []string `json:"what"`
	// Diff is the change as a unified diff ("" when unchanged).
	Diff string `json:"diff"`
	// SHA256 and AfterSHA256 are the hex SHA-256 of the file now and of
	// what the apply writes ("" for no file): send them back with the
	// apply.
	SHA256      string `json:"sha256"`
	AfterSHA256 string `json:"after_sha256"`
}

// FileHash is a file of the preview an apply carries out.
type FileHash struct {
	Path        string `json:"path"`
	SHA256      string `json:"sha256"`
	AfterSHA256 string `json:"after_sha256"`
}

// ApplyRequest is what POST /api/setup/{client}/apply takes: the
// preview's options and files.
type ApplyRequest struct {
	NoProxy bool       `json:"no_proxy,omitempty"`
	NoHooks bool       `json:"no_hooks,omitempty"`
	Files   []FileHash `json:"files"`
}

// UndoRequest is what POST /api/setup/{client}/undo takes: the undo
// preview's files.
type UndoRequest struct {
	Files []FileHash `json:"files"`
}

// Result is what an apply or undo did.
type Result struct {
	Client string `json:"client"`
	// Changed lists the files written or removed.
	Changed []string `json:"changed"`
	// Backups are the copies of the files as they were before setup (after
	// an undo: the ones kept).
	Backups []string `json:"backups"`
	// Message is the report `memtray setup` prints.
	Message string `json:"message"`
	// Status is how the agent stands now.
	Status Agent `json:"status"`
}

// Hashes is the preview's files as an apply sends them back.
func (p Preview) Hashes() []FileHash {
	out := make([]FileHash, len(p.Files))
	for i, f := range p.Files {
		out[i] = FileHash{Path: f.Path, SHA256: f.SHA256, AfterSHA256: f.AfterSHA256}
	}
	return out
}

// AutostartRequest is what PUT /api/autostart takes.
type AutostartRequest struct {
	Enabled bool `json:"enabled"`
}

// WelcomeState is what GET /api/welcome answers.
type WelcomeState struct {
	// Done: the guide was finished or skipped on this data dir.
	Done   bool       `json:"done"`
	DoneAt *time.Time `json:"done_at,omitempty"`
	// DataDir holds the store; ConfigFile is where settings are saved.
	DataDir    string `json:"data_dir"`
	ConfigFile string `json:"config_file,omitempty"`
	// Memories is the store's size (a store with memories is not new).
	Memories int `json:"memories"`
	// Listen is the daemon's address: agents reach the proxy and MCP there.
	Listen string `json:"listen"`
}
