package ingest

import (
	"strings"
	"testing"
)

func TestDropRevisedActionOnly(t *testing.T) {
	finding := "The `orders/export.go` writer skips rows whose `shipped_at` is empty, so the nightly export file misses every pending order."
	tests := []struct {
		name    string
		later   string
		revised bool
	}{
		{"a correction of the finding revises it", "Actually the export writer keeps the pending orders; `shipped_at` is empty only in the fixture rows of `orders/export.go`.", true},
		{"the agent's next step holding a cue word does not", "Let me adjust the export test to check what actually lands in the file for `shipped_at` rows.", false},
		{"an offer holding a cue word does not", "If you prefer, we can write the pending orders of `orders/export.go` to a separate file instead.", false},
		{"a change made instead revises it", "Switched the `orders/export.go` writer to keep rows with an empty `shipped_at` instead of skipping them.", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			turns := GroupTurns(sessionOf("s", "why does the export miss orders?", "Let me read the writer.", finding, tt.later, "Done."))
			checkRevised(t, turns[0], "misses every pending order", tt.revised)
		})
	}
}

func TestDropRevisedCueWord(t *testing.T) {
	finding := "The `ledger/import.go` reader buffers each statement file instead of streaming it, so a large bank export needs gigabytes of memory."
	tests := []struct {
		name    string
		later   string
		off     bool
		revised bool
	}{
		{"a correction of the finding revises it", "Actually the `ledger/import.go` reader streams the statement file; the memory goes to the parsed rows.", false, true},
		{"a sentence sharing only the cue word does not", "Turns out the nightly reconciliation job compares totals instead.", false, false},
		{"it did with the cue word counted", "Turns out the nightly reconciliation job compares totals instead.", true, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			revisionOff["cue-word"] = tt.off
			defer delete(revisionOff, "cue-word")
			turns := GroupTurns(sessionOf("s", "why does the import use so much memory?", "Let me read the reader.", finding, tt.later, "Done."))
			checkRevised(t, turns[0], "needs gigabytes of memory", tt.revised)
		})
	}
}

func TestDropRevisedFocus(t *testing.T) {
	finding := "The `billing/invoice.go` renderer rounds each line total to cents before summing, so long invoices drift by a cent."
	tests := []struct {
		name    string
		later   string
		off     bool
		revised bool
	}{
		{"the clause of the cue names the finding's subject", "The invoice renderer actually sums before rounding, so the drift comes from the tax lines.", false, true},
		{"a cue in a clause about something else does not revise", "The invoice renderer tests now share one table, instead of duplicating the fixtures.", false, false},
		{"it did with the whole sentence as its subject", "The invoice renderer tests now share one table, instead of duplicating the fixtures.", true, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// The object rule (cueObjects) keeps this finding too: its
			// "instead of" object is not what the finding says.
			revisionOff["focus"], revisionOff["object"] = tt.off, tt.off
			defer delete(revisionOff, "focus")
			defer delete(revisionOff, "object")
			turns := GroupTurns(sessionOf("s", "why are the invoices off by a cent?", "Let me read the renderer.", finding, tt.later, "Done."))
			checkRevised(t, turns[0], "drift by a cent", tt.revised)
		})
	}
}

func TestCueFocus(t *testing.T) {
	tests := []struct {
		text string
		want []string // tokens the focus must hold
		not  []string // tokens it must not
	}{
		{"Let's move the session path into one function, instead of duplicating it.", []string{"duplicat"}, []string{"session", "function", "instead"}},
		{"Resolved the warning by calling :otel_span.hex_id/1 instead of parsing the record.", []string{"warning", "record"}, nil},
		{"Instead, we only added the `tenantKey` field.", []string{"tenantkey", "field"}, []string{"instead"}},
		{"Used implicit try (rescue at function level) instead.", []string{"function"}, nil},
		{"The cache is actually keyed by tenant: see `cache/key.go`.", []string{"cache", "tenant"}, []string{"cache/key.go"}},
		// Typographic quotes before the cue's clause: its offsets are those
		// of the folded text (lower), not of the text as written.
		{"The “old” and “new” notes were wrong; the queue actually lives in redis_store.go", []string{"redis_store.go", "queue"}, []string{"notes"}},
	}
	for _, tt := range tests {
		got := cueFocus(tt.text)
		for _, w := range tt.want {
			if !got[w] {
				t.Errorf("cueFocus(%q) = %v, want %q in it", tt.text, got, w)
			}
		}
		for _, w := range tt.not {
			if got[w] {
				t.Errorf("cueFocus(%q) = %v, want no %q", tt.text, got, w)
			}
		}
	}
}

func TestCueFocusCueAlone(t *testing.T) {
	revisionOff["cue-alone"] = true
	defer delete(revisionOff, "cue-alone")
	if got := cueFocus("Instead, we only added the `tenantKey` field."); len(got) != 0 {
		t.Fatalf("cueFocus with the cue alone not widened = %v, want nothing", got)
	}
}

// TestRevisionCuePersist: "persist" is a revision cue only about a
// problem that outlasts a fix, not about what a program persists.
func TestRevisionCuePersist(t *testing.T) {
	tests := []struct {
		st   string
		want bool
	}{
		{"The error persists after the `GOFLAGS` change.", true},
		{"The same issue persisted with `-race` off.", true},
		{"The problem still persists on Windows.", true},
		{"Both warnings also persist in `vet` output.", true},
		{"It still persists after a restart.", true},
		{"They persist sessions in `bbolt` under `~/.cache/app`.", false},
		{"The store persists every write before acking it.", false},
		{"Settings are persisted to `config.toml` on exit.", false},
		{"The daemon persists its cursor per transcript file.", false},
	}
	for _, tc := range tests {
		if got := revisionCue.MatchString(lower(tc.st)); got != tc.want {
			t.Errorf("revisionCue(%q) = %v, want %v", tc.st, got, tc.want)
		}
	}
}

// TestDropRevisedPersist: a later sentence telling what the code
// persists does not revise a finding it shares a subject with; one
// telling that the problem persists does.
func TestDropRevisedPersist(t *testing.T) {
	finding := "The `orders/export.go` writer skips rows whose `shipped_at` is empty, so the nightly export file misses every pending order."
	tests := []struct {
		name    string
		later   string
		revised bool
	}{
		{"what the code persists revises nothing", "The `orders/export.go` writer persists the pending orders with an empty `shipped_at` in `pending.db` for the next run.", false},
		{"a problem that persists revises it", "The `orders/export.go` problem persists: pending orders with an empty `shipped_at` are still missing from the export file.", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			turns := GroupTurns(sessionOf("s", "why does the export miss orders?", "Let me read the writer.", finding, tt.later, "Done."))
			checkRevised(t, turns[0], "misses every pending order", tt.revised)
		})
	}
}

func TestDropRevisedVagueNear(t *testing.T) {
	finding := "The upload queue directory of `sync/worker.go` holds pending uploads until the network returns, so a crash loses nothing."
	vague := "The upload queue directory is actually elsewhere."
	var filler []string
	for range revisionReach + 5 {
		filler = append(filler, "Let me run the next check.")
	}
	tests := []struct {
		name    string
		texts   []string
		off     bool
		revised bool
	}{
		{"a vague correction right after revises it", []string{finding, vague}, false, true},
		{"a vague correction far after does not", append(append([]string{finding}, filler...), vague), false, false},
		{"it did with the reach unbounded", append(append([]string{finding}, filler...), vague), true, true},
		{"a specific correction far after still does", append(append([]string{finding}, filler...), "Actually the upload queue directory of `sync/worker.go` is wiped on start, so a crash loses the pending uploads."), false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			revisionOff["vague-near"] = tt.off
			defer delete(revisionOff, "vague-near")
			texts := append([]string{"Let me read the worker."}, tt.texts...)
			turns := GroupTurns(sessionOf("s", "where do pending uploads go?", append(texts, "Done.")...))
			checkRevised(t, turns[0], "holds pending uploads", tt.revised)
		})
	}
}

// checkRevised distils turn and fails t unless the candidate holding
// finding was dropped as revised later exactly when revised says so.
func checkRevised(t *testing.T, turn Turn, finding string, revised bool) {
	t.Helper()
	cands := Distill(turn, nil)
	i := len(cands) - 1 // the last candidate holding it, should several
	for i >= 0 && !strings.Contains(cands[i].Text, finding) {
		i--
	}
	if i < 0 {
		t.Fatalf("no candidate holds the finding: %+v", cands)
	}
	got := cands[i]
	if r := strings.HasPrefix(got.Reason, "revised later"); r != revised {
		t.Fatalf("revised = %v (keep %v, %q), want %v", r, got.Keep, got.Reason, revised)
	}
}
