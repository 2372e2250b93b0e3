package harnesstext

import (
	"regexp"
	"strings"
	"testing"
)

func TestStrip(t *testing.T) {
	tests := []struct {
		name  string
		text  string
		kinds Kind
		want  string
	}{
		{"no tags", "  plain words  ", All, "plain words"},
		{"reminder", "<system-reminder>be brief</system-reminder>why the cron?", Injected, "why the cron?"},
		{"ours", "<memtray-context>\n- x\n</memtray-context>\nThe job runs nightly.", Injected, "The job runs nightly."},
		{"several", "a <ide_selection>s</ide_selection> b <task-notification>n</task-notification> c", Injected, "a  b  c"},
		{"attributes", `<system-reminder origin="hook">x</system-reminder>q`, Injected, "q"},
		{"unterminated kept", "why does <system-reminder> show up?", Injected, "why does <system-reminder> show up?"},
		{"unterminated then closed", "<system-reminder> open <ide_selection>s</ide_selection> end", Injected, "<system-reminder> open  end"},
		{"closing of another tag does not close", "<system-reminder>x</memtray-context> y", Injected, "<system-reminder>x</memtray-context> y"},
		{"longer name is another tag", "<system-reminders>x</system-reminders>", Injected, "<system-reminders>x</system-reminders>"},
		{"nested", "<system-reminder>a <memtray-context>b</memtray-context> c</system-reminder>d", Injected, "d"},
		{"only blocks", "<system-reminder>a</system-reminder>\n<ide_opened_file>f</ide_opened_file>", Injected, ""},
		{"command kept by Injected", "<bash-stdout>ok</bash-stdout> fix it", Injected, "<bash-stdout>ok</bash-stdout> fix it"},
		{"command removed by Command", "<bash-stdout>ok</bash-stdout> fix it", Command, "fix it"},
		{"caveat is both", "<local-command-caveat>c</local-command-caveat>x", Command, "x"},
		{"setup", "<environment_context><cwd>/a</cwd></environment_context>", Setup, ""},
		{"setup kept by Injected", "<user_instructions>u</user_instructions>", Injected, "<user_instructions>u</user_instructions>"},
		{"lone angle", "a < b and c<", All, "a < b and c<"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Strip(tt.text, tt.kinds); got != tt.want {
				t.Errorf("Strip(%q) = %q, want %q", tt.text, got, tt.want)
			}
		})
	}
}

func TestStripAll(t *testing.T) {
	tests := []struct{ text, want string }{
		{"[Request interrupted by user]", ""},
		{"keep going [Request interrupted by user for tool use] now", "keep going  now"},
		{"<command-name>/review</command-name><command-args>12</command-args>look at [Request interrupted] this", "look at  this"},
		{"[Request interrupted without end", "[Request interrupted without end"},
		{"<environment_context>e</environment_context><system-reminder>r</system-reminder>said", "said"},
		{"<system-reminder>r</system-reminder>The agent proposed a plan that was rejected by the user. The user chose to stay in plan mode rather than proceed with implementation.\n\nRejected plan:\n1. Always use yarn", ""},
		{"I see the agent proposed a plan that was rejected by the user.", "I see the agent proposed a plan that was rejected by the user."},
	}
	for _, tt := range tests {
		if got := StripAll(tt.text); got != tt.want {
			t.Errorf("StripAll(%q) = %q, want %q", tt.text, got, tt.want)
		}
	}
}

func TestOpensAndInterrupted(t *testing.T) {
	tests := []struct {
		text  string
		kinds Kind
		name  string
		ok    bool
	}{
		{"<bash-stdout>x</bash-stdout>", Command, "bash-stdout", true},
		{"<local-command-caveat>c", Command, "local-command-caveat", true},
		{"<system-reminder>x", Command, "", false},
		{"<system-reminder>x", Injected, "system-reminder", true},
		{" <bash-stdout>", Command, "", false},
		{"<bash-stdouts>", Command, "", false},
	}
	for _, tt := range tests {
		if name, ok := Opens(tt.text, tt.kinds); name != tt.name || ok != tt.ok {
			t.Errorf("Opens(%q) = %q, %v; want %q, %v", tt.text, name, ok, tt.name, tt.ok)
		}
	}
	if !Interrupted("[Request interrupted by user]") || Interrupted("[Request interrupted]") || Interrupted("x") {
		t.Error("Interrupted")
	}
}

// TestTagsUnique: a name is listed once.
func TestTagsUnique(t *testing.T) {
	seen := map[string]bool{}
	for _, tag := range Tags {
		if seen[tag.Name] || tag.Kind == 0 || tag.Kind&^All != 0 {
			t.Errorf("tag %q listed twice or without a valid kind", tag.Name)
		}
		seen[tag.Name] = true
	}
}

// reference is Strip as a regular expression: at the leftmost '<' that
// opens a tag of kinds, the block up to that tag's first closing tag.
func reference(kinds Kind) *regexp.Regexp {
	var alts []string
	for _, tag := range Tags {
		if tag.Kind&kinds != 0 {
			n := regexp.QuoteMeta(tag.Name)
			alts = append(alts, `<`+n+`(?:>|[ \t\r\n][^>]*>).*?</`+n+`>`)
		}
	}
	return regexp.MustCompile(`(?s)` + strings.Join(alts, "|"))
}

func FuzzStrip(f *testing.F) {
	for _, s := range []string{
		"<system-reminder>be brief</system-reminder>why?",
		"<memtray-context>\n- x\n</memtray-context>\nreply",
		"a <system-reminder> b <ide_selection x=1>s</ide_selection></system-reminder>",
		"<bash-input>ls</bash-input><bash-stdout>a</bash-stdout>",
		"[Request interrupted by user] <command-name>/x</command-name>",
		"<<system-reminder>>x</system-reminder>",
		"<environment_context\n><cwd>/a</cwd></environment_context>",
	} {
		f.Add(s)
	}
	refs := map[Kind]*regexp.Regexp{Injected: reference(Injected), Command: reference(Command), All: reference(All)}
	f.Fuzz(func(t *testing.T, s string) {
		for kinds, re := range refs {
			want := strings.TrimSpace(re.ReplaceAllString(s, ""))
			if got := Strip(s, kinds); got != want {
				t.Fatalf("Strip(%q, %d) = %q, the reference says %q", s, kinds, got, want)
			}
		}
		if got := StripAll(s); len(got) > len(s) {
			t.Fatalf("StripAll(%q) grew to %q", s, got)
		}
	})
}

// TestRejectedPlan: Claude Code's message about a rejected plan is told
// from a user's words that mention a rejected plan.
func TestRejectedPlan(t *testing.T) {
	for text, want := range map[string]bool{
		"The agent proposed a plan that was rejected by the user. The user chose to stay in plan mode rather than proceed with implementation.\n\nRejected plan:\n1. Rename the package": true,
		"  The agent proposed a plan that was rejected by the user.":                                       true,
		"The agent proposed a plan that was rejected by the user, and I agree: keep the old package name.": false,
		"Why was the plan rejected?": false,
		"":                           false,
	} {
		if got := RejectedPlan(text); got != want {
			t.Errorf("RejectedPlan(%q) = %v, want %v", text, got, want)
		}
	}
}
