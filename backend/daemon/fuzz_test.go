package daemon

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/memtray/memtray/backend/config"
)

// FuzzAPIBodies sends arbitrary bodies to the state-changing and search
// routes of a real daemon (real store on disk) through its handler. Every
// answer must be a success or a client error, never a 5xx, and nothing
// stored before may be lost.
func FuzzAPIBodies(f *testing.F) {
	f.Add("/api/memories", `{"text":"The staging cluster runs Kubernetes 1.31 on three nodes.","kind":"config","project":"ops"}`)
	f.Add("/api/memories", `{"text":"x","importance":2}`)
	f.Add("/api/memories", "{\"text\":\"\\u0000\"}")
	f.Add("/api/search", `{"query":"kubernetes version","k":3,"mode":"bm25"}`)
	f.Add("/api/search", `{"query":"","k":1000}`)
	f.Add("/api/search", `{"query":"a","kinds":["decision","gossip"]}`)
	f.Add("/api/import", "{\"format\":\"memtray-export\",\"version\":1}\n{\"end\":true,\"count\":0}\n")
	f.Add("/api/ingest", `{"exchanges":[{"user":"why","assistant":"We pin Go 1.26 in CI because the race detector crashed on 1.25; keep GOTOOLCHAIN=local."}]}`)
	f.Add("/api/ingest", `{"exchanges":[{"assistant":"ok","tool_calls":[{"name":"web_search","input":"{}"}]}],"documents":[{"name":"a.md","text":"# A\n\nSome notes about the build."}]}`)
	f.Add("/api/ingest", `{"exchanges":[{"assistant":"<memtray-context>x</memtray-context>","tool_loop":true,"headless":true}]}`)
	f.Add("/api/recall", `{"session_id":"s","prompt":"which port does memtray use?","project":"p","cwd":"/tmp"}`)
	f.Add("/api/recall", `{"session_id":"","prompt":"x","event":"later","k":-1}`)
	f.Add("/api/recall", `{"session_id":"s","event":"session-start","project":"p","kinds":["gossip"]}`)
	f.Add("/api/capture", `{"enabled":false,"exclude":["secret"],"include":["x"]}`)
	f.Add("/api/capture", `{"exclude_projects":[""]}`)
	f.Add("/api/rate", `{"ids":["nope"],"score":2}`)
	f.Add("PATCH /api/memories/{seed}", `{"importance":0.7,"kind":"decision"}`)
	f.Add("PATCH /api/memories/{seed}", `{"text":"A memory that must survive every fuzz input, about port 7433.","project":"x"}`)
	f.Add("PATCH /api/memories/{seed}", `{"importance":2,"type":"x","text":""}`)
	f.Add("PUT /api/config", `{"steward":{"every":"2h","auto_apply":["merge"]},"recall":{"k":3}}`)
	f.Add("PUT /api/config", `{"ingest":{"content_threshold":-1},"listen":"0.0.0.0:1"}`)
	f.Add("POST /api/config/preview-threshold", `{"content_threshold":0.5}`)
	cfg := config4fuzz(f)
	d, err := Open(context.Background(), Options{Config: cfg})
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { d.Close() })
	h := d.Handler("")
	seed := httptest.NewRequest("POST", "/api/memories", strings.NewReader(`{"text":"A memory that must survive every fuzz input, about port 7432."}`))
	seed.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, seed)
	if rec.Code != http.StatusCreated {
		f.Fatalf("seed memory: %d %s", rec.Code, rec.Body)
	}
	var seeded struct{ ID string }
	json.Unmarshal(rec.Body.Bytes(), &seeded)
	f.Fuzz(func(t *testing.T, path, body string) {
		method := "POST"
		if m, p, ok := strings.Cut(path, " "); ok {
			method, path = m, p
		}
		switch method + " " + path {
		case "POST /api/memories", "POST /api/search", "POST /api/import", "POST /api/ingest", "POST /api/recall", "POST /api/capture", "POST /api/rate",
			"PATCH /api/memories/{seed}", "PUT /api/config", "POST /api/config/preview-threshold":
		default:
			return
		}
		path = strings.ReplaceAll(path, "{seed}", seeded.ID)
		before := d.Store().Count()
		req := httptest.NewRequest(method, path, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code >= 500 {
			t.Fatalf("POST %s %q: %d %s", path, body, rec.Code, rec.Body)
		}
		if after := d.Store().Count(); after < before {
			t.Fatalf("POST %s %q: the store shrank from %d to %d", path, body, before, after)
		}
	})
}

func config4fuzz(f *testing.F) config.Config {
	cfg := config.Default()
	cfg.DataDir = f.TempDir()
	cfg.Embedder.Provider = "builtin"
	return cfg
}
