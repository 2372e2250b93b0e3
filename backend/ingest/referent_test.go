package ingest

import (
	"strings"
	"testing"
)

func TestPronounFindingKeepsReferent(t *testing.T) {
	tests := []struct {
		name   string
		texts  []string
		want   []string // substrings of one kept statement
		absent []string // substrings no kept statement has
	}{
		{
			name:  "the step that named what the agent checks joins the finding that answers it with a pronoun",
			texts: []string{"Let me check whether `InvoiceView` still calls `round_cents/1`.", "It's only in `billing/ledger.ex`, which keeps its own copy of the helper.", "Done."},
			want:  []string{"round_cents/1", "its own copy"},
		},
		{
			name:  "a bare file name is a referent too",
			texts: []string{"I need to add the mailer settings to runtime.exs.", "This is the minimal config the SmtpMailer tests need.", "Done."},
			want:  []string{"runtime.exs", "minimal config the SmtpMailer tests need"},
		},
		{
			name:   "narration naming nothing is no referent",
			texts:  []string{"Let me look at it again.", "It's only in `billing/ledger.ex`, which keeps its own copy of the helper.", "Done."},
			want:   []string{"its own copy"},
			absent: []string{"look at it again"},
		},
		{
			name:   "a finding naming its own subject takes no referent",
			texts:  []string{"Let me check whether `InvoiceView` still calls `round_cents/1`.", "The `billing/ledger.ex` module keeps its own copy of the helper.", "Done."},
			want:   []string{"its own copy"},
			absent: []string{"Let me check"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			turns := GroupTurns(sessionOf("s", "does the invoice view round the same way?", tt.texts...))
			var kept []string
			for _, c := range Distill(turns[0], nil) {
				if c.Keep {
					kept = append(kept, c.Text)
				}
			}
			found := false
			for _, k := range kept {
				all := true
				for _, w := range tt.want {
					all = all && strings.Contains(k, w)
				}
				found = found || all
				for _, a := range tt.absent {
					if strings.Contains(k, a) {
						t.Fatalf("kept %q holds %q", k, a)
					}
				}
			}
			if !found {
				t.Fatalf("no kept statement holds all of %q: %q", tt.want, kept)
			}
		})
	}
}
