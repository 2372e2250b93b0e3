package memory

import "testing"

func TestProjectName(t *testing.T) {
	for in, want := range map[string]string{
		"/home/me/src/memtray":  "memtray",
		"/home/me/src/memtray/": "memtray",
		`C:\Users\me\app`:       "app",
		"app":                   "app",
		"/":                     "",
		"":                      "",
	} {
		if got := ProjectName(in); got != want {
			t.Errorf("ProjectName(%q) = %q, want %q", in, got, want)
		}
	}
}
