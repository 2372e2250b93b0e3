package store

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/memtray/memtray/backend/memory"
)

// entry is what the store keeps in memory about each record: enough to
// filter search candidates without reading bbolt.
type entry struct {
	seq, tseq, ord uint64
	project        string
	kind           memory.Kind
	source         string
	created        int64 // unix nanoseconds
	cooldown       int64 // unix nanoseconds; 0 when never snoozed
	superseded     bool
	// tokens is the text's length as the text index counts it (textLength
	// of lower), -1 until counted: an entry loaded at Open is counted
	// only when it is replaced or deleted (setEntry, dropEntry).
	tokens int32
	listFields
}

func unixNano(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixNano()
}

// interner shares the few distinct project/source strings between entries.
type interner map[string]string

func (in interner) get(s string) string {
	if s == "" {
		return ""
	}
	if v, ok := in[s]; ok {
		return v
	}
	in[s] = s
	return s
}

// getBytes is get for a byte slice (copied only when new).
func (in interner) getBytes(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	if in == nil {
		return string(b)
	}
	if v, ok := in[string(b)]; ok {
		return v
	}
	v := string(b)
	in[v] = v
	return v
}

func entryFromHeader(h recHeader, in interner) *entry {
	return &entry{
		seq: h.seq, tseq: h.tseq, ord: h.ord,
		project:    in.get(h.project),
		kind:       memory.Kind(in.get(string(h.kind))),
		source:     in.get(h.source),
		created:    h.created,
		cooldown:   h.cooldown,
		superseded: h.superseded,
		tokens:     -1,
	}
}

func entryFromMemory(h recHeader, m *memory.Memory, in interner) *entry {
	e := entryFromHeader(h.withFields(m), in)
	e.listFields = listFieldsOf(m.Text, m.Type, m.Scope, m.Importance, m.Pinned, m.AccessCount, m.ReinforcedCount,
		m.UpdatedAt, m.LastAccessed, -1)
	return e
}

// validate checks a Filter supplied by a caller.
func (f *Filter) validate() error {
	var problems []string
	for _, k := range f.Kinds {
		if !k.Valid() {
			problems = append(problems, fmt.Sprintf("unknown kind %q in filter", k))
		}
	}
	if !f.Since.IsZero() && !f.Until.IsZero() && !f.Until.After(f.Since) {
		problems = append(problems, "filter time range is empty (until is not after since)")
	}
	if len(f.Project) > 256 || !memory.ValidUTF8(f.Project) || !memory.ValidUTF8(f.Source) {
		problems = append(problems, "filter project or source is too long or not UTF-8")
	}
	for _, p := range f.Projects {
		if len(p) > 256 || !memory.ValidUTF8(p) {
			problems = append(problems, "filter projects: a project is too long or not UTF-8")
			break
		}
	}
	for _, t := range f.PlusTypes {
		if !t.Valid() {
			problems = append(problems, fmt.Sprintf("unknown type %q in filter", t))
		}
	}
	if len(f.PlusTypes) > 0 && len(f.Projects) == 0 {
		problems = append(problems, "filter plus_types widens projects: it needs projects")
	}
	if len(f.NoProjectBut) > 0 && !slices.Contains(f.Projects, "") {
		problems = append(problems, "filter no_project_but narrows the memories of no project: it needs \"\" in projects")
	}
	if len(f.Model) > maxModel || !memory.ValidUTF8(f.Model) {
		problems = append(problems, "filter model is too long or not UTF-8")
	}
	if len(problems) > 0 {
		return &memory.ValidationError{Problems: problems}
	}
	return nil
}

// sourcePrefix reports whether the Source filter is a prefix ("ingest:").
func (f *Filter) sourcePrefix() bool { return strings.HasSuffix(f.Source, ":") }

// anyProject reports whether f matches every project.
func (f *Filter) anyProject() bool { return f.Project == "" }

// matchSource applies the Source part of f.
func (f *Filter) matchSource(e *entry) bool {
	switch {
	case f.Source == "":
		return true
	case f.sourcePrefix():
		return strings.HasPrefix(e.source, f.Source)
	default:
		return e.source == f.Source
	}
}

// inProjects reports whether a memory of project and source is of
// Filter.Projects (a memory of no project with a source of NoProjectBut
// is not).
func (f *Filter) inProjects(project, source string) bool {
	if project == "" && slices.Contains(f.NoProjectBut, source) {
		return false
	}
	return slices.Contains(f.Projects, project)
}

// match reports whether e passes f at now (unix nanoseconds).
func (f *Filter) match(e *entry, now int64) bool {
	if f.Project != "" && e.project != f.Project {
		return false
	}
	if len(f.Projects) > 0 && !f.inProjects(e.project, e.source) && !slices.Contains(f.PlusTypes, e.typ) {
		return false
	}
	if len(f.Kinds) > 0 {
		ok := false
		for _, k := range f.Kinds {
			if e.kind == k {
				ok = true
				break
			}
		}
		if !ok {
			return false
		}
	}
	if !f.matchSource(e) {
		return false
	}
	if !f.Since.IsZero() && e.created < f.Since.UnixNano() {
		return false
	}
	if !f.Until.IsZero() && e.created >= f.Until.UnixNano() {
		return false
	}
	if !f.IncludeSnoozed && e.cooldown > now {
		return false
	}
	if !f.IncludeSuperseded && e.superseded {
		return false
	}
	return true
}

// matchMemory applies f to a decoded record.
func (f *Filter) matchMemory(m *memory.Memory, now int64) bool {
	e := entry{project: m.Project, kind: m.Kind, source: m.Source, created: unixNano(m.CreatedAt),
		cooldown: unixNano(m.CooldownUntil), superseded: m.SupersededBy != ""}
	e.typ = m.Type
	return f.match(&e, now)
}
