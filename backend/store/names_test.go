package store

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/blevesearch/bleve/v2"

	"github.com/memtray/memtray/backend/memory"
)

// TestTextSearchNames: a name written by its form is a term of its own
// (the names field): the query's "--firmware" scores the memory that
// writes the flag above the ones that only say "firmware" more often,
// which the word alone ranks first; a query of a stop word's flag ("-a") finds the one
// memory that writes it.
func TestTextSearchNames(t *testing.T) {
	ctx := context.Background()
	s := openTest(t, t.TempDir())
	words := mustPut(t, s, mem("firmware mapping: the firmware table maps firmware names to firmware profiles"))
	also := mustPut(t, s, mem("firmware profiles decide the firmware flavour"))
	flag := mustPut(t, s, mem("the schema command takes --firmware to pick the table, and -a for all of it"))
	// The word alone ranks the memories that say it more often first.
	if ts, err := s.TextSearchTerms(ctx, []Term{{Text: "firmwar", Boost: 1}}, 3, Filter{}); err != nil || len(ts) != 3 || ts[2].ID != flag.ID {
		t.Errorf("word only = %v, %v; want the flag's memory last", ts, err)
	}
	for _, c := range []struct {
		name  string
		terms []Term
		want  string
	}{
		{"word and name", []Term{{Text: "firmwar", Boost: 1}, {Text: "--firmware", Boost: 1, Name: true}}, flag.ID},
		{"stop word's flag", []Term{{Text: "-a", Boost: 1, Name: true}}, flag.ID},
	} {
		t.Run(c.name, func(t *testing.T) {
			ts, err := s.TextSearchTerms(ctx, c.terms, 3, Filter{})
			if err != nil || len(ts) == 0 || ts[0].ID != c.want {
				t.Errorf("TextSearchTerms(%v) = %v, %v; want %s first (words %s, also %s, flag %s)", c.terms, ts, err, c.want, words.ID, also.ID, flag.ID)
			}
		})
	}
	// A name is not a word: "firmware" in the names field matches nothing.
	if ts, err := s.TextSearchTerms(ctx, []Term{{Text: "firmware", Boost: 1, Name: true}}, 3, Filter{}); err != nil || len(ts) != 0 {
		t.Errorf("name firmware = %v, %v; want none", ts, err)
	}
}

// TestTextIndexOldMappingRebuilt: an index of an older mapping version
// (1, before the names field) is rebuilt from the records at Open, with a
// warning that says so and not that it was damaged, and then finds names.
func TestTextIndexOldMappingRebuilt(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s := openTest(t, dir)
	m := mustPut(t, s, mem("run it with --dry-run first"))
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, textDir)
	setTextMapping(t, dir, "1")
	var logged bytes.Buffer
	s2, err := Open(ctx, Options{Dir: dir, Model: testEmb.model, Dim: testEmb.dim, Clock: memory.FixedClock{T: t0},
		Logger: slog.New(slog.NewTextHandler(&logged, nil))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s2.Close() })
	if l := logged.String(); !strings.Contains(l, "building the text index again") || !strings.Contains(l, "older version") ||
		!strings.Contains(l, "memories=1") || !strings.Contains(l, "text index built") {
		t.Errorf("log %q, want the rebuild said before and after", l)
	}
	info := s2.Info()
	if info.RepairedOnOpen != 1 || len(info.Warnings) != 1 || !strings.Contains(info.Warnings[0], "rebuilt") || strings.Contains(info.Warnings[0], "moved to") {
		t.Errorf("Info = %+v", info)
	}
	if old, _ := filepath.Glob(path + brokenSuffix + "*"); len(old) != 0 {
		t.Errorf("old index moved aside as broken: %v", old)
	}
	if ts, err := s2.TextSearchTerms(ctx, []Term{{Text: "--dry-run", Boost: 1, Name: true}}, 3, Filter{}); err != nil || len(ts) != 1 || ts[0].ID != m.ID {
		t.Errorf("search after rebuild: %v, %v", ts, err)
	}
	if _, err := os.Stat(path); err != nil {
		t.Error(err)
	}
}

// setTextMapping marks the text index of the (closed) store in dir as
// built with mapping version v, as an older build of memtray left it.
func setTextMapping(tb testing.TB, dir, v string) {
	tb.Helper()
	cfg := textConfig()
	delete(cfg, "unsafe_batch") // SetInternal on disk at Close
	idx, err := bleve.OpenUsing(filepath.Join(dir, textDir), cfg)
	if err != nil {
		tb.Fatal(err)
	}
	if err := idx.SetInternal([]byte(internalMapping), []byte(v)); err != nil {
		tb.Fatal(err)
	}
	if err := idx.Close(); err != nil {
		tb.Fatal(err)
	}
}
