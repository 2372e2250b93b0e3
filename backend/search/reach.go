package search

import (
	"context"
	"slices"
	"strings"
	"unicode"

	"github.com/memtray/memtray/backend/memory"
)

// A memory of a project is knowledge of that project: its build quirks,
// its files, the decisions taken in it. The prompt hook's recall
// (Query.ProjectScoped) therefore reaches, besides the memories of the
// current project, only what is not tied to one project (the user's own
// memories, memory.TypeUser: preferences and instructions such as "never
// add the co-authored-by footer") and the memories of a project the prompt
// names ("how did spotter set up OpenTelemetry?"), which then rank as the
// current project's do (the project boost: Signals.Named). A memory of no
// project is in reach of a prompt of no project. Inside a project, one
// written on purpose without a project (MCP's memory_add, `memtray add`,
// a document) is in reach, as meant to hold everywhere; one a session
// made (sessionSources: a session file naming no working directory, a
// history read from stdin) only when it is the user's own (it travels as
// every user memory does): any other is a fact of a project memtray could
// not tell, which another project's prompt is not asking about. A prompt
// that shares a technology word
// with another project's memories ("Next.js", "GitHub Actions") is not
// asking about that project, and in a new repository a developer wants
// their own preferences recalled, not another repository's build quirks.
// An explicit search (the MCP search tool, `memtray search`, the UI) is
// not scoped: it searches whatever its caller asks for.

// travellingTypes are the memory types a scoped search reaches in every
// project: the user's own memories.
var travellingTypes = []memory.Type{memory.TypeUser}

// sessionSources are the sources of the memories sessions make (session
// files, the capture proxy): of no project, they are in reach inside a
// project only when of a travelling type.
var sessionSources = []string{memory.SourceTranscript, memory.SourceCapture}

// scope narrows a scoped query's filter to its reach (see above) before the
// legs run: Filter.Projects is the current project, the projects the text
// names and "" (no project), but for sessionSources inside a project
// (Filter.NoProjectBut), Filter.PlusTypes the travelling types. A query
// with a project filter is left as it is (its caller chose the project).
func (e *Engine) scope(_ context.Context, r *queryRun) error {
	q := &r.q
	if !q.ProjectScoped || q.Filter.Project != "" {
		return nil
	}
	known := slices.DeleteFunc(e.idx.Projects(), func(p string) bool { return p == q.Project })
	r.res.NamedProjects = NamedProjects(q.Text, known)
	reach := []string{""}
	if q.Project != "" {
		reach = append(reach, q.Project)
		q.Filter.NoProjectBut = sessionSources
	}
	q.Filter.Projects = append(reach, r.res.NamedProjects...)
	q.Filter.PlusTypes = travellingTypes
	r.res.Scoped = true
	return nil
}

// NamedProjects returns the projects (of projects, in their order) that
// text names: a project's name is named when its words (its runs of
// letters and digits, case folded) occur in text one after the other as
// whole words. So "spotter-gqc" is named by "spotter-gqc", "Spotter GQC"
// and a path ".../spotter_gqc/lib", not by "spotter" alone (that would be
// a prefix of the name, not the name), and "OpenPrintKit" by
// "openprintkit" (a name is matched as it is written, not split at its
// capitals). A name without a letter or digit is never named.
func NamedProjects(text string, projects []string) []string {
	words := projectWords(text)
	var out []string
	for _, p := range projects {
		pw := projectWords(p)
		if len(pw) == 0 || len(pw) > len(words) {
			continue
		}
		for i := 0; i+len(pw) <= len(words); i++ {
			if slices.Equal(words[i:i+len(pw)], pw) {
				out = append(out, p)
				break
			}
		}
	}
	return out
}

// projectWords splits s into its runs of letters and digits, lowercased.
func projectWords(s string) []string {
	return strings.FieldsFunc(strings.ToLower(s), func(c rune) bool { return !unicode.IsLetter(c) && !unicode.IsDigit(c) })
}
