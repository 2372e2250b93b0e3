package search

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"
	"unicode"

	"github.com/memtray/memtray/backend/embed"
	"github.com/memtray/memtray/backend/memory"
)

// Skill is one agent skill: a folder holding SKILL.md whose YAML front
// matter names it and says, in its description, when to use it.
type Skill struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	// Path is the SKILL.md file.
	Path string `json:"path"`
}

// SkillHit is a suggested skill and its score.
type SkillHit struct {
	Skill
	Score float64 `json:"score"`
}

// Limits on what skill loading reads.
const (
	maxSkillFile   = 64 << 10
	maxSkills      = 500
	maxDescription = 1024
)

// LoadSkills reads <dir>/<name>/SKILL.md for every dir (missing dirs are
// fine). A file without a name or description in its front matter is
// skipped and reported; skills of a later dir replace same-named ones of an
// earlier dir (a project's skill shadows the user's).
func LoadSkills(dirs ...string) ([]Skill, []error) {
	byName := map[string]Skill{}
	var errs []error
	for _, dir := range dirs {
		entries, err := os.ReadDir(dir)
		if err != nil {
			if !os.IsNotExist(err) {
				errs = append(errs, fmt.Errorf("skills in %s: %w", dir, err))
			}
			continue
		}
		for _, e := range entries {
			if len(byName) >= maxSkills {
				break
			}
			path := filepath.Join(dir, e.Name(), "SKILL.md")
			s, err := readSkill(path)
			if err != nil {
				if !os.IsNotExist(err) {
					errs = append(errs, err)
				}
				continue
			}
			byName[s.Name] = s
		}
	}
	out := make([]Skill, 0, len(byName))
	for _, s := range byName {
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, errs
}

func readSkill(path string) (Skill, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return Skill{}, err
	}
	if !fi.Mode().IsRegular() || fi.Size() > maxSkillFile {
		return Skill{}, fmt.Errorf("skill %s: not a regular file of at most %d bytes", path, maxSkillFile)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return Skill{}, fmt.Errorf("skill %s: %w", path, err)
	}
	fm := ParseFrontMatter(data)
	s := Skill{Name: fm["name"], Description: fm["description"], Path: path}
	if s.Name == "" {
		s.Name = filepath.Base(filepath.Dir(path))
	}
	if s.Description == "" {
		return Skill{}, fmt.Errorf("skill %s: no description in its front matter", path)
	}
	if r := []rune(s.Description); len(r) > maxDescription {
		s.Description = string(r[:maxDescription])
	}
	return s, nil
}

// ParseFrontMatter reads the flat YAML front matter of a Markdown file
// (between a first line "---" and the next "---"): "key: value" pairs,
// values optionally quoted, and ">" or "|" block scalars whose indented
// lines follow. Nested structures are skipped. It never fails: what it
// cannot read it leaves out.
func ParseFrontMatter(data []byte) map[string]string {
	out := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 4096), maxSkillFile)
	if !sc.Scan() || strings.TrimSpace(sc.Text()) != "---" {
		return out
	}
	var key string
	var block []string
	folded := false
	flush := func() {
		if key != "" && block != nil {
			sep := "\n"
			if folded {
				sep = " "
			}
			out[key] = strings.TrimSpace(strings.Join(block, sep))
		}
		key, block = "", nil
	}
	for sc.Scan() {
		line := strings.TrimRight(sc.Text(), "\r")
		if strings.TrimSpace(line) == "---" {
			break
		}
		if block != nil && (strings.HasPrefix(line, " ") || strings.HasPrefix(line, "\t") || strings.TrimSpace(line) == "") {
			block = append(block, strings.TrimSpace(line))
			continue
		}
		flush()
		if line == "" || line[0] == ' ' || line[0] == '\t' || line[0] == '#' {
			continue
		}
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		switch {
		case v == ">" || v == ">-" || v == "|" || v == "|-":
			key, block, folded = k, []string{}, v[0] == '>'
		case len(v) >= 2 && (v[0] == '"' && v[len(v)-1] == '"' || v[0] == '\'' && v[len(v)-1] == '\''):
			out[k] = strings.ReplaceAll(v[1:len(v)-1], `\"`, `"`)
		default:
			out[k] = v
		}
	}
	flush()
	return out
}

// SkillIndex suggests skills for a prompt: cosine similarity between the
// prompt's and each description's embedding, plus a keyword boost for the
// skill's name words and the description words the prompt shares. Only
// skills at or above the floor are suggested.
type SkillIndex struct {
	skills []Skill
	vecs   [][]float32
	words  []map[string]bool
	names  []map[string]bool
	emb    memory.Embedder
	floor  float64
}

// SkillKeywordBoost is added per shared name word and, at a fifth of it,
// per shared description word (at most 3).
const SkillKeywordBoost = 0.15

// NewSkillIndex embeds the skills' descriptions. A floor of 0 (not set)
// is the built-in model's, config.BuiltinSkillFloor.
func NewSkillIndex(ctx context.Context, emb memory.Embedder, skills []Skill, floor float64) (*SkillIndex, error) {
	x := &SkillIndex{skills: skills, emb: emb, floor: skillFloor(floor)}
	if len(skills) == 0 {
		return x, nil
	}
	texts := make([]string, len(skills))
	for i, s := range skills {
		texts[i] = strings.ReplaceAll(s.Name, "-", " ") + ": " + s.Description
		x.words = append(x.words, wordSet(s.Description))
		x.names = append(x.names, wordSet(strings.NewReplacer("-", " ", "_", " ").Replace(s.Name)))
	}
	vecs, err := emb.Embed(ctx, texts)
	if err != nil {
		return nil, fmt.Errorf("embed skill descriptions: %w", err)
	}
	x.vecs = vecs
	return x, nil
}

// Suggest returns up to k skills for prompt, best first.
func (x *SkillIndex) Suggest(ctx context.Context, prompt string, k int) ([]SkillHit, error) {
	if x == nil || len(x.skills) == 0 || strings.TrimSpace(prompt) == "" {
		return nil, nil
	}
	vecs, err := x.emb.Embed(ctx, []string{prompt})
	if err != nil {
		return nil, fmt.Errorf("embed prompt: %w", err)
	}
	pw := wordSet(prompt)
	var hits []SkillHit
	for i, s := range x.skills {
		score := memory.Cosine(vecs[0], x.vecs[i])
		shared := 0
		for w := range x.words[i] {
			if pw[w] {
				shared++
			}
		}
		score += SkillKeywordBoost / 5 * float64(min(shared, 3))
		for w := range x.names[i] {
			if pw[w] {
				score += SkillKeywordBoost
			}
		}
		if score >= x.floor {
			hits = append(hits, SkillHit{Skill: s, Score: score})
		}
	}
	sort.SliceStable(hits, func(i, j int) bool { return hits[i].Score > hits[j].Score })
	return hits[:min(len(hits), k)], nil
}

// Len is the number of indexed skills.
func (x *SkillIndex) Len() int {
	if x == nil {
		return 0
	}
	return len(x.skills)
}

// skillStop are words too common in skill descriptions to count as shared.
var skillStop = map[string]bool{"use": true, "when": true, "the": true, "and": true, "for": true, "with": true,
	"this": true, "that": true, "you": true, "your": true, "any": true, "skill": true, "user": true, "from": true,
	"are": true, "how": true, "what": true, "can": true, "into": true, "about": true, "asks": true, "need": true,
	"needs": true, "should": true, "other": true, "also": true, "using": true, "files": true, "file": true}

// wordSet lowercases and splits text into words of 3+ letters, stop words
// and a trailing plural "s" removed.
func wordSet(text string) map[string]bool {
	out := map[string]bool{}
	for _, w := range strings.FieldsFunc(strings.ToLower(text), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
		if len(w) > 4 && strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "ss") {
			w = w[:len(w)-1]
		}
		if len(w) >= 3 && !skillStop[w] {
			out[w] = true
		}
	}
	return out
}

// SkillCatalog keeps a SkillIndex per set of skill folders, rebuilt when a
// folder's SKILL.md files change (checked at most every RecheckEvery).
type SkillCatalog struct {
	emb   memory.Embedder
	floor float64

	mu      sync.Mutex
	indexes map[string]*catalogEntry
}

type catalogEntry struct {
	stamp   string
	checked time.Time
	index   *SkillIndex
}

// RecheckEvery is how often the catalog looks for changed skills.
const RecheckEvery = 10 * time.Second

// maxCatalogEntries bounds how many folder sets the catalog keeps.
const maxCatalogEntries = 64

// NewSkillCatalog returns an empty catalog.
func NewSkillCatalog(emb memory.Embedder, floor float64) *SkillCatalog {
	return &SkillCatalog{emb: emb, floor: skillFloor(floor), indexes: map[string]*catalogEntry{}}
}

// Index returns the index of the skills in dirs, loading or refreshing it
// as needed. Indexes are kept per embedding model, so an embedder that
// switches models (embed.Swappable) gets new ones.
func (c *SkillCatalog) Index(ctx context.Context, dirs []string) (*SkillIndex, error) {
	emb := embed.Snapshot(c.emb)
	key := emb.Model() + "\x00" + strings.Join(dirs, "\x00")
	c.mu.Lock()
	e, floor := c.indexes[key], c.floor
	if e != nil && time.Since(e.checked) < RecheckEvery {
		c.mu.Unlock()
		return e.index, nil
	}
	c.mu.Unlock()
	stamp := skillStamp(dirs)
	if e != nil && e.stamp == stamp {
		c.mu.Lock()
		e.checked = time.Now()
		c.mu.Unlock()
		return e.index, nil
	}
	skills, _ := LoadSkills(dirs...) // unreadable skills are left out
	idx, err := NewSkillIndex(ctx, emb, skills, floor)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.indexes) >= maxCatalogEntries {
		clear(c.indexes)
	}
	c.indexes[key] = &catalogEntry{stamp: stamp, checked: time.Now(), index: idx}
	return idx, nil
}

// skillStamp summarises the SKILL.md files of dirs (names, sizes, times).
func skillStamp(dirs []string) string {
	var b strings.Builder
	for _, dir := range dirs {
		matches, _ := fs.Glob(os.DirFS(dir), "*/SKILL.md")
		for _, m := range matches {
			if fi, err := os.Stat(filepath.Join(dir, m)); err == nil {
				fmt.Fprintf(&b, "%s/%s:%d:%d;", dir, m, fi.Size(), fi.ModTime().UnixNano())
			}
		}
	}
	return b.String()
}
