package ingest

import "testing"

func TestSentences(t *testing.T) {
	tests := []struct {
		prose string
		want  int
	}{
		{"Framer Motion (a.k.a. Motion) drives page transitions. It runs at 60 fps.", 2},
		{"Use a short TTL, e.g. 5 minutes, for the cache.", 1},
		{"- one item\n- two items", 2},
		{"Version v1.2 is out. See main.go for details!", 2},
	}
	for _, tc := range tests {
		if got := sentences(tc.prose); len(got) != tc.want {
			t.Errorf("sentences(%q) = %d %+v, want %d", tc.prose, len(got), got, tc.want)
		}
	}
}
