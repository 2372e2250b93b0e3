package ingest

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/memtray/memtray/backend/memory"
)

// TestWrite: a memory whose text the caller gives goes through redaction,
// dedup and supersession, and reaches the store once.
func TestWrite(t *testing.T) {
	const (
		flags   = "Feature flags are read from config/flags.yaml at start and never hot-reloaded."
		backup  = "The nightly backup job writes to the s3://ops-backups bucket in eu-west-1."
		release = "Releases are tagged vMAJOR.MINOR.PATCH from the main branch after the freeze."
	)
	secret := "ghp_" + "Zq8Lm3Rt7Vx2Nc5Pw9Ks4Hd6Fg1Jb0Ye7Ua3"
	tests := []struct {
		name string
		// setup writes these first (the second one supersedes the first
		// when supersede is set) and returns their ids.
		setup     []string
		supersede bool
		req       func(ids []string) WriteRequest
		verdict   memory.Verdict
		check     func(t *testing.T, f *fixture, ids []string, res WriteResult)
	}{
		{name: "new memory, secret masked", req: func([]string) WriteRequest {
			return WriteRequest{Memory: memory.Memory{Text: "The CI token is " + secret + " and lives in the ci-secrets vault.", Source: memory.SourceCLI, Kind: memory.KindConfig}}
		}, verdict: memory.VerdictStored, check: func(t *testing.T, _ *fixture, _ []string, res WriteResult) {
			m := res.Memory
			if strings.Contains(m.Text, secret) || !strings.Contains(m.Text, "[REDACTED") || res.Redactions != 1 {
				t.Errorf("text %q, %d redactions", m.Text, res.Redactions)
			}
			if m.Kind != memory.KindConfig || m.KindOrigin != memory.KindGiven || m.Source != memory.SourceCLI || m.Importance != 0.5 {
				t.Errorf("stored %+v", m)
			}
		}},
		{name: "same text reinforces", setup: []string{flags}, req: func([]string) WriteRequest {
			return WriteRequest{Memory: memory.Memory{Text: "  " + flags, Source: memory.SourceCLI}}
		}, verdict: memory.VerdictDuplicate, check: func(t *testing.T, _ *fixture, ids []string, res WriteResult) {
			if res.Memory.ID != ids[0] || res.Memory.ReinforcedCount != 1 {
				t.Errorf("got %s reinforced %d, want %s once", res.Memory.ID, res.Memory.ReinforcedCount, ids[0])
			}
		}},
		{name: "replaces a memory", setup: []string{backup}, req: func(ids []string) WriteRequest {
			return WriteRequest{Memory: memory.Memory{Text: release, Source: memory.SourceCLI, Pinned: true}, Replaces: ids[0]}
		}, verdict: memory.VerdictUpdated, check: func(t *testing.T, f *fixture, ids []string, res WriteResult) {
			old, err := f.st.Get(context.Background(), ids[0])
			if err != nil || old.SupersededBy != res.Memory.ID || res.Memory.Supersedes != ids[0] || !res.Memory.Pinned {
				t.Errorf("old %+v (%v), new %+v", old, err, res.Memory)
			}
		}},
		{name: "replacing with another memory's text writes nothing", setup: []string{flags, backup}, req: func(ids []string) WriteRequest {
			return WriteRequest{Memory: memory.Memory{Text: flags, Source: memory.SourceCLI}, Replaces: ids[1]}
		}, verdict: memory.VerdictDuplicate, check: func(t *testing.T, f *fixture, ids []string, res WriteResult) {
			if res.Memory.ID != ids[0] || res.Memory.ReinforcedCount != 0 || f.st.Count() != 2 {
				t.Errorf("got %+v, %d memories", res.Memory, f.st.Count())
			}
		}},
		{name: "exact: an older version does not count", setup: []string{backup, release}, supersede: true, req: func([]string) WriteRequest {
			return WriteRequest{Memory: memory.Memory{Text: backup, Source: "import:claude:/x.md"}, Exact: true}
		}, verdict: memory.VerdictStored, check: func(t *testing.T, f *fixture, ids []string, res WriteResult) {
			if res.Memory.ID == ids[0] || res.Memory.Source != "import:claude:/x.md" {
				t.Errorf("got %+v", res.Memory)
			}
		}},
		{name: "without exact an older version is the duplicate", setup: []string{backup, release}, supersede: true, req: func([]string) WriteRequest {
			return WriteRequest{Memory: memory.Memory{Text: backup, Source: memory.SourceCLI}}
		}, verdict: memory.VerdictDuplicate, check: func(t *testing.T, _ *fixture, ids []string, res WriteResult) {
			if res.Memory.ID != ids[0] {
				t.Errorf("got %s, want the older version %s", res.Memory.ID, ids[0])
			}
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, nil)
			ctx := context.Background()
			var ids []string
			for i, text := range tc.setup {
				req := WriteRequest{Memory: memory.Memory{Text: text, Source: memory.SourceCLI}, Exact: true}
				if tc.supersede && i > 0 {
					req.Replaces = ids[i-1]
				}
				res, err := f.p.Write(ctx, req)
				if err != nil {
					t.Fatal(err)
				}
				ids = append(ids, res.Memory.ID)
			}
			res, err := f.p.Write(ctx, tc.req(ids))
			if err != nil {
				t.Fatal(err)
			}
			if res.Decision.Verdict != tc.verdict || len(res.Decision.MemoryIDs) != 1 || res.Decision.MemoryIDs[0] != res.Memory.ID {
				t.Fatalf("decision %+v", res.Decision)
			}
			tc.check(t, f, ids, res)
		})
	}
}

// TestWriteRejectsInvalid: what the caller gives is validated before
// anything is embedded or stored.
func TestWriteRejectsInvalid(t *testing.T) {
	f := newFixture(t, nil)
	for name, m := range map[string]memory.Memory{
		"empty text":   {Text: "  "},
		"unknown kind": {Text: "The API listens on port 8443.", Kind: "rumour"},
		"importance":   {Text: "The API listens on port 8443.", Importance: 2},
		"long source":  {Text: "The API listens on port 8443.", Source: strings.Repeat("s", 300)},
		"invalid utf8": {Text: "port \xff"},
	} {
		_, err := f.p.Write(context.Background(), WriteRequest{Memory: m})
		var ve *memory.ValidationError
		if !errors.As(err, &ve) {
			t.Errorf("%s: %v, want a validation error", name, err)
		}
	}
	if n := f.st.Count(); n != 0 {
		t.Fatalf("%d memories stored", n)
	}
}
