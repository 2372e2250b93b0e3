package store

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strconv"
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

// TestTextIndexOldMappingServes: a store whose text index is of mapping
// version 1 (before the names field) opens at once with it, which serves
// searches as before the upgrade (words, no names) and takes writes,
// while the current index is built in the background; once it is done,
// names are found, every write made meanwhile included, and the next
// Open finds the current version and rebuilds nothing.
func TestTextIndexOldMappingServes(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s := openTest(t, dir)
	a := mustPut(t, s, mem("run it with --dry-run first"))
	b := mustPut(t, s, mem("the deploy takes --canary to start small"))
	c := mustPut(t, s, mem("deploy notes: plain words about deploys"))
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	writeOldTextIndex(t, dir)
	gate := make(chan struct{})
	upgradeGate = func() { <-gate }
	t.Cleanup(func() { upgradeGate = nil })
	var logged bytes.Buffer
	s2, err := Open(ctx, Options{Dir: dir, Model: testEmb.model, Dim: testEmb.dim, Clock: memory.FixedClock{T: t0},
		Logger: slog.New(slog.NewTextHandler(&logged, nil))})
	if err != nil {
		close(gate)
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s2.Close() })
	released := false
	release := func() {
		if !released {
			released = true
			close(gate)
		}
	}
	t.Cleanup(release)
	search := func(when string, terms []Term, want ...string) {
		t.Helper()
		ts, err := s2.TextSearchTerms(ctx, terms, 5, Filter{})
		var got []string
		for _, x := range ts {
			got = append(got, x.ID)
		}
		slices.Sort(got)
		slices.Sort(want)
		if err != nil || !slices.Equal(got, want) {
			t.Errorf("%s: TextSearchTerms(%v) = %v, %v; want %v", when, terms, got, err, want)
		}
	}
	info := s2.Info()
	if len(info.Warnings) != 1 || !strings.Contains(info.Warnings[0], "mapping version 1") {
		t.Errorf("Info = %+v, want the old version said", info)
	}
	// Served by the old index: words, no names.
	deploy := []Term{{Text: "deploi", Boost: 1}}
	search("old index", deploy, b.ID, c.ID)
	search("old index", []Term{{Text: "--dry-run", Boost: 1, Name: true}})
	// Writes meanwhile.
	d := mustPut(t, s2, mem("deploy with --verbose to see it"))
	if err := s2.Delete(ctx, a.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := s2.Update(ctx, c.ID, func(m *memory.Memory) error {
		m.Text, m.Embedding = "deploy notes: pass --canary too", testEmb.vec("deploy notes: pass --canary too")
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	search("old index after writes", deploy, b.ID, c.ID, d.ID)
	release()
	s2.waitTextUpgrade()
	if l := logged.String(); !strings.Contains(l, "in the background") || !strings.Contains(l, "text index upgraded") || !strings.Contains(l, "memories=3") {
		t.Errorf("log %q, want the upgrade said before and after", l)
	}
	search("upgraded", deploy, b.ID, c.ID, d.ID)
	search("upgraded", []Term{{Text: "--dry-run", Boost: 1, Name: true}})
	search("upgraded", []Term{{Text: "--canary", Boost: 1, Name: true}}, b.ID, c.ID)
	search("upgraded", []Term{{Text: "--verbose", Boost: 1, Name: true}}, d.ID)
	bleveAvgLength(t, s2)
	if err := s2.Close(); err != nil {
		t.Fatal(err)
	}
	s3 := openTest(t, dir)
	if info := s3.Info(); len(info.Warnings) != 0 || s3.upgrade.done != nil {
		t.Errorf("reopened: Info = %+v, upgrading %v; want the current version", info, s3.upgrade.done != nil)
	}
	if v, err := s3.text.GetInternal([]byte(internalMapping)); err != nil || string(v) != mappingVersion {
		t.Errorf("mapping version %q, %v; want %q", v, err, mappingVersion)
	}
}

// TestTextIndexNamesInPunctuationUpgrade: an index of mapping version 2
// lacks the names a text writes inside punctuation marks
// (“--export-gcode”), which version 2's reading of names left out; it
// serves meanwhile, its other names included, and once the current one is
// built in the background, the name is found.
func TestTextIndexNamesInPunctuationUpgrade(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s := openTest(t, dir)
	quoted := mustPut(t, s, mem("the slicer takes “--export-gcode” and a config"))
	plain := mustPut(t, s, mem("run it with --dry-run first"))
	// Index quoted as version 2 did: without the name in quotes.
	req := bleve.NewSearchRequest(bleve.NewDocIDQuery([]string{quoted.ID}))
	req.Fields = []string{fieldSeq}
	res, err := s.text.Search(req)
	if err != nil || len(res.Hits) != 1 {
		t.Fatalf("search %s: %v, %v", quoted.ID, res, err)
	}
	tseq, err := strconv.ParseUint(res.Hits[0].Fields[fieldSeq].(string), 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	doc := textDoc(&quoted, tseq)
	delete(doc, fieldNames)
	if err := s.text.Index(quoted.ID, doc); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	setTextMapping(t, dir, "2")
	gate := make(chan struct{})
	upgradeGate = func() { <-gate }
	t.Cleanup(func() { upgradeGate = nil })
	s2, err := Open(ctx, Options{Dir: dir, Model: testEmb.model, Dim: testEmb.dim, Clock: memory.FixedClock{T: t0}})
	if err != nil {
		close(gate)
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s2.Close() })
	released := false
	release := func() {
		if !released {
			released = true
			close(gate)
		}
	}
	t.Cleanup(release)
	search := func(when, name string, want ...string) {
		t.Helper()
		ts, err := s2.TextSearchTerms(ctx, []Term{{Text: name, Boost: 1, Name: true}}, 5, Filter{})
		var got []string
		for _, x := range ts {
			got = append(got, x.ID)
		}
		if err != nil || !slices.Equal(got, want) {
			t.Errorf("%s: name %s = %v, %v; want %v", when, name, got, err, want)
		}
	}
	if info := s2.Info(); len(info.Warnings) != 1 || !strings.Contains(info.Warnings[0], "mapping version 2") || !strings.Contains(info.Warnings[0], "inside punctuation marks") {
		t.Errorf("Info = %+v, want the old version said", info)
	}
	search("old index", "--export-gcode")
	search("old index", "--dry-run", plain.ID)
	release()
	s2.waitTextUpgrade()
	search("upgraded", "--export-gcode", quoted.ID)
	search("upgraded", "--dry-run", plain.ID)
	if v, err := s2.text.GetInternal([]byte(internalMapping)); err != nil || string(v) != mappingVersion {
		t.Errorf("mapping version %q, %v; want %q", v, err, mappingVersion)
	}
}

// writeOldTextIndex replaces the text index of the (closed) store in dir
// with an empty one of mapping version 1, without the names field, as an
// older build of memtray made it: Open indexes every record into it.
func writeOldTextIndex(tb testing.TB, dir string) {
	tb.Helper()
	path := filepath.Join(dir, textDir)
	if err := os.RemoveAll(path); err != nil {
		tb.Fatal(err)
	}
	im := newTextMapping()
	delete(im.DefaultMapping.Properties, fieldNames)
	cfg := textConfig()
	delete(cfg, "unsafe_batch")
	idx, err := bleve.NewUsing(path, im, bleve.Config.DefaultIndexType, bleve.Config.DefaultKVStore, cfg)
	if err != nil {
		tb.Fatal(err)
	}
	if err := idx.SetInternal([]byte(internalMapping), []byte("1")); err != nil {
		tb.Fatal(err)
	}
	if err := idx.Close(); err != nil {
		tb.Fatal(err)
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
