package capture

import "testing"

// TestPromptMentioningATag: a prompt that names an injected tag without
// closing it is the user's words, kept whole (it used to be cut at the tag).
func TestPromptMentioningATag(t *testing.T) {
	tests := []struct{ name, body, want string }{
		{"mention", `{"model":"m","messages":[{"role":"user","content":"why does <system-reminder> show up in my prompts?"}]}`,
			"why does <system-reminder> show up in my prompts?"},
		{"closed block still removed", `{"model":"m","messages":[{"role":"user","content":"<system-reminder>x</system-reminder>q"}]}`,
			"q"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := parseAnthropicRequest([]byte(tt.body))
			if err != nil {
				t.Fatal(err)
			}
			if r.user != tt.want {
				t.Errorf("user = %q, want %q", r.user, tt.want)
			}
		})
	}
}
