package steward

import (
	"testing"

	"github.com/memtray/memtray/backend/memory"
)

// TestRefusalKind: each reason the plan gives a refused pair has its kind.
func TestRefusalKind(t *testing.T) {
	base := "The deploy script pushes the api service image to the staging cluster after the integration tests pass on the main branch"
	pair := func(change func(a, b *memory.Memory)) (*memory.Memory, *memory.Memory) {
		a := rec{id: "a", text: base + " with timeout 300s", typ: memory.TypeProject, created: 3, accessed: -1}.memory(t)
		b := rec{id: "b", text: base + " with timeout 300s.", typ: memory.TypeProject, created: 4, accessed: -1}.memory(t)
		change(&a, &b)
		return &a, &b
	}
	tokens := func() string {
		a, b := pair(func(_, b *memory.Memory) { b.Text = base + " with timeout 120s" })
		r := merge(a, b)
		return r.refused
	}
	cases := []struct {
		name, reason, want string
	}{
		{"token", tokens(), RefusedToken},
		{"pinned", func() string {
			a, b := pair(func(_, b *memory.Memory) { b.Pinned = true })
			return notMergeable(a, b, now)
		}(), RefusedPinned},
		{"snoozed", func() string {
			a, b := pair(func(a, _ *memory.Memory) { a.CooldownUntil = now.Add(day) })
			return notMergeable(a, b, now)
		}(), RefusedSnoozed},
		{"types", func() string {
			a, b := pair(func(a, _ *memory.Memory) { a.Type = memory.TypeUser })
			return notMergeable(a, b, now)
		}(), RefusedTypes},
		{"unknown", "something else", "other"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if tc.reason == "" {
				t.Fatal("no reason given")
			}
			if got := RefusalKind(tc.reason); got != tc.want {
				t.Errorf("RefusalKind(%q) = %q, want %q", tc.reason, got, tc.want)
			}
		})
	}
}
