// Package backend_test checks that the package map of docs/architecture.md
// stays true, both ways: every package of the module has a row, every
// import between our packages is one its row allows, every import a row
// allows is one the code makes, and the libraries the document gives one
// owner are imported by that owner alone.
package backend_test

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
)

const module = "github.com/memtray/memtray"

// mapDoc is the document whose tables are the package map.
const mapDoc = "../docs/architecture.md"

// The sections of mapDoc the test reads.
const (
	packagesSection  = "## Package map"
	librariesSection = "## Libraries with one owner"
)

// buildConfigs are the GOOS and build tags whose imports are checked
// together: an import made under any of them must be allowed, and an
// allowed import is used when one of them makes it.
var buildConfigs = []struct{ goos, tags string }{
	{"linux", ""}, {"linux", "desktop"},
	{"darwin", ""}, {"darwin", "desktop"},
	{"windows", ""}, {"windows", "desktop"},
}

// packageMap is what mapDoc says.
type packageMap struct {
	// allowed maps each package (module-relative: backend/store, app,
	// cmd/tsgen) to the packages of ours it may import.
	allowed map[string][]string
	// owners maps a third-party import path prefix to the only package
	// (with the packages below it) that may import it.
	owners map[string]string
	// testOnly are the packages whose row's job begins testSupport: no
	// non-test code may import them.
	testOnly map[string]bool
}

// testSupport begins the job of a package for tests alone.
const testSupport = "Test support"

var codeSpan = regexp.MustCompile("`([^`]+)`")

// readMap parses the tables of mapDoc's two sections: a package row is
// "| `pkg` | job | `dep`, `dep` |" ("—" when it imports nothing of ours),
// a library row "| `prefix` | `owner` |".
func readMap(t *testing.T) packageMap {
	t.Helper()
	f, err := os.Open(mapDoc)
	if err != nil {
		t.Fatalf("the package map: %v", err)
	}
	defer f.Close()
	m := packageMap{allowed: map[string][]string{}, owners: map[string]string{}, testOnly: map[string]bool{}}
	section := ""
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if strings.HasPrefix(line, "## ") {
			section = line
			continue
		}
		if !strings.HasPrefix(line, "| `") {
			continue
		}
		cells := strings.Split(strings.Trim(line, "|"), "|")
		where := fmt.Sprintf("%s:%d", mapDoc, n)
		switch section {
		case packagesSection:
			if len(cells) != 3 {
				t.Fatalf("%s: a package row has 3 cells (package, job, may import), not %d", where, len(cells))
			}
			pkg := strings.Trim(strings.TrimSpace(cells[0]), "`")
			if _, dup := m.allowed[pkg]; dup {
				t.Fatalf("%s: %s has two rows", where, pkg)
			}
			deps := []string{}
			for _, d := range codeSpan.FindAllStringSubmatch(cells[2], -1) {
				deps = append(deps, d[1])
			}
			m.allowed[pkg] = deps
			if strings.HasPrefix(strings.TrimSpace(cells[1]), testSupport) {
				m.testOnly[pkg] = true
			}
		case librariesSection:
			if len(cells) != 3 {
				t.Fatalf("%s: a library row has 3 cells (library, owner, why), not %d", where, len(cells))
			}
			lib := strings.Trim(strings.TrimSpace(cells[0]), "`")
			m.owners[lib] = strings.Trim(strings.TrimSpace(cells[1]), "`")
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatalf("read %s: %v", mapDoc, err)
	}
	if len(m.allowed) == 0 || len(m.owners) == 0 {
		t.Fatalf("%s: no rows under %q or %q", mapDoc, packagesSection, librariesSection)
	}
	for pkg, deps := range m.allowed {
		for _, d := range deps {
			if _, ok := m.allowed[d]; !ok {
				t.Errorf("%s: %s may import %s, which has no row", mapDoc, pkg, d)
			}
		}
	}
	for lib, owner := range m.owners {
		if _, ok := m.allowed[owner]; !ok {
			t.Errorf("%s: %s is owned by %s, which has no row", mapDoc, lib, owner)
		}
	}
	return m
}

// importGraph returns, for every package of the module with Go files under
// some build config, the imports its non-test files make under any of them:
// import path -> whether it is a package of ours (then module-relative).
func importGraph(t *testing.T) map[string]map[string]bool {
	t.Helper()
	graph := map[string]map[string]bool{}
	for _, bc := range buildConfigs {
		cmd := exec.Command("go", "list", "-e", "-tags", bc.tags,
			"-f", `{{if or .GoFiles .CgoFiles}}{{.ImportPath}}{{range .Imports}} {{.}}{{end}}{{end}}`, "../...")
		cmd.Env = append(os.Environ(), "GOOS="+bc.goos, "CGO_ENABLED=1")
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("go list (GOOS=%s, tags %q): %v", bc.goos, bc.tags, err)
		}
		for _, line := range strings.Split(string(out), "\n") {
			fields := strings.Fields(line)
			if len(fields) == 0 {
				continue
			}
			pkg, _ := strings.CutPrefix(fields[0], module+"/")
			if graph[pkg] == nil {
				graph[pkg] = map[string]bool{}
			}
			for _, imp := range fields[1:] {
				rel, isOurs := strings.CutPrefix(imp, module+"/")
				graph[pkg][rel] = isOurs
			}
		}
	}
	return graph
}

// TestPackageMap checks the imports of every package against the package
// map of docs/architecture.md, both ways.
func TestPackageMap(t *testing.T) {
	m := readMap(t)
	graph := importGraph(t)
	const fix = "(the package map is in docs/architecture.md: change it in the same commit as the code)"
	for _, pkg := range sortedKeys(graph) {
		allowed, listed := m.allowed[pkg]
		if !listed {
			t.Errorf("%s has no row in the package map %s", pkg, fix)
			continue
		}
		imports := graph[pkg]
		for _, imp := range sortedKeys(imports) {
			if imports[imp] {
				if m.testOnly[imp] {
					t.Errorf("%s imports %s, a package for tests alone %s", pkg, imp, fix)
				}
				if !slices.Contains(allowed, imp) {
					t.Errorf("%s imports %s, which the package map does not allow %s", pkg, imp, fix)
				}
				continue
			}
			for lib, owner := range m.owners {
				if strings.HasPrefix(imp, lib) && pkg != owner && !strings.HasPrefix(pkg, owner+"/") {
					t.Errorf("%s imports %s: only %s may %s", pkg, imp, owner, fix)
				}
			}
		}
		for _, dep := range allowed {
			if !imports[dep] {
				t.Errorf("the package map lets %s import %s, which no code of it does: remove it %s", pkg, dep, fix)
			}
		}
	}
	for _, pkg := range sortedKeys(m.allowed) {
		if _, ok := graph[pkg]; !ok {
			t.Errorf("the package map has a row for %s, which is no package of the module %s", pkg, fix)
		}
	}
}

// TestPackageMapReader checks readMap's parsing of the rows on a small
// document.
func TestPackageMapReader(t *testing.T) {
	var b strings.Builder
	b.WriteString(packagesSection + "\n\n| package | job | may import |\n| --- | --- | --- |\n")
	b.WriteString("| `backend/memory` | domain types | — |\n")
	b.WriteString("| `backend/store` | the store (`Put`, `Apply`) | `backend/memory` |\n")
	b.WriteString("| `app` | the program | `backend/store`, `backend/memory` |\n")
	b.WriteString("| `backend/waittest` | Test support: waits | — |\n")
	b.WriteString("\n" + librariesSection + "\n\n| library | owner | why |\n| --- | --- | --- |\n")
	b.WriteString("| `go.etcd.io/bbolt` | `backend/store` | the store of record |\n")
	b.WriteString("\n## Later\n\n| `not/a/row` | x | y |\n")
	dir := t.TempDir()
	if err := os.MkdirAll(dir+"/docs", 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dir+"/docs/architecture.md", []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(dir+"/backend", 0o755); err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir + "/backend")
	m := readMap(t)
	want := map[string][]string{
		"backend/memory":   {},
		"backend/store":    {"backend/memory"},
		"app":              {"backend/store", "backend/memory"},
		"backend/waittest": {},
	}
	if fmt.Sprint(m.allowed) != fmt.Sprint(want) {
		t.Errorf("allowed = %v, want %v", m.allowed, want)
	}
	if len(m.owners) != 1 || m.owners["go.etcd.io/bbolt"] != "backend/store" {
		t.Errorf("owners = %v", m.owners)
	}
	if fmt.Sprint(m.testOnly) != "map[backend/waittest:true]" {
		t.Errorf("testOnly = %v", m.testOnly)
	}
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
