package main

import (
	"strings"
	"testing"
)

func TestHTMLProse(t *testing.T) {
	page := `<html><head><title>x</title><script>var a = 1;</script></head><body>
<div class="related" role="navigation"><ul><li>previous</li><li>next</li></ul></div>
<div class="body" role="main">
<h1>Working with files and directories</h1>
<p>The <code>open()</code> function returns a file object,
and is most commonly used with two arguments &amp; a mode.</p>
<pre>f = open("workfile", "w", encoding="utf-8")</pre>
<p>Short line.</p>
<table><tr><td>1.0</td><td>2.0</td><td>3.0</td><td>4.0</td><td>5.0</td></tr></table>
</div>
<div class="sphinxsidebar"><p>Quick search box goes right here for you</p></div>
</body></html>`
	got := HTMLProse(page)
	want := "Working with files and directories\nThe open() function returns a file object, and is most commonly used with two arguments & a mode.\n"
	if got != want {
		t.Fatalf("HTMLProse:\n got %q\nwant %q", got, want)
	}
}

func TestWordNetGlosses(t *testing.T) {
	data := "  1 This software and database is being provided\n" +
		"00002137 03 n 02 abstraction 0 abstract_entity 0 010 @ 00001740 n 0000 | a general concept formed by extracting common features; \"an example\"  \n" +
		"00004444 00 a 01 galore(ip) 0 000 | in great numbers\n"
	got := WordNetGlosses(data)
	want := "abstraction, abstract entity: a general concept formed by extracting common features; \"an example\"\n" +
		"galore: in great numbers\n"
	if got != want {
		t.Fatalf("WordNetGlosses:\n got %q\nwant %q", got, want)
	}
}

func TestDictProse(t *testing.T) {
	data := "ABSENT, adj.\n\nPeculiarly exposed to the tooth of detraction; vilified;\n  hopelessly in the wrong.\n\nx"
	got := DictProse(data)
	if want := "Peculiarly exposed to the tooth of detraction; vilified; hopelessly in the wrong.\n"; got != want {
		t.Fatalf("DictProse: got %q", got)
	}
	if strings.Contains(got, "ABSENT") {
		t.Fatal("short headword line kept")
	}
}

// TestSourcesPinned checks the source lists: every package named once
// across both lists, with a licence, an absolute root and a known kind.
func TestSourcesPinned(t *testing.T) {
	seen := map[string]bool{}
	for _, list := range []struct {
		name string
		srcs []source
	}{{"sources", sources}, {"moreSources", moreSources}} {
		for _, s := range list.srcs {
			if seen[s.Package] {
				t.Errorf("%s: %s listed twice", list.name, s.Package)
			}
			seen[s.Package] = true
			if s.License == "" || !strings.HasPrefix(s.Root, "/") {
				t.Errorf("%s: %s: licence %q root %q", list.name, s.Package, s.License, s.Root)
			}
			switch s.Kind {
			case "html", "wordnet", "dictzip":
			default:
				t.Errorf("%s: %s: kind %q", list.name, s.Package, s.Kind)
			}
			if s.Files != 0 || s.Bytes != 0 || s.Version != "" {
				t.Errorf("%s: %s: counts or version set in the pinned list", list.name, s.Package)
			}
		}
	}
}
