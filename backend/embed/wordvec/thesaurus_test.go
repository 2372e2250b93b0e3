package wordvec

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func fixtureThesaurus(t *testing.T, senses int) *Thesaurus {
	t.Helper()
	th, err := BuildThesaurus(func(name string) (io.ReadCloser, error) {
		return os.Open(filepath.Join("testdata", "wordnet", name))
	}, senses)
	if err != nil {
		t.Fatal(err)
	}
	return th
}

func related(th *Thesaurus, w string) (syn, hyp []string) {
	th.Related(w, func(r string, s bool) {
		if s {
			syn = append(syn, r)
		} else {
			hyp = append(hyp, r)
		}
	})
	return syn, hyp
}

func TestBuildThesaurus(t *testing.T) {
	cases := []struct {
		senses   int
		word     string
		syn, hyp []string
	}{
		{3, "bill", []string{"invoice", "account", "beak"}, []string{"document", "entity", "attach", "fasten"}},
		{1, "bill", []string{"invoice", "account"}, []string{"document", "attach", "fasten"}},
		{3, "bills", []string{"invoice", "account", "beak"}, []string{"document", "entity", "attach", "fasten"}},
		{3, "invoice", []string{"bill", "account"}, []string{"document"}},
		{3, "labels", nil, []string{"document"}},               // morphy: noun -s; "@i" instance hypernym
		{3, "attached", []string{"fasten"}, nil},               // verb -ed, not the noun rule's "attache"
		{3, "children", []string{"child"}, []string{"entity"}}, // noun.exc
		{3, "biggest", []string{"big", "large"}, nil},          // adj.exc
		{3, "written_record", nil, nil},                        // multiword lemmas are not entries
		{3, "unknown", nil, nil},
		{3, "", nil, nil},
	}
	for _, c := range cases {
		th := fixtureThesaurus(t, c.senses)
		syn, hyp := related(th, c.word)
		if !reflect.DeepEqual(syn, c.syn) || !reflect.DeepEqual(hyp, c.hyp) {
			t.Errorf("senses %d, %q: synonyms %v hypernyms %v, want %v %v", c.senses, c.word, syn, hyp, c.syn, c.hyp)
		}
	}
	if _, err := BuildThesaurus(func(string) (io.ReadCloser, error) { return nil, os.ErrNotExist }, 3); err == nil {
		t.Error("missing files: want an error")
	}
	if _, err := BuildThesaurus(nil, 0); err == nil {
		t.Error("0 senses: want an error")
	}
}

func TestThesaurusRoundTrip(t *testing.T) {
	th := fixtureThesaurus(t, 3)
	var a bytes.Buffer
	if _, err := th.WriteTo(&a); err != nil {
		t.Fatal(err)
	}
	back, err := LoadThesaurus(bytes.NewReader(a.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	if back.data != th.data || !reflect.DeepEqual(back.lines, th.lines) {
		t.Fatal("round trip changed the entries")
	}
	var b bytes.Buffer
	back.WriteTo(&b)
	if !bytes.Equal(a.Bytes(), b.Bytes()) {
		t.Fatal("WriteTo is not deterministic")
	}
}

func TestLoadThesaurusRejects(t *testing.T) {
	for name, in := range map[string]string{
		"empty":        "",
		"header":       "MTTH 2\n",
		"fields":       ThesaurusMagic + "\nbill\tn\tinvoice\n",
		"order":        ThesaurusMagic + "\nbill\tn\t\t\naccount\tn\t\t\n",
		"repeat":       ThesaurusMagic + "\nbill\tn\t\t\nbill\tn\t\t\n",
		"upper":        ThesaurusMagic + "\nBill\tn\t\t\n",
		"pos":          ThesaurusMagic + "\nbill\tx\t\t\n",
		"pos twice":    ThesaurusMagic + "\nbill\tnn\t\t\n",
		"bad related":  ThesaurusMagic + "\nbill\tn\tin_voice\t\n",
		"empty word":   ThesaurusMagic + "\nbill\tn\tinvoice  account\t\n",
		"long word":    ThesaurusMagic + "\nbill\tn\t" + strings.Repeat("a", MaxWordBytes+1) + "\t\n",
		"invalid utf8": ThesaurusMagic + "\nbill\tn\t\xff\t\n",
		"too many":     ThesaurusMagic + "\nbill\tn\t" + strings.TrimSpace(strings.Repeat("a ", maxRelated+1)) + "\t\n",
	} {
		if _, err := LoadThesaurus(strings.NewReader(in)); err == nil {
			t.Errorf("%s: want an error", name)
		}
	}
}

func FuzzLoadThesaurus(f *testing.F) {
	var b bytes.Buffer
	th, err := BuildThesaurus(func(name string) (io.ReadCloser, error) {
		return os.Open(filepath.Join("testdata", "wordnet", name))
	}, 3)
	if err != nil {
		f.Fatal(err)
	}
	th.WriteTo(&b)
	f.Add(b.Bytes())
	f.Add([]byte(ThesaurusMagic + "\nbill\tn\tinvoice\tdocument\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		th, err := LoadThesaurus(bytes.NewReader(data))
		if err != nil {
			return
		}
		var out bytes.Buffer
		if _, err := th.WriteTo(&out); err != nil {
			t.Fatal(err)
		}
		again, err := LoadThesaurus(&out)
		if err != nil {
			t.Fatalf("a loaded thesaurus does not reload: %v", err)
		}
		if again.data != th.data || !reflect.DeepEqual(again.lines, th.lines) {
			t.Fatal("reload changed the entries")
		}
	})
}

// TestShippedData: the model and thesaurus embedded in the binary load, have
// the expected shape and relate what they should.
func TestShippedData(t *testing.T) {
	m, err := Builtin()
	if err != nil {
		t.Fatal(err)
	}
	if m.Dim() != 300 || m.Len() < 10000 {
		t.Fatalf("shipped model: %d words x %d dims", m.Len(), m.Dim())
	}
	th, err := BuiltinThesaurus()
	if err != nil {
		t.Fatal(err)
	}
	if th.Len() < 50000 {
		t.Fatalf("shipped thesaurus has %d entries", th.Len())
	}
	syn, _ := related(th, "bill")
	found := false
	for _, s := range syn {
		found = found || s == "invoice"
	}
	if !found {
		t.Errorf("bill: synonyms %v lack invoice", syn)
	}
	// The vectors and the thesaurus are the files the manifest records,
	// byte for byte.
	var man struct {
		ModelSHA256 string `json:"model_sha256"`
		Thesaurus   struct {
			Entries int    `json:"entries"`
			SHA256  string `json:"sha256"`
			Bytes   int    `json:"bytes"`
		} `json:"thesaurus"`
	}
	b, err := os.ReadFile(filepath.Join("model", "manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &man); err != nil {
		t.Fatal(err)
	}
	if sum := sha256.Sum256(vectorsBin); hex.EncodeToString(sum[:]) != man.ModelSHA256 {
		t.Errorf("model/wordvec.bin has sha256 %x, the manifest says %s", sum, man.ModelSHA256)
	}
	if sum := sha256.Sum256([]byte(thesaurusTxt)); hex.EncodeToString(sum[:]) != man.Thesaurus.SHA256 {
		t.Errorf("model/thesaurus.txt has sha256 %x, the manifest says %s", sum, man.Thesaurus.SHA256)
	}
	if len(thesaurusTxt) != man.Thesaurus.Bytes || th.Len() != man.Thesaurus.Entries {
		t.Errorf("model/thesaurus.txt has %d bytes and %d entries, the manifest says %d and %d",
			len(thesaurusTxt), th.Len(), man.Thesaurus.Bytes, man.Thesaurus.Entries)
	}
}

// BenchmarkLoadBuiltin measures what the first use of the built-in data
// costs: loading the shipped vectors and the thesaurus (both in place).
func BenchmarkLoadBuiltin(b *testing.B) {
	b.Run("vectors", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			if _, err := loadBuiltin(vectorsBin); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("thesaurus", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			if _, err := loadBuiltinThesaurus(thesaurusTxt); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// benchQueryWords are query words as Tokens emits them: entries,
// inflections morphy reduces, and words the thesaurus does not know.
var benchQueryWords = strings.Fields(`send the bill to accounting before friday invoices
	stickers are printed as shipping labels on the zebra printer deploy script lives
	in build release sh and needs github token comment threads anchor to yjs
	relative positions so comments survive concurrent edits we use postgresql
	with pgvector for the team store prefer tabs over spaces children went biggest
	attached running databases migrations xyzzy plugh`)

// BenchmarkThesaurusRelated measures lookups in the built-in thesaurus (the
// query expansion of a search): one op looks up every word of
// benchQueryWords.
func BenchmarkThesaurusRelated(b *testing.B) {
	th, err := BuiltinThesaurus()
	if err != nil {
		b.Fatal(err)
	}
	n := 0
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for _, w := range benchQueryWords {
			th.Related(w, func(string, bool) { n++ })
		}
	}
	if n == 0 {
		b.Fatal("no related words")
	}
}
