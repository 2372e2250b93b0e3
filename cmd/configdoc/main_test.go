package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var srcDir = filepath.Join("..", "..", SourceDir)

// TestDocInSync fails when the committed docs/configuration.md differs from
// what the generator writes now: a config field or its doc comment changed
// without regenerating the page.
func TestDocInSync(t *testing.T) {
	path := filepath.Join("..", "..", "docs", "configuration.md")
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v: generate it with `%s`", err, Command)
	}
	want, err := Generate(srcDir)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("%s is out of date with backend/config: regenerate it with `%s` (from the repository root) and commit it", path, Command)
	}
}

// TestEveryKeyDocumented: the page lists every key a config file may hold,
// each with a type, a default and a description.
func TestEveryKeyDocumented(t *testing.T) {
	docs, err := parseDocs(srcDir)
	if err != nil {
		t.Fatal(err)
	}
	sections, err := Sections(docs)
	if err != nil {
		t.Fatal(err)
	}
	have := map[string]bool{}
	for _, s := range sections {
		for _, k := range s.Keys {
			if k.Type == "" || k.Default == "" || k.Doc == "" {
				t.Errorf("%s: type %q, default %q, doc %q", k.Path, k.Type, k.Default, k.Doc)
			}
			have[k.Path] = true
		}
	}
	for _, k := range []string{
		"data_dir", "listen", "log_level", "idle_exit", "embedder.provider", "embedder.timeout", "search.k",
		"search.decay_per_day", "ingest.headless_hold_total", "judge.max_per_day", "capture.transcripts",
		"capture.transcripts.poll", "recall.hook_timeout", "steward.types", "steward.types.<name>.stale_days",
	} {
		if !have[k] {
			t.Errorf("key %s missing from %v", k, keys(sections))
		}
	}
	for _, k := range []string{"file", "insecure_non_loopback", "File", "InsecureNonLoopback"} {
		if have[k] {
			t.Errorf("%s is not part of the config file but is listed", k)
		}
	}
}

func TestFieldDocGroups(t *testing.T) {
	docs, err := parseDocs(srcDir)
	if err != nil {
		t.Fatal(err)
	}
	j := docs["Judge"].fields
	if j["MaxPerDay"] == "" || j["MaxPerDay"] != j["MaxPerHour"] {
		t.Errorf("MaxPerDay should share MaxPerHour's doc: %q vs %q", j["MaxPerDay"], j["MaxPerHour"])
	}
	if j["Provider"] == j["OllamaHost"] {
		t.Errorf("Provider and OllamaHost have their own docs")
	}
}

func TestMarkdown(t *testing.T) {
	names := map[string]string{"MaxPerHour": "max_per_hour", "K": "k"}
	for _, tc := range []struct{ in, want string }{
		{"MaxPerHour caps\n\tcalls.", "`max_per_hour` caps calls."},
		{"K x Overfetch", "`k` x Overfetch"},
		{"a <name>/SKILL.md & b|c", "a &lt;name&gt;/SKILL.md &amp; b\\|c"},
		{"snake_case *x* [y]", "snake\\_case \\*x\\* \\[y\\]"},
		{"keep `MaxPerHour <b>|` as code", "keep `MaxPerHour <b>\\|` as code"},
		{"an odd ` quote_x", "an odd ` quote\\_x"},
		{"Kx MaxPerHourly", "Kx MaxPerHourly"},
	} {
		if got := markdown(tc.in, names); got != tc.want {
			t.Errorf("markdown(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// TestPage checks rows of the page: types, defaults, links to nested
// sections, fields documented together in one row.
func TestPage(t *testing.T) {
	page, err := Generate(srcDir)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"| `embedder.timeout` | duration | `\"30s\"` |",
		"| `search.decay_per_day` | map of numbers |",
		"| `steward.auto_apply` | list of strings | `[\"decay_stale\",\"decay_unreinforced\",\"snooze_sticky\"]` |",
		"| `capture.exclude_projects` | list of strings | `[]` |",
		"| `data_dir` | string | `$XDG_DATA_HOME/memtray`, else `~/.local/share/memtray` |",
		"| `capture.transcripts` | object | see [`capture.transcripts`](#capturetranscripts) |",
		"| `steward.types.<name>.stale_days`<br>`steward.types.<name>.decay_factor`<br>`steward.types.<name>.decay_floor` | integer<br>number<br>number | default: `90`, user: `180`<br>",
		"| `judge.max_per_hour`<br>`judge.max_per_day` | integer<br>integer | `120`<br>`1000` | `max_per_hour` and `max_per_day` cap",
		"## `steward.types.<name>`",
	} {
		if !strings.Contains(string(page), want) {
			t.Errorf("page lacks %q", want)
		}
	}
}
