// Package backend_test checks that the package map of DESIGN.md stays true:
// which of our packages may import which, and which packages alone may
// import chromem-go, bleve and wails.
package backend_test

import (
	"os/exec"
	"strings"
	"testing"
)

const module = "github.com/memtray/memtray/"

// allowed lists, for each backend package, the packages of ours it may
// import directly. A new package must be added here deliberately.
var allowed = map[string][]string{
	"backend/memory":  {},
	"backend/project": {},
	// The tagged blocks harnesses and memtray add to a conversation.
	"backend/harnesstext": {},
	"backend/config":      {"memory"},
	"backend/redact":      {"memory"},
	"backend/chunk":       {"memory"},
	"backend/judge":       {"memory", "config"},
	"backend/transcript":  {"memory", "project", "harnesstext"},
	"backend/events":      {"memory"},
	"backend/embed":       {"memory", "config", "embed/wordvec"},
	// Test support: the fake Ollama of the tests (imported by tests only).
	"backend/embed/ollamafake": {},
	// Test support: the fake OpenAI-compatible embeddings server.
	"backend/embed/openaifake": {},
	"backend/noise":            {"memory", "config", "embed"},
	"backend/store":            {"memory"},
	"backend/search":           {"memory", "config", "store", "embed", "embed/wordvec", "harnesstext"},
	"backend/capture":          {"memory", "config", "events", "project", "harnesstext"},
	"backend/tail":             {"memory", "config", "transcript", "project"},
	"backend/ingest":           {"memory", "config", "embed", "noise", "redact", "chunk", "store", "events", "harnesstext"},
	"backend/steward":          {"memory", "config", "store", "search", "events"},
	"backend/tidy":             {"config"},
	"backend/autostart":        {},
	"backend/agentsetup":       {"config"},
	"backend/httpapi":          {"memory", "config", "store", "search", "events", "ingest", "steward", "autostart"},
	"backend/mcp":              {"memory", "config", "store", "search", "ingest", "steward", "events"},
	"backend/eval":             {"memory", "config", "store", "search", "embed", "noise", "ingest", "redact", "chunk", "transcript", "steward", "daemon", "httpapi"},
	"backend/importer":         {"memory", "config", "store", "search", "redact", "chunk", "ingest", "transcript"},
	"backend/daemon":           {"memory", "config", "store", "search", "embed", "noise", "ingest", "redact", "chunk", "capture", "events", "httpapi", "mcp", "steward", "judge", "transcript", "importer", "agentsetup", "autostart", "tail", "project"},
	"backend/cli":              {"memory", "config", "store", "search", "embed", "daemon", "httpapi", "eval", "mcp", "steward", "ingest", "judge", "transcript", "redact", "tidy", "agentsetup", "autostart"},
}

// exclusive third-party imports: prefix -> the only package allowed to import it.
var exclusive = map[string]string{
	"github.com/philippgille/chromem-go": "backend/store",
	"github.com/blevesearch/":            "backend/store",
	"go.etcd.io/bbolt":                   "backend/store",
	"github.com/wailsapp/":               "app",
	// The AppImage runtime's FUSE and squashfs readers stay out of memtray.
	"github.com/hanwen/go-fuse/": "cmd/appimage-runtime",
	"github.com/diskfs/":         "cmd/appimage-runtime",
	// The fake Ollama is for tests: no program imports it.
	module + "backend/embed/ollamafake": "backend/embed/ollamafake",
	module + "backend/embed/openaifake": "backend/embed/openaifake",
}

func TestImportDirections(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}} {{join .Imports " "}}`, "../...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		pkg := strings.TrimPrefix(fields[0], module)
		for _, imp := range fields[1:] {
			for prefix, owner := range exclusive {
				if strings.HasPrefix(imp, prefix) && pkg != owner && !strings.HasPrefix(pkg, owner+"/") {
					t.Errorf("%s imports %s: only %s may", pkg, imp, owner)
				}
			}
			if !strings.HasPrefix(imp, module+"backend/") || !strings.HasPrefix(pkg, "backend/") {
				continue
			}
			ok, known := allowed[pkg]
			if !known {
				t.Errorf("%s is not in the package map: add it to allowed (and to DESIGN.md)", pkg)
				continue
			}
			dep := strings.TrimPrefix(imp, module+"backend/")
			if !contains(ok, dep) {
				t.Errorf("%s imports backend/%s, against the package map of DESIGN.md", pkg, dep)
			}
		}
	}
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
