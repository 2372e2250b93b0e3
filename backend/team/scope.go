package team

import "github.com/memtray/memtray/backend/memory"

// AllProjects in a project list shares every project.
const AllProjects = "*"

// SharedByDefault reports whether a local memory is a team memory unless
// someone moved it: its project is one of projects (AllProjects lists
// every project) and its type is not memory.TypeUser (a person's
// preferences stay personal). A memory without a project is personal:
// it belongs to no project a team shares. The caller redacts before
// anything is pushed, as for every write.
func SharedByDefault(m memory.Memory, projects []string) bool {
	if m.Type == memory.TypeUser || m.Project == "" {
		return false
	}
	for _, p := range projects {
		if p == AllProjects || p == m.Project {
			return true
		}
	}
	return false
}
