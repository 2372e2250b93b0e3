package memories

import (
	"fmt"
	"slices"
	"strings"

	"github.com/memtray/memtray/backend/memory"
	"github.com/memtray/memtray/backend/store"
)

// Memory operations this service announces on the live feed (a
// MemoryEvent's op).
const (
	OpAdded   = "added"
	OpUpdated = "updated"
	OpDeleted = "deleted"
)

// AddRequest is a memory to store; the backend embeds it.
type AddRequest struct {
	Text       string  `json:"text"`
	Kind       string  `json:"kind,omitempty"`
	Type       string  `json:"type,omitempty"`
	Project    string  `json:"project,omitempty"`
	Source     string  `json:"source,omitempty"`
	Importance float64 `json:"importance,omitempty"`
}

// SearchRequest is a search over the store.
type SearchRequest struct {
	Query   string   `json:"query"`
	Project string   `json:"project,omitempty"`
	K       int      `json:"k,omitempty"`
	Mode    string   `json:"mode,omitempty"` // hybrid (default), bm25, vector
	Kinds   []string `json:"kinds,omitempty"`
}

// ListRequest pages through stored memories (GET /api/memories query
// parameters of the same names), newest first unless Sort says otherwise.
type ListRequest struct {
	Project string `json:"project,omitempty"`
	Kind    string `json:"kind,omitempty"`
	Limit   int    `json:"limit,omitempty"`
	Offset  int    `json:"offset,omitempty"`
	// Sort is one of ListSorts ("" is created); Order is asc or desc (""
	// is desc). Ties are broken by id, so pages do not overlap.
	Sort  string `json:"sort,omitempty"`
	Order string `json:"order,omitempty"`
	// Snoozed is include ("", the default), only or exclude.
	Snoozed string `json:"snoozed,omitempty"`
	// Superseded is exclude ("", the default: only the current versions,
	// what recall reads; the window's list and `memtray list` unless asked)
	// or include (the old versions too, each with its SupersededBy; the
	// window's "superseded too", `memtray list --superseded`). The default
	// was include until the window asked for it by name; the window and
	// the CLI now always send it.
	Superseded string `json:"superseded,omitempty"`
	// Q keeps the memories whose text contains it, ignoring case (at most
	// MaxListQuery bytes).
	Q string `json:"q,omitempty"`
	// Type keeps the memories of one type (one of memory.Types).
	Type string `json:"type,omitempty"`
	// Source keeps the memories of one source: exactly, or its family
	// before the first ":" ("ingest" keeps "ingest:design.md").
	Source string `json:"source,omitempty"`
	// Scope keeps the memories of one stored scope: personal, team, or
	// default (none set: the team configuration decides).
	Scope string `json:"scope,omitempty"`
	// Worktrees, with Project, also keeps the projects that look like
	// worktrees of it (WorktreeOf).
	Worktrees bool `json:"worktrees,omitempty"`
	// Facets asks for ListResponse.Facets (the whole store's counts).
	Facets bool `json:"facets,omitempty"`
}

// ListFacets counts the whole store's memories (superseded ones only when
// the request includes them, as List lists them) by the values the list
// filters on, for the filter menus: how many a filter would keep before
// the other filters.
type ListFacets struct {
	Projects map[string]int `json:"projects"`
	Kinds    map[string]int `json:"kinds"`
	Types    map[string]int `json:"types"`
	// Sources counts source families (SourceFamily).
	Sources map[string]int `json:"sources"`
	// Scopes counts the stored scopes (personal, team, default).
	Scopes map[string]int `json:"scopes"`
	// Worktrees groups the projects that look like worktrees of another
	// project (WorktreeOf) under it: repository -> worktree labels, sorted.
	Worktrees map[string][]string `json:"worktrees,omitempty"`
}

// WorktreeOf reports whether the project label looks like one of a git
// worktree of the repository project repo: repo, then "-", "_", "." or
// "+", then more ("memtray-ui" of "memtray"). Package project names a
// worktree after its repository, so such labels come from before that
// rule, from a directory no longer on this machine, or from a user; the
// grouping is a reading of the names, not of git.
func WorktreeOf(label, repo string) bool {
	if repo == "" || len(label) < len(repo)+2 || !strings.HasPrefix(label, repo) {
		return false
	}
	return strings.ContainsRune("-_.+", rune(label[len(repo)]))
}

// groupWorktrees groups the labels of projects under the longest other
// label they look like a worktree of.
func groupWorktrees(projects map[string]int) map[string][]string {
	var out map[string][]string
	for label := range projects {
		repo := ""
		for r := range projects {
			if r != label && len(r) > len(repo) && WorktreeOf(label, r) {
				repo = r
			}
		}
		if repo == "" {
			continue
		}
		if out == nil {
			out = map[string][]string{}
		}
		out[repo] = append(out[repo], label)
	}
	for _, ls := range out {
		slices.Sort(ls)
	}
	return out
}

// ScopeDefaultName names the empty (default) scope in ListRequest.Scope
// and ListFacets.Scopes.
const ScopeDefaultName = "default"

// scopeName is s as ListRequest.Scope and ListFacets.Scopes name it.
func scopeName(s memory.Scope) string {
	if s == memory.ScopeDefault {
		return ScopeDefaultName
	}
	return string(s)
}

// scopeOf is the stored scope ListRequest.Scope names (a valid name).
func scopeOf(name string) memory.Scope {
	if name == ScopeDefaultName {
		return memory.ScopeDefault
	}
	return memory.Scope(name)
}

// SourceFamily is a source without what follows its first ":"
// ("ingest:design.md" -> "ingest"): store.SourceFamily.
func SourceFamily(source string) string { return store.SourceFamily(source) }

// ListResponse is one page of memories and the total that matched.
type ListResponse struct {
	Memories []ListedMemory `json:"memories"`
	Total    int            `json:"total"`
	// Facets is set when the request asked for it.
	Facets *ListFacets `json:"facets,omitempty"`
}

// MemoryPatch is what PATCH /api/memories/{id} takes; absent fields stay.
type MemoryPatch struct {
	Text       *string  `json:"text,omitempty"`
	Kind       *string  `json:"kind,omitempty"`
	Type       *string  `json:"type,omitempty"`
	Project    *string  `json:"project,omitempty"`
	Importance *float64 `json:"importance,omitempty"`
}

// EditResult is what PATCH /api/memories/{id} answers. A new text makes a
// new version (new id; the old one stays as history, superseded); other
// changes are made in place.
type EditResult struct {
	Memory ListedMemory `json:"memory"`
	// Previous is the id of the version a text change superseded.
	Previous string `json:"previous,omitempty"`
}

// ListedMemory is a memory as the UI lists it: without its embedding, with
// the computed columns.
type ListedMemory struct {
	memory.Memory
	// Stickiness is access_count / max(reinforced_count, 1), 0 below the
	// steward's sticky_min_access (see steward.Stickiness).
	Stickiness float64 `json:"stickiness"`
	AgeDays    float64 `json:"age_days"`
	Snoozed    bool    `json:"snoozed"`
}

// List sort keys and bounds.
var (
	// ListSorts are the sort keys of GET /api/memories.
	ListSorts = []string{"created", "updated", "importance", "access", "reinforced", "stickiness", "last_used", "kind", "project"}
	// MaxListQuery bounds the q substring filter.
	MaxListQuery = 200
)

// MemoryHistory is what GET /api/memories/{id}/history answers.
type MemoryHistory struct {
	ID string `json:"id"`
	// Versions is the supersession chain, oldest first, the asked memory
	// among them (without embeddings).
	Versions []memory.Memory `json:"versions"`
	// Merged are the memories the steward merged into a version of the
	// chain, while they are in the trash.
	Merged []store.TrashedMemory `json:"merged"`
	// Truncated: the chain is longer than MaxHistory.
	Truncated bool `json:"truncated,omitempty"`
}

// MaxHistory bounds the versions a history walks in each direction.
const MaxHistory = 100

// Validate checks a ListRequest's sort, order, snoozed, q, kind, type,
// source and project, with a problem per field.
func (r *ListRequest) Validate() error {
	fields := map[string]string{}
	if r.Sort != "" && !slices.Contains(ListSorts, r.Sort) {
		fields["sort"] = "must be one of " + strings.Join(ListSorts, ", ")
	}
	if r.Order != "" && r.Order != "asc" && r.Order != "desc" {
		fields["order"] = "must be asc or desc"
	}
	switch r.Snoozed {
	case "", "include", "only", "exclude":
	default:
		fields["snoozed"] = "must be include, only or exclude"
	}
	switch r.Superseded {
	case "", "include", "exclude":
	default:
		fields["superseded"] = "must be include or exclude"
	}
	if len(r.Q) > MaxListQuery || !memory.ValidUTF8(r.Q) {
		fields["q"] = fmt.Sprintf("must be at most %d bytes of UTF-8", MaxListQuery)
	}
	if r.Kind != "" && !memory.Kind(r.Kind).Valid() {
		fields["kind"] = fmt.Sprintf("unknown kind %q", r.Kind)
	}
	if r.Type != "" && !memory.Type(r.Type).Valid() {
		fields["type"] = fmt.Sprintf("unknown type %q", r.Type)
	}
	if len(r.Source) > MaxListQuery || !memory.ValidUTF8(r.Source) {
		fields["source"] = fmt.Sprintf("must be at most %d bytes of UTF-8", MaxListQuery)
	}
	switch r.Scope {
	case "", ScopeDefaultName, string(memory.ScopePersonal), string(memory.ScopeTeam):
	default:
		fields["scope"] = "must be personal, team or default"
	}
	if len(r.Project) > MaxListQuery || !memory.ValidUTF8(r.Project) {
		fields["project"] = fmt.Sprintf("must be at most %d bytes of UTF-8", MaxListQuery)
	}
	if len(fields) > 0 {
		return &memory.FieldErrors{Message: "invalid list request", Fields: fields}
	}
	return nil
}
