package memory

import "testing"

// TestLoadBearingFileNames: a file is a load-bearing token by its
// extension in the languages agents work in, not only the most common
// ones (Elixir's .ex and .exs were not counted, so a finding about
// router.ex named nothing specific); a word with a full stop is none.
func TestLoadBearingFileNames(t *testing.T) {
	tests := []struct {
		text string
		want string // "" for none
	}{
		{"The route lives in router.ex now.", "router.ex"},
		{"Test config goes in test.exs.", "test.exs"},
		{"The layout is root.html.heex.", "root.html.heex"},
		{"Settings are read from init.lua.", "init.lua"},
		{"The schema is in schema.prisma.", "schema.prisma"},
		{"Events go to events.jsonl.", "events.jsonl"},
		{"The build uses flake.nix.", "flake.nix"},
		{"The handler is in main.go.", "main.go"},
		{"Integration tests use docker-compose.test.yml.", "docker-compose.test.yml"},
		{"Set MEMTRAY_PORT=7432 and see backend/store/store.go first.", "backend/store/store.go"},
		{"the retryBackoff field defaults to 3", "retryBackoff"},
		{"It works in the U.S. and elsewhere.", ""},
		{"That is the end. Exactly so.", ""},
	}
	for _, tc := range tests {
		got := LoadBearing(tc.text)
		if tc.want == "" {
			if len(got) != 0 {
				t.Errorf("%q: load-bearing %v, want none", tc.text, got)
			}
			continue
		}
		if !got[tc.want] {
			t.Errorf("%q: load-bearing %v, want %q among them", tc.text, got, tc.want)
		}
	}
}

// TestPathTokenEndsBeforeFullStop: a sentence's full stop after a path
// is not part of it, so "see backend/store." and "backend/store" name one
// token (dedup, restatement and the steward compare them).
func TestPathTokenEndsBeforeFullStop(t *testing.T) {
	tests := []struct{ text, want string }{
		{"The store lives in backend/store.", "backend/store"},
		{"Binaries go to /usr/local/bin.", "/usr/local/bin"},
		{"Run ./scripts/run.sh.", "./scripts/run.sh"},
		{"It reads ~/.config/memtray/config.json.", "~/.config/memtray/config.json"},
		{"Assets are in priv/static/assets/ only.", "priv/static/assets"},
		{"See .github/workflows/ci.yml and docs/.", ".github/workflows/ci.yml"},
	}
	for _, tc := range tests {
		if got := PathToken.FindString(tc.text); got != tc.want {
			t.Errorf("PathToken in %q = %q, want %q", tc.text, got, tc.want)
		}
	}
}

// TestNamesLoadBearing: NamesLoadBearing says what a non-empty LoadBearing
// says.
func TestNamesLoadBearing(t *testing.T) {
	for _, text := range []string{
		"", "plain words only, nothing specific here", "Run `make test` first.", "see backend/store/store.go",
		"MEMTRAY_PORT=7432", "v1.2.3 took 250ms", "https://example.com/x", "the retryBackoff field", "It works in the U.S.",
		"now uses abs(self._value)", "each file(s)", "run -n", "in assets/", "$HOME", "fixes #12",
	} {
		if got, want := NamesLoadBearing(text), len(LoadBearing(text)) > 0; got != want {
			t.Errorf("NamesLoadBearing(%q) = %v, LoadBearing has %d tokens", text, got, len(LoadBearing(text)))
		}
	}
}

func TestHoldsToken(t *testing.T) {
	cases := []struct {
		text, tok string
		want      bool
	}{
		{"pdl-spec/requirements.txt now installs mkdocs, mkdocs-material", "MkDocs", true},
		{"CI workflow (.github/workflows/ci.yml) runs the matrix", "ci.yml", true},
		{"runs without `pip install -e .` from source", "pip install -e .", true},
		{"listens on port 8080.", "8080", true},
		{"pinned to 1.2.", "1.2", true},
		{"pinned to 1.2.3", "1.2", false},
		{"pinned to v1.2", "1.2", false},
		{"listens on port 18080", "8080", false},
		{"calls foo_bar and foo-cli", "foo", false},
		{"edits src/foo/bar.go", "src/foo", false},
		{"set the timeout to 120s", "300s", false},
		{"", "x", false},
	}
	for _, c := range cases {
		if got := HoldsToken(c.text, c.tok); got != c.want {
			t.Errorf("HoldsToken(%q, %q) = %v, want %v", c.text, c.tok, got, c.want)
		}
	}
}

// TestLoadBearingInPunctuation: a setting, a flag's value or a URL
// written inside punctuation marks that close it ends before the closing
// mark, so that a restatement writing it without them keeps the same
// token.
func TestLoadBearingInPunctuation(t *testing.T) {
	for _, c := range []struct{ text, plain, want string }{
		{"Set “MEMTRAY_PORT=7432” first.", "Set MEMTRAY_PORT=7432 first.", "MEMTRAY_PORT=7432"},
		{"Pass «--out=build» to it.", "Pass --out=build to it.", "--out=build"},
		{"Docs (see https://example.com/a) say so.", "Docs at https://example.com/a say so.", "https://example.com/a"},
		{"Use ‘mode=fast’ here.", "Use mode=fast here.", "mode=fast"},
		{"The span (:if={@status}) shows it.", "The span :if={@status} shows it.", "if={@status}"},
	} {
		got, plain := LoadBearing(c.text), LoadBearing(c.plain)
		if !got[c.want] || !plain[c.want] {
			t.Errorf("LoadBearing(%q) = %v, LoadBearing(%q) = %v; want %q in both", c.text, got, c.plain, plain, c.want)
		}
	}
}
