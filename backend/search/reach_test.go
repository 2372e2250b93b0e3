package search

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/memtray/memtray/backend/config"
	"github.com/memtray/memtray/backend/memory"
)

func TestNamedProjects(t *testing.T) {
	projects := []string{"spotter-gqc", "OpenPrintKit", "kiln", "coda", "a.b", "--"}
	cases := []struct {
		text string
		want []string
	}{
		{"how did spotter-gqc set up OpenTelemetry?", []string{"spotter-gqc"}},
		{"in Spotter GQC, where is the span exporter?", []string{"spotter-gqc"}},
		{"see ~/src/spotter_gqc/lib/spotter.ex", []string{"spotter-gqc"}},
		{"how did spotter set up OpenTelemetry?", nil}, // a prefix of the name is not the name
		{"what did openprintkit do for Marlin?", []string{"OpenPrintKit"}},
		{"open print kit", nil}, // the name as written, not split at capitals
		{"the kilns in the kiln room and a coda", []string{"kiln", "coda"}},
		{"kilns and codas", nil}, // whole words
		{"A.B is the name", []string{"a.b"}},
		{"-- nothing", nil}, // a name without letters or digits is never named
		{"", nil},
	}
	for _, c := range cases {
		if got := NamedProjects(c.text, projects); !slices.Equal(got, c.want) {
			t.Errorf("NamedProjects(%q) = %v, want %v", c.text, got, c.want)
		}
	}
}

// openReach opens a real store with memories of two projects (kiln and
// harbor), a preference of the user's captured in harbor, a project fact
// and a preference of the user's a session made with no project, a memory
// added through MCP with no project, each with filler of its project so
// the store is not tiny.
func openReach(t *testing.T, mod func(*config.Recall)) *Recaller {
	t.Helper()
	type fx struct {
		id, project, text string
		typ               memory.Type
		kind              memory.Kind
		source            string
	}
	fixtures := []fx{
		{"kiln-avr", "kiln", "The kiln firmware build needs the avr-gcc toolchain pinned to 7.3: newer avr-gcc releases miscompile the PID loop of the controller.", memory.TypeProject, memory.KindDebugging, memory.SourceTranscript},
		{"harbor-deploy", "harbor", "The harbor deploy script pushes the container image to the registry, then runs the database migrations.", memory.TypeProject, memory.KindConfig, memory.SourceTranscript},
		{"harbor-avr", "harbor", "The harbor buoy firmware build takes avr-gcc from the distribution's packages, whatever version they ship.", memory.TypeProject, memory.KindConfig, memory.SourceTranscript},
		{"user-footer", "harbor", "Never add the co-authored-by footer to git commit messages.", memory.TypeUser, memory.KindPreference, memory.SourceTranscript},
		{"none-staging", "", "The shared staging database is reachable at staging-db.internal on port 5433, read-only for developers.", memory.TypeProject, memory.KindConfig, memory.SourceTranscript},
		{"none-user-tabs", "", "I indent with tabs, never spaces, in every language and every repository.", memory.TypeUser, memory.KindPreference, memory.SourceTranscript},
		{"none-mcp-vpn", "", "The corporate VPN profile is ~/vpn/corp.ovpn, opened with openvpn3 before any ssh session.", memory.TypeProject, memory.KindConfig, memory.SourceMCP},
	}
	for i := range 8 {
		fixtures = append(fixtures,
			fx{fmt.Sprintf("kiln-fill%d", i), "kiln", fmt.Sprintf("Glaze recipe %d lives in recipes/glaze%d.toml and the kiln schedule reads it at start.", i, i), memory.TypeProject, memory.KindFact, memory.SourceTranscript},
			fx{fmt.Sprintf("harbor-fill%d", i), "harbor", fmt.Sprintf("The harbor ledger view %d lists container berths and their tide windows.", i), memory.TypeProject, memory.KindFact, memory.SourceTranscript})
	}
	var ms []memory.Memory
	for _, f := range fixtures {
		ms = append(ms, memory.Memory{ID: f.id, Text: f.text, Project: f.project, Kind: f.kind, KindOrigin: memory.KindGiven,
			Type: f.typ, Source: f.source, Importance: 0.5, CreatedAt: testNow.Add(-24 * time.Hour)})
	}
	st, emb, clock := openEmbedded(t, ms)
	cfg := config.Default().Recall
	if mod != nil {
		mod(&cfg)
	}
	return NewRecaller(New(st, emb, config.Default().Search, clock), st, cfg, clock)
}

// TestRecallReach: the prompt hook's recall gives a memory of another
// project only when the prompt names that project, while the user's own
// memories reach every project (and none); a memory of no project a
// session made that is not the user's own (a project fact of a project
// memtray could not tell) reaches only prompts of no project (at e6cd3fa it
// reached every project), one added on purpose with no project (MCP) every
// project; an explicit search, and recall.project_scoped off, reach every
// project.
func TestRecallReach(t *testing.T) {
	const avr = "Which avr-gcc toolchain version does the firmware build need, and why not a newer release?"
	cases := []struct {
		name    string
		req     RecallRequest
		off     bool   // recall.project_scoped false
		want    string // this memory is given ("" none)
		notWant string // this one is not
		first   bool   // want is given first
	}{
		{"its own project", RecallRequest{Prompt: avr, Project: "kiln"}, false, "kiln-avr", "", true},
		{"another project", RecallRequest{Prompt: avr, Project: "harbor"}, false, "harbor-avr", "kiln-avr", false},
		{"no project", RecallRequest{Prompt: avr}, false, "", "kiln-avr", false},
		{"another project, naming it: it ranks as the current one", RecallRequest{Prompt: "In kiln, which avr-gcc toolchain version does the firmware build need?", Project: "harbor"}, false, "kiln-avr", "", true},
		{"no project, naming it", RecallRequest{Prompt: "Which avr-gcc toolchain does the KILN firmware build need?"}, false, "kiln-avr", "harbor-avr", true},
		{"the user's preference in another project", RecallRequest{Prompt: "Write the git commit message for this change; remember the co-authored-by footer rule.", Project: "kiln"}, false, "user-footer", "", false},
		{"the user's preference with no project", RecallRequest{Prompt: "Write the git commit message for this change; remember the co-authored-by footer rule."}, false, "user-footer", "", false},
		{"a project fact of no project, inside a project", RecallRequest{Prompt: "Which host and port is the shared staging database on?", Project: "kiln"}, false, "", "none-staging", false},
		{"a project fact of no project, with no project", RecallRequest{Prompt: "Which host and port is the shared staging database on?"}, false, "none-staging", "", false},
		{"a project fact of no project, explicit search in a project", RecallRequest{Prompt: "Which host and port is the shared staging database on?", Project: "kiln", Event: EventSearch}, false, "none-staging", "", false},
		{"a preference of no project, inside a project", RecallRequest{Prompt: "Should I indent this file with tabs or spaces?", Project: "kiln"}, false, "none-user-tabs", "", false},
		{"a preference of no project, with no project", RecallRequest{Prompt: "Should I indent this file with tabs or spaces?"}, false, "none-user-tabs", "", false},
		{"an MCP memory of no project, inside a project", RecallRequest{Prompt: "Which VPN profile do I open with openvpn3?", Project: "kiln"}, false, "none-mcp-vpn", "", false},
		{"another project's memory, explicit search", RecallRequest{Prompt: avr, Project: "harbor", Event: EventSearch}, false, "kiln-avr", "", false},
		{"another project, project_scoped off", RecallRequest{Prompt: avr, Project: "harbor"}, true, "kiln-avr", "", false},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := openReach(t, func(cfg *config.Recall) { cfg.ProjectScoped = !c.off })
			c.req.SessionID = fmt.Sprintf("s%d", i)
			got, err := r.Recall(context.Background(), c.req)
			if err != nil {
				t.Fatal(err)
			}
			ids := hitIDs(got.Hits)
			if c.want != "" && !slices.Contains(ids, c.want) {
				t.Errorf("%s not given: %v (skipped %q)", c.want, ids, got.Skipped)
			}
			if c.first && (len(ids) == 0 || ids[0] != c.want) {
				t.Errorf("%s not first: %v", c.want, ids)
			}
			if c.want == "" && len(ids) > 0 {
				t.Errorf("want nothing, got %v", ids)
			}
			if c.notWant != "" && slices.Contains(ids, c.notWant) {
				t.Errorf("%s given: %v", c.notWant, ids)
			}
		})
	}
}

// TestNamesOutOfReach: a prompt asked in one project that names what only
// another project's memories mention (the name is out of its reach) has
// no evidence in its own project's memories near the prompt's other words,
// while the project that holds the name has; without the rule
// (outOfReachNames off) the first project's memories pass the vector test.
func TestNamesOutOfReach(t *testing.T) {
	const prompt = "Which Kubernetes autoscaling quotas for the container?"
	fixtures := []struct{ id, project, text string }{
		{"harbor-k8s", "harbor", "The harbor services run on Kubernetes: the autoscaling of each deployment is configured in deploy/hpa.yaml."},
		{"kiln-build", "kiln", "The kiln container build copies the firmware image into the container and configures the build cache."},
		{"kiln-config", "kiln", "Configure the kiln controller through config/kiln.toml; the build reads it at start."},
	}
	var ms []memory.Memory
	for _, f := range fixtures {
		ms = append(ms, memory.Memory{ID: f.id, Text: f.text, Project: f.project, Kind: memory.KindConfig, KindOrigin: memory.KindGiven,
			Type: memory.TypeProject, Importance: 0.5, CreatedAt: testNow.Add(-24 * time.Hour)})
	}
	for i := range 8 {
		ms = append(ms,
			memory.Memory{ID: fmt.Sprintf("kiln-fill%d", i), Project: "kiln", Text: fmt.Sprintf("Glaze recipe %d lives in recipes/glaze%d.toml and the kiln schedule reads it at start.", i, i),
				Kind: memory.KindFact, Type: memory.TypeProject, Importance: 0.5, CreatedAt: testNow.Add(-24 * time.Hour)},
			memory.Memory{ID: fmt.Sprintf("harbor-fill%d", i), Project: "harbor", Text: fmt.Sprintf("The harbor ledger view %d lists container berths and their tide windows.", i),
				Kind: memory.KindFact, Type: memory.TypeProject, Importance: 0.5, CreatedAt: testNow.Add(-24 * time.Hour)})
	}
	st, emb, clock := openEmbedded(t, ms)
	e := New(st, emb, config.Default().Search, clock)
	run := func(project string, scoped bool) *Result {
		t.Helper()
		r, err := e.Run(context.Background(), Query{Text: prompt, Project: project, K: 5, Prompt: true, ProjectScoped: scoped})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	cases := []struct {
		name, project string
		scoped        bool
		outOfReach    []string
		evidence      bool
	}{
		{"in a project whose memories never name it", "kiln", true, []string{"kubernetes"}, false},
		{"in the project that holds it", "harbor", true, nil, true},
		{"not scoped: the whole store is the reach", "kiln", false, nil, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := run(c.project, c.scoped)
			if !slices.Equal(r.Evidence.NamesOutOfReach, c.outOfReach) {
				t.Errorf("names out of reach %q, want %q (evidence %+v)", r.Evidence.NamesOutOfReach, c.outOfReach, r.Evidence)
			}
			if got := !r.NoEvidence; got != c.evidence {
				t.Errorf("evidence %v, want %v (%+v, hits %v)", got, c.evidence, r.Evidence, hitIDs(r.Hits))
			}
		})
	}
	t.Run("without the rule", func(t *testing.T) {
		outOfReachNames = false
		defer func() { outOfReachNames = true }()
		if r := run("kiln", true); r.NoEvidence || !r.Evidence.Vector {
			t.Errorf("the fixture's kiln memories have no vector evidence without the rule (%+v): the test cannot fail", r.Evidence)
		}

	})
}

// TestGivenEvidence: with AllWithheld a recall says, for each memory given
// in its order, its own evidence and which test of the absolute floor let
// it through; without, nothing.
func TestGivenEvidence(t *testing.T) {
	r := openReach(t, nil)
	const prompt = "Which avr-gcc toolchain version does the firmware build need, and why not a newer release?"
	for i, all := range []bool{true, false} {
		got, err := r.Recall(context.Background(), RecallRequest{SessionID: fmt.Sprintf("g%d", i), Prompt: prompt, Project: "kiln", AllWithheld: all})
		if err != nil {
			t.Fatal(err)
		}
		if len(got.Hits) == 0 {
			t.Fatalf("no hits (skipped %q)", got.Skipped)
		}
		if !all {
			if got.GivenEvidence != nil {
				t.Errorf("without AllWithheld: given evidence %+v", got.GivenEvidence)
			}
			continue
		}
		if len(got.GivenEvidence) != len(got.Hits) {
			t.Fatalf("%d given evidence for %d hits", len(got.GivenEvidence), len(got.Hits))
		}
		for j, ge := range got.GivenEvidence {
			if ge.ID != got.Hits[j].Memory.ID || ge.Through == "" {
				t.Errorf("given evidence %d = %+v for hit %s", j, ge, got.Hits[j].Memory.ID)
			}
		}
	}
}
