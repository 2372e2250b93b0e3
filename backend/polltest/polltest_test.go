package polltest

import (
	"fmt"
	"testing"
)

// TestUntil: Until returns as soon as cond holds, after as many looks as
// it took, and Eventually passes then.
func TestUntil(t *testing.T) {
	tests := []struct {
		name  string
		after int // cond holds from this look on
	}{
		{"at once", 1},
		{"at the second look", 2},
		{"after some pauses", 8},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			looks := 0
			if !Until(func() bool { looks++; return looks >= tc.after }) {
				t.Fatal("Until gave up")
			}
			if looks != tc.after {
				t.Errorf("%d looks, want %d", looks, tc.after)
			}
			looks = 0
			Eventually(t, tc.name, func() error {
				if looks++; looks < tc.after {
					return fmt.Errorf("look %d", looks)
				}
				return nil
			})
			if looks != tc.after {
				t.Errorf("Eventually: %d looks, want %d", looks, tc.after)
			}
		})
	}
}

// TestUntilGuard: past the guard, one last look decides.
func TestUntilGuard(t *testing.T) {
	for _, holds := range []bool{false, true} {
		looks := 0
		if got := until(func() bool { looks++; return holds }, -1); got != holds || looks != 1 {
			t.Errorf("until past the guard, cond %v: %v after %d looks, want %v after 1", holds, got, looks, holds)
		}
	}
}

// TestWait: Wait returns once cond holds, without failing the test.
func TestWait(t *testing.T) {
	looks := 0
	Wait(t, "the third look", func() bool { looks++; return looks >= 3 }, func() string { return fmt.Sprint(looks) })
	if looks != 3 {
		t.Errorf("%d looks, want 3", looks)
	}
}
