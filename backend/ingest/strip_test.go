package ingest

import "testing"

// TestStripInjectedTags: the strip stage removes every block the harness
// injects, not only memtray's and the system reminders (ide_opened_file,
// ide_selection, task-notification and the rest used to reach the judge).
func TestStripInjectedTags(t *testing.T) {
	tests := []struct{ name, text, want string }{
		{"reminder", "<system-reminder>r</system-reminder>why?", "why?"},
		{"ours", "<memtray-context>\n- m\n</memtray-context>\nreply", "reply"},
		{"ide", "<ide_opened_file>The user opened a.go</ide_opened_file>fix the bug", "fix the bug"},
		{"selection", "<ide_selection>lines 1-3</ide_selection>\nexplain", "explain"},
		{"notification", "<task-notification>done</task-notification>ok", "ok"},
		{"mention kept", "a <system-reminder> tag", "a <system-reminder> tag"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := StripInjected(tt.text); got != tt.want {
				t.Errorf("StripInjected(%q) = %q, want %q", tt.text, got, tt.want)
			}
		})
	}
}
