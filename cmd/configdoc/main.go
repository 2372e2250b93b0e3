// Command configdoc writes docs/configuration.md from the config struct's
// field docs: every key of config.Config and its sections, with its JSON
// name, type, default (config.Default(), as the config file writes it) and
// the doc comment of its Go field, so the page never drifts from the code.
// A test fails when the committed page is stale.
//
//	go run ./cmd/configdoc -o docs/configuration.md
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"sort"
	"strings"

	"github.com/memtray/memtray/backend/config"
)

// Command is how to regenerate the committed file, from the repository root.
const Command = "go run ./cmd/configdoc -o docs/configuration.md"

// SourceDir is the config package's directory, from the repository root.
const SourceDir = "backend/config"

// envDefaults are the defaults that depend on the environment the
// generator runs in; the page says how they are found instead.
var envDefaults = map[string]string{
	"data_dir": "`$XDG_DATA_HOME/memtray`, else `~/.local/share/memtray`",
}

var durationType = reflect.TypeOf(config.Duration(0))

func main() {
	out := flag.String("o", "", "write to this file (default: standard output)")
	src := flag.String("src", SourceDir, "the config package's source directory")
	flag.Parse()
	page, err := Generate(*src)
	if err != nil {
		fmt.Fprintln(os.Stderr, "configdoc:", err)
		os.Exit(1)
	}
	if *out == "" {
		os.Stdout.Write(page)
		return
	}
	if err := os.WriteFile(*out, page, 0o644); err != nil {
		fmt.Fprintln(os.Stderr, "configdoc:", err)
		os.Exit(1)
	}
}

// Key is one documented configuration key.
type Key struct {
	// Path is the key's dotted JSON path, e.g. "search.k".
	Path string
	// Type is the key's JSON type in words.
	Type string
	// Default is the default, in Markdown.
	Default string
	// Doc is the Go field's doc comment as one Markdown paragraph.
	Doc string
}

// Section is one object of the config file: the top level, a section such
// as "search", or a nested one such as "capture.transcripts".
type Section struct {
	// Path is the section's dotted JSON path; empty at the top level.
	Path string
	// Doc describes the section (its Go type's doc comment).
	Doc  string
	Keys []Key
}

// structDocs are the doc comments of one Go struct type.
type structDocs struct {
	doc    string            // the type's doc comment
	fields map[string]string // Go field name -> its doc, or the doc of the group it ends
}

// Generate returns the Markdown page, reading the field docs from the
// config package's source in srcDir.
func Generate(srcDir string) ([]byte, error) {
	docs, err := parseDocs(srcDir)
	if err != nil {
		return nil, err
	}
	sections, err := Sections(docs)
	if err != nil {
		return nil, err
	}
	return render(sections), nil
}

// parseDocs reads the doc comments of every struct type declared in the
// non-test Go files of dir.
func parseDocs(dir string) (map[string]structDocs, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", dir, err)
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("no Go files in %s (run from the repository root or pass -src)", dir)
	}
	fset := token.NewFileSet()
	out := map[string]structDocs{}
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.ParseComments)
		if err != nil {
			return nil, fmt.Errorf("parse config source: %w", err)
		}
		for _, decl := range f.Decls {
			gd, ok := decl.(*ast.GenDecl)
			if !ok || gd.Tok != token.TYPE {
				continue
			}
			for _, spec := range gd.Specs {
				ts := spec.(*ast.TypeSpec)
				st, ok := ts.Type.(*ast.StructType)
				if !ok {
					continue
				}
				doc := ts.Doc
				if doc == nil {
					doc = gd.Doc
				}
				out[ts.Name.Name] = structDocs{doc: doc.Text(), fields: fieldDocs(fset, st)}
			}
		}
	}
	return out, nil
}

// fieldDocs maps each field of st to its doc comment. A field without one
// shares the doc of the field on the line above it (the comment describes
// the group), as in
//
//	// MaxPerHour and MaxPerDay cap judge calls.
//	MaxPerHour int
//	MaxPerDay  int
func fieldDocs(fset *token.FileSet, st *ast.StructType) map[string]string {
	out := map[string]string{}
	prev, prevLine := "", -1
	for _, f := range st.Fields.List {
		line := fset.Position(f.Pos()).Line
		doc := f.Doc.Text()
		if doc == "" && line == prevLine+1 {
			doc = prev
		}
		for _, n := range f.Names {
			out[n.Name] = doc
		}
		prev, prevLine = doc, fset.Position(f.End()).Line
	}
	return out
}

// Sections walks config.Config with its defaults and returns the page's
// sections, the top level first and each section before the ones nested in it.
func Sections(docs map[string]structDocs) ([]Section, error) {
	var out []Section
	w := walker{docs: docs, out: &out}
	if err := w.section("", "", reflect.ValueOf(config.Default())); err != nil {
		return nil, err
	}
	return out, nil
}

type walker struct {
	docs map[string]structDocs
	out  *[]Section
}

// section adds the section of struct value v at path, then its nested ones.
func (w walker) section(path, doc string, v reflect.Value) error {
	t := v.Type()
	sd, ok := w.docs[t.Name()]
	if !ok {
		return fmt.Errorf("no source for type %s", t.Name())
	}
	names := jsonNames(t)
	idx := len(*w.out)
	*w.out = append(*w.out, Section{Path: path, Doc: doc})
	var nested []func() error
	for i := range t.NumField() {
		sf := t.Field(i)
		name, ok := names[sf.Name]
		if !ok {
			continue
		}
		key := join(path, name)
		fdoc := markdown(sd.fields[sf.Name], names)
		if fdoc == "" {
			return fmt.Errorf("%s (%s.%s) has no doc comment", key, t.Name(), sf.Name)
		}
		fv := v.Field(i)
		if sf.Type.Kind() == reflect.Struct && sf.Type != durationType {
			nested = append(nested, func() error {
				return w.section(key, markdown(w.docs[sf.Type.Name()].doc, jsonNames(sf.Type)), fv)
			})
			(*w.out)[idx].Keys = append((*w.out)[idx].Keys, Key{Path: key, Type: "object", Default: "see [`" + key + "`](#" + anchor(key) + ")", Doc: fdoc})
			continue
		}
		def, err := defaultOf(key, fv)
		if err != nil {
			return err
		}
		(*w.out)[idx].Keys = append((*w.out)[idx].Keys, Key{Path: key, Type: typeName(sf.Type), Default: def, Doc: fdoc})
		if et := sf.Type; et.Kind() == reflect.Map && et.Elem().Kind() == reflect.Struct {
			nested = append(nested, func() error { return w.mapSection(key+".<name>", et.Elem(), fv) })
		}
	}
	for _, f := range nested {
		if err := f(); err != nil {
			return err
		}
	}
	return nil
}

// mapSection adds the section of a map's struct values (steward.types.<name>),
// each key's default listed per map entry.
func (w walker) mapSection(path string, t reflect.Type, m reflect.Value) error {
	sd, ok := w.docs[t.Name()]
	if !ok {
		return fmt.Errorf("no source for type %s", t.Name())
	}
	names := jsonNames(t)
	sec := Section{Path: path, Doc: markdown(sd.doc, names)}
	entries := m.MapKeys()
	sort.Slice(entries, func(i, j int) bool { return entries[i].String() < entries[j].String() })
	for i := range t.NumField() {
		sf := t.Field(i)
		name, ok := names[sf.Name]
		if !ok {
			continue
		}
		key := join(path, name)
		doc := markdown(sd.fields[sf.Name], names)
		if doc == "" {
			return fmt.Errorf("%s (%s.%s) has no doc comment", key, t.Name(), sf.Name)
		}
		var defs []string
		for _, e := range entries {
			b, err := json.Marshal(m.MapIndex(e).Field(i).Interface())
			if err != nil {
				return fmt.Errorf("default of %s: %w", key, err)
			}
			defs = append(defs, fmt.Sprintf("%s: `%s`", e.String(), b))
		}
		sec.Keys = append(sec.Keys, Key{Path: key, Type: typeName(sf.Type), Default: strings.Join(defs, ", "), Doc: doc})
	}
	*w.out = append(*w.out, sec)
	return nil
}

// jsonNames maps t's exported fields that the config file holds to their
// JSON names (fields tagged "-" are left out).
func jsonNames(t reflect.Type) map[string]string {
	out := map[string]string{}
	for i := range t.NumField() {
		sf := t.Field(i)
		tag := sf.Tag.Get("json")
		if !sf.IsExported() || tag == "-" {
			continue
		}
		name, _, _ := strings.Cut(tag, ",")
		if name == "" {
			name = sf.Name
		}
		out[sf.Name] = name
	}
	return out
}

func join(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}

// defaultOf is the default of key as the config file writes it.
func defaultOf(key string, v reflect.Value) (string, error) {
	if d, ok := envDefaults[key]; ok {
		return d, nil
	}
	if (v.Kind() == reflect.Slice || v.Kind() == reflect.Map) && v.Len() == 0 {
		if v.Kind() == reflect.Map {
			return "`{}`", nil
		}
		return "`[]`", nil
	}
	b, err := json.Marshal(v.Interface())
	if err != nil {
		return "", fmt.Errorf("default of %s: %w", key, err)
	}
	return "`" + string(b) + "`", nil
}

// typeName is a Go type's JSON type in words.
func typeName(t reflect.Type) string {
	if t == durationType {
		return "duration"
	}
	switch t.Kind() {
	case reflect.String:
		return "string"
	case reflect.Bool:
		return "boolean"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "integer"
	case reflect.Float32, reflect.Float64:
		return "number"
	case reflect.Slice, reflect.Array:
		return "list of " + plural(typeName(t.Elem()))
	case reflect.Map:
		return "map of " + plural(typeName(t.Elem()))
	case reflect.Struct:
		return "object"
	}
	return t.Kind().String()
}

func plural(s string) string {
	if strings.HasPrefix(s, "list of ") || strings.HasPrefix(s, "map of ") {
		return s
	}
	return s + "s"
}

var (
	wordRE  = regexp.MustCompile(`\b[A-Z][A-Za-z0-9]*\b`)
	spaceRE = regexp.MustCompile(`\s+`)
)

// markdown turns a doc comment into one Markdown paragraph: lines joined,
// Markdown's special characters escaped outside `code`, and the Go names
// of the struct's fields written as their JSON keys.
func markdown(doc string, names map[string]string) string {
	doc = strings.TrimSpace(spaceRE.ReplaceAllString(doc, " "))
	parts := strings.Split(doc, "`")
	for i, part := range parts {
		code := i%2 == 1 && i < len(parts)-1 // after an unmatched backquote the rest is text
		if code {
			parts[i] = strings.ReplaceAll(part, "|", `\|`) // a table cell ends at | even in code
			continue
		}
		parts[i] = wordRE.ReplaceAllStringFunc(escape(part), func(w string) string {
			if n, ok := names[w]; ok {
				return "`" + n + "`"
			}
			return w
		})
	}
	return strings.Join(parts, "`")
}

// escape escapes what Markdown (GitHub's) would read as markup in plain text.
func escape(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch r {
		case '\\', '*', '_', '|', '[', ']':
			b.WriteByte('\\')
			b.WriteRune(r)
		case '<':
			b.WriteString("&lt;")
		case '>':
			b.WriteString("&gt;")
		case '&':
			b.WriteString("&amp;")
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// anchor is the GitHub heading anchor of a section titled `path`.
func anchor(path string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(path) {
		if r == '-' || r == '_' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			b.WriteRune(r)
		}
	}
	return b.String()
}

const intro = `memtray reads its configuration from ` + "`$XDG_CONFIG_HOME/memtray/config.json`" + `
(default ` + "`~/.config/memtray/config.json`" + `), or the file ` + "`--config FILE`" + ` or
` + "`MEMTRAY_CONFIG`" + ` names. The file is one JSON object; every key is optional and
takes the default below when absent. Unknown keys are errors (a typo does not pass
silently), and every invalid value is named with the reason when memtray starts. The
window's Settings view edits the keys that can change at runtime and saves them into this
file.

Durations are strings such as ` + "`\"30s\"`, `\"1h30m\"`" + ` (Go's time.ParseDuration) or a number of
seconds. Keys are written below with their section as a dotted path: ` + "`search.k`" + ` is
` + "`{\"search\": {\"k\": 5}}`" + ` in the file.
`

// render writes the page.
func render(sections []Section) []byte {
	var b bytes.Buffer
	b.WriteString("# Configuration\n\n")
	b.WriteString("<!-- Code generated by cmd/configdoc from the doc comments of backend/config. DO NOT EDIT. -->\n")
	b.WriteString("<!-- Regenerate: " + Command + " -->\n\n")
	b.WriteString(intro)
	b.WriteString("\nSections:")
	for i, s := range sections[1:] {
		sep := ","
		if i == 0 {
			sep = ""
		}
		title := s.Path
		fmt.Fprintf(&b, "%s [`%s`](#%s)", sep, title, anchor(title))
	}
	b.WriteString(".\n")
	for _, s := range sections {
		if s.Path == "" {
			b.WriteString("\n## Top level\n\n")
		} else {
			fmt.Fprintf(&b, "\n## `%s`\n\n", s.Path)
		}
		if s.Doc != "" {
			b.WriteString(s.Doc + "\n\n")
		}
		b.WriteString("| Key | Type | Default | Description |\n| --- | --- | --- | --- |\n")
		for _, g := range groups(s.Keys) {
			var path, typ, def []string
			for _, k := range g {
				path, typ, def = append(path, "`"+k.Path+"`"), append(typ, k.Type), append(def, k.Default)
			}
			fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", strings.Join(path, "<br>"), strings.Join(typ, "<br>"), strings.Join(def, "<br>"), g[0].Doc)
		}
	}
	return b.Bytes()
}

// groups splits keys into runs that share one doc comment (fields
// documented together), each written as one row.
func groups(keys []Key) [][]Key {
	var out [][]Key
	for i, k := range keys {
		if i > 0 && k.Doc == keys[i-1].Doc {
			out[len(out)-1] = append(out[len(out)-1], k)
			continue
		}
		out = append(out, []Key{k})
	}
	return out
}

// keys lists every key path of sections, for tests.
func keys(sections []Section) []string {
	var out []string
	for _, s := range sections {
		for _, k := range s.Keys {
			out = append(out, k.Path)
		}
	}
	return out
}
