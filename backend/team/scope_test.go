package team

import (
	"testing"

	"github.com/memtray/memtray/backend/memory"
)

func TestSharedByDefault(t *testing.T) {
	tests := []struct {
		name     string
		project  string
		typ      memory.Type
		projects []string
		want     bool
	}{
		{"listed project", "memtray", memory.TypeProject, []string{"other", "memtray"}, true},
		{"unlisted project", "secret-side-project", memory.TypeProject, []string{"memtray"}, false},
		{"every project", "anything", memory.TypeReference, []string{"*"}, true},
		{"a preference stays personal", "memtray", memory.TypeUser, []string{"*"}, false},
		{"no project", "", memory.TypeProject, []string{"*"}, false},
		{"nothing shared", "memtray", memory.TypeProject, nil, false},
		{"feedback type in a listed project", "memtray", memory.TypeFeedback, []string{"memtray"}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := memory.Memory{Project: tt.project, Type: tt.typ, Text: "x"}
			if got := SharedByDefault(m, tt.projects); got != tt.want {
				t.Errorf("SharedByDefault = %v, want %v", got, tt.want)
			}
		})
	}
}
