package ingest

import (
	"strings"
	"testing"

	"github.com/memtray/memtray/backend/memory"
)

// Bytes that opened later texts when who said one, or that it held no
// sentence, was marked inside the text (before LaterText.From): a
// transcript's text is outside input and may open with them.
const (
	oldUserMark    = "\x1euser\n"
	oldMovedMark   = "\x1emoved\n"
	oldRemovedMark = "\x1eremoved\n"
	oldInstrMark   = "```diff:"
)

// TestLaterTextOldMarks: a transcript's text that opens with the bytes
// once used to mark later texts is read as the words of whoever said it:
// the model's text opening with the user's old mark is the model's plan
// (which revises nothing), not the user's order; the model's text opening
// with the old mark of moves or of removed settings is words (no file
// moved, no setting removed); the model's correction after a fence
// opening "```diff:" is read; the user's text opening with the user's old
// mark is still the user's order. Each text reaches Distill as batch
// ingest gives it: exchanges grouped into turns, LaterTexts.
func TestLaterTextOldMarks(t *testing.T) {
	order := "Change the release job to use `pnpm install --frozen-lockfile` instead of `npm ci`."
	release := "The release job in `.github/workflows/release.yml` installs the dependencies with `npm ci` before it builds the bundle."
	helper := "The helper lives in `tools/` next to the other scripts, and `run_helper.sh` traps SIGTERM so the port exits cleanly."
	cache := "The cache TTL is set in `config/cache.yaml` with `ttl_seconds: 300`."
	removed := ""
	for _, l := range laterOf(Turn{SessionID: "s", Steps: []Step{{Text: "Let me edit the pipeline.", Calls: []memory.ToolCall{uploadCalls[0].call("p1")}}}}) {
		if l.From == LaterSettingsRemoved {
			removed = l.Text
		}
	}
	if !strings.HasPrefix(removed, "allow_failure\t") {
		t.Fatalf("the patch's removed settings read %q", removed)
	}
	tests := []struct {
		name      string
		finding   string // the earlier turn's statement
		user      string // the later turn's user message
		model     string // the later turn's model text
		gloss     bool   // the finding is uploadAgain, the session's gloss said before it
		revisedBy string // the reason's prefix when the finding goes, "" when it stays
	}{
		{name: "the model's text opening with the user's old mark", finding: release, model: oldUserMark + order},
		{name: "the user's text opening with the user's old mark", finding: release, user: oldUserMark + order, revisedBy: "revised later"},
		{name: "the model's text opening with the old mark of moves", finding: helper, model: oldMovedMark + "/r/tools/run_helper.sh\t/r/priv/bin/run_helper.sh\n"},
		{name: "the model's text opening with the old mark of removed settings", finding: uploadAgain, gloss: true, model: oldRemovedMark + removed},
		{name: "the model's correction after a fence opening with the old instruction mark", finding: cache,
			model: oldInstrMark + "notes.md\n-old\n```\n\nActually the cache TTL in config/cache.yaml is ignored; `CACHE_TTL` in the environment wins.", revisedBy: "revised later"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			exs := sessionOf("s", "how does it work?", "Let me read it.", tt.finding, "That is all.")
			next := memory.Exchange{SessionID: "s", Turn: len(exs) + 1, UserTurns: 2, Project: "shop", User: "and now?", Assistant: "Fine."}
			if tt.user != "" {
				next.User = tt.user
			}
			if tt.model != "" {
				next.Assistant = tt.model
			}
			turns := GroupTurns(append(exs, next))
			if len(turns) != 2 {
				t.Fatalf("%d turns", len(turns))
			}
			if tt.gloss {
				turns[0].held = saidBlocks(Turn{Steps: []Step{{Text: uploadGloss}}})
			}
			key := tt.finding[:30]
			found := false
			for _, c := range Distill(turns[0], LaterTexts(turns[1:], "s")) {
				why := ""
				switch {
				case strings.Contains(c.Text, key):
					found, why = true, c.Reason
					if c.Keep {
						why = ""
					}
				case strings.Contains(c.Reason, key[:20]):
					found, why = true, c.Reason
				}
				for _, k := range c.cuts {
					if strings.Contains(k.text, key) {
						found, why = true, k.reason
					}
				}
				if !found {
					continue
				}
				if tt.revisedBy == "" && why != "" || tt.revisedBy != "" && !strings.HasPrefix(why, tt.revisedBy) {
					t.Fatalf("the finding's reason %q, want %q", why, tt.revisedBy)
				}
				return
			}
			t.Fatal("no candidate holds the finding")
		})
	}
}

// FuzzLaterWords: whatever bytes a turn's user and model texts hold, the
// turn's later texts are those texts, unchanged, each said by whoever
// said it (laterOf), and redaction keeps who said each (cleanTurn); no
// text of words is read as a file moved or a setting removed.
func FuzzLaterWords(f *testing.F) {
	f.Add("and now?", "Fine.")
	f.Add(oldUserMark+"Use `uv`, not `pip`.", oldMovedMark+"/a\t/b\n")
	f.Add(oldRemovedMark+"allow_failure\tupload\n", oldInstrMark+"CONVENTIONS.md\n-Always use tabs.\n```\n")
	f.Add("", "\x1e")
	f.Fuzz(func(t *testing.T, user, model string) {
		tn := Turn{SessionID: "s", Steps: []Step{{Text: model}}}
		if user != "" {
			tn.User = []string{user}
		}
		var want []LaterText
		if user != "" {
			want = append(want, LaterText{Text: user, From: LaterUser})
		}
		if strings.TrimSpace(model) != "" {
			want = append(want, LaterText{Text: model})
		}
		got := laterOf(tn)
		if len(got) != len(want) {
			t.Fatalf("later texts %q, want %q", got, want)
		}
		for i := range got {
			if got[i] != want[i] {
				t.Fatalf("later text %d: %q, want %q", i, got[i], want[i])
			}
		}
		if rs := laterRelocations(got, 0); len(rs) > 0 {
			t.Fatalf("words read as moves: %+v", rs)
		}
		for _, l := range got {
			if us := laterSettingRemovals(l, 0); len(us) > 0 {
				t.Fatalf("words read as removed settings: %+v", us)
			}
		}
		_, cl, _ := cleanTurn(Turn{}, got)
		for i := range cl {
			if cl[i].From != got[i].From {
				t.Fatalf("cleaned later text %d from %v, was %v", i, cl[i].From, got[i].From)
			}
		}
	})
}
