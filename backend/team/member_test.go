package team

import (
	"strings"
	"testing"
)

// TestValidRole: role names from the command line are checked before
// they reach the database.
func TestValidRole(t *testing.T) {
	for _, tc := range []struct {
		role string
		ok   bool
	}{
		{"alice", true},
		{"dev-team.bob", true},
		{"Ünïcode", true},
		{strings.Repeat("r", 63), true},
		{"", false},
		{strings.Repeat("r", 64), false},
		{"a\x00b", false},
		{"bad\xffutf8", false},
	} {
		if err := ValidRole(tc.role); (err == nil) != tc.ok {
			t.Errorf("ValidRole(%q) = %v, want ok %v", tc.role, err, tc.ok)
		}
	}
}
