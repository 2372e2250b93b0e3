package search

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/memtray/memtray/backend/config"
	"github.com/memtray/memtray/backend/embed"
)

func TestParseFrontMatter(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		want     map[string]string
	}{
		{"plain", "---\nname: a\ndescription: does b\n---\nbody", map[string]string{"name": "a", "description": "does b"}},
		{"quoted", "---\nname: 'a'\ndescription: \"say \\\"hi\\\": now\"\n---\n", map[string]string{"name": "a", "description": `say "hi": now`}},
		{"folded", "---\ndescription: >\n  one\n  two\nname: x\n---\n", map[string]string{"description": "one two", "name": "x"}},
		{"literal", "---\ndescription: |\n  one\n  two\n---\n", map[string]string{"description": "one\ntwo"}},
		{"crlf and nested", "---\r\nname: a\r\nmetadata:\r\n  k: v\r\n---\r\n", map[string]string{"name": "a", "metadata": ""}},
		{"no front matter", "# title\nname: a\n", map[string]string{}},
		{"unterminated", "---\nname: a\n", map[string]string{"name": "a"}},
		{"empty", "", map[string]string{}},
	} {
		if got := ParseFrontMatter([]byte(tc.in)); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: got %q, want %q", tc.name, got, tc.want)
		}
	}
}

func FuzzParseFrontMatter(f *testing.F) {
	f.Add([]byte("---\nname: a\ndescription: >\n  b\n---\n"))
	f.Add([]byte("---\n'\n\"\n: :\n|\n---"))
	f.Fuzz(func(t *testing.T, data []byte) {
		ParseFrontMatter(data)
	})
}

func TestLoadSkills(t *testing.T) {
	skills, errs := LoadSkills("testdata/skills/user", "testdata/skills/project", "testdata/skills/missing")
	names := []string{}
	for _, s := range skills {
		names = append(names, s.Name)
	}
	if want := []string{"db-migrations", "frontend-design", "pdf-forms", "release-notes"}; !reflect.DeepEqual(names, want) {
		t.Errorf("skills %v, want %v", names, want)
	}
	for _, s := range skills {
		if s.Name == "release-notes" && !strings.Contains(s.Description, "Keep a Changelog") {
			t.Errorf("the project's release-notes should shadow the user's: %q", s.Description)
		}
	}
	if len(errs) != 1 || !strings.Contains(errs[0].Error(), "broken") {
		t.Errorf("errors %v, want one for the skill without front matter", errs)
	}
}

// TestSkillSuggestions checks the built-in embedder and the default floor
// on prompts written for each fixture skill and prompts no skill fits.
func TestSkillSuggestions(t *testing.T) {
	skills, _ := LoadSkills("testdata/skills/user", "testdata/skills/project")
	floor := config.Default().Recall.SkillFloor
	x, err := NewSkillIndex(context.Background(), embed.NewBuiltin(), skills, floor)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ prompt, want string }{
		{"can you fill out the fields of this tax form pdf for me", "pdf-forms"},
		{"extract the text from scanned.pdf", "pdf-forms"},
		{"we need to add a NOT NULL column to the orders table in postgres", "db-migrations"},
		{"write the changelog for v2.3", "release-notes"},
		{"prepare release notes for the new version", "release-notes"},
		{"make the dashboard look nicer, the typography is bland", "frontend-design"},
		{"fix the nil pointer panic in the http handler", ""},
		{"why does the test fail on CI", ""},
		{"rename this function", ""},
	} {
		hits, err := x.Suggest(context.Background(), tc.prompt, 2)
		if err != nil {
			t.Fatal(err)
		}
		got := ""
		if len(hits) > 0 {
			got = hits[0].Name
		}
		if got != tc.want {
			t.Errorf("%q: suggested %v, want %q", tc.prompt, hits, tc.want)
		}
	}
}

func TestRecallSuggestsProjectSkills(t *testing.T) {
	r, _ := newRecaller(t, nil)
	cwd := t.TempDir()
	dir := filepath.Join(cwd, ".claude", "skills", "orbit-passes")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	skill := "---\nname: orbit-passes\ndescription: Compute satellite pass predictions over a ground station from TLE element sets.\n---\n"
	if err := os.WriteFile(filepath.Join(dir, "SKILL.md"), []byte(skill), 0o644); err != nil {
		t.Fatal(err)
	}
	r.WithSkills(NewSkillCatalog(embed.NewBuiltin(), 0.35), nil)
	got, err := r.Recall(context.Background(), RecallRequest{SessionID: "s", CWD: cwd, Project: "orbit",
		Prompt: "predict the next satellite pass over our ground station"})
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Skills) == 0 || got.Skills[0].Name != "orbit-passes" {
		t.Fatalf("skills %v", got.Skills)
	}
	if !strings.Contains(got.Context, "orbit-passes: Compute satellite pass") {
		t.Errorf("skill not in the context:\n%s", got.Context)
	}
	// Only skills, no memory: still a block.
	_, block := FormatWithSkills(nil, got.Skills, 2000)
	if !strings.HasPrefix(block, "<memtray-context>\n"+skillsHeader) {
		t.Errorf("skills-only block: %q", block)
	}
	// Explicit searches get no skills.
	s, err := r.Recall(context.Background(), RecallRequest{SessionID: "s", CWD: cwd, Event: EventSearch, Prompt: "satellite pass ground station"})
	if err != nil || len(s.Skills) != 0 {
		t.Errorf("search suggested skills: %v %v", s.Skills, err)
	}
}

// TestSkillCatalogFollowsModel: after the catalog's embedder switches
// models, Index builds the index anew with the new model's vectors.
func TestSkillCatalogFollowsModel(t *testing.T) {
	ctx := context.Background()
	sw := embed.NewSwappable(embed.NewLexical())
	c := NewSkillCatalog(sw, 0.35)
	dirs := []string{"testdata/skills/user", "testdata/skills/project"}
	before, err := c.Index(ctx, dirs)
	if err != nil {
		t.Fatal(err)
	}
	if len(before.vecs[0]) != embed.LexicalDim {
		t.Fatalf("dimension %d", len(before.vecs[0]))
	}
	sw.Swap(embed.NewBuiltin())
	after, err := c.Index(ctx, dirs)
	if err != nil {
		t.Fatal(err)
	}
	if after == before || len(after.vecs[0]) != embed.BuiltinDim {
		t.Fatalf("the index was not rebuilt for the new model (dimension %d)", len(after.vecs[0]))
	}
	hits, err := after.Suggest(ctx, "write the changelog for v2.3", 1)
	if err != nil || len(hits) != 1 || hits[0].Name != "release-notes" {
		t.Fatalf("Suggest after the switch = %v, %v", hits, err)
	}
}
