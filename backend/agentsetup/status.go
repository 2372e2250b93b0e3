package agentsetup

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// Status is how one client stands.
type Status struct {
	Client
	// Detected says the agent is installed: its config directory (or
	// file) exists in the home directory.
	Detected bool
	// Configured says setup has a record for the client: it set the
	// client up and the setup was not undone.
	Configured bool
	// Updated is when setup last changed the client's files (zero when
	// not configured).
	Updated time.Time
	// Files are the config files setup may change for the client, and any
	// other its record names.
	Files []FileStatus
	// Problem says why the record cannot be read ("" when it can).
	Problem string
	// NeedReview lists memtray's hooks (by the agent's event name) that
	// the agent skips until the user reviews and trusts them: Codex runs a
	// hook only with a trust entry in config.toml matching it (setup writes
	// those; an edited command, or a hook moved in hooks.json, loses it).
	NeedReview []string
	// ReviewHint says how to trust them ("" when NeedReview is empty).
	ReviewHint string
}

// CodexReviewHint tells the user how to trust hooks in Codex.
const CodexReviewHint = "run `codex` and answer its \"Hooks need review\" prompt with \"Trust all and continue\" (or trust them in /hooks), or run `memtray setup codex` again to record the trust; until then Codex skips them (silently in `codex exec`)"

// FileStatus is one config file of a client.
type FileStatus struct {
	Path   string
	Exists bool
	// Backup is the copy setup kept of the file before its first change
	// ("" when setup created the file or has not changed it).
	Backup string
}

// Status says whether client is installed and set up, and which files are
// its configs. Reading nothing but file metadata and the record, it writes
// nothing.
func (e Env) Status(client string) (Status, error) {
	c, err := Lookup(client)
	if err != nil {
		return Status{}, err
	}
	if e.Home == "" || !filepath.IsAbs(e.Home) {
		return Status{}, fmt.Errorf("setup: the home directory %q is not an absolute path", e.Home)
	}
	st := Status{Client: c}
	for _, m := range c.markers {
		if _, err := os.Stat(filepath.Join(e.Home, filepath.FromSlash(m))); err == nil {
			st.Detected = true
			break
		}
	}
	index := map[string]int{}
	for _, rel := range c.files {
		p := filepath.Join(e.Home, filepath.FromSlash(rel))
		index[p] = len(st.Files)
		st.Files = append(st.Files, FileStatus{Path: p, Exists: exists(p)})
	}
	rec, ok, err := loadSetupRecord(e.RecordPath(client))
	if client == "codex" {
		var own []string
		for _, f := range rec.Files {
			own = append(own, f.Hooks...)
		}
		var rerr error
		if st.NeedReview, rerr = codexNeedReview(e.Home, own); rerr != nil {
			st.Problem = rerr.Error()
		} else if len(st.NeedReview) > 0 {
			st.ReviewHint = CodexReviewHint
		}
	}
	switch {
	case err != nil:
		st.Problem = err.Error()
	case ok && len(rec.Files) > 0:
		st.Configured, st.Updated = true, rec.Updated
		for _, fr := range rec.Files {
			i, known := index[fr.Path]
			if !known {
				i = len(st.Files)
				index[fr.Path] = i
				st.Files = append(st.Files, FileStatus{Path: fr.Path, Exists: exists(fr.Path)})
			}
			st.Files[i].Backup = fr.Backup
		}
	}
	return st, nil
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil || !errors.Is(err, os.ErrNotExist)
}

// codexNeedReview lists memtray's hooks in home's ~/.codex/hooks.json that
// ~/.codex/config.toml does not trust (codexTrustState); none when there is
// no hooks.json.
func codexNeedReview(home string, own []string) ([]string, error) {
	hooksPath := filepath.Join(home, ".codex", "hooks.json")
	hooks, err := readConfigFile(hooksPath)
	if err != nil || !hooks.existed {
		return nil, err
	}
	cfg, err := readConfigFile(filepath.Join(home, ".codex", "config.toml"))
	if err != nil {
		return nil, err
	}
	return codexTrustState(hooksPath, hooks.before, cfg.before, own)
}
